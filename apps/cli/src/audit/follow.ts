/**
 * Following the log after the pass (`agora audit --follow`): each event the store hands over is
 * added; once none has come for `idleMs` and the store holds nothing newer (a commit is stored
 * whole, so its events come together), the commits read are checked and `onSettled` told. Until
 * `signal` aborts.
 */
import { StoreUnavailable, type EventStore, type RecordedEvent, type Subscription } from '@agora/eventstore';

const UNKNOWN = Symbol('the head is not known now');

/** What following needs of the audit. */
export interface Follower {
  /** The last event added (the subscription starts after it). */
  readonly position: string | undefined;
  add(event: RecordedEvent): Promise<void>;
  /** Checks every commit added so far and waits for its answers. */
  settle(): Promise<void>;
  /** Told each time every commit read so far is checked, and when following starts and ends. */
  settled(following: boolean): void;
}

export async function followLog(store: EventStore, follower: Follower, idleMs: number, signal: AbortSignal): Promise<void> {
  let chain: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let failed: ((error: unknown) => void) | undefined;
  const failure = new Promise<never>((_, reject) => (failed = reject));
  failure.catch(() => undefined);
  const settleWhenIdle = (delayMs = idleMs) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      chain = chain
        .then(async () => {
          const last = follower.position;
          // The log's head is asked again a second later while the store cannot say (a partition, a node restarting): the subscription rides that out too.
          const head = await store.headPosition().catch((error: unknown) => (error instanceof StoreUnavailable ? UNKNOWN : Promise.reject(error)));
          if (head === UNKNOWN) return settleWhenIdle(Math.max(idleMs, 1_000));
          if (head !== undefined && last !== undefined && store.comparePositions(head, last) > 0) return settleWhenIdle();
          await follower.settle();
          follower.settled(true);
        })
        .catch((error: unknown) => failed?.(error));
    }, delayMs);
  };
  const after = follower.position;
  const subscription: Subscription = store.subscribe({
    name: 'audit',
    ...(after === undefined ? {} : { after }),
    handler: async (event) => {
      const adding = chain.then(() => follower.add(event));
      chain = adding.catch(() => undefined);
      try {
        await adding;
      } catch (error) {
        // A failed step ends the follow (the subscription would hand the event over again, to an audit that cannot take it).
        failed?.(error);
        throw error;
      }
      settleWhenIdle();
    },
  });
  follower.settled(true);
  try {
    const stopped = new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
    await Promise.race([subscription.caughtUp.then(() => stopped), failure]);
  } finally {
    clearTimeout(timer);
    await subscription.stop();
    await chain;
    await follower.settle();
    follower.settled(false);
  }
}
