import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { PUBLIC_KEY_PREFIX, SECRET_KEY_PREFIX } from './signing-text.js';

/**
 * Key text forms:
 *   public  `ed25519:<base64url of the 32-byte public key>`
 *   secret  `ed25519-secret:<base64url of the 32-byte seed>`
 * Converted to node:crypto KeyObjects once and cached: signing and verifying then cost tens of
 * microseconds (OpenSSL), which keeps verification off the critical path of every command.
 */
const PUBLIC_PREFIX = PUBLIC_KEY_PREFIX;
const SECRET_PREFIX = SECRET_KEY_PREFIX;
const B64URL_32 = /^[A-Za-z0-9_-]{43}$/;

export interface KeyPair {
  publicKey: string;
  secretKey: string;
}

export class InvalidKey extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidKey';
  }
}

export function generateKeyPair(): KeyPair {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' });
  return { publicKey: `${PUBLIC_PREFIX}${jwk.x}`, secretKey: `${SECRET_PREFIX}${jwk.d}` };
}

const publicCache = new Map<string, KeyObject>();
const secretCache = new Map<string, KeyObject>();

export function publicKeyObject(text: string): KeyObject {
  let key = publicCache.get(text);
  if (!key) {
    const raw = text.startsWith(PUBLIC_PREFIX) ? text.slice(PUBLIC_PREFIX.length) : '';
    if (!B64URL_32.test(raw)) throw new InvalidKey('a public key is "ed25519:" followed by 43 base64url characters');
    key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw }, format: 'jwk' });
    if (publicCache.size > 10_000) publicCache.clear();
    publicCache.set(text, key);
  }
  return key;
}

export function secretKeyObject(text: string): KeyObject {
  let key = secretCache.get(text);
  if (!key) {
    const raw = text.startsWith(SECRET_PREFIX) ? text.slice(SECRET_PREFIX.length) : '';
    if (!B64URL_32.test(raw)) throw new InvalidKey('a secret key is "ed25519-secret:" followed by 43 base64url characters');
    const d = Buffer.from(raw, 'base64url');
    // The public half is derived from the seed; node:crypto wants both in a JWK.
    const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), d]);
    key = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
    secretCache.set(text, key);
  }
  return key;
}

/** The public key text that belongs to a secret key. */
export function publicKeyOf(secretKey: string): string {
  const jwk = createPublicKey(secretKeyObject(secretKey)).export({ format: 'jwk' });
  return `${PUBLIC_PREFIX}${jwk.x}`;
}

/** A key file as the CLI writes it: `{agentId?, publicKey, secretKey}`. Throws InvalidKey with what is wrong. */
export function parseKeyFile(text: string): KeyPair & { agentId?: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new InvalidKey('a key file is JSON: {"agentId": "...", "publicKey": "ed25519:...", "secretKey": "ed25519-secret:..."}');
  }
  const { agentId, publicKey, secretKey } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof secretKey !== 'string') throw new InvalidKey('the key file has no "secretKey"');
  const derived = publicKeyOf(secretKey);
  if (publicKey !== undefined && publicKey !== derived) throw new InvalidKey('the key file\'s "publicKey" does not belong to its "secretKey"');
  if (agentId !== undefined && typeof agentId !== 'string') throw new InvalidKey('"agentId" must be a string');
  return { publicKey: derived, secretKey, ...(agentId === undefined ? {} : { agentId }) };
}
