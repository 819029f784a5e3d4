import type { ErrorBody, Reply } from '@agora/contracts';
import type { ConsumerDeserializer, ConsumerSerializer, IncomingRequest as NestIncomingRequest, OutgoingResponse } from '@nestjs/microservices';
import { READ_TOKEN } from '@agora/contracts';
import { tracingOn } from '@agora/tracing';
import { errorBody, errorReply, type MessagingLogger } from './reply.js';
import { decodeJson, encodeJson, isPlainObject, jsonDepthExceeds, MAX_JSON_DEPTH, tooDeepMessage } from './wire.js';

export const DEFAULT_MAX_PAYLOAD = 256 * 1024;

/**
 * A request as the dispatcher sees it, after the deserializer. Failures of the message itself
 * (too large, not JSON, not an object, no reply subject) are decided here, where the raw bytes
 * are, and reach the dispatcher as a `rejection`: the deserializer must never throw, or Nest
 * would log the error and the caller would hear nothing.
 */
export type IncomingRequest =
  | {
      subject: string;
      /** The JSON object sent; undefined for an empty body (queries take that as `{}`). */
      body: Record<string, unknown> | undefined;
      rejection?: undefined;
      /** The W3C trace context the request carried (`traceparent`, `tracestate` headers); only read while tracing is on. */
      trace?: Record<string, string>;
      /** The read token the request carried (header READ_TOKEN.natsHeader): who asks a query, for services whose reads are closed. */
      readToken?: string;
      /** The reply goes to the gateway's own inbox (GATEWAY_INBOX_PREFIX): only the gateway's NATS user can read the answer. */
      toGateway?: true;
      /** The reader the gateway asks on behalf of (header READER_HEADER): the agent its HTTP, MCP or A2A credential proved. */
      reader?: string;
    }
  | { subject: string; rejection: ErrorBody; body?: undefined; trace?: Record<string, string> };

/** What both transports hand the deserializer: a NATS `Msg` has this shape, and so does a bus message. */
export interface RawRequest {
  subject: string;
  data: Uint8Array;
  reply?: string;
  /** NATS headers (`MsgHdrs`) or the bus's plain record. */
  headers?: { get(key: string): string } | Readonly<Record<string, string>>;
}

/**
 * The gateway's inbox prefix (`_INBOX_<name>` of its NATS user, as inboxPrefixOf gives it): replies
 * under it can be read by the gateway's NATS user alone (deploy/nats, `agora setup nats`; no agent may
 * take the id `gateway`). A query asking for its answer there is the gateway's, or nobody reads it.
 */
export const GATEWAY_INBOX_PREFIX = '_INBOX_gateway';

/**
 * The header in which the gateway names the reader it asks a query for (the agent its read token or
 * console session proved). The service decides what that reader sees (the visibility table, in
 * the dispatcher); it believes the header only where the gateway alone can have sent it (a reply
 * to the gateway's inbox) or where reads are open anyway (a named reader only narrows the answer).
 */
export const READER_HEADER = 'Agora-Reader';

const TRACE_HEADERS = ['traceparent', 'tracestate'] as const;

/** One header of a request (NATS headers or the bus's record); undefined when absent or empty. */
function headerOf(headers: RawRequest['headers'], key: string): string | undefined {
  if (!headers) return undefined;
  const value = typeof headers.get === 'function' ? (headers as { get(key: string): string }).get(key) : (headers as Readonly<Record<string, string>>)[key];
  return value || undefined;
}

/** The trace context headers of a request, when it has any. */
function traceOf(headers: RawRequest['headers']): Record<string, string> | undefined {
  if (!headers) return undefined;
  const trace: Record<string, string> = {};
  for (const key of TRACE_HEADERS) {
    const value = headerOf(headers, key);
    if (value) trace[key] = value;
  }
  return trace['traceparent'] ? trace : undefined;
}

/**
 * Raw JSON (no Nest packet on the wire) + subject -> Nest packet with `pattern` = subject. The
 * packet always gets an id: to Nest, a packet without one is an event, and events get no reply.
 */
export class AgoraRequestDeserializer implements ConsumerDeserializer {
  private sequence = 0;

  constructor(readonly maxPayload = DEFAULT_MAX_PAYLOAD) {}

  deserialize(message: RawRequest): NestIncomingRequest & { data: IncomingRequest } {
    const id = String(++this.sequence);
    const data = this.decode(message);
    const trace = tracingOn() ? traceOf(message.headers) : undefined;
    const readToken = data.rejection === undefined ? headerOf(message.headers, READ_TOKEN.natsHeader) : undefined;
    const toGateway = data.rejection === undefined && message.reply?.startsWith(`${GATEWAY_INBOX_PREFIX}.`) === true;
    const reader = data.rejection === undefined ? headerOf(message.headers, READER_HEADER) : undefined;
    return { id, pattern: message.subject, data: { ...data, ...(trace ? { trace } : {}), ...(readToken ? { readToken } : {}), ...(toGateway ? { toGateway: true as const } : {}), ...(reader ? { reader } : {}) } };
  }

  private decode({ subject, data, reply }: RawRequest): IncomingRequest {
    const reject = (code: ErrorBody['code'], message: string, details?: Record<string, unknown>) => ({ subject, rejection: errorBody(code, message, details) });
    if (!reply) return reject('invalid_command', `${subject} takes requests (with a reply subject), not plain publishes`);
    if (data.length > this.maxPayload) return reject('payload_too_large', `the body is ${data.length} bytes; the limit is ${this.maxPayload}`, { size: data.length, limit: this.maxPayload });
    if (data.length === 0) return { subject, body: undefined };
    if (jsonDepthExceeds(data)) return reject('invalid_command', tooDeepMessage(), { maxDepth: MAX_JSON_DEPTH });
    let body: unknown;
    try {
      body = decodeJson(data);
    } catch (error) {
      return reject('invalid_command', `the body is not valid UTF-8 JSON: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!isPlainObject(body)) return reject('invalid_command', `the body must be a JSON object, not ${body === null ? 'null' : Array.isArray(body) ? 'an array' : typeof body}`);
    return { subject, body };
  }
}

function isReply(value: unknown): value is Reply {
  return isPlainObject(value) && typeof value['ok'] === 'boolean';
}

/**
 * Nest response packet -> the plain Reply JSON: no `{id, response, isDisposed}` wrapping on the
 * wire. The dispatcher always answers with a Reply; the other branches only catch what would
 * otherwise leave a caller without an answer (a Nest-level error, a result JSON cannot carry).
 */
export class AgoraReplySerializer implements ConsumerSerializer {
  constructor(private readonly logger: MessagingLogger) {}

  serialize(packet: OutgoingResponse): { data: Uint8Array; headers?: undefined } {
    return { data: this.encode(packet) };
  }

  private encode(packet: OutgoingResponse): Uint8Array {
    if (packet.err === undefined && isReply(packet.response)) {
      try {
        return encodeJson(packet.response);
      } catch (error) {
        this.logger.error('a reply could not be serialized to JSON', error);
        return encodeJson(errorReply('internal', 'the result could not be serialized; the service log has the details'));
      }
    }
    this.logger.error('the Nest pipeline answered without a Reply', packet.err);
    return encodeJson(errorReply('internal', 'an unexpected error occurred; the service log has the details'));
  }
}
