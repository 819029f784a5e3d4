/**
 * SSE clients for the load run: plain node:http, the stream parsed as bytes (only the `id:` lines
 * and a `dropped` event are looked at), every id checked against the log as it arrives.
 */
import { type Agent, get, type IncomingMessage } from 'node:http';

const ID_LINE = Buffer.from('\nid: ');
const DROPPED = Buffer.from('\nevent: dropped\ndata: ');
const FRAME_END = Buffer.from('\n\n');
const NEWLINE = 10;

export interface ClientResult {
  kind: 'replay' | 'live';
  /** ms from the request to the response headers (first connection). */
  headersMs: number | undefined;
  /** ms from the request until every event of the history had arrived (replay clients). */
  historyMs: number | undefined;
  /** Events received. */
  received: number;
  /** The first event that was not the one expected next (position expected, position got). */
  mismatch: { index: number; expected: string; got: string } | undefined;
  /** Times the gateway dropped it as slow (each time it resumed from the position named). */
  drops: number;
  /** Times its connection closed otherwise and it reconnected after the last id received, as EventSource does. */
  reconnects: number;
  /** A drop whose `resumeAfter` was not the last id received. */
  badResume: string | undefined;
  error: string | undefined;
}

/**
 * One client. `history` is the log (positions, in order, as SSE shows it) up to where live clients
 * start; a replay client must get it whole and then the tail, a live client the tail only. The
 * tail is kept and compared at the end, when the whole log is known.
 */
export class SseClient {
  readonly result: ClientResult;
  readonly tail: string[] = [];
  private index = 0;
  private lastId: string | undefined;
  private carry: Buffer | undefined;
  private response: IncomingMessage | undefined;
  private readonly started = performance.now();
  private closed = false;

  constructor(
    private readonly url: string,
    readonly kind: 'replay' | 'live',
    private readonly history: readonly string[],
    private readonly agent: Agent,
    /** Stop reading for this long once the headers are in (a slow client, which the gateway should drop). */
    private readonly pauseMs = 0,
  ) {
    this.result = { kind, headersMs: undefined, historyMs: kind === 'replay' && history.length === 0 ? 0 : undefined, received: 0, mismatch: undefined, drops: 0, reconnects: 0, badResume: undefined, error: undefined };
  }

  /** Resolves when the response headers arrived (or the request failed). */
  open(): Promise<void> {
    return this.connect(this.kind === 'replay' ? '/v1/events' : '/v1/events?from=end', undefined);
  }

  get historyDone(): boolean {
    return this.kind === 'live' || this.index >= this.history.length;
  }

  close(): void {
    this.closed = true;
    this.response?.destroy();
  }

  private connect(path: string, lastEventId: string | undefined): Promise<void> {
    const generation = ++this.generation;
    const current = () => generation === this.generation && !this.closed;
    return new Promise((resolve) => {
      const request = get(`${this.url}${path}`, { agent: this.agent, headers: lastEventId === undefined ? {} : { 'last-event-id': lastEventId } }, (res) => {
        this.response = res;
        this.result.headersMs ??= performance.now() - this.started;
        if (res.statusCode !== 200) {
          this.result.error = `HTTP ${res.statusCode}`;
          res.resume();
          return resolve();
        }
        this.carry = undefined;
        res.on('data', (chunk: Buffer) => {
          if (current()) this.onData(chunk);
        });
        // The stream ended or was cut (a dropped client not read to its end in time is cut off): reconnect after the last id, as EventSource does.
        res.on('close', () => {
          if (!current()) return;
          this.result.reconnects++;
          this.reconnect();
        });
        if (this.pauseMs > 0 && generation === 1) {
          res.pause();
          setTimeout(() => res.resume(), this.pauseMs).unref();
        }
        resolve();
      });
      request.on('error', (error) => {
        if (current()) this.result.error ??= error.message;
        resolve();
      });
    });
  }

  private generation = 0;

  /** Reads the whole frames received so far (up to the last blank line); the rest waits for the next chunk, from the newline before it. */
  private onData(chunk: Buffer): void {
    const buf = this.carry === undefined ? chunk : Buffer.concat([this.carry, chunk]);
    const boundary = buf.lastIndexOf(FRAME_END);
    if (boundary < 0) {
      this.carry = buf;
      return;
    }
    let at = 0;
    for (;;) {
      const id = buf.indexOf(ID_LINE, at);
      if (id < 0 || id > boundary) break;
      const end = buf.indexOf(NEWLINE, id + ID_LINE.length);
      this.onId(buf.toString('latin1', id + ID_LINE.length, end));
      at = end;
    }
    const dropped = buf.indexOf(DROPPED, at);
    if (dropped >= 0 && dropped < boundary) return this.onDropped(buf.toString('utf8', dropped + DROPPED.length, buf.indexOf(NEWLINE, dropped + DROPPED.length)));
    this.carry = buf.subarray(boundary + 1);
  }

  private reconnect(): void {
    this.generation++;
    this.response?.destroy();
    this.carry = undefined;
    setTimeout(() => {
      if (!this.closed) void this.connect(this.lastId === undefined && this.kind === 'live' ? '/v1/events?from=end' : '/v1/events', this.lastId);
    }, 100).unref();
  }

  private onId(position: string): void {
    this.result.received++;
    this.lastId = position;
    if (this.index < this.history.length && this.kind === 'replay') {
      const expected = this.history[this.index]!;
      if (position !== expected) this.result.mismatch ??= { index: this.index, expected, got: position };
      this.index++;
      if (this.index === this.history.length) this.result.historyMs = performance.now() - this.started;
      return;
    }
    this.tail.push(position);
  }

  /** Dropped as slow: the gateway names where to resume, which must be the last id received; reconnect from there. */
  private onDropped(json: string): void {
    this.result.drops++;
    const { resumeAfter } = JSON.parse(json) as { resumeAfter: string | null };
    if ((resumeAfter ?? undefined) !== this.lastId) this.result.badResume ??= `resumeAfter ${resumeAfter}, last id received ${this.lastId}`;
    this.reconnect();
  }
}

/** What the main thread asks of the clients' worker thread. */
export type ToWorker = { type: 'poll'; replayTail: number; liveTail: number } | { type: 'finish' } | { type: 'baseline'; timeoutMs: number };
export type FromWorker =
  | { type: 'opened' }
  | { type: 'progress'; done: boolean }
  | { type: 'results'; results: ClientResult[]; tails: string[][]; historyDone: boolean[] }
  | { type: 'baseline'; ms: number | undefined };

export interface WorkerSetup {
  url: string;
  history: string[];
  kinds: ('replay' | 'live')[];
  pauses: number[];
}
