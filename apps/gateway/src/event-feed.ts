import type { LoggerService } from '@nestjs/common';
import type { ReadModelPositions, TrackedReadModel } from '@agora/eventsourcing';
import { AppendNotifier, type EventStore, type Position, type RecordedEvent, type Subscription } from '@agora/eventstore';

/** Events held for SSE clients, written once as SSE text and shared by every client that wants them. */
export interface FeedEntry {
  readonly event: RecordedEvent;
  /** `sseFrame(event)` as bytes, made on first use. */
  frame?: Buffer;
}

/** Consecutive events of the log, written to a client in one `write`: `last` is the position to resume after. */
export interface FeedChunk {
  readonly bytes: Buffer;
  readonly last: Position;
}

/** Events of the log strictly after a position, read from the store once for every client that asks. */
export interface FeedPage {
  readonly entries: readonly FeedEntry[];
  /** Every entry's default frame, in chunks of about CHUNK_BYTES (made on first use, shared). */
  chunks?: FeedChunk[];
}

export interface EventFeedOptions {
  /** Live events kept in memory: a client behind the oldest reads history pages from the store instead. */
  liveEvents: number;
  /** Events per history page. */
  pageEvents: number;
  /** History pages kept after they were read, for the clients replaying behind the first. */
  cachedPages: number;
  /** History pages read from the store at once (more wait their turn). */
  concurrentReads: number;
  logger: Pick<LoggerService, 'warn'>;
  /** Read your writes: the feed counts itself in while it runs, as the read model SSE streams are served from. */
  positions?: ReadModelPositions;
}

export const DEFAULT_FEED_OPTIONS: Omit<EventFeedOptions, 'logger'> = { liveEvents: 4_096, pageEvents: 512, cachedPages: 32, concurrentReads: 4 };

/** Bytes of frames written to a socket at once, before its backpressure is looked at again. */
export const CHUNK_BYTES = 64 * 1024;

/** Key of the position "before the first event" in the maps below (no position is empty). */
const START = '';

/** Groups frames (bytes, or text made for this one use) into chunks of about CHUNK_BYTES, each naming its last event's position. */
export function chunkFrames(entries: readonly FeedEntry[], frameOf: (entry: FeedEntry) => Buffer | string | undefined): FeedChunk[] {
  const chunks: FeedChunk[] = [];
  let pending: (Buffer | string)[] = [];
  let size = 0;
  let last: Position | undefined;
  const flush = () => {
    if (pending.length === 1 && typeof pending[0] !== 'string') chunks.push({ bytes: pending[0]!, last: last! });
    else if (pending.length > 0) chunks.push({ bytes: Buffer.from(pending.join('')), last: last! });
    pending = [];
    size = 0;
  };
  for (const entry of entries) {
    const frame = frameOf(entry);
    last = entry.event.position;
    if (frame === undefined) continue;
    pending.push(frame);
    size += frame.length;
    if (size >= CHUNK_BYTES) flush();
  }
  flush();
  return chunks;
}

/**
 * What every SSE client of a gateway reads from, so that a thousand clients cost the store about
 * what one does:
 * - the live tail: one store subscription from the log's head (found with `headPosition()`, never
 *   by reading the log), keeping the last `liveEvents` events; every client whose position is among
 *   them is served from memory;
 * - history: pages of `pageEvents` events read with `readAll` after a position, the same page read
 *   once for every client asking for it at the same time, and the last `cachedPages` pages kept,
 *   so that clients replaying the log together share the reads and the SSE text.
 * Memory is bounded by those two numbers, whatever the number of clients and the log's length.
 */
export class EventFeed implements TrackedReadModel {
  readonly name = 'gateway-sse-feed';
  private entries: FeedEntry[] = [];
  /** The log's head when the feed started (its position until the first live event). */
  private startedAt: Position | undefined;
  private untrack: (() => void) | undefined;
  /** Sequence number (in this feed) of entries[0]; the entry at position p is entries[seqOf(p) - firstSeq]. */
  private firstSeq = 1;
  private readonly seqOf = new Map<Position, number>();
  private subscription: Subscription | undefined;
  private starting: Promise<void> | undefined;
  /** Wakes the streams waiting for live events. */
  private readonly arrivals = new AppendNotifier();
  private readonly pages = new Map<Position, Promise<FeedPage>>();
  private reads = 0;
  private readonly readQueue: (() => void)[] = [];
  private headAsked: Promise<Position | undefined> | undefined;

  constructor(
    private readonly store: EventStore,
    private readonly options: EventFeedOptions,
  ) {}

  /**
   * The log's head (undefined: empty log), for `from=end`. Callers who ask while a request is on
   * its way share its answer: a thousand clients connecting at once cost one request, and an event
   * committed while it was on its way may reach them as new.
   */
  head(): Promise<Position | undefined> {
    if (this.headAsked) return this.headAsked;
    const asked = this.store.headPosition().finally(() => {
      if (this.headAsked === asked) this.headAsked = undefined;
    });
    this.headAsked = asked;
    return asked;
  }

  /** Position of the last event of the log the feed has taken in (the head it started at, until the first). */
  get position(): Position | undefined {
    return this.entries.at(-1)?.event.position ?? this.startedAt;
  }

  /** Starts following the log from its head, once; rejects (and is tried again next time) when the store cannot say where its head is. */
  start(): Promise<void> {
    this.starting ??= (async () => {
      const head = await this.store.headPosition();
      this.seqOf.set(head ?? START, 0);
      this.startedAt = head;
      this.untrack ??= this.options.positions?.track(this);
      this.subscription = this.store.subscribe({
        name: 'gateway-sse-feed',
        ...(head === undefined ? {} : { after: head }),
        handler: (event) => this.push(event),
        onError: (error, { attempt }) => this.options.logger.warn(`SSE feed: ${error instanceof Error ? error.message : String(error)} (attempt ${attempt})`),
      });
    })().catch((error: unknown) => {
      this.starting = undefined;
      this.seqOf.clear();
      throw error;
    });
    return this.starting;
  }

  /**
   * Live entries strictly after `position` (at most `max`); undefined when the position is not
   * among the live ones (older, or not yet seen): read history pages then.
   */
  liveAfter(position: Position | undefined, max: number): FeedEntry[] | undefined {
    const seq = this.seqOf.get(position ?? START);
    if (seq === undefined) return undefined;
    const from = seq + 1 - this.firstSeq;
    return this.entries.slice(from, from + max);
  }

  /**
   * The events after `after`, up to a page: from the cache, or read from the store once for
   * every caller that asks meanwhile. Empty at the end of the log (not cached: the log grows).
   */
  page(after: Position | undefined): Promise<FeedPage> {
    const key = after ?? START;
    const cached = this.pages.get(key);
    if (cached) {
      // Most recently used last.
      this.pages.delete(key);
      this.pages.set(key, cached);
      return cached;
    }
    const reading = this.readPage(after);
    this.pages.set(key, reading);
    reading.then(
      (page) => {
        if (page.entries.length < this.options.pageEvents && this.pages.get(key) === reading) this.pages.delete(key);
      },
      () => {
        if (this.pages.get(key) === reading) this.pages.delete(key);
      },
    );
    while (this.pages.size > this.options.cachedPages) this.pages.delete(this.pages.keys().next().value!);
    return reading;
  }

  /** Resolves when a live event arrives, after `timeoutMs`, or when `signal` aborts. */
  waitForEvents(timeoutMs: number, signal: AbortSignal): Promise<void> {
    return this.arrivals.wait(this.arrivals.version, timeoutMs, signal);
  }

  async stop(): Promise<void> {
    this.untrack?.();
    this.untrack = undefined;
    const subscription = this.subscription;
    this.subscription = undefined;
    this.starting = undefined;
    await subscription?.stop();
    this.arrivals.notify();
  }

  private async readPage(after: Position | undefined): Promise<FeedPage> {
    if (this.reads >= this.options.concurrentReads) await new Promise<void>((resolve) => this.readQueue.push(resolve));
    this.reads++;
    try {
      const entries: FeedEntry[] = [];
      for await (const event of this.store.readAll({ ...(after === undefined ? {} : { after }), maxCount: this.options.pageEvents })) entries.push({ event });
      return { entries };
    } finally {
      this.reads--;
      this.readQueue.shift()?.();
    }
  }

  private push(event: RecordedEvent): void {
    this.entries.push({ event });
    this.seqOf.set(event.position, this.firstSeq + this.entries.length - 1);
    // Forget the oldest quarter at once (a shift per event would copy the array each time).
    const max = this.options.liveEvents;
    if (this.entries.length > max + Math.ceil(max / 4)) {
      const drop = this.entries.length - max;
      const base = this.firstSeq - 1;
      // The position before the first kept entry stays known: a client there continues with it.
      this.seqOf.forEach((seq, position) => {
        if (seq < base + drop) this.seqOf.delete(position);
      });
      this.entries = this.entries.slice(drop);
      this.firstSeq += drop;
    }
    this.arrivals.notify();
    this.options.positions?.advanced();
  }
}
