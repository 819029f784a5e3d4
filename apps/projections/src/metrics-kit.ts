import { Counter, type Registry } from 'prom-client';

/**
 * `compute()` once per scrape: the first `collect()` of a scrape computes the figures and every
 * other metric of the same scrape reuses them; they are dropped on the next turn of the event loop,
 * before any later scrape.
 */
export function oncePerScrape<T>(compute: () => T): () => T {
  let cached: { value: T } | undefined;
  return () => {
    if (!cached) {
      cached = { value: compute() };
      setImmediate(() => (cached = undefined));
    }
    return cached.value;
  };
}

/**
 * Declares counters that hold all-time totals of the log, set at scrape time (reset, then inc by the
 * total) from figures computed from a read model: never bumped per delivered event, so a replay or a
 * redelivery cannot double them and a restart rebuilds the same values.
 */
export function totalsCounters<T>(registry: Registry, totals: () => T) {
  return <L extends string>(name: string, help: string, labelNames: readonly L[], set: (counter: Counter<L>, totals: T) => void): Counter<L> =>
    new Counter<L>({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        set(this, totals());
      },
    });
}
