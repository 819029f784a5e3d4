import { AckPolicy, DeliverPolicy, type JetStreamManager, ReplayPolicy } from '@nats-io/jetstream';
import { type Msg, nanos, type NatsConnection, type Subscription } from '@nats-io/nats-core';
import { connectionInbox } from './pub-acks.js';

/** One stored message as a reader delivers it. */
export interface RawMessage {
  seq: number;
  subject: string;
  data: Uint8Array;
  /** Time JetStream stored the message, in ms since the epoch. */
  timestampMs: number;
  /** Messages left after this one (matching the filter) when it was delivered. */
  pending: number;
  msg: Msg;
}

export interface PullReaderContext {
  nc: NatsConnection;
  jsm: JetStreamManager;
  streamName: string;
  apiPrefix: string;
  timeoutMs: number;
}

export interface PullReaderStart {
  /** First stream sequence to deliver. */
  startSeq: number;
  /** Only this subject (one subject: nats-server 2.9 takes no more). */
  filterSubject?: string;
  /** How long the server keeps the consumer after the last pull. */
  inactiveThresholdMs: number;
}

interface ActivePull {
  want: number;
  got: number;
  onMessage: (message: RawMessage) => void;
  resolve: (count: number) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export class ReaderFailed extends Error {
  override name = 'ReaderFailed';
}

/**
 * Reads a JetStream stream in order through an ephemeral pull consumer (no acks, in memory),
 * fetching batches with `no_wait` pulls: a pull returns what is stored now and never waits for
 * more, so reaching the end costs one request, not an expiry. We speak the pull protocol
 * directly rather than through the client's ordered consumer so that every pull has a deadline
 * and a dropped connection or a lost message fails the read (the caller resumes from its last
 * position) instead of retrying invisibly.
 */
export class PullReader {
  private readonly inbox: string;
  private readonly sub: Subscription;
  private readonly nextSubject: string;
  /** Pulls sent and not yet answered, oldest first: JetStream answers them in order. */
  private readonly pulls: ActivePull[] = [];
  private lastDelivered = 0;
  /** 503s answered to the first pull so far (see repeatFirstPull). */
  private noResponders = 0;
  private failure: Error | undefined;
  private closed = false;

  private constructor(
    private readonly ctx: PullReaderContext,
    private readonly consumerName: string,
    /** Messages matching the filter from the start sequence when the consumer was created. */
    readonly initialPending: number,
  ) {
    this.inbox = connectionInbox(ctx.nc);
    this.nextSubject = `${ctx.apiPrefix}.CONSUMER.MSG.NEXT.${ctx.streamName}.${consumerName}`;
    this.sub = ctx.nc.subscribe(this.inbox, { callback: (error, msg) => (error ? this.fail(error) : this.onMessage(msg)) });
  }

  static async open(ctx: PullReaderContext, start: PullReaderStart): Promise<PullReader> {
    const info = await ctx.jsm.consumers.add(ctx.streamName, {
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: Math.max(1, start.startSeq),
      replay_policy: ReplayPolicy.Instant,
      mem_storage: true,
      num_replicas: 1,
      inactive_threshold: nanos(start.inactiveThresholdMs),
      ...(start.filterSubject === undefined ? {} : { filter_subject: start.filterSubject }),
    });
    return new PullReader(ctx, info.name, info.num_pending);
  }

  get usable(): boolean {
    return !this.closed && this.failure === undefined;
  }

  /**
   * Hands up to `batch` next messages, in stream order, to `onMessage` as they arrive (decoding
   * them there overlaps with JetStream sending the rest) and resolves with their number; fewer
   * than `batch` means the end of what was stored when JetStream answered. A pull may be sent
   * before the previous one is answered: JetStream serves them in order.
   */
  pull(batch: number, onMessage: (message: RawMessage) => void): Promise<number> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new ReaderFailed('reader is closed'));
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => this.fail(new ReaderFailed(`no answer to a pull within ${this.ctx.timeoutMs} ms`)), this.ctx.timeoutMs);
      this.pulls.push({ want: batch, got: 0, onMessage, resolve, reject, timer });
      try {
        this.ctx.nc.publish(this.nextSubject, JSON.stringify({ batch, no_wait: true }), { reply: this.inbox });
      } catch (error) {
        this.fail(error instanceof Error ? error : new ReaderFailed(String(error)));
      }
    });
  }

  /** Stops reading and deletes the consumer (best effort: the inactivity threshold removes it otherwise). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.sub.unsubscribe();
    this.fail(new ReaderFailed('reader closed'));
    if (!this.ctx.nc.isClosed()) this.ctx.jsm.consumers.delete(this.ctx.streamName, this.consumerName).catch(() => undefined);
  }

  private onMessage(msg: Msg): void {
    const active = this.pulls[0];
    if (!active) return;
    if (!msg.reply?.startsWith('$JS.ACK.')) return this.onStatus(msg);
    const meta = parseAckSubject(msg.reply);
    if (!meta || meta.deliverySeq !== this.lastDelivered + 1) {
      return this.fail(new ReaderFailed(`message out of order (delivery ${meta?.deliverySeq}, expected ${this.lastDelivered + 1})`));
    }
    this.lastDelivered = meta.deliverySeq;
    active.got++;
    try {
      active.onMessage({ seq: meta.streamSeq, subject: msg.subject, data: msg.data, timestampMs: meta.timestampMs, pending: meta.pending, msg });
    } catch (error) {
      return this.fail(error instanceof Error ? error : new ReaderFailed(String(error)));
    }
    if (active.got >= active.want) this.finish();
  }

  private onStatus(msg: Msg): void {
    const code = msg.headers?.code ?? 0;
    // 404: nothing stored after the cursor; 408: the no_wait pull ran out before `batch`.
    if (code === 404 || code === 408) return this.finish();
    // 100: idle heartbeat or flow control, not an answer.
    if (code === 100) return;
    // 503, no responders, to the first pull: a consumer of a replicated stream (nats-server 2.11+)
    // is created before its server listens for pulls. Nothing was delivered: ask again shortly,
    // until the pull's own deadline.
    if (code === 503 && this.lastDelivered === 0 && this.pulls.length === 1) return this.repeatFirstPull();
    this.fail(new ReaderFailed(`pull failed: ${code} ${msg.headers?.description ?? ''}`.trim()));
  }

  private repeatFirstPull(): void {
    const pull = this.pulls[0]!;
    this.noResponders++;
    setTimeout(() => {
      if (this.pulls[0] !== pull || this.failure || this.closed) return;
      try {
        this.ctx.nc.publish(this.nextSubject, JSON.stringify({ batch: pull.want, no_wait: true }), { reply: this.inbox });
      } catch (error) {
        this.fail(error instanceof Error ? error : new ReaderFailed(String(error)));
      }
    }, Math.min(2 ** this.noResponders, 50));
  }

  /** The oldest pull is answered. */
  private finish(): void {
    const done = this.pulls.shift()!;
    clearTimeout(done.timer);
    done.resolve(done.got);
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const pull of this.pulls.splice(0)) {
      clearTimeout(pull.timer);
      pull.reject(error);
    }
  }
}

interface AckMeta {
  streamSeq: number;
  deliverySeq: number;
  timestampMs: number;
  pending: number;
}

/**
 * `$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<dseq>.<ts>.<pending>` (9 tokens), or the
 * newer form with domain and account hash before the stream and a random token at the end.
 */
export function parseAckSubject(reply: string): AckMeta | undefined {
  const t = reply.split('.');
  const base = t.length === 9 ? 4 : t.length >= 12 ? 6 : -1;
  if (base < 0) return undefined;
  const streamSeq = Number(t[base + 1]);
  const deliverySeq = Number(t[base + 2]);
  const timestampNs = t[base + 3] ?? '';
  const pending = Number(t[base + 4]);
  // The timestamp is in ns (19 digits): drop the last 6 digits rather than lose precision in a float.
  const timestampMs = Number(timestampNs.slice(0, -6));
  if (![streamSeq, deliverySeq, timestampMs, pending].every(Number.isSafeInteger)) return undefined;
  return { streamSeq, deliverySeq, timestampMs, pending };
}
