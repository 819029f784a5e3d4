// Where each event's data and metadata lie in the bytes of its commit's record (RecordedEvent.stored).
import type { StoredBytes } from '../port.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/** Index after the string whose opening quote is at `at` (-1: unterminated). */
function skipString(bytes: Uint8Array, at: number): number {
  for (let from = at + 1; ; ) {
    const quote = bytes.indexOf(QUOTE, from);
    if (quote < 0) return -1;
    let escapes = 0;
    for (let k = quote - 1; bytes[k] === BACKSLASH; k--) escapes++;
    if ((escapes & 1) === 0) return quote + 1;
    from = quote + 1;
  }
}

/** Index after the JSON value starting at `at` (written without whitespace, as JSON.stringify writes), -1 when it does not end. */
function skipValue(bytes: Uint8Array, at: number): number {
  const first = bytes[at];
  if (first === QUOTE) return skipString(bytes, at);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    let end = at;
    while (end < bytes.length && bytes[end] !== COMMA && bytes[end] !== CLOSE_BRACKET && bytes[end] !== CLOSE_BRACE) end++;
    return end > at ? end : -1;
  }
  let depth = 0;
  for (let p = at; p < bytes.length; ) {
    const c = bytes[p]!;
    if (c === QUOTE) {
      p = skipString(bytes, p);
      if (p < 0) return -1;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return p + 1;
    p++;
  }
  return -1;
}

const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const STREAM = ascii('{"s":');
const REVISION = ascii(',"r":');
const TIME = ascii(',"t":');
const EVENTS = ascii(',"e":[');
const ID = ascii('{"i":');
const TYPE = ascii(',"y":');
const DATA = ascii(',"d":');
const METADATA = ascii(',"m":');

/**
 * The data and metadata of each event of a commit record's body, as byte ranges of it: the record
 * as this store writes it (JSON.stringify of {s, r, t, e: [{i, y, d, m}]}, so each range is the
 * JSON.stringify of the value read from it). Undefined for a body not of exactly that form (its
 * events are then handed over without their stored bytes).
 */
export function storedEvents(body: Uint8Array, events: number): StoredBytes[] | undefined {
  let at = 0;
  const expect = (token: Uint8Array) => {
    if (at < 0 || at + token.length > body.length) return false;
    for (let i = 0; i < token.length; i++) if (body[at + i] !== token[i]) return false;
    at += token.length;
    return true;
  };
  const skip = () => {
    at = skipValue(body, at);
    return at >= 0;
  };
  if (!(expect(STREAM) && skip() && expect(REVISION) && skip() && expect(TIME) && skip() && expect(EVENTS))) return undefined;
  const stored: StoredBytes[] = [];
  for (let k = 0; k < events; k++) {
    if (k > 0 && body[at++] !== COMMA) return undefined;
    if (!(expect(ID) && skip() && expect(TYPE) && skip() && expect(DATA))) return undefined;
    const dataAt = at;
    if (!skip()) return undefined;
    const dataEnd = at;
    if (!expect(METADATA)) return undefined;
    const metadataAt = at;
    if (!skip() || body[at++] !== CLOSE_BRACE) return undefined;
    stored.push({ bytes: body, data: [dataAt, dataEnd], metadata: [metadataAt, at - 1] });
  }
  return body[at] === CLOSE_BRACKET && body[at + 1] === CLOSE_BRACE && at + 2 === body.length ? stored : undefined;
}
