/**
 * Figures that add up over records. Each record (a proposal, a voting session) contributes numbers
 * under keys, and a figure over many records is the sum of their contributions: a count of proposals
 * by status, a reviewer's objections under a constitution. A read model keeps such sums in a table
 * and moves them by what an update of one record changed (its contribution after, minus before), so
 * no figure needs every record in memory; the pure functions over records add up the same
 * contributions, so both give the same numbers.
 *
 * Figures over a window of time (the last 30 days) are timed contributions: a number at an instant
 * (a review deemed approved at its deadline counts 1 at that deadline), summed over those whose
 * instant falls in the window.
 *
 * Every value is a whole number (a count, rounds, milliseconds): sums of whole numbers are exact in
 * any order, so a table moved by differences and one filled in a single pass agree to the unit.
 */

/** Sums by key (see `sumKey`). */
export type Sums = Map<string, number>;

/** The key of a sum: a figure's name and its labels (`sumKey('status', 'review')`), as one string. */
export function sumKey(...parts: readonly (string | number)[]): string {
  return JSON.stringify(parts);
}

/** The parts of a key made by `sumKey`. */
export function sumKeyParts(key: string): (string | number)[] {
  return JSON.parse(key) as (string | number)[];
}

/** Adds `value` under the key made of `parts` (nothing for 0). */
export function addSum(sums: Sums, value: number, ...parts: readonly (string | number)[]): void {
  if (!Number.isSafeInteger(value)) throw new RangeError(`a sum adds whole numbers only, got ${String(value)} for ${sumKey(...parts)}`);
  if (value === 0) return;
  const key = sumKey(...parts);
  sums.set(key, (sums.get(key) ?? 0) + value);
}

/** Adds every sum of `from` into `into`, times `sign` (-1 takes a contribution away). */
export function addSums(into: Sums, from: ReadonlyMap<string, number>, sign: 1 | -1 = 1): Sums {
  for (const [key, value] of from) {
    const next = (into.get(key) ?? 0) + sign * value;
    if (next === 0) into.delete(key);
    else into.set(key, next);
  }
  return into;
}

/** The sums of every record's contribution. */
export function sumsOf<T>(records: Iterable<T>, contribution: (record: T) => ReadonlyMap<string, number>): Sums {
  const sums: Sums = new Map();
  for (const record of records) addSums(sums, contribution(record));
  return sums;
}

/** The sum under the key made of `parts` (0 when there is none). */
export function sumOf(sums: ReadonlyMap<string, number>, ...parts: readonly (string | number)[]): number {
  return sums.get(sumKey(...parts)) ?? 0;
}

/** Every sum whose key starts with `parts`, with the rest of its key (`sumsUnder(s, 'status')` gives `[['review'], 3]`, ...). */
export function sumsUnder(sums: ReadonlyMap<string, number>, ...parts: readonly (string | number)[]): [rest: (string | number)[], value: number][] {
  const out: [(string | number)[], number][] = [];
  for (const [key, value] of sums) {
    const all = sumKeyParts(key);
    if (all.length > parts.length && parts.every((p, i) => all[i] === p)) out.push([all.slice(parts.length), value]);
  }
  return out;
}

/** A number a record contributes at an instant (milliseconds since the epoch), under a key (`sumKey`). */
export interface TimedSum {
  key: string;
  at: number;
  value: number;
}

/** Collects a record's timed contributions; an instant that is missing or not a time adds nothing. */
export class TimedSums {
  readonly items: TimedSum[] = [];

  add(at: string | null | undefined, value: number, ...parts: readonly (string | number)[]): this {
    if (!at || value === 0) return this;
    const t = Date.parse(at);
    if (!Number.isFinite(t)) return this;
    if (!Number.isSafeInteger(value)) throw new RangeError(`a sum adds whole numbers only, got ${String(value)} for ${sumKey(...parts)}`);
    this.items.push({ key: sumKey(...parts), at: t, value });
    return this;
  }
}

/** The sums of the timed contributions of every record whose instant is in [from, to] (both ends included), milliseconds since the epoch. */
export function windowSums<T>(records: Iterable<T>, timed: (record: T) => readonly TimedSum[], from: number, to: number): Sums {
  const sums: Sums = new Map();
  for (const record of records) for (const { key, at, value } of timed(record)) if (at >= from && at <= to) sums.set(key, (sums.get(key) ?? 0) + value);
  return sums;
}

/** A window of whole days up to an instant, both ends included, as figures over a window report it. */
export interface DaysWindow {
  from: string;
  to: string;
  days: number;
}

/** The window of `days` days up to `now` (an ISO time or a Date). */
export function daysWindow(now: string | Date, days: number): DaysWindow {
  if (!Number.isSafeInteger(days) || days < 1) throw new RangeError(`windowDays must be a positive whole number, got ${String(days)}`);
  const to = typeof now === 'string' ? Date.parse(now) : now.getTime();
  if (!Number.isFinite(to)) throw new RangeError(`now ${String(now)} is not a valid time`);
  return { from: new Date(to - days * 86_400_000).toISOString(), to: new Date(to).toISOString(), days };
}
