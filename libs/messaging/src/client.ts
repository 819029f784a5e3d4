import { Reply as ReplySchema, type Reply } from '@agora/contracts';
import type { NatsConnection } from '@nats-io/nats-core';
import { inSpan, SpanKind, traceHeaders, tracingOn } from '@agora/tracing';
import type { InProcessBus } from './in-process-bus.js';
import { connectNats, NatsWire, type NatsConnectOptions } from './nats-wire.js';
import { errorReply } from './reply.js';
import { ConnectionClosed, decodeJson, encodeJson, NoResponders, PayloadTooLarge, RequestTimedOut, type WireConnection, type WireHeaders, type WireSubscription } from './wire.js';

export const DEFAULT_REQUEST_TIMEOUT_MS = 5_000;

export interface RequestOptions {
  /** Default 5000 ms. A request never waits longer: no reply in time is a `timeout` reply. */
  timeoutMs?: number;
  /** Headers sent with the request (e.g. the reader's read token, READ_TOKEN.natsHeader). */
  headers?: WireHeaders;
}

/** A notification as a listener receives it. */
export interface AgoraMessage {
  subject: string;
  /** The JSON body, parsed. */
  body: unknown;
  headers: WireHeaders;
}

/**
 * How an app, the gateway, the CLI or a test speaks to Agora's services. `request` always
 * resolves with a Reply: a transport failure becomes an error reply with a code (`timeout`,
 * `unavailable`, `payload_too_large`), so callers handle one shape.
 */
export interface AgoraClient {
  request<T = unknown>(subject: string, body: unknown, options?: RequestOptions): Promise<Reply<T>>;
  /** Fire-and-forget notification (no reply). Resolves once handed to the transport. */
  publish(subject: string, data: unknown, options?: { headers?: WireHeaders }): Promise<void>;
  /** Listens on a subject (wildcards allowed); bodies that are not JSON are skipped. */
  subscribe(subject: string, handler: (message: AgoraMessage) => void, options?: { queue?: string; onError?: (error: Error) => void }): WireSubscription;
  /** Every answer, within `maxWaitMs`, to a request all listeners answer (`$SRV.PING.<service>`: each replica); bodies that are not JSON are skipped. */
  gather<T = unknown>(subject: string, body: unknown, options: { maxWaitMs: number }): Promise<T[]>;
  close(): Promise<void>;
}

/** The one implementation behind both transports, over a WireConnection. */
abstract class WireAgoraClient implements AgoraClient {
  private readonly subscriptions = new Set<WireSubscription>();

  protected constructor(protected readonly wire: WireConnection) {}

  request<T = unknown>(subject: string, body: unknown, options: RequestOptions = {}): Promise<Reply<T>> {
    if (!tracingOn()) return this.send<T>(subject, body, options, options.headers);
    // A client span; the request carries its trace context in its headers (W3C traceparent).
    return inSpan(`agora.request ${subject}`, { kind: SpanKind.CLIENT, attributes: { 'messaging.system': 'nats', 'messaging.destination.name': subject } }, async (span) => {
      const reply = await this.send<T>(subject, body, options, { ...options.headers, ...traceHeaders() });
      span?.setAttribute('agora.outcome', reply.ok ? 'ok' : reply.error.code);
      if (!reply.ok) span?.setAttribute('agora.error.code', reply.error.code);
      return reply;
    });
  }

  private async send<T>(subject: string, body: unknown, options: RequestOptions, headers?: WireHeaders): Promise<Reply<T>> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const data = encodeJson(body);
    try {
      const reply = await this.wire.request(subject, data, { timeoutMs, ...(headers ? { headers } : {}) });
      return parseReply<T>(reply.data, subject);
    } catch (error) {
      return failureReply(error, subject, timeoutMs);
    }
  }

  async publish(subject: string, data: unknown, options: { headers?: WireHeaders } = {}): Promise<void> {
    this.wire.publish(subject, encodeJson(data), options);
  }

  async gather<T = unknown>(subject: string, body: unknown, options: { maxWaitMs: number }): Promise<T[]> {
    const replies = await this.wire.gather(subject, encodeJson(body), options);
    return replies.flatMap((reply) => {
      try {
        return [decodeJson(reply.data) as T];
      } catch {
        return [];
      }
    });
  }

  subscribe(subject: string, handler: (message: AgoraMessage) => void, options: { queue?: string; onError?: (error: Error) => void } = {}): WireSubscription {
    const sub = this.wire.subscribe(subject, {
      ...options,
      callback: (msg) => {
        let body: unknown;
        try {
          body = decodeJson(msg.data);
        } catch {
          return;
        }
        handler({ subject: msg.subject, body, headers: msg.headers });
      },
    });
    const tracked = {
      unsubscribe: () => {
        this.subscriptions.delete(tracked);
        sub.unsubscribe();
      },
    };
    this.subscriptions.add(tracked);
    return tracked;
  }

  /** Ends this client's subscriptions (and, for NATS, the connection it opened). */
  async close(): Promise<void> {
    for (const sub of [...this.subscriptions]) {
      try {
        sub.unsubscribe();
      } catch {
        // Already gone with its connection.
      }
    }
  }
}

function parseReply<T>(data: Uint8Array, subject: string): Reply<T> {
  let body: unknown;
  try {
    body = decodeJson(data);
  } catch {
    return errorReply('internal', `the reply on ${subject} is not JSON`);
  }
  const parsed = ReplySchema.safeParse(body);
  if (!parsed.success) return errorReply('internal', `the reply on ${subject} is not an Agora reply`, { reply: body });
  return parsed.data as Reply<T>;
}

function failureReply(error: unknown, subject: string, timeoutMs: number): Reply<never> {
  if (error instanceof RequestTimedOut) return errorReply('timeout', `no reply on ${subject} within ${timeoutMs} ms`, { subject, timeoutMs });
  if (error instanceof NoResponders) return errorReply('unavailable', `no service answers on ${subject}`, { subject });
  if (error instanceof ConnectionClosed) return errorReply('unavailable', error.message, { subject });
  if (error instanceof PayloadTooLarge) return errorReply('payload_too_large', error.message, { size: error.size, limit: error.limit });
  throw error;
}

/** AgoraClient over NATS. */
export class NatsAgoraClient extends WireAgoraClient {
  /** @param ownsConnection close the connection on `close()` (true when `connect` opened it). */
  constructor(
    readonly connection: NatsConnection,
    private readonly ownsConnection = false,
  ) {
    super(new NatsWire(connection));
  }

  static async connect(options: NatsConnectOptions = {}): Promise<NatsAgoraClient> {
    return new NatsAgoraClient(await connectNats({ name: 'agora-client', ...options }), true);
  }

  override async close(): Promise<void> {
    await super.close();
    if (this.ownsConnection && !this.connection.isClosed()) await this.connection.close();
  }
}

/** AgoraClient over the in-process bus (standalone mode). */
export class InProcessAgoraClient extends WireAgoraClient {
  /** The bus belongs to the process: closing the client ends its subscriptions, not the bus. */
  constructor(bus: InProcessBus) {
    super(bus);
  }
}
