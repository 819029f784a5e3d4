import { Counter, Histogram, type Registry } from 'prom-client';

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

/**
 * Declares label-less histograms whose observations are recomputed at scrape time from a read
 * model (reset, then one observation per value): like totalsCounters, never fed per delivered
 * event, so a replay cannot double them.
 */
export function scrapedHistograms(registry: Registry) {
  return (name: string, help: string, buckets: number[], values: () => readonly number[]): Histogram =>
    new Histogram({
      name,
      help,
      buckets,
      registers: [registry],
      collect() {
        this.reset();
        this.zero({});
        for (const v of values()) this.observe(v);
      },
    });
}
