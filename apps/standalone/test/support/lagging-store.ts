import { sleep, type EventStore } from '@agora/eventstore';

/** The store with every subscription's events handed over `lagMs` late, as on a loaded machine: the read models fed by it trail the log. */
export function lagging(store: EventStore, lagMs: number): EventStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'subscribe') {
        return (options: Parameters<EventStore['subscribe']>[0]) =>
          target.subscribe({
            ...options,
            handler: async (event) => {
              await sleep(lagMs);
              await options.handler(event);
            },
          });
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
