import { randomUUID } from 'node:crypto';
import {
  ConnectionClosed,
  NoResponders,
  PayloadTooLarge,
  RequestTimedOut,
  type WireConnection,
  type WireDelivery,
  type WireHeaders,
  type WireMessage,
  type WireSubscribeOptions,
  type WireSubscription,
} from './wire.js';

export interface InProcessBusOptions {
  /** Largest message the bus carries, like NATS' `max_payload`. Default 1 MiB (NATS' default). */
  maxPayload?: number;
}

interface BusSubscription {
  pattern: string[];
  subject: string;
  queue: string | undefined;
  callback: (message: WireDelivery) => void;
  /** Inboxes of requests take one reply and go. */
  once: boolean;
  closed: boolean;
}

/** True when `subject` matches the subscription tokens, with NATS' `*` and `>`. */
export function subjectMatches(pattern: readonly string[], subject: readonly string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const token = pattern[i];
    if (token === '>') return subject.length > i;
    if (i >= subject.length) return false;
    if (token !== '*' && token !== subject[i]) return false;
  }
  return pattern.length === subject.length;
}

/**
 * An in-memory stand-in for a NATS server, for standalone mode (docs/decisions/0007-one-process-or-many.md), with the
 * semantics services rely on: subjects with wildcards, queue groups (one member per group gets
 * each message), request/reply with a timeout and an immediate "no responders", a payload limit.
 * Bodies are bytes, copied on delivery and delivered asynchronously, as if they had crossed a
 * socket: a handler can neither mutate the sender's buffer nor run inside the sender's call stack.
 */
export class InProcessBus implements WireConnection {
  readonly maxPayload: number;
  private subscriptions: BusSubscription[] = [];
  /** Round-robin counters per queue group, so replicas share the load evenly. */
  private readonly queueTurns = new Map<string, number>();
  private closed = false;

  constructor(options: InProcessBusOptions = {}) {
    this.maxPayload = options.maxPayload ?? 1024 * 1024;
  }

  subscribe(subject: string, options: WireSubscribeOptions): WireSubscription {
    return this.addSubscription(subject, options.callback, options.queue, false);
  }

  publish(subject: string, data: Uint8Array, options: { headers?: WireHeaders; reply?: string } = {}): void {
    if (this.closed) throw new ConnectionClosed('the in-process bus is closed');
    if (data.length > this.maxPayload) throw new PayloadTooLarge(data.length, this.maxPayload);
    const receivers = this.receiversOf(subject);
    for (const sub of receivers) {
      if (sub.once) this.remove(sub);
      const message = this.message(subject, data, options.reply, options.headers ?? {});
      setImmediate(() => {
        // An unsubscribe after publish but before delivery wins, as with NATS.
        if (sub.closed && !sub.once) return;
        sub.callback(message);
      });
    }
  }

  request(subject: string, data: Uint8Array, options: { timeoutMs: number; headers?: WireHeaders }): Promise<WireMessage> {
    if (this.closed) return Promise.reject(new ConnectionClosed('the in-process bus is closed'));
    if (this.receiversOf(subject).length === 0) return Promise.reject(new NoResponders(subject));
    return new Promise<WireMessage>((resolve, reject) => {
      const inbox = `_INBOX.${randomUUID().replaceAll('-', '')}`;
      const timer = setTimeout(() => {
        sub.unsubscribe();
        reject(new RequestTimedOut(subject, options.timeoutMs));
      }, options.timeoutMs);
      const sub = this.addSubscription(
        inbox,
        (reply) => {
          clearTimeout(timer);
          resolve(reply);
        },
        undefined,
        true,
      );
      try {
        this.publish(subject, data, { reply: inbox, ...(options.headers ? { headers: options.headers } : {}) });
      } catch (error) {
        clearTimeout(timer);
        sub.unsubscribe();
        reject(error);
      }
    });
  }

  async gather(subject: string, data: Uint8Array, options: { maxWaitMs: number }): Promise<WireMessage[]> {
    if (this.closed) throw new ConnectionClosed('the in-process bus is closed');
    const receivers = this.receiversOf(subject).length;
    if (receivers === 0) return [];
    const replies: WireMessage[] = [];
    const inbox = `_INBOX.${randomUUID().replaceAll('-', '')}`;
    let timer: NodeJS.Timeout | undefined;
    // Every receiver is in this process: once each has answered there is nothing more to wait for
    // (and on a busy event loop the wait could end before an answer that is on its way).
    let allAnswered: () => void = () => undefined;
    const sub = this.addSubscription(
      inbox,
      (reply) => {
        replies.push(reply);
        if (replies.length >= receivers) allAnswered();
      },
      undefined,
      false,
    );
    try {
      await new Promise<void>((resolve) => {
        allAnswered = resolve;
        timer = setTimeout(resolve, options.maxWaitMs);
        this.publish(subject, data, { reply: inbox });
      });
    } finally {
      clearTimeout(timer);
      sub.unsubscribe();
    }
    return replies;
  }

  async flush(): Promise<void> {
    if (this.closed) throw new ConnectionClosed('the in-process bus is closed');
  }

  /** Drops every subscription; later publishes and requests fail with ConnectionClosed. */
  close(): void {
    this.closed = true;
    for (const sub of this.subscriptions) sub.closed = true;
    this.subscriptions = [];
  }

  /** Number of live subscriptions (tests and health checks). */
  get subscriptionCount(): number {
    return this.subscriptions.length;
  }

  private addSubscription(subject: string, callback: (message: WireDelivery) => void, queue: string | undefined, once: boolean): WireSubscription {
    if (this.closed) throw new ConnectionClosed('the in-process bus is closed');
    if (!/^[^\s]+$/.test(subject) || subject.split('.').some((t) => t === '')) throw new TypeError(`invalid subject ${JSON.stringify(subject)}`);
    const sub: BusSubscription = { pattern: subject.split('.'), subject, queue: queue || undefined, callback, once, closed: false };
    this.subscriptions.push(sub);
    return { unsubscribe: () => this.remove(sub) };
  }

  private remove(sub: BusSubscription): void {
    sub.closed = true;
    this.subscriptions = this.subscriptions.filter((s) => s !== sub);
  }

  /** Every plain subscriber, plus one member of each queue group (grouped by subject and queue, as NATS does). */
  private receiversOf(subject: string): BusSubscription[] {
    const tokens = subject.split('.');
    const plain: BusSubscription[] = [];
    const groups = new Map<string, BusSubscription[]>();
    for (const sub of this.subscriptions) {
      if (!subjectMatches(sub.pattern, tokens)) continue;
      if (sub.queue === undefined) {
        plain.push(sub);
        continue;
      }
      const key = `${sub.subject} ${sub.queue}`;
      const members = groups.get(key) ?? [];
      members.push(sub);
      groups.set(key, members);
    }
    for (const [key, members] of groups) {
      const turn = this.queueTurns.get(key) ?? 0;
      this.queueTurns.set(key, turn + 1);
      plain.push(members[turn % members.length] as BusSubscription);
    }
    return plain;
  }

  private message(subject: string, data: Uint8Array, reply: string | undefined, headers: WireHeaders): WireDelivery {
    return {
      subject,
      data: data.slice(),
      headers: { ...headers },
      ...(reply === undefined ? {} : { reply }),
      respond: (body: Uint8Array) => {
        if (reply === undefined || this.closed) return false;
        this.publish(reply, body);
        return true;
      },
    };
  }
}
