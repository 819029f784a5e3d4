import type { EventStore, Position, RecordedEvent, Subscription } from '@agora/eventstore';
import type { ReadModelPositions } from './read-model-positions.js';
import { restoreSnapshot, SnapshotWriter, type SnapshotCodec, type SnapshotSchedule, type SnapshotStore } from './snapshot-store.js';
import { streamFilter, type EventSourcingLogger, type RetryOptions } from './streams.js';

/**
 * An in-memory read model folded from the log. `apply` either returns the next model or changes
 * the one it is given and returns nothing. It must not throw: the runner would retry the same
 * event forever (logging each time), and a model mutated half-way would be applied twice.
 */
export interface Projection<M> {
  name: string;
  /** Only events of streams in these categories are applied. Default: every event. */
  categories?: readonly string[];
  initial(): M;
  apply(model: M, event: RecordedEvent): M | void;
  /** How the model is saved to a snapshot store and restored (see ProjectionRunnerOptions.snapshots). */
  snapshot?: SnapshotCodec<M>;
}

export interface ProjectionRunnerOptions {
  logger?: EventSourcingLogger;
  /** Backoff when `apply` throws or the subscription drops. Default: the store's. */
  retry?: RetryOptions;
  /**
   * Where to save the model now and then and restore it from at start, so a restart folds only the
   * events since (used when the projection has a `snapshot` codec). A snapshot of another codec
   * version, or of a position this log does not hold, is discarded (logged) and the model rebuilt.
   */
  snapshots?: SnapshotStore;
  snapshotEvery?: SnapshotSchedule;
  /** The process's read models, for read-your-writes waits (queries given `minPosition`): the runner counts itself in while it runs. */
  positions?: ReadModelPositions;
}

/** Folds one event into the model the way both the live runner and `rebuild` do, so they cannot disagree. */
function fold<M>(projection: Projection<M>, accepts: (streamId: string) => boolean, model: M, event: RecordedEvent): M {
  if (!accepts(event.streamId)) return model;
  const next = projection.apply(model, event);
  return next === undefined ? model : next;
}

/**
 * Keeps an in-memory read model up to date: history first, then live events.
 *
 * An in-memory model always starts from the beginning of the log: it died with the process, so
 * resuming after a saved checkpoint would leave it missing everything before. Checkpoints are for
 * consumers whose effects live outside the process (see CheckpointedConsumer).
 */
export class ProjectionRunner<M> {
  private current: M;
  private subscription: Subscription | undefined;
  private resolveCaughtUp!: () => void;
  private readonly accepts: (streamId: string) => boolean;
  private snapshotWriter: SnapshotWriter<M> | undefined;
  /** Position of the snapshot the model was restored from, until the subscription handles an event. */
  private restoredAt: Position | undefined;
  /** Position of the last event folded (or skipped), set as soon as the model holds it. */
  private handledAt: Position | undefined;
  private untrack: (() => void) | undefined;
  /** Resolves once every event that existed at start has been applied (also if stopped before). */
  readonly caughtUp: Promise<void>;

  constructor(
    private readonly store: EventStore,
    private readonly projection: Projection<M>,
    private readonly options: ProjectionRunnerOptions = {},
  ) {
    this.current = projection.initial();
    this.accepts = streamFilter(projection.categories);
    this.caughtUp = new Promise((resolve) => (this.resolveCaughtUp = resolve));
  }

  /** The model as of the last applied event. */
  get model(): M {
    return this.current;
  }

  /** Position of the last event handled (applied or skipped), if any. */
  get position(): Position | undefined {
    return this.handledAt ?? this.subscription?.position ?? this.restoredAt;
  }

  get name(): string {
    return this.projection.name;
  }

  /** Restores the saved model if there is a usable one, subscribes after it (else from the beginning); resolves once caught up. */
  async start(): Promise<void> {
    if (this.subscription) throw new Error(`projection ${this.projection.name} was already started`);
    const logger = this.options.logger ?? console;
    const { snapshots } = this.options;
    const codec = this.projection.snapshot;
    if (snapshots && codec) {
      const restored = await restoreSnapshot(this.store, snapshots, this.projection.name, codec, logger);
      if (restored) {
        this.current = restored.state;
        this.restoredAt = restored.snapshot.position;
      }
      this.snapshotWriter = new SnapshotWriter(snapshots, this.projection.name, codec, logger, this.options.snapshotEvery, restored?.snapshot);
    }
    const writer = this.snapshotWriter;
    const { positions } = this.options;
    this.untrack = positions?.track(this);
    this.subscription = this.store.subscribe({
      name: `projection:${this.projection.name}`,
      ...(this.restoredAt === undefined ? {} : { after: this.restoredAt }),
      handler: (event) => {
        this.current = fold(this.projection, this.accepts, this.current, event);
        writer?.folded(event, this.current);
        this.handledAt = event.position;
        positions?.advanced();
      },
      onError: (error, { event, attempt }) =>
        logger.warn(`[projection ${this.projection.name}] ${event ? `apply failed on ${event.streamId}@${event.revision}` : 'subscription dropped'} (attempt ${attempt}); retrying`, error),
      ...(this.options.retry ? { retry: this.options.retry } : {}),
    });
    void this.subscription.caughtUp.then(() => {
      writer?.caughtUp(this.current);
      this.resolveCaughtUp();
    });
    await this.caughtUp;
  }

  /** Stops the subscription and saves the model (when it has a snapshot store). */
  async stop(): Promise<void> {
    this.untrack?.();
    this.untrack = undefined;
    await this.subscription?.stop();
    await this.snapshotWriter?.save(this.current);
    this.resolveCaughtUp();
  }

  /**
   * Rebuilds the model from scratch, on demand, and compares it with the live one as of the same
   * event: the live model is copied at its current position, the log is folded up to that
   * position, and the two must be equal. A difference means `apply` depends on something besides
   * the events (the clock, the order of delivery) or a live event was lost or applied twice.
   */
  async verify(): Promise<ProjectionVerification> {
    const position = this.position;
    const live = copyOf(this.current);
    const accepts = streamFilter(this.projection.categories);
    let rebuilt = this.projection.initial();
    let events = 0;
    if (position !== undefined) {
      for await (const event of this.store.readAll()) {
        rebuilt = fold(this.projection, accepts, rebuilt, event);
        events++;
        if (event.position === position) break;
      }
    }
    return { name: this.projection.name, position: position ?? null, events, equal: sameData(live, rebuilt) };
  }

  /** Folds the whole log from scratch: what the live model must equal once it has seen the same events. */
  static async rebuild<M>(store: EventStore, projection: Projection<M>): Promise<M> {
    const accepts = streamFilter(projection.categories);
    let model = projection.initial();
    for await (const event of store.readAll()) model = fold(projection, accepts, model, event);
    return model;
  }
}

/** A deep copy of read-model data: plain objects, arrays, Maps, Sets and primitives (what read models hold). */
function copyOf<T>(value: T): T {
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [k, copyOf(v)])) as T;
  if (value instanceof Set) return new Set([...value].map(copyOf)) as T;
  if (Array.isArray(value)) return value.map(copyOf) as T;
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copyOf(v)])) as T;
  return value;
}

/** Deep equality of read-model data, by content (Maps and Sets by their entries, in any order of insertion for Maps). */
function sameData(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (a instanceof Map || b instanceof Map) {
    if (!(a instanceof Map && b instanceof Map) || a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !sameData(v, b.get(k))) return false;
    return true;
  }
  if (a instanceof Set || b instanceof Set) {
    return a instanceof Set && b instanceof Set && a.size === b.size && [...a].every((v) => b.has(v));
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameData(v, b[i]));
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const keysA = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const keysB = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return keysA.length === keysB.length && keysA.every((k) => sameData((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

export interface ProjectionVerification {
  name: string;
  /** The live model's position the comparison was made at (null: no event yet). */
  position: Position | null;
  /** Events folded by the rebuild. */
  events: number;
  /** The rebuilt model equals the live one. */
  equal: boolean;
}

/** Starts a ProjectionRunner and resolves with it once it has caught up. */
export async function runProjection<M>(store: EventStore, projection: Projection<M>, options?: ProjectionRunnerOptions): Promise<ProjectionRunner<M>> {
  const runner = new ProjectionRunner(store, projection, options);
  await runner.start();
  return runner;
}
