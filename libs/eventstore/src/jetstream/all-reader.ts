import type { Position, RecordedEvent } from '../port.js';
import { decodeCommit, type ParsedPosition, parsePosition, pushRecordedEvents } from './codec.js';
import { PullReader, type PullReaderContext, type RawMessage } from './pull-reader.js';

export interface AllReaderContext extends PullReaderContext {
  subjectPrefix: string;
  /** Told about messages on our subjects that are not commits (skipped). */
  onForeignMessage: (message: RawMessage) => void;
  inactiveThresholdMs: number;
}

/** Batches of events that may wait decoded in a pager's buffer before it stops fetching ahead. */
const PREFETCH_BATCHES = 2;
/** Messages of a pager's first pull, before it knows how many events a message holds. */
const FIRST_PULL_MESSAGES = 64;

interface InflightPull {
  batch: number;
  /** Sent ahead of need: an empty answer is not proof that nothing is stored now. */
  prefetch: boolean;
  received: Promise<number>;
}

/**
 * Events of $all after a position, page by page, through one pull consumer. A commit may hold
 * more events than a page asks for: the rest wait in a buffer for the next page. After a full
 * batch the next one is requested at once, so JetStream sends it while this one is decoded.
 */
export class AllPager {
  private buffer: RecordedEvent[] = [];
  /** Pulls in progress, oldest first: their messages are decoded into the buffer as they arrive. */
  private readonly inflight: InflightPull[] = [];
  private readonly streamIdStart: number;
  /** Messages and events decoded so far: a pull asks for about as many messages as the events wanted need (commits may hold many). */
  private messagesSeen = 0;
  private eventsSeen = 0;

  private constructor(
    private readonly ctx: AllReaderContext,
    private readonly reader: PullReader,
    /** Events up to this position are skipped: the consumer starts at its message, which may hold later events too. */
    private skipThrough: ParsedPosition | undefined,
    private lastPosition: Position | undefined,
  ) {
    this.streamIdStart = ctx.subjectPrefix.length + 1;
  }

  static async open(ctx: AllReaderContext, after: Position | undefined): Promise<AllPager> {
    const from = after === undefined ? undefined : parsePosition(after);
    const reader = await PullReader.open(ctx, { startSeq: from?.seq ?? 1, inactiveThresholdMs: ctx.inactiveThresholdMs });
    return new AllPager(ctx, reader, from, after);
  }

  /** Position of the last event handed out (or the start position): where the next page continues. */
  get position(): Position | undefined {
    return this.lastPosition;
  }

  get usable(): boolean {
    return this.reader.usable;
  }

  /** Up to `maxEvents` next events; none when everything stored so far was read. */
  async next(maxEvents: number): Promise<RecordedEvent[]> {
    while (this.buffer.length < maxEvents) {
      const pull = this.inflight[0] ?? this.startPull(this.messagesFor(maxEvents - this.buffer.length), false);
      const received = await pull.received;
      this.inflight.shift();
      if (received === pull.batch) {
        const wanted = maxEvents - this.buffer.length;
        if (this.inflight.length === 0) this.startPull(this.messagesFor(wanted > 0 ? wanted : maxEvents), true);
        continue;
      }
      // An empty answer to a pull sent ahead may be old news (a subscription relies on
      // "empty" meaning "nothing yet"): ask once more.
      if (received === 0 && pull.prefetch) continue;
      break;
    }
    let page: RecordedEvent[];
    if (this.buffer.length <= maxEvents) {
      page = this.buffer;
      this.buffer = [];
    } else {
      page = this.buffer.slice(0, maxEvents);
      this.buffer = this.buffer.slice(maxEvents);
    }
    if (page.length > 0) this.lastPosition = page[page.length - 1]!.position;
    return page;
  }

  close(): void {
    this.reader.close();
  }

  /**
   * Messages to pull for `events` more events, by the events per message seen so far; before any,
   * at most FIRST_PULL_MESSAGES, so that a short read of a log of large commits does not fetch
   * (and decode) many times what it needs.
   */
  private messagesFor(events: number): number {
    if (this.messagesSeen === 0) return Math.max(1, Math.min(events, FIRST_PULL_MESSAGES));
    return Math.max(1, Math.ceil(events / (this.eventsSeen / this.messagesSeen)));
  }

  /**
   * Sends a pull. Once half of it has arrived, the next one is sent too (if none is yet, and fewer
   * than PREFETCH_BATCHES batches of events wait in the buffer), so that JetStream is never idle
   * while a batch is decoded here, yet a reader whose caller lags (a slow subscription handler)
   * stops fetching instead of buffering the log: `next` asks again when the buffer runs low.
   */
  private startPull(batch: number, prefetch: boolean): InflightPull {
    let count = 0;
    const halfway = Math.ceil(batch / 2);
    const pull: InflightPull = { batch, prefetch, received: Promise.resolve(0) };
    pull.received = this.reader.pull(batch, (message) => {
      this.addEventsOf(message);
      if (++count === halfway && this.inflight[this.inflight.length - 1] === pull && this.buffer.length < batch * PREFETCH_BATCHES) this.startPull(batch, true);
    });
    // A rejection surfaces when the pull is awaited; a pager closed before that never asks.
    pull.received.catch(() => undefined);
    this.inflight.push(pull);
    return pull;
  }

  private addEventsOf(message: RawMessage): void {
    const commit = decodeCommit(message.data);
    const streamId = message.subject.slice(this.streamIdStart);
    if (!commit || streamId.length === 0) return this.ctx.onForeignMessage(message);
    this.messagesSeen++;
    this.eventsSeen += commit.e.length;
    let fromIndex = 0;
    if (this.skipThrough) {
      if (message.seq === this.skipThrough.seq) fromIndex = this.skipThrough.index + 1;
      this.skipThrough = undefined;
    }
    pushRecordedEvents(this.buffer, commit, streamId, message.seq, message.timestampMs, fromIndex);
  }
}

/**
 * The page source of one catch-up subscription. It keeps its consumer between pages (a live
 * subscription then costs one pull per wake-up, not a consumer per page) and starts a new one
 * when asked for another position or after a failure.
 */
export class TailCursor {
  private pager: AllPager | undefined;
  private closed = false;

  constructor(private readonly ctx: AllReaderContext) {}

  async readPage(after: Position | undefined, maxCount: number): Promise<RecordedEvent[]> {
    for (let attempt = 1; ; attempt++) {
      const reused = this.pager !== undefined && this.pager.usable && this.pager.position === after;
      if (!reused) {
        this.pager?.close();
        this.pager = undefined;
        const pager = await AllPager.open(this.ctx, after);
        if (this.closed) {
          pager.close();
          return [];
        }
        this.pager = pager;
      }
      try {
        return await this.pager!.next(maxCount);
      } catch (error) {
        this.pager?.close();
        this.pager = undefined;
        // A consumer kept from earlier may be gone (server restarted, idle too long): one fresh try.
        if (!reused || attempt > 1) throw error;
      }
    }
  }

  /** Lets go of the consumer (the subscription reads elsewhere for now); the next page opens a new one. */
  release(): void {
    this.pager?.close();
    this.pager = undefined;
  }

  close(): void {
    this.closed = true;
    this.release();
  }
}
