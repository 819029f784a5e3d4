import { positiveInt } from '@agora/contracts';
import type { EventStore, Position, RecordedEvent, Subscription } from '@agora/eventstore';
import { assertValidCheckpointName, type CheckpointStore } from './checkpoint-store.js';
import { streamFilter, type EventSourcingLogger, type RetryOptions } from './streams.js';

/**
 * Something that reacts to events with effects outside the process (a relay to NATS, a process
 * manager issuing commands). Delivery is at least once, in order, one event at a time: after a
 * crash, the events since the last saved checkpoint are handled again, so `handle` must tolerate
 * repeats. A `handle` that throws gets the same event again (after a backoff) until it succeeds.
 */
export interface Consumer {
  /** Names the checkpoint: letters, digits, '_', '-', '.'. Renaming a consumer starts it from the beginning. */
  name: string;
  /** Only events of streams in these categories are handled. Default: every event. */
  categories?: readonly string[];
  handle(event: RecordedEvent): Promise<void>;
  /**
   * Runs before each checkpoint save; the save waits for it (and is tried again later if it
   * throws). For a `handle` that hands events on without waiting for them to land (the relay's
   * publishes): what it handed on must have landed before the checkpoint moves past it.
   */
  beforeCheckpoint?(): Promise<void>;
}

export interface CheckpointedConsumerOptions {
  store: EventStore;
  checkpoints: CheckpointStore;
  consumer: Consumer;
  /**
   * Save the checkpoint once this many events were handled since the last save (default 100) or
   * this many ms passed with unsaved progress (default 1000), whichever comes first; and on stop.
   * Only events handed to `handle` count: events of other categories move the position too, but
   * are saved by the time rule (a crash makes a restart scan at most a second of them again,
   * which has no effect), so a consumer of a quiet category costs one synced save a second while
   * the rest of the log is busy, not one every 100 events.
   * While catching up on history only the time rule applies, and the checkpoint is saved once
   * caught up: replaying a long log after a lost checkpoint costs one synced save a second, not
   * one every 100 events (a crash then redelivers at most a second of history, which `handle`
   * tolerates anyway).
   */
  checkpointEvery?: { events?: number; ms?: number };
  logger?: EventSourcingLogger;
  /** Backoff when `handle` throws or the subscription drops. Default: the store's. */
  retry?: RetryOptions;
}

/**
 * A catch-up subscription that resumes after its saved checkpoint. Events of other categories move
 * the checkpoint too, so a restart does not scan them again.
 */
export class CheckpointedConsumer {
  private readonly accepts: (streamId: string) => boolean;
  private readonly everyEvents: number;
  private readonly everyMs: number;
  private readonly logger: EventSourcingLogger;
  private subscription: Subscription | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private resolveCaughtUp!: () => void;
  /** Last event handled (or skipped), how many were handed to `handle`, and the last position saved. */
  private handled: { position: Position | undefined; count: number } = { position: undefined, count: 0 };
  private saved: { position: Position | undefined; count: number; atMs: number } = { position: undefined, count: 0, atMs: 0 };
  /** Saves run one after another, so an older position never overwrites a newer one. */
  private saving: Promise<void> = Promise.resolve();
  private started = false;
  /** Set once the events that existed at start have been handled: from then on the count rule applies too. */
  private live = false;
  /** Resolves once every event that existed at start has been handled (also if stopped before). */
  readonly caughtUp: Promise<void>;

  constructor(private readonly options: CheckpointedConsumerOptions) {
    assertValidCheckpointName(options.consumer.name);
    this.accepts = streamFilter(options.consumer.categories);
    this.everyEvents = positiveInt(options.checkpointEvery?.events ?? 100, 'checkpointEvery.events');
    this.everyMs = positiveInt(options.checkpointEvery?.ms ?? 1_000, 'checkpointEvery.ms');
    this.logger = options.logger ?? console;
    this.caughtUp = new Promise((resolve) => (this.resolveCaughtUp = resolve));
  }

  get name(): string {
    return this.options.consumer.name;
  }

  /** Position of the last event handled, or of the checkpoint it resumed from. */
  get position(): Position | undefined {
    return this.handled.position;
  }

  /** Position last saved to the checkpoint store. */
  get checkpoint(): Position | undefined {
    return this.saved.position;
  }

  /** Loads the checkpoint, subscribes strictly after it, and resolves once caught up. */
  async start(): Promise<void> {
    await this.begin();
    await Promise.race([this.caughtUp, this.subscription!.caughtUp]);
  }

  /**
   * Loads the checkpoint and subscribes strictly after it; resolves once subscribed, while the
   * consumer catches up (`caughtUp` says when it has): for a process that serves without waiting
   * for a consumer's backlog.
   */
  async begin(): Promise<void> {
    if (this.started) throw new Error(`consumer ${this.name} was already started`);
    this.started = true;
    // A position the store does not know (the store was replaced) makes subscribe throw: better than replaying silently.
    const after = await this.options.checkpoints.load(this.name);
    this.handled = { position: after, count: 0 };
    this.saved = { position: after, count: 0, atMs: Date.now() };
    this.subscription = this.options.store.subscribe({
      name: `consumer:${this.name}`,
      ...(after === undefined ? {} : { after }),
      handler: (event) => this.onEvent(event),
      onError: (error, { event, attempt }) =>
        this.logger.warn(`[consumer ${this.name}] ${event ? `handle failed on ${event.streamId}@${event.revision}` : 'subscription dropped'} (attempt ${attempt}); retrying`, error),
      ...(this.options.retry ? { retry: this.options.retry } : {}),
    });
    // The timer covers a quiet stream: progress made just before a lull still gets saved.
    this.flushTimer = setInterval(() => void this.flush(), this.everyMs);
    this.flushTimer.unref();
    // A store that can only tell by asking its server (KurrentDB) rejects caughtUp instead of throwing from subscribe.
    void this.subscription.caughtUp.then(async () => {
      this.live = true;
      await this.flush();
      this.resolveCaughtUp();
    }, () => undefined);
  }

  /** Stops delivery (after the event in progress), then saves the checkpoint. */
  async stop(): Promise<void> {
    clearInterval(this.flushTimer);
    this.flushTimer = undefined;
    await this.subscription?.stop();
    await this.flush();
    this.resolveCaughtUp();
  }

  /**
   * Saves the position of the last handled event if it moved. Never rejects: a failed save is
   * logged and tried again later; the cost of a lost checkpoint is only redelivery.
   */
  flush(): Promise<void> {
    this.saving = this.saving.then(() => this.save());
    return this.saving;
  }

  private async onEvent(event: RecordedEvent): Promise<void> {
    const accepted = this.accepts(event.streamId);
    if (accepted) await this.options.consumer.handle(event);
    this.handled = { position: event.position, count: this.handled.count + (accepted ? 1 : 0) };
    if ((this.live && this.handled.count - this.saved.count >= this.everyEvents) || Date.now() - this.saved.atMs >= this.everyMs) await this.flush();
  }

  private async save(): Promise<void> {
    const { position, count } = this.handled;
    if (position === undefined || position === this.saved.position) return;
    try {
      await this.options.consumer.beforeCheckpoint?.();
      await this.options.checkpoints.save(this.name, position);
      this.saved = { position, count, atMs: Date.now() };
    } catch (error) {
      this.logger.warn(`[consumer ${this.name}] saving checkpoint ${position} failed; will retry`, error);
    }
  }
}
