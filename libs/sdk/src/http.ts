import { READ_TOKEN, Reply as ReplySchema, type CommandDefinition, type CommandResult, type QueryDefinition, type Reply } from '@agora/contracts';
import { mintReadToken, type SignedCommand } from '@agora/identity';
import { SseParser } from './sse.js';
import type { AgoraEvent, EventFilter, Transport } from './transport.js';

const RECONNECT_MS = [250, 500, 1_000, 2_000, 5_000];
/** Refusals of an event stream that pass: it is opened again, as after a failure to reach the gateway. */
const TRANSIENT_STREAM_CODES = new Set(['unavailable', 'timeout', 'internal']);

/** The gateway's URL of a query: `/v1/<service>/<httpPath>`, `:param`s from the params, the rest as the query string. */
export function queryUrl(baseUrl: string, definition: QueryDefinition, params: Record<string, unknown>): URL {
  const rest = new Map(Object.entries(params));
  const path = definition.httpPath
    .replace(/^\/+|\/+$/g, '')
    .split('/')
    .map((segment) => {
      if (!segment.startsWith(':')) return segment;
      const name = segment.slice(1);
      const value = rest.get(name);
      if (value === undefined || value === null || value === '') throw new TypeError(`${definition.subject} needs "${name}"`);
      rest.delete(name);
      return encodeURIComponent(String(value));
    })
    .join('/');
  const url = new URL(`${baseUrl}/v1/${definition.service}/${path}`);
  for (const [name, value] of rest) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(name, typeof item === 'object' ? JSON.stringify(item) : String(item));
  }
  return url;
}

/** Who reads (the signing specification, "Read tokens"): the agent and the key that signs its read tokens. */
export interface HttpReader {
  agentId: string;
  secretKey: string;
  /** The gateway's audience; default: the one its GET /health names (asked once), else READ_TOKEN.defaultAudience. */
  audience?: string;
}

/**
 * Speaks to Agora through its HTTP gateway: POST /v1/commands, GET /v1/<service>/..., SSE on GET
 * /v1/events. Given a reader, every read carries a read token signed with the reader's key, a
 * fresh one per request and per reconnection of an event stream (one Ed25519 signature each), so
 * a token never expires in a client's hands; a gateway with open reads ignores it.
 */
export class HttpTransport implements Transport {
  readonly kind = 'http';
  readonly baseUrl: string;
  private audience: Promise<string> | undefined;

  constructor(
    url: string,
    private readonly reader?: HttpReader,
  ) {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new TypeError(`the gateway URL must be http:// or https:// (got ${JSON.stringify(url)})`);
    this.baseUrl = parsed.href.replace(/\/+$/, '');
    if (reader?.audience !== undefined) this.audience = Promise.resolve(reader.audience);
  }

  /** `authorization: Bearer <fresh read token>` with a reader, else nothing. */
  async readHeaders(): Promise<Record<string, string>> {
    if (this.reader === undefined) return {};
    this.audience ??= this.gatewayAudience();
    const token = mintReadToken({ agentId: this.reader.agentId, secretKey: this.reader.secretKey, audience: await this.audience });
    return { authorization: `Bearer ${token}` };
  }

  /** The audience GET /health names (READ_TOKEN.defaultAudience when it names none or cannot be asked now, and then asked again next time). */
  private async gatewayAudience(): Promise<string> {
    try {
      const health = (await (await fetch(`${this.baseUrl}/health`, { signal: AbortSignal.timeout(5_000) })).json()) as { reads?: { audience?: unknown } };
      const audience = health.reads?.audience;
      return typeof audience === 'string' ? audience : READ_TOKEN.defaultAudience;
    } catch {
      this.audience = undefined;
      return READ_TOKEN.defaultAudience;
    }
  }

  command(_definition: CommandDefinition, envelope: SignedCommand, timeoutMs: number): Promise<Reply<CommandResult>> {
    return this.request(`${this.baseUrl}/v1/commands`, timeoutMs, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(envelope) });
  }

  async query(definition: QueryDefinition, params: Record<string, unknown>, timeoutMs: number): Promise<Reply<unknown>> {
    let url: URL;
    try {
      url = queryUrl(this.baseUrl, definition, params);
    } catch (error) {
      return { ok: false, error: { code: 'invalid_command', message: (error as Error).message } };
    }
    return this.request(url.href, timeoutMs, { headers: await this.readHeaders() });
  }

  /** One request and the Agora reply it answers with, whatever the HTTP status; network failures become `unavailable` or `timeout` replies. */
  private async request<T>(url: string, timeoutMs: number, init: RequestInit): Promise<Reply<T>> {
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
      text = await res.text();
    } catch (error) {
      if ((error as Error).name === 'TimeoutError') return { ok: false, error: { code: 'timeout', message: `no reply from ${url} within ${timeoutMs} ms` } };
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      return { ok: false, error: { code: 'unavailable', message: `cannot reach the gateway at ${this.baseUrl} (${cause?.code ?? cause?.message ?? (error as Error).message})` } };
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return { ok: false, error: { code: 'internal', message: `the gateway answered ${res.status} with something that is not JSON: ${text.slice(0, 200)}` } };
    }
    const reply = ReplySchema.safeParse(body);
    if (!reply.success) return { ok: false, error: { code: 'internal', message: `the gateway answered ${res.status} with something that is not an Agora reply: ${text.slice(0, 200)}` } };
    return reply.data as Reply<T>;
  }

  /**
   * The log's events over SSE, reconnecting after a drop with the last position seen (so nothing is
   * lost or repeated), and at once, with a fresh read token, when the gateway ends the stream for
   * its credential (`event: end`: the token expired, the reader's roles changed); ends when the
   * signal aborts. A reader the registry disabled is refused on reconnection (an error).
   */
  async *events(filter: EventFilter): AsyncGenerator<AgoraEvent> {
    // Leaving the loop (break, return) ends the request too.
    const own = new AbortController();
    const signal = filter.signal ? AbortSignal.any([filter.signal, own.signal]) : own.signal;
    try {
      yield* this.stream(filter, signal);
    } finally {
      own.abort();
    }
  }

  private async *stream(filter: EventFilter, signal: AbortSignal): AsyncGenerator<AgoraEvent> {
    let after = filter.after;
    let opened = false;
    let failures = 0;
    let endedBefore = false;
    while (!signal.aborted) {
      const url = new URL(`${this.baseUrl}/v1/events`);
      for (const category of filter.categories ?? []) url.searchParams.append('category', category);
      for (const type of filter.types ?? []) url.searchParams.append('type', type);
      if (after !== undefined) url.searchParams.set('after', after);
      else if ((filter.from ?? 'end') === 'end') url.searchParams.set('from', 'end');
      let res: Response;
      try {
        res = await fetch(url, { signal, headers: { accept: 'text/event-stream', ...(await this.readHeaders()) } });
      } catch (error) {
        if (signal.aborted) return;
        if (++failures > RECONNECT_MS.length * 4) throw new Error(`the event stream at ${url.href} cannot be reached: ${(error as Error).message}`);
        await pause(RECONNECT_MS[Math.min(failures, RECONNECT_MS.length) - 1] as number, signal);
        continue;
      }
      if (!res.ok || !res.body) {
        const text = await res.text().catch(() => '');
        const reply = ReplySchema.safeParse(safeJson(text));
        const message = reply.success && !reply.data.ok ? `${reply.data.error.code}: ${reply.data.error.message}` : `HTTP ${res.status} ${text.slice(0, 200)}`;
        // A refusal that passes (the log's store unavailable in a failover, a gateway behind a proxy restarting) is asked again, as an unreachable gateway is.
        const passing = reply.success && !reply.data.ok ? TRANSIENT_STREAM_CODES.has(reply.data.error.code) : res.status === 502 || res.status === 503 || res.status === 504;
        if (passing && ++failures <= RECONNECT_MS.length * 4) {
          await pause(RECONNECT_MS[Math.min(failures, RECONNECT_MS.length) - 1] as number, signal);
          continue;
        }
        throw new Error(`the gateway refused the event stream: ${message}`);
      }
      failures = 0;
      if (!opened) {
        opened = true;
        filter.onOpen?.();
      }
      const parser = new SseParser();
      const decoder = new TextDecoder();
      let ended: string | undefined;
      let delivered = false;
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          for (const message of parser.feed(decoder.decode(chunk, { stream: true }))) {
            if (message.event === 'dropped') continue;
            // The stream's credential no longer holds (the token expired, the reader's roles changed): reconnect with a fresh token.
            if (message.event === 'end') {
              ended = (safeJson(message.data) as { reason?: string } | undefined)?.reason ?? 'unknown';
              continue;
            }
            const event = safeJson(message.data) as AgoraEvent | undefined;
            if (!event || typeof event.position !== 'string') continue;
            after = event.position;
            delivered = true;
            yield event;
          }
        }
      } catch (error) {
        if (signal.aborted) return;
        void error;
      }
      if (signal.aborted) return;
      // Ended for its credential: at once with a fresh token (unless it ended again before a single event: then after a pause, as for a drop).
      if (ended !== undefined && (delivered || !endedBefore)) {
        endedBefore = true;
        continue;
      }
      endedBefore = ended !== undefined;
      // The server ended the stream (a restart, a slow-client drop): continue after the last event seen.
      await pause(RECONNECT_MS[0] as number, signal);
    }
  }

  async close(): Promise<void> {}
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Waits `ms`, or less when the signal aborts. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
