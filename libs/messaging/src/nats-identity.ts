/**
 * An agent on NATS is itself: its Ed25519 key (the one that signs its commands) is an nkey, so the
 * server knows the connection by the agent's public key, and its replies come back under an inbox
 * prefix of its own that no other agent may subscribe to (deploy/nats/auth.conf, `agora setup nats`).
 * The nkey text forms are NATS's own (nkeys.js): `U...` for a user's public key, `SU...` for its seed.
 */
import { Codec } from '@nats-io/nkeys/lib/codec.js';
import { Prefix } from '@nats-io/nkeys';
import { PUBLIC_KEY_PREFIX, SECRET_KEY_PREFIX } from '@agora/identity';

const SUBJECT_TOKEN = /^[^\s.*>]+$/;

function rawKey(text: string, prefix: string, what: string): Uint8Array {
  const raw = text.startsWith(prefix) ? Buffer.from(text.slice(prefix.length), 'base64url') : Buffer.alloc(0);
  if (raw.length !== 32) throw new TypeError(`${what} must be "${prefix}" followed by 32 bytes in base64url`);
  return new Uint8Array(raw);
}

/** The NATS user nkey (`U...`) of an Agora public key (`ed25519:...`): the same Ed25519 key in NATS's encoding. */
export function natsUserKey(publicKey: string): string {
  return new TextDecoder().decode(Codec.encode(Prefix.User, rawKey(publicKey, PUBLIC_KEY_PREFIX, 'a public key')));
}

/** The NATS user seed (`SU...`) of an Agora secret key (`ed25519-secret:...`), as nats.js's nkeyAuthenticator takes it. */
export function natsUserSeed(secretKey: string): Uint8Array {
  return Codec.encodeSeed(Prefix.User, rawKey(secretKey, SECRET_KEY_PREFIX, 'a secret key'));
}

/** The inbox prefix of an agent (or a service): `_INBOX_<id>`; its replies arrive on `_INBOX_<id>.<token>`. */
export function inboxPrefixOf(id: string): string {
  const token = id.replaceAll(':', '_');
  if (!SUBJECT_TOKEN.test(token)) throw new TypeError(`${JSON.stringify(id)} cannot name a NATS inbox (no ".", "*", ">" or spaces)`);
  return `_INBOX_${token}`;
}
