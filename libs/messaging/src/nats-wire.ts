import { errors, headers as natsHeaders, nkeyAuthenticator, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { DEFAULT_NATS_URL, natsLinkCheck, natsLinkOptions, type NatsLinkCheck } from '@agora/contracts';
import { inboxPrefixOf, natsUserSeed } from './nats-identity.js';
import { ConnectionClosed, NoResponders, PayloadTooLarge, RequestTimedOut, type WireConnection, type WireDelivery, type WireHeaders, type WireMessage, type WireSubscribeOptions, type WireSubscription } from './wire.js';

export { DEFAULT_NATS_URL };

export interface NatsConnectOptions {
  /** Default `NATS_URL`, else 127.0.0.1:4222. */
  servers?: string | string[];
  /** Connection name shown by `nats server report connections`. */
  name?: string;
  /** The NATS user to connect as (NATS_USER / NATS_PASSWORD; deploy/nats/auth.conf). */
  credentials?: { user: string; pass: string; inboxPrefix?: string };
  /**
   * Connect as this agent (an nkey user: its Ed25519 key), with replies under its own inbox prefix
   * `_INBOX_<agentId>` (the only inbox `agora setup nats` lets it subscribe to). Instead of `credentials`.
   */
  identity?: NatsIdentity;
  /** How long the first connection may take (nats.js `timeout`). Default nats.js's 20 s. */
  connectTimeoutMs?: number;
  /** How the connection notices a dead link (ping interval, unanswered pings). Default NATS_PING_INTERVAL_MS / NATS_MAX_PINGS_OUT, else 4 s and 2. */
  linkCheck?: NatsLinkCheck;
}

/** Who a connection is on a server with nkey users: the agent id and the secret key that signs its commands. */
export interface NatsIdentity {
  agentId: string;
  secretKey: string;
}

/** The nats.js connect options of an identity: nkey authentication and the agent's own inbox prefix. */
export function identityConnectOptions(identity: NatsIdentity): { authenticator: ReturnType<typeof nkeyAuthenticator>; inboxPrefix: string } {
  return { authenticator: nkeyAuthenticator(natsUserSeed(identity.secretKey)), inboxPrefix: inboxPrefixOf(identity.agentId) };
}

/** Opens a NATS connection with the settings every Agora process uses. */
export function connectNats(options: NatsConnectOptions = {}): Promise<NatsConnection> {
  return connect({
    servers: options.servers ?? process.env['NATS_URL'] ?? DEFAULT_NATS_URL,
    ...(options.name === undefined ? {} : { name: options.name }),
    ...(options.credentials === undefined ? {} : { user: options.credentials.user, pass: options.credentials.pass }),
    ...(options.credentials?.inboxPrefix === undefined ? {} : { inboxPrefix: options.credentials.inboxPrefix }),
    ...(options.identity === undefined ? {} : identityConnectOptions(options.identity)),
    ...(options.connectTimeoutMs === undefined ? {} : { timeout: options.connectTimeoutMs }),
    // Keep trying for ever: a service outlives a NATS restart.
    maxReconnectAttempts: -1,
    // Notice a link that died silently within seconds, not nats.js's 4 minutes, and reconnect to another node first.
    ...natsLinkOptions(options.linkCheck ?? natsLinkCheck()),
    reconnectTimeWait: 500,
    // A stack captured per request costs CPU on the hot path; our errors say what failed.
    noAsyncTraces: true,
  });
}

function toRecord(headers: MsgHdrs | undefined): WireHeaders {
  if (!headers) return {};
  const record: Record<string, string> = {};
  for (const key of headers.keys()) record[key] = headers.get(key);
  return record;
}

function toNatsHeaders(headers: WireHeaders | undefined): MsgHdrs | undefined {
  if (!headers || Object.keys(headers).length === 0) return undefined;
  const h = natsHeaders();
  for (const [key, value] of Object.entries(headers)) h.set(key, value);
  return h;
}

function delivery(msg: Msg): WireDelivery {
  return {
    subject: msg.subject,
    data: msg.data,
    headers: toRecord(msg.headers),
    ...(msg.reply ? { reply: msg.reply } : {}),
    respond: (data: Uint8Array) => msg.respond(data),
  };
}

/** Maps nats.js errors to the transport errors both transports share. */
export function transportError(error: unknown, subject: string, size: number, maxPayload: number | undefined, timeoutMs?: number): Error {
  if (error instanceof errors.TimeoutError) return new RequestTimedOut(subject, timeoutMs ?? 0);
  if (error instanceof errors.NoRespondersError) return new NoResponders(subject);
  if (error instanceof errors.RequestError && error.isNoResponders()) return new NoResponders(subject);
  if (error instanceof errors.ClosedConnectionError || error instanceof errors.DrainingConnectionError) return new ConnectionClosed(`NATS connection closed: ${error.message}`);
  if (error instanceof errors.InvalidArgumentError && /max_payload/.test(error.message)) return new PayloadTooLarge(size, maxPayload ?? Number.NaN);
  return error instanceof Error ? error : new Error(String(error));
}

/** A NATS connection seen as a WireConnection. The connection stays the caller's to close. */
export class NatsWire implements WireConnection {
  constructor(readonly nc: NatsConnection) {}

  subscribe(subject: string, options: WireSubscribeOptions): WireSubscription {
    const sub = this.nc.subscribe(subject, {
      ...(options.queue ? { queue: options.queue } : {}),
      callback: (error, msg) => {
        // Errors here are subscription-level (permissions); nats.js closes the subscription after them.
        if (error) options.onError?.(error);
        else options.callback(delivery(msg));
      },
    });
    return { unsubscribe: () => sub.unsubscribe() };
  }

  publish(subject: string, data: Uint8Array, options: { headers?: WireHeaders; reply?: string } = {}): void {
    try {
      const headers = toNatsHeaders(options.headers);
      this.nc.publish(subject, data, { ...(headers ? { headers } : {}), ...(options.reply ? { reply: options.reply } : {}) });
    } catch (error) {
      throw transportError(error, subject, data.length, this.nc.info?.max_payload);
    }
  }

  async request(subject: string, data: Uint8Array, options: { timeoutMs: number; headers?: WireHeaders }): Promise<WireMessage> {
    try {
      const headers = toNatsHeaders(options.headers);
      const msg = await this.nc.request(subject, data, { timeout: options.timeoutMs, ...(headers ? { headers } : {}) });
      return delivery(msg);
    } catch (error) {
      throw transportError(error, subject, data.length, this.nc.info?.max_payload, options.timeoutMs);
    }
  }

  async gather(subject: string, data: Uint8Array, options: { maxWaitMs: number }): Promise<WireMessage[]> {
    const replies: WireMessage[] = [];
    try {
      for await (const msg of await this.nc.requestMany(subject, data, { strategy: 'timer', maxWait: options.maxWaitMs })) replies.push(delivery(msg));
    } catch (error) {
      // Nobody listening is an empty answer, not a failure.
      const failure = transportError(error, subject, data.length, this.nc.info?.max_payload, options.maxWaitMs);
      if (!(failure instanceof NoResponders)) throw failure;
    }
    return replies;
  }

  async flush(): Promise<void> {
    try {
      await this.nc.flush();
    } catch (error) {
      throw transportError(error, '(flush)', 0, undefined);
    }
  }
}
