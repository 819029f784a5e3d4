/**
 * Canonical JSON: RFC 8785, the JSON Canonicalization Scheme (JCS). Two parties that hold the same
 * value produce the same bytes (the UTF-8 of the returned string), so a signature over them
 * verifies anywhere. The rules, which the signing specification (libs/contracts/src/signing-spec.ts)
 * states for implementers in other languages:
 *
 * - no whitespace between tokens;
 * - object members sorted by their names compared as arrays of UTF-16 code units (not code points,
 *   not UTF-8 bytes: U+FB33 sorts after U+1F600, whose first code unit is 0xD83D);
 * - strings: `"` and `\` escaped as `\"` and `\\`; U+0008, U+0009, U+000A, U+000C, U+000D as
 *   `\b \t \n \f \r`; every other code point below U+0020 as `\u00xx` (lowercase hex); everything
 *   else written as itself (no `\/`, no escaping of non-ASCII); a lone surrogate is refused;
 * - numbers: IEEE-754 doubles written as ECMAScript's Number.prototype.toString writes them
 *   (shortest round-trip digits; `1.0` -> `1`, `-0` -> `0`, `1e-7`, `1e+21`); NaN and the
 *   infinities are refused;
 * - literals `true`, `false`, `null`.
 *
 * Beyond the RFC, for the values TypeScript code builds: object members whose value is `undefined`
 * are left out (as JSON.stringify does), and `undefined` in an array is written `null`.
 *
 * `known`: objects whose canonical JSON the caller has already built (a command's payload, inside a
 * commit's metadata as well as in its signing bytes): written as given, not built again.
 */
export function canonicalJson(value: unknown, known?: ReadonlyMap<object, string>): string {
  switch (typeof value) {
    case 'string':
      return canonicalString(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`cannot canonicalize ${value}: JSON has no NaN or infinities`);
      // ECMAScript's Number-to-String is RFC 8785's number form (it writes -0 as "0").
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      throw new TypeError(`cannot canonicalize a ${typeof value}`);
  }
  if (value === null) return 'null';
  const built = known?.get(value);
  if (built !== undefined) return built;
  // Built with plain loops and concatenation: this runs for every signature, chain link and
  // reservation, and the audit runs it over the whole log.
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      out += (i === 0 ? '' : ',') + (v === undefined ? 'null' : canonicalJson(v, known));
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  // The default sort orders strings by their UTF-16 code units, as compareUtf16 does.
  const keys = Object.keys(record).sort();
  let out = '{';
  for (const k of keys) {
    const v = record[k];
    if (v === undefined) continue;
    out += (out.length === 1 ? '' : ',') + canonicalString(k) + ':' + canonicalJson(v, known);
  }
  return `${out}}`;
}

/** Orders strings by their UTF-16 code units (RFC 8785 section 3.2.3). */
export function compareUtf16(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a.charCodeAt(i) - b.charCodeAt(i);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

/** Any surrogate code unit. */
const ANY_SURROGATE = /[\ud800-\udfff]/;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one (matched on code units). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * A JSON string literal as RFC 8785 section 3.2.2.2 writes it. JSON.stringify (ES2019 and later)
 * escapes exactly as the RFC does (`\"`, `\\`, the five short forms, `\u00xx` in lowercase for
 * the other control characters, nothing else), except lone surrogates, which it writes as `\udxxx`
 * and the RFC (I-JSON) does not allow: those are refused first.
 */
function canonicalString(text: string): string {
  // Most strings have no surrogate at all: only those are searched for a lone one.
  if (!ANY_SURROGATE.test(text)) return JSON.stringify(text);
  const lone = LONE_SURROGATE.exec(text);
  if (lone) throw new TypeError(`cannot canonicalize a string with a lone surrogate (\\u${lone[0].charCodeAt(0).toString(16)} at ${lone.index})`);
  return JSON.stringify(text);
}
