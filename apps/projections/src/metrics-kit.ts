import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * `compute()` once per scrape: the first `collect()` of a scrape computes the figures and every
 * other metric of the same scrape reuses them; they are dropped on the next turn of the event loop,
 * before any later scrape.
 */
export function oncePerScrape<T>(compute: () => T): () => T {
  // A promise is kept as it is: every metric of the scrape awaits the same one.
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
export function totalsCounters<T>(registry: Registry, totals: () => T | Promise<T>) {
  return <L extends string>(name: string, help: string, labelNames: readonly L[], set: (counter: Counter<L>, totals: T) => void): Counter<L> =>
    new Counter<L>({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        const value = await totals();
        this.reset();
        set(this, value);
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

/** A histogram's observations as counts: how many observations fell in each bucket (by its upper bound, Infinity for the last), and their sum; `labels` for one series of a labelled histogram. */
export interface CountedObservations {
  buckets: ReadonlyMap<number, number>;
  sum: number;
  labels?: Record<string, string>;
}

/**
 * A histogram whose buckets are read at scrape time from counts kept in a read model's sums
 * (`observations`: one series, or one per label set), not from one observation per value: its cost
 * does not grow with the number of observations. Served in the exposition format of prom-client's
 * Histogram; a label-less one is always there (at 0 before any observation).
 */
export function countedHistogram(registry: Registry, name: string, help: string, buckets: readonly number[], observations: () => Promise<CountedObservations | readonly CountedObservations[]>): void {
  const seriesOf = ({ buckets: counts, sum, labels = {} }: CountedObservations) => {
    let cumulative = 0;
    const values = buckets.map((le) => {
      cumulative += counts.get(le) ?? 0;
      return { labels: { le, ...labels }, value: cumulative, metricName: `${name}_bucket` };
    });
    const count = cumulative + (counts.get(Infinity) ?? 0);
    return [...values, { labels: { le: '+Inf', ...labels }, value: count, metricName: `${name}_bucket` }, { labels, value: sum, metricName: `${name}_sum` }, { labels, value: count, metricName: `${name}_count` }];
  };
  registry.registerMetric({
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    async get() {
      const observed = await observations();
      const series = Array.isArray(observed) ? (observed as readonly CountedObservations[]) : [observed as CountedObservations];
      return { name, help, type: 'histogram', aggregator: 'sum', values: series.flatMap(seriesOf) };
    },
  } as unknown as Parameters<Registry['registerMetric']>[0]);
}

/** The bucket an observation falls in: the first upper bound at or above it, Infinity past the last. */
export function bucketOf(buckets: readonly number[], value: number): number {
  return buckets.find((le) => value <= le) ?? Infinity;
}
