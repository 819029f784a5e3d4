/**
 * Durable deadlines (docs/decisions/0005-durable-time.md) as deciders declare them: which events set a deadline
 * (their `deadlineAt`), which cancel it, and under which key. The scheduler of libs/eventsourcing
 * reads them off the log with the function `deadlineRule` builds.
 */

/** The part of a stored event a deadline rule reads (a RecordedEvent of the store fits). */
export interface DeadlineEvent {
  type: string;
  data: unknown;
  streamId: string;
}

/** How one event changes the pending deadlines: sets (moves) the deadline under `key`, cancels it, or neither. */
export type DeadlineChange = { key: string; dueAt: string } | { cancel: string } | undefined;

export interface DeadlineRule {
  /** Events whose `deadlineAt` (an ISO time) sets or moves the deadline under their key. */
  sets: readonly string[];
  /** Events after which nothing is due under their key. */
  cancels: readonly string[];
  /** Of `sets`, the events whose `deadlineAt: null` cancels the deadline (for the others null changes nothing). */
  cancelOnNull?: readonly string[];
  /** The deadline key an event's data names; undefined when the data names none (it changes nothing). */
  keyOf(data: Record<string, unknown>): string | undefined;
}

/** The pure `deadlineOf(event)` of a rule. */
export function deadlineRule(rule: DeadlineRule): (event: DeadlineEvent) => DeadlineChange {
  const sets = new Set(rule.sets);
  const cancels = new Set(rule.cancels);
  const cancelOnNull = new Set(rule.cancelOnNull ?? []);
  return (event) => {
    if (!sets.has(event.type) && !cancels.has(event.type)) return undefined;
    if (typeof event.data !== 'object' || event.data === null) return undefined;
    const data = event.data as Record<string, unknown>;
    const key = rule.keyOf(data);
    if (key === undefined) return undefined;
    if (cancels.has(event.type)) return { cancel: key };
    if (typeof data['deadlineAt'] === 'string') return { key, dueAt: data['deadlineAt'] };
    if (data['deadlineAt'] === null && cancelOnNull.has(event.type)) return { cancel: key };
    return undefined;
  };
}

/**
 * The key of an aggregate's one pending deadline, `<category>-<id>:<name>`, and its parser (undefined
 * for a key of another category or name): the scheduler hands the key back when the deadline is due.
 */
export function aggregateDeadlineKey(category: string, name: string): { key(id: string): string; parse(key: string): string | undefined } {
  const pattern = new RegExp(`^${category}-(.+):${name}$`);
  return {
    key: (id) => `${category}-${id}:${name}`,
    parse: (key) => pattern.exec(key)?.[1],
  };
}
