/**
 * Canonical JSON: object keys sorted by UTF-16 code units, no whitespace, `undefined` members
 * left out; numbers and strings as JSON.stringify writes them (RFC 8785 for the values commands
 * carry). Two parties that hold the same value produce the same bytes, so a signature over them
 * verifies anywhere.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError(`cannot canonicalize ${value}`);
    if (typeof value === 'bigint' || typeof value === 'function' || typeof value === 'symbol') throw new TypeError(`cannot canonicalize a ${typeof value}`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const keys = Object.keys(value as object)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}
