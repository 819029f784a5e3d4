import { createInbox, headers, PermissionViolationError, type Msg, type NatsConnection, type Subscription } from '@nats-io/nats-core';

/** JetStream's answer to one publish: stored (or a duplicate of a stored message), or refused with its error code. An atomic batch's ack gives the sequence of its last message. */
export type PubAck = { kind: 'ack'; seq: number; duplicate: boolean } | { kind: 'refused'; errCode: number; description: string };

/** One message of an atomic batch: stored only with all the others, if its expected sequence holds. */
export interface BatchMessage {
  subject: string;
  body: string | Uint8Array;
  msgId: string;
  lastSubjectSequence: number;
}

export interface PublishExpecting {
  /** `Nats-Msg-Id`: JetStream stores one message per id within its duplicate window. */
  msgId: string;
  /** `Nats-Expected-Last-Subject-Sequence`: stored only if the subject's last message has this sequence. */
  lastSubjectSequence: number;
  timeoutMs: number;
}

interface Waiting {
  subject: string;
  resolve(ack: PubAck): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * Publish-with-ack for appends, on one inbox subscription (`_INBOX.<id>.*`) held for all of them,
 * a token per publish. The same protocol as the client's `jetstream().publish`, without its
 * general request machinery, which costs about twice the CPU per publish on this path (it builds
 * an Error with a stack trace for every request it settles).
 */
/**
 * A new inbox under the connection's own inbox prefix (a service's user may read only
 * `_INBOX_<service>.>`; nats.js's own JetStream consumers do the same).
 */
export function connectionInbox(nc: NatsConnection): string {
  return createInbox((nc as { options?: { inboxPrefix?: string } }).options?.inboxPrefix);
}

export class PubAcks {
  private readonly inbox: string;
  private readonly waiting = new Map<string, Waiting>();
  private subscription: Subscription | undefined;
  /** The connection's status events, for the server's refusals of our publishes (a permissions violation). */
  private statuses: AsyncIterable<unknown> | undefined;
  private next = 0;

  constructor(private readonly nc: NatsConnection) {
    this.inbox = `${connectionInbox(nc)}.`;
    // A closed connection answers nothing more: fail what waits now rather than at its timeout.
    void nc.closed().then(() => this.failAll(new Error('the NATS connection is closed')));
  }

  publish(subject: string, body: string | Uint8Array, expecting: PublishExpecting): Promise<PubAck> {
    const h = headers();
    h.set('Nats-Msg-Id', expecting.msgId);
    h.set('Nats-Expected-Last-Subject-Sequence', String(expecting.lastSubjectSequence));
    return this.request(subject, body, h, expecting.timeoutMs);
  }

  /**
   * An atomic batch (ADR-50, nats-server 2.12+, a stream with `allow_atomic`): every message but the
   * last published without a reply, the last with `Nats-Batch-Commit` and a reply, whose ack (or
   * refusal, with the server's error code) answers for the whole batch. Each message carries its own
   * message id and expected last subject sequence (the client's Batch.add() drops the latter).
   */
  publishBatch(batchId: string, messages: readonly BatchMessage[], timeoutMs: number): Promise<PubAck> {
    const headersOf = (m: BatchMessage, i: number) => {
      const h = headers();
      h.set('Nats-Batch-Id', batchId);
      h.set('Nats-Batch-Sequence', String(i + 1));
      h.set('Nats-Msg-Id', m.msgId);
      h.set('Nats-Expected-Last-Subject-Sequence', String(m.lastSubjectSequence));
      return h;
    };
    try {
      messages.slice(0, -1).forEach((m, i) => this.nc.publish(m.subject, m.body, { headers: headersOf(m, i) }));
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    const last = messages.at(-1)!;
    const h = headersOf(last, messages.length - 1);
    h.set('Nats-Batch-Commit', '1');
    return this.request(last.subject, last.body, h, timeoutMs);
  }

  private request(subject: string, body: string | Uint8Array, h: ReturnType<typeof headers>, timeoutMs: number): Promise<PubAck> {
    this.subscription ??= this.nc.subscribe(`${this.inbox}*`, { callback: (error, msg) => this.onReply(error, msg) });
    if (this.statuses === undefined) this.watchRefusals();
    const token = (++this.next).toString(36);
    const expecting = { timeoutMs };
    return new Promise<PubAck>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(token);
        reject(new Error(`no acknowledgement from JetStream for a publish on ${subject} within ${expecting.timeoutMs} ms`));
      }, expecting.timeoutMs);
      this.waiting.set(token, { subject, resolve, reject, timer });
      try {
        this.nc.publish(subject, body, { reply: `${this.inbox}${token}`, headers: h });
      } catch (error) {
        clearTimeout(timer);
        this.waiting.delete(token);
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  /** Stops listening; publishes still waiting fail. */
  close(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    // The client's iterators have stop(), which unregisters them (the interface only says AsyncIterable).
    (this.statuses as Partial<{ stop(): void }> | undefined)?.stop?.();
    this.statuses = undefined;
    this.failAll(new Error('the event store is closed'));
  }

  private onReply(error: Error | null, msg: Msg): void {
    if (error) {
      // The subscription itself failed (a permissions violation, the connection closed): nothing more will come.
      this.subscription = undefined;
      this.failAll(error);
      return;
    }
    const token = msg.subject.slice(this.inbox.length);
    const waiting = this.waiting.get(token);
    if (!waiting) return; // timed out already
    this.waiting.delete(token);
    clearTimeout(waiting.timer);
    try {
      waiting.resolve(pubAckOf(waiting.subject, msg));
    } catch (failure) {
      waiting.reject(failure as Error);
    }
  }

  /** A publish the server refused (no permission to publish on its subject) gets no ack: it fails at once with the server's reason. */
  private watchRefusals(): void {
    const statuses = this.nc.status();
    this.statuses = statuses;
    void (async () => {
      for await (const status of statuses) {
        if (status.type !== 'error' || !(status.error instanceof PermissionViolationError) || status.error.operation !== 'publish') continue;
        const refused = status.error;
        for (const [token, waiting] of this.waiting) {
          if (waiting.subject !== refused.subject) continue;
          this.waiting.delete(token);
          clearTimeout(waiting.timer);
          waiting.reject(refused);
        }
      }
    })().catch(() => undefined);
  }

  private failAll(error: Error): void {
    for (const waiting of this.waiting.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(error);
    }
    this.waiting.clear();
  }
}

/** The ack in a reply, or throws: no stream listens on the subject (a 503 status), or the reply is not an ack. */
function pubAckOf(subject: string, msg: Msg): PubAck {
  if (msg.data.length === 0 && msg.headers?.code === 503) throw new Error(`no JetStream stream takes messages on ${subject} (no responders)`);
  let reply: { stream?: unknown; seq?: unknown; duplicate?: unknown; error?: { err_code?: unknown; code?: unknown; description?: unknown } };
  try {
    reply = msg.json();
  } catch {
    throw new Error(`JetStream answered a publish on ${subject} with something that is not JSON`);
  }
  if (reply.error !== undefined) {
    const { err_code, code, description } = reply.error;
    return { kind: 'refused', errCode: typeof err_code === 'number' ? err_code : typeof code === 'number' ? code : 0, description: String(description ?? 'unknown error') };
  }
  if (typeof reply.stream !== 'string' || reply.stream === '' || typeof reply.seq !== 'number') throw new Error(`JetStream answered a publish on ${subject} with an invalid ack`);
  return { kind: 'ack', seq: reply.seq, duplicate: reply.duplicate === true };
}
