/**
 * The smallest surface both transports offer: NATS core (through `nats-wire.ts`) and the in-process
 * bus (`in-process-bus.ts`). The client, the event publisher and the `$SRV` API are written once
 * against it, so they behave the same over either transport.
 */

/** Message headers as plain strings (NATS headers may repeat a key; we only ever set one value). */
export type WireHeaders = Readonly<Record<string, string>>;

/** A received message. A NATS `Msg` has this shape too, which lets the Nest deserializer take either. */
export interface WireMessage {
  subject: string;
  data: Uint8Array;
  /** Where a reply goes; absent for a plain publish. */
  reply?: string;
  /** Answers to `reply`; false when there is none. */
  respond(data: Uint8Array): boolean;
}

/** A received message with its headers, for listeners (events, notifications). */
export interface WireDelivery extends WireMessage {
  headers: WireHeaders;
}

export interface WireSubscribeOptions {
  /** Subscribers sharing a queue group split the messages: each goes to one of them. */
  queue?: string;
  callback: (message: WireDelivery) => void;
  /** The server ended the subscription (NATS: a permission violation); the in-process bus never does. */
  onError?: (error: Error) => void;
}

export interface WireSubscription {
  unsubscribe(): void;
}

export interface WireConnection {
  /** Subjects may use the NATS wildcards `*` (one token) and `>` (the rest). */
  subscribe(subject: string, options: WireSubscribeOptions): WireSubscription;
  /** `reply` asks listeners to answer there (scatter-gather, e.g. `$SRV.PING` to every replica). */
  publish(subject: string, data: Uint8Array, options?: { headers?: WireHeaders; reply?: string }): void;
  /**
   * Sends a request and resolves with the first reply. Rejects with NoResponders when nobody
   * listens on the subject, RequestTimedOut when no reply came in time, PayloadTooLarge when the
   * transport refuses the size, ConnectionClosed when the connection is gone.
   */
  request(subject: string, data: Uint8Array, options: { timeoutMs: number; headers?: WireHeaders }): Promise<WireMessage>;
  /**
   * Sends a request every listener may answer (scatter-gather, e.g. `$SRV.PING.<name>` to every
   * replica), under the connection's own inbox, and resolves with the replies that came within
   * `maxWaitMs` (none: an empty list).
   */
  gather(subject: string, data: Uint8Array, options: { maxWaitMs: number }): Promise<WireMessage[]>;
  /** Resolves once everything published so far has reached the server (NATS) or the bus. */
  flush(): Promise<void>;
}

/** Transport failures, named the same for both transports. */
export class NoResponders extends Error {
  constructor(readonly subject: string) {
    super(`no service answers on ${subject}`);
    this.name = 'NoResponders';
  }
}

export class RequestTimedOut extends Error {
  constructor(
    readonly subject: string,
    readonly timeoutMs: number,
  ) {
    super(`no reply on ${subject} within ${timeoutMs} ms`);
    this.name = 'RequestTimedOut';
  }
}

export class PayloadTooLarge extends Error {
  constructor(
    readonly size: number,
    readonly limit: number,
  ) {
    super(`the message is ${size} bytes, over the limit of ${limit}`);
    this.name = 'PayloadTooLarge';
  }
}

export class ConnectionClosed extends Error {
  constructor(message = 'the connection is closed') {
    super(message);
    this.name = 'ConnectionClosed';
  }
}

const encoder = new TextEncoder();
/** fatal: a body that is not UTF-8 is refused rather than silently mangled into U+FFFD. */
const decoder = new TextDecoder('utf-8', { fatal: true });

export function encodeJson(value: unknown): Uint8Array {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError(`cannot send ${typeof value} as JSON`);
  return encoder.encode(text);
}

/**
 * How deep arrays and objects may nest in a message. Agora's deepest contract nests well under
 * 16; the limit keeps a hostile body (`[[[[...` ten thousand deep) from exhausting the stack of
 * whatever walks it (validation, canonical JSON) and turning into a 500.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * How deep the JSON text in `data` nests (arrays and objects; brackets inside strings do not
 * count), stopping as soon as it exceeds `limit`: a linear scan of the bytes, before any parse.
 * Works on UTF-8 bytes or on a string's char codes (the brackets and quotes are ASCII).
 */
export function jsonDepthExceeds(data: Uint8Array | string, limit = MAX_JSON_DEPTH): boolean {
  const at = typeof data === 'string' ? (i: number) => data.charCodeAt(i) : (i: number) => data[i]!;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < data.length; i++) {
    const c = at(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** The one message for a body that nests too deep, on every transport and over HTTP. */
export function tooDeepMessage(limit = MAX_JSON_DEPTH): string {
  return `the body nests arrays and objects more than ${limit} levels deep; the limit is ${limit}`;
}

/** Parses a JSON body; throws SyntaxError (or TypeError for bytes that are not UTF-8). */
export function decodeJson(data: Uint8Array): unknown {
  return JSON.parse(decoder.decode(data));
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
