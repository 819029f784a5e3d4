import { createHash } from 'node:crypto';

/**
 * Name-based ids (RFC 9562 UUID version 5: SHA-1 over a namespace and a name): the same name in the
 * same namespace gives the same id everywhere (event ids of a commit, command ids of a reaction or of a
 * role loop's answer), so a second copy of the same thing is recognised.
 */

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** UUID version 5 of `name` in `namespace` (a UUID). */
export function uuidV5(name: string, namespace: string): string {
  if (!UUID_RE.test(namespace)) throw new TypeError(`namespace ${JSON.stringify(namespace)} is not a UUID`);
  const bytes = createHash('sha1')
    .update(Buffer.from(namespace.replace(/-/g, ''), 'hex'))
    .update(name, 'utf8')
    .digest()
    .subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50; // version 5
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // RFC variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
