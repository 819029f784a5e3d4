import type { IncomingMessage, ServerResponse } from 'node:http';
import { COMMAND_ID_CATEGORY } from '@agora/runtime';
import { backoffDelay, InvalidPosition, sleep, type EventStore, type Position, type RecordedEvent } from '@agora/eventstore';
import type { LoggerService } from '@nestjs/common';
import { categoryOf, DEBATE_SSE_TYPES, SCHEMA_VERSION_FIELD } from '@agora/contracts';
import type { EndReason } from './credentials.js';
import { chunkFrames, type EventFeed, type FeedChunk, type FeedEntry, type FeedPage } from './event-feed.js';
import { GatewayError } from './http-reply.js';
import { metadataFrame, type EventView } from './read-visibility.js';

export const DEFAULT_HEARTBEAT_MS = 15_000;

/** What a client asked of GET /v1/events. */
export interface EventStreamRequest {
  /** Send events strictly after this position; undefined: from the first event. */
  after: Position | undefined;
  /** Skip history: only events committed from now on (ignored when `after` is given). */
  fromEnd: boolean;
  /** Stream categories to keep (empty: all). */
  categories: ReadonlySet<string>;
  /** Event types to keep (empty: all). */
  types: ReadonlySet<string>;
  /** Only the events of this stream (a debate's). */
  streamId?: string;
  /** Read your writes (`?minPosition=`): the stream starts only once the gateway's feed has taken in this position. */
  minPosition?: Position;
}

/**
 * Reads the request: `Last-Event-ID` (what EventSource sends when it reconnects) wins over
 * `?after=`, so a reconnect continues where the stream stopped even when the URL still carries
 * the first position.
 */
export function parseEventStreamRequest(req: IncomingMessage): EventStreamRequest {
  const url = new URL(req.url ?? '/', 'http://gateway');
  const header = req.headers['last-event-id'];
  const lastEventId = (Array.isArray(header) ? header[0] : header)?.trim();
  const after = lastEventId || url.searchParams.get('after') || undefined;
  const from = url.searchParams.get('from');
  if (from !== null && from !== 'end' && from !== 'start') {
    throw new GatewayError('invalid_command', `from=${from} is not understood: use from=end for new events only, or after=<position>`);
  }
  const minPosition = url.searchParams.get('minPosition') || undefined;
  return {
    after,
    fromEnd: from === 'end',
    ...(minPosition === undefined ? {} : { minPosition }),
    categories: new Set(url.searchParams.getAll('category').filter((c) => c !== '')),
    types: new Set(url.searchParams.getAll('type').filter((t) => t !== '')),
  };
}

/** One SSE message: the position as id (what Last-Event-ID hands back), the type as event name. */
export function sseFrame(event: RecordedEvent): string {
  const { id, type, streamId, revision, position, recordedAt, data, metadata } = event;
  // JSON.stringify escapes line breaks inside strings, so `data` is always a single line.
  return `id: ${position}\nevent: ${type}\ndata: ${JSON.stringify({ id, type, streamId, revision, position, recordedAt, data, metadata })}\n\n`;
}

/**
 * The seed 004 frame of a debate event (GET /v1/debates/:id/events): the seed's event type as the
 * SSE event name (DEBATE_SSE_TYPES: the seed's nine, and a name for every other move of the
 * debate), the position as id (so Last-Event-ID resumes), and the event's data with its log type,
 * that type's schema version, position and time. Undefined for an event that is not a debate event.
 */
export function debateSseFrame(event: RecordedEvent): string | undefined {
  const name = (DEBATE_SSE_TYPES as Readonly<Record<string, string>>)[event.type];
  if (name === undefined) return undefined;
  const { type, position, recordedAt, data, metadata } = event;
  return `id: ${position}\nevent: ${name}\ndata: ${JSON.stringify({ type: name, logType: type, logSchemaVersion: metadata[SCHEMA_VERSION_FIELD], position, recordedAt, ...(data as Record<string, unknown>) })}\n\n`;
}

/**
 * One client's event stream, fed by the gateway's EventFeed: history pages shared with the other
 * clients replaying, then the live events the feed keeps, written as SSE with backpressure (the
 * next chunk waits until the socket drains), a heartbeat comment while idle, and everything
 * stopped when the client goes away. A client that falls behind the live events the feed keeps
 * continues from history pages; one that reads nothing for slowClientMs is dropped with the
 * position to resume after.
 */
export class EventStreamSession {
  private heartbeat: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly abort = new AbortController();
  private lastPosition: Position | undefined;
  private running: Promise<void> | undefined;
  private readonly closed: Promise<void>;
  private readonly aborted = new Promise<void>((resolve) => this.abort.signal.addEventListener('abort', () => resolve(), { once: true }));

  constructor(
    private readonly res: ServerResponse,
    private readonly request: EventStreamRequest,
    private readonly options: {
      heartbeatMs: number;
      slowClientMs?: number;
      logger: Pick<LoggerService, 'warn'>;
      frame?: (event: RecordedEvent) => string | undefined;
      /** What a reader who does not read everything sees of each event (closed reads; see read-visibility.ts). */
      view?: EventView;
    },
  ) {
    this.closed = res.destroyed ? Promise.resolve() : new Promise((resolve) => res.once('close', resolve));
  }

  /** Writes the headers and starts delivering after `after` (already checked by the caller). */
  start(feed: EventFeed, after: Position | undefined): void {
    this.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      // nginx would otherwise buffer the stream.
      'x-accel-buffering': 'no',
    });
    // Tells EventSource how soon to reconnect, and gets the headers on their way now.
    this.res.write('retry: 2000\n\n');
    this.heartbeat = setInterval(() => this.res.write(': heartbeat\n\n'), this.options.heartbeatMs);
    this.heartbeat.unref();
    this.lastPosition = after;
    this.running = this.run(feed, after).catch((error: unknown) => {
      this.options.logger.warn(`SSE stream ended: ${error instanceof Error ? error.message : String(error)}`);
      void this.stop();
    });
    void this.closed.then(() => this.stop());
  }

  /** Whether this client asked for no category, type or stream, with the default frame: it can then be sent the chunks shared by all such clients (sharedFrame). */
  private get takesEverything(): boolean {
    const { categories, types, streamId } = this.request;
    return this.options.frame === undefined && this.options.view === undefined && categories.size === 0 && types.size === 0 && streamId === undefined;
  }

  private async run(feed: EventFeed, after: Position | undefined): Promise<void> {
    const { signal } = this.abort;
    let position = after;
    let failures = 0;
    while (!signal.aborted) {
      const live = feed.liveAfter(position, LIVE_BATCH);
      if (live !== undefined) {
        if (live.length === 0) {
          await feed.waitForEvents(IDLE_RECHECK_MS, signal);
          continue;
        }
        await this.options.view?.prepare(live.map((entry) => entry.event));
        if (!(await this.send(chunkFrames(live, (entry) => this.frameOf(entry))))) return;
        position = live[live.length - 1]!.event.position;
        continue;
      }
      let page: FeedPage;
      try {
        page = await feed.page(position);
        failures = 0;
      } catch (error) {
        failures++;
        this.options.logger.warn(`SSE stream: reading history after ${position ?? 'the start'}: ${error instanceof Error ? error.message : String(error)} (attempt ${failures})`);
        await sleep(backoffDelay(failures, undefined), signal);
        continue;
      }
      if (page.entries.length === 0) {
        // The store has nothing after this position yet, or the feed has not caught up with it.
        await feed.waitForEvents(IDLE_RECHECK_MS, signal);
        continue;
      }
      await this.options.view?.prepare(page.entries.map((entry) => entry.event));
      const chunks = this.takesEverything ? (page.chunks ??= chunkFrames(page.entries, sharedFrame)) : chunkFrames(page.entries, (entry) => this.frameOf(entry));
      if (!(await this.send(chunks))) return;
      position = page.entries[page.entries.length - 1]!.event.position;
    }
  }

  private frameOf(entry: FeedEntry): Buffer | undefined {
    if (!this.wanted(entry.event)) return undefined;
    const sight = this.options.view?.sight(entry.event) ?? 'full';
    if (sight === 'none') return undefined;
    if (sight === 'metadata') return Buffer.from(metadataFrame(entry.event));
    if (this.options.frame === undefined) return defaultFrame(entry);
    const frame = this.options.frame(entry.event);
    return frame === undefined ? undefined : Buffer.from(frame);
  }

  private wanted(event: RecordedEvent): boolean {
    const { categories, types, streamId } = this.request;
    if (streamId !== undefined && event.streamId !== streamId) return false;
    const category = categoryOf(event.streamId);
    // Command id reservations are the log's bookkeeping: shown only to who asks for their category.
    if (category === COMMAND_ID_CATEGORY && !categories.has(category)) return false;
    return (categories.size === 0 || categories.has(category)) && (types.size === 0 || types.has(event.type));
  }

  /** Writes the chunks in order, waiting for the socket to drain between them; false when the stream ended (client gone, or dropped as slow). */
  private async send(chunks: readonly FeedChunk[]): Promise<boolean> {
    for (const chunk of chunks) {
      if (this.stopped) return false;
      const written = this.res.write(chunk.bytes);
      this.lastPosition = chunk.last;
      if (!written) {
        // Backpressure: wait until the client has read, or has gone; a client that reads nothing
        // for slowClientMs is dropped with its resume position instead.
        let timer: NodeJS.Timeout | undefined;
        const slow = new Promise<'slow'>((resolve) => (timer = setTimeout(() => resolve('slow'), this.options.slowClientMs ?? 30_000)));
        const outcome = await Promise.race([new Promise((resolve) => this.res.once('drain', resolve)), this.closed, this.aborted, slow]);
        clearTimeout(timer);
        if (outcome === 'slow') {
          this.dropSlowClient();
          return false;
        }
      }
    }
    return !this.stopped;
  }

  /**
   * Ends the stream of a client that stopped reading: a last `dropped` event names the position to
   * resume after (the `id` of the last event written, which EventSource sends back as
   * Last-Event-ID when it reconnects), and its reading stops, so it costs nothing more.
   */
  private dropSlowClient(): void {
    const resumeAfter = this.lastPosition ?? null;
    this.options.logger.warn(`SSE client dropped: it read nothing for ${this.options.slowClientMs ?? 30_000} ms (resume after ${resumeAfter ?? 'the start'})`);
    this.res.write(`event: dropped\ndata: ${JSON.stringify({ reason: 'slow_client', resumeAfter })}\n\n`);
    void this.stop();
    // What is still buffered goes out if the client reads again; a client that never does is cut off.
    setTimeout(
      () => {
        if (!this.res.writableFinished) this.res.destroy();
      },
      Math.max(10_000, 2 * (this.options.slowClientMs ?? 30_000)),
    ).unref();
  }

  /**
   * Ends the stream because its reader's credential no longer holds: a last `event: end` says why
   * (`token_expired`, `session_ended`, `reader_disabled`, `roles_changed`, `key_changed`) and
   * names `resumeAfter`, the position to reconnect after with a fresh credential; nothing follows it.
   */
  async end(reason: EndReason): Promise<void> {
    if (this.stopped) return;
    if (!this.res.writableEnded && !this.res.destroyed) this.res.write(`event: end\ndata: ${JSON.stringify({ reason, resumeAfter: this.lastPosition ?? null })}\n\n`);
    await this.stop();
  }

  /** Stops reading and ends the response. Safe to call twice. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.heartbeat);
    this.abort.abort();
    await this.running;
    if (!this.res.writableEnded) this.res.end();
  }
}

/** Live events written to a client per round (its backpressure is looked at every CHUNK_BYTES). */
const LIVE_BATCH = 1_024;
/** A client waiting for events looks again this often even when nothing woke it. */
const IDLE_RECHECK_MS = 1_000;

/** The shared default frame of an entry, made once. */
function defaultFrame(entry: FeedEntry): Buffer {
  return (entry.frame ??= Buffer.from(sseFrame(entry.event)));
}

/** What a client that asked for no category or type gets of a history page's entry: everything but command id reservations (as text: the page's chunks are its only copy). */
function sharedFrame(entry: FeedEntry): string | undefined {
  return categoryOf(entry.event.streamId) === COMMAND_ID_CATEGORY ? undefined : sseFrame(entry.event);
}

/** Checks that a position names a place in this store before the stream starts, so a typo gets a 400 rather than an empty stream that retries for ever. */
export async function checkPosition(store: EventStore, after: Position): Promise<void> {
  try {
    for await (const _event of store.readAll({ after, maxCount: 1 })) break;
  } catch (error) {
    if (error instanceof InvalidPosition) throw new GatewayError('invalid_command', `Last-Event-ID / after ${JSON.stringify(after)} is not a position of this event store`, { after });
    throw new GatewayError('unavailable', `the event store cannot be read: ${error instanceof Error ? error.message : String(error)}`);
  }
}
