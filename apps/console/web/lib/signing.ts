/**
 * Ed25519 in the browser (WebCrypto): checking the command signature every event carries in its
 * metadata, and signing an operator's decision with a key file loaded into memory. The bytes are
 * those of @agora/identity (`commandSigningText`: the domain tag, then canonical JSON), so what
 * the browser signs and checks is exactly what the services sign and check.
 */
import type { ResolutionPayload } from '@agora/contracts';
import { resolutionSigningText } from '@agora/domain-dialectic/browser';
import { commandSigningText, envelopeOfMetadata, envelopesFromMetadata, loginSigningText, PUBLIC_KEY_PREFIX, SECRET_KEY_PREFIX, serviceKeyAt, type ServiceKeyring, type UnsignedCommand } from '@agora/identity/browser';
import type { AgoraEvent } from '../../src/sse-client.js';

export function fromBase64url(text: string): Uint8Array<ArrayBuffer> {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function toBase64url(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const encoder = new TextEncoder();
/** A WebCrypto key (named so, the file also type-checks under Node's types, for its tests). */
type WebKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

const publicKeys = new Map<string, Promise<WebKey>>();

/** `ed25519:<base64url>` -> a WebCrypto verification key (cached). */
export function importPublicKey(text: string): Promise<WebKey> {
  let key = publicKeys.get(text);
  if (!key) {
    if (!text.startsWith(PUBLIC_KEY_PREFIX)) return Promise.reject(new Error('a public key is "ed25519:" followed by 43 base64url characters'));
    key = crypto.subtle.importKey('raw', fromBase64url(text.slice(PUBLIC_KEY_PREFIX.length)), { name: 'Ed25519' }, false, ['verify']);
    publicKeys.set(text, key);
  }
  return key;
}

export type SignatureMark =
  | { state: 'verified'; actor: string }
  | { state: 'unsigned'; actor: string | undefined }
  | { state: 'failed'; actor: string; why: string }
  | { state: 'unknown_key'; actor: string };

/** True when one of the envelopes the metadata may stand for (envelopesFromMetadata: the signing specification) verifies under `publicKey`. */
async function verifies(candidates: ReadonlyArray<UnsignedCommand & { signature: string }>, publicKey: string): Promise<boolean> {
  const key = await importPublicKey(publicKey);
  for (const envelope of candidates) {
    const signature = fromBase64url(envelope.signature);
    if (signature.length === 64 && (await crypto.subtle.verify({ name: 'Ed25519' }, key, signature, encoder.encode(commandSigningText(envelope))))) return true;
  }
  return false;
}

/** True when `signature` is `signer`'s signature, under `publicKey`, of this dialectic resolution (the bytes of libs/domain-dialectic resolution-text.ts). */
export async function verifyResolutionSignature(payload: ResolutionPayload, sig: { signer: string; publicKey: string; signature: string }): Promise<boolean> {
  try {
    const signature = fromBase64url(sig.signature);
    if (signature.length !== 64) return false;
    return await crypto.subtle.verify({ name: 'Ed25519' }, await importPublicKey(sig.publicKey), signature, encoder.encode(resolutionSigningText(payload, sig.signer)));
  } catch {
    return false;
  }
}

/**
 * Checks the signatures of the events of one log, in log order: it learns the agents' keys from
 * the registry's own events (AgentRegistered, AgentKeyRotated) as they pass, so an event is
 * checked under the key its actor had when the command was accepted; and the signed payload
 * from the first event of each commit (`commandPayload`). Keys configured outside the log (the
 * bootstrap operators', the services' over time: GET /v1/registry/configured-keys) are added
 * with `knowConfigured`; a service's command is checked under the key in force at its issuedAt.
 */
export class SignatureChecker {
  private readonly keys = new Map<string, string>();
  private readonly payloads = new Map<string, Record<string, unknown>>();
  private services: ServiceKeyring = {};

  knowConfigured(configured: { operators: Array<{ agentId: string; publicKey: string }>; services: ServiceKeyring }): void {
    for (const o of configured.operators) if (!this.keys.has(o.agentId)) this.keys.set(o.agentId, o.publicKey);
    this.services = configured.services;
  }

  /** Checks one event; call in log order. */
  async check(event: AgoraEvent): Promise<SignatureMark> {
    const meta = event.metadata ?? {};
    const commandId = typeof meta['commandId'] === 'string' ? meta['commandId'] : undefined;
    const own = meta['commandPayload'];
    if (commandId && own && typeof own === 'object') {
      this.payloads.set(commandId, own as Record<string, unknown>);
      if (this.payloads.size > 5000) this.payloads.delete(this.payloads.keys().next().value as string);
    }
    const actor = typeof meta['actor'] === 'string' ? meta['actor'] : undefined;
    const issuedAt = typeof meta['issuedAt'] === 'string' ? meta['issuedAt'] : '';
    const key = actor === undefined ? undefined : actor.startsWith('service:') ? serviceKeyAt(this.services, actor.slice('service:'.length), issuedAt) : this.keys.get(actor);
    this.learn(event);
    if (typeof meta['signature'] !== 'string' || actor === undefined) return { state: 'unsigned', actor };
    // Events after the first of a commit carry no payload: it is the first one's.
    const found = envelopeOfMetadata({ ...meta, commandPayload: commandId ? this.payloads.get(commandId) : undefined });
    if ('reason' in found) return { state: 'failed', actor, why: found.reason };
    if (!key) return { state: 'unknown_key', actor };
    try {
      return (await verifies(envelopesFromMetadata(meta, found.envelope.payload), key)) ? { state: 'verified', actor } : { state: 'failed', actor, why: `does not verify under ${actor}'s key` };
    } catch (error) {
      return { state: 'failed', actor, why: error instanceof Error ? error.message : String(error) };
    }
  }

  private learn(event: AgoraEvent): void {
    const data = event.data as { agentId?: string; publicKey?: string };
    if ((event.type === 'AgentRegistered' || event.type === 'AgentKeyRotated') && data.agentId && data.publicKey) this.keys.set(data.agentId, data.publicKey);
  }
}

/** An operator's key, loaded from its key file into this page's memory only (the secret half cannot be read back out of it). */
export interface OperatorKey {
  agentId: string;
  publicKey: string;
  sign(type: string, payload: Record<string, unknown>): Promise<UnsignedCommand & { signature: string }>;
  /** A dialectic resolution signed by this operator (a tier-3 resume), base64url. */
  signResolution(payload: ResolutionPayload): Promise<string>;
  /** The answer to a gateway's login challenge (the signing specification, "Logging in"), base64url. */
  signLogin(challenge: string, audience: string): Promise<string>;
}

/** PKCS#8 wrapping of a 32-byte Ed25519 seed (RFC 8410). */
const PKCS8_PREFIX = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];

/**
 * Reads a key file as the CLI writes it (`{agentId, publicKey, secretKey}`) and imports the secret
 * as a non-extractable signing key. It checks that the public key belongs to the secret (a test
 * signature) so a mismatched file is refused here rather than by the service.
 */
export async function loadOperatorKey(text: string, agentIdOverride?: string): Promise<OperatorKey> {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error('not a key file: expected JSON {"agentId", "publicKey", "secretKey"}');
  }
  const secret = parsed['secretKey'];
  const publicKey = parsed['publicKey'];
  const agentId = agentIdOverride || parsed['agentId'];
  if (typeof secret !== 'string' || !secret.startsWith(SECRET_KEY_PREFIX)) throw new Error('the key file has no "secretKey" ("ed25519-secret:...")');
  if (typeof publicKey !== 'string' || !publicKey.startsWith(PUBLIC_KEY_PREFIX)) throw new Error('the key file has no "publicKey" ("ed25519:...")');
  if (typeof agentId !== 'string' || agentId === '') throw new Error('the key file names no "agentId": enter the operator id');
  const seed = fromBase64url(secret.slice(SECRET_KEY_PREFIX.length));
  if (seed.length !== 32) throw new Error('the secret key is not 32 bytes');
  const pkcs8 = new Uint8Array(PKCS8_PREFIX.length + 32);
  pkcs8.set(PKCS8_PREFIX);
  pkcs8.set(seed, PKCS8_PREFIX.length);
  const privateKey = await crypto.subtle.importKey('pkcs8', pkcs8, { name: 'Ed25519' }, false, ['sign']);
  const probe = encoder.encode('agora.console.key-check');
  const probeSignature = new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, privateKey, probe));
  if (!(await crypto.subtle.verify({ name: 'Ed25519' }, await importPublicKey(publicKey), probeSignature, probe))) throw new Error('the key file\'s "publicKey" does not belong to its "secretKey"');
  return {
    agentId,
    publicKey,
    async sign(type, payload) {
      const unsigned: UnsignedCommand = { commandId: crypto.randomUUID(), type, actor: agentId, issuedAt: new Date().toISOString(), payload };
      const signature = new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, privateKey, encoder.encode(commandSigningText(unsigned))));
      return { ...unsigned, signature: toBase64url(signature) };
    },
    async signResolution(payload) {
      return toBase64url(new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, privateKey, encoder.encode(resolutionSigningText(payload, agentId)))));
    },
    async signLogin(challenge, audience) {
      return toBase64url(new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, privateKey, encoder.encode(loginSigningText({ aud: audience, challenge, sub: agentId })))));
    },
  };
}
