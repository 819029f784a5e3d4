import type { DeadlineChange } from '@agora/decider';
import { backoffDelay, type EventStore, type RecordedEvent, type Subscription } from '@agora/eventstore';
import { restoreSnapshot, SnapshotWriter, type Snapshot, type SnapshotCodec, type SnapshotStore } from './snapshot-store.js';
import { streamFilter, type EventSourcingLogger, type RetryOptions } from './streams.js';

/** How one event changes the pending deadlines: sets (or moves) deadline `key`, cancels one, or neither. */
export type { DeadlineChange };

export interface PendingDeadline {
  key: string;
  /** ISO-8601 time the deadline is due. */
  dueAt: string;
  /** The W3C trace context of the event that set the deadline (its `traceparent` metadata), when it has one. */
  traceparent?: string;
}

export interface SchedulerOptions {
  store: EventStore;
  /** A short name for logs. */
  name: string;
  /** Only events of streams in these categories are shown to `deadlineOf`. */
  categories: readonly string[];
  /**
   * Reads deadlines off the log. It must also return `{cancel}` for the event that settles a
   * deadline (the expiry event `fire` causes, and any event that makes the deadline moot):
   * otherwise a restart finds the deadline pending again and fires it once more.
   * Must be pure: it is called again for every event of the log at every start.
   */
  deadlineOf(event: RecordedEvent): DeadlineChange;
  /**
   * Acts on a due deadline, normally by issuing an expiry command through `handleCommand` with
   * `deadlineCommandId(key, dueAt)` as its command id. It MUST be idempotent: a deadline can fire
   * more than once (two replicas around a lease takeover; a crash between firing and the expiry event
   * reaching the log fires it again at restart). With the deterministic command id, the repeats
   * are duplicates and write nothing. A rejection is logged and retried with backoff; give the
   * command a timeout, since deadlines fire one at a time.
   */
  fire(key: string, dueAt: string, cause?: { traceparent?: string }): Promise<void>;
  /** Time source for "is it due"; timers still run on real time. Default Date. */
  clock?: { now(): number };
  logger?: EventSourcingLogger;
  /** Backoff for a failing `fire` (and a failing `deadlineOf`). Default 100 ms doubling up to 30 s. */
  retry?: RetryOptions;
  /**
   * Where the pending set is saved now and then (as `deadlines-<name>`) and restored from at
   * start, so a restart reads only the log's new events. Default: none (the whole log at every start).
   */
  snapshots?: SnapshotStore;
  /**
   * Whether it fires due deadlines (see `setActive`). Default true. An inactive scheduler keeps
   * its pending set up to date from the log, so it can take over firing at once.
   */
  active?: boolean;
  /** Bump it when `deadlineOf` changes: a snapshot of another version is discarded and the set rebuilt from the log. Default 1. */
  snapshotVersion?: number;
}

/** Longest delay setTimeout accepts (about 24.8 days); a later deadline re-arms the timer when it elapses. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const DEFAULT_RETRY: Required<RetryOptions> = { initialDelayMs: 100, maxDelayMs: 30_000 };

interface Deadline extends PendingDeadline {
  dueMs: number;
  /** When to fire next: the due time, pushed back after a failed attempt. */
  nextTryMs: number;
  failures: number;
}

/**
 * Durable deadlines (docs/decisions/0005-durable-time.md). Every deadline is written in an event; the scheduler
 * rebuilds the pending set from the log at start (the whole log, or the events after its saved
 * snapshot when it has a snapshot store), so a restart loses no timer, and fires each
 * deadline when due, in due order, one at a time. A deadline already past at start fires right
 * after catch-up. Nothing fires before catch-up: a later event in the log may cancel it.
 */
export class Scheduler {
  private readonly deadlines = new Map<string, Deadline>();
  private readonly inCategories: (streamId: string) => boolean;
  private readonly clock: { now(): number };
  private readonly logger: EventSourcingLogger;
  private readonly retry: Required<RetryOptions>;
  private subscription: Subscription | undefined;
  private timer: NodeJS.Timeout | undefined;
  private firing: Promise<void> | undefined;
  private caughtUp = false;
  private stopped = false;
  private active: boolean;
  private snapshotWriter: SnapshotWriter<Map<string, Deadline>> | undefined;

  constructor(private readonly options: SchedulerOptions) {
    this.inCategories = streamFilter(options.categories);
    this.clock = options.clock ?? Date;
    this.logger = options.logger ?? console;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.active = options.active ?? true;
  }

  /**
   * Starts or stops firing (another replica fires them meanwhile: a lease). Deactivating lets a
   * deadline firing now finish; activating fires what is due at once.
   */
  setActive(active: boolean): void {
    this.active = active;
    if (active) {
      this.arm();
    } else {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  get isActive(): boolean {
    return this.active;
  }

  /** Subscribes to the log from the beginning; resolves once the pending set is rebuilt (timers armed). */
  async start(): Promise<void> {
    if (this.subscription || this.stopped) throw new Error(`scheduler ${this.options.name} was already started`);
    let restored: Snapshot | undefined;
    if (this.options.snapshots) {
      const name = `deadlines-${this.options.name.replace(/[^A-Za-z0-9_.-]/g, '_')}`;
      const codec = deadlinesCodec(this.options.snapshotVersion ?? 1);
      const found = await restoreSnapshot(this.options.store, this.options.snapshots, name, codec, this.logger);
      if (found) {
        for (const [key, deadline] of found.state) this.deadlines.set(key, deadline);
        restored = found.snapshot;
      }
      this.snapshotWriter = new SnapshotWriter(this.options.snapshots, name, codec, this.logger, {}, restored);
    }
    this.subscription = this.options.store.subscribe({
      name: `scheduler:${this.options.name}`,
      ...(restored ? { after: restored.position } : {}),
      handler: (event) => {
        this.onEvent(event);
        this.snapshotWriter?.folded(event, this.deadlines);
      },
      onError: (error, { event, attempt }) =>
        this.logger.warn(`[scheduler ${this.options.name}] ${event ? `deadlineOf failed on ${event.streamId}@${event.revision}` : 'subscription dropped'} (attempt ${attempt}); retrying`, error),
      retry: this.retry,
    });
    await this.subscription.caughtUp;
    if (this.stopped) return;
    this.snapshotWriter?.caughtUp(this.deadlines);
    this.caughtUp = true;
    this.arm();
  }

  /** Stops the subscription and the timer; resolves once a `fire` in progress has settled. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.subscription?.stop();
    await this.firing;
    await this.snapshotWriter?.save(this.deadlines);
  }

  /** The deadlines not fired yet, earliest first. */
  pending(): PendingDeadline[] {
    return [...this.deadlines.values()].sort(byDueTime).map(({ key, dueAt, traceparent }) => (traceparent === undefined ? { key, dueAt } : { key, dueAt, traceparent }));
  }

  private onEvent(event: RecordedEvent): void {
    if (!this.inCategories(event.streamId)) return;
    const change = this.options.deadlineOf(event);
    if (change === undefined) return;
    if ('cancel' in change) {
      this.deadlines.delete(change.cancel);
    } else {
      const dueMs = Date.parse(change.dueAt);
      if (Number.isNaN(dueMs)) {
        this.logger.warn(`[scheduler ${this.options.name}] ignoring deadline ${change.key} from ${event.streamId}@${event.revision}: dueAt ${JSON.stringify(change.dueAt)} is not a time`);
        return;
      }
      // A new entry object: a fire in progress for the old one will see it was replaced and keep this one.
      const traceparent = event.metadata['traceparent'];
      this.deadlines.set(change.key, { key: change.key, dueAt: change.dueAt, dueMs, nextTryMs: dueMs, failures: 0, ...(typeof traceparent === 'string' ? { traceparent } : {}) });
    }
    this.arm();
  }

  /** Sets one timer for the earliest deadline. Does nothing before catch-up or while deadlines are firing (they re-arm when done). */
  private arm(): void {
    if (this.stopped || !this.caughtUp || !this.active || this.firing) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const next = this.next();
    if (!next) return;
    const delay = Math.max(0, next.nextTryMs - this.clock.now());
    this.timer = setTimeout(() => this.onTimer(), Math.min(delay, MAX_TIMER_MS));
  }

  private onTimer(): void {
    this.timer = undefined;
    this.firing = this.fireDue().finally(() => {
      this.firing = undefined;
      this.arm();
    });
  }

  /** Fires every deadline that is due, earliest first, one at a time. Never rejects. */
  private async fireDue(): Promise<void> {
    for (let next = this.next(); next && !this.stopped && this.active && next.nextTryMs <= this.clock.now(); next = this.next()) {
      await this.fireOne(next);
    }
  }

  private async fireOne(deadline: Deadline): Promise<void> {
    try {
      await this.options.fire(deadline.key, deadline.dueAt, deadline.traceparent === undefined ? {} : { traceparent: deadline.traceparent });
      // Done, unless an event moved the deadline while it was firing: then the new one stays.
      if (this.deadlines.get(deadline.key) === deadline) this.deadlines.delete(deadline.key);
    } catch (error) {
      deadline.failures++;
      const delay = backoffDelay(deadline.failures, this.retry);
      this.logger.warn(`[scheduler ${this.options.name}] firing deadline ${deadline.key} (due ${deadline.dueAt}) failed (attempt ${deadline.failures}); retrying in ${delay} ms`, error);
      // Only this deadline waits: the others keep firing when due.
      deadline.nextTryMs = this.clock.now() + delay;
    }
  }

  private next(): Deadline | undefined {
    let best: Deadline | undefined;
    for (const d of this.deadlines.values()) if (!best || byNextTry(d, best) < 0) best = d;
    return best;
  }
}

/** The pending set as saved: [key, dueAt] pairs, with the traceparent third when there is one (retry state starts afresh). */
function deadlinesCodec(version: number): SnapshotCodec<Map<string, Deadline>> {
  return {
    version,
    encode: (deadlines) => [...deadlines.values()].map((d) => (d.traceparent === undefined ? [d.key, d.dueAt] : [d.key, d.dueAt, d.traceparent])),
    decode: (saved) => {
      if (!Array.isArray(saved)) throw new TypeError('a deadlines snapshot is an array of [key, dueAt] pairs');
      return new Map(
        (saved as Array<[string, string, string?]>).map(([key, dueAt, traceparent]) => {
          const dueMs = Date.parse(dueAt);
          if (typeof key !== 'string' || Number.isNaN(dueMs)) throw new TypeError(`bad deadline ${JSON.stringify([key, dueAt])}`);
          return [key, { key, dueAt, dueMs, nextTryMs: dueMs, failures: 0, ...(typeof traceparent === 'string' ? { traceparent } : {}) }];
        }),
      );
    },
  };
}

function byDueTime(a: Deadline, b: Deadline): number {
  return a.dueMs - b.dueMs || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

function byNextTry(a: Deadline, b: Deadline): number {
  return a.nextTryMs - b.nextTryMs || byDueTime(a, b);
}
