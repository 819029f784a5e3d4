import { randomUUID, sign, verify } from 'node:crypto';
import { publicKeyObject, secretKeyObject } from './keys.js';
import { commandSigningText, domainSigningText, type SignedCommand, type UnsignedCommand } from './signing-text.js';

export type { SignedCommand, UnsignedCommand } from './signing-text.js';

/**
 * The bytes of a domain-tagged signature (the signing specification): the UTF-8 of the tag, a
 * newline, and the RFC 8785 canonical JSON of the value. Each kind of signed message has its own
 * tag (SIGNING_TAGS), so bytes signed for one purpose never pass for another.
 */
export function domainSigningBytes(tag: string, value: unknown): Buffer {
  return Buffer.from(domainSigningText(tag, value), 'utf8');
}

/** Ed25519 signature of `bytes`, base64url without padding (86 characters). */
export function signBytes(bytes: Uint8Array, secretKey: string): string {
  return sign(null, bytes, secretKeyObject(secretKey)).toString('base64url');
}

/** True when `signature` (base64url, 64 bytes) verifies `bytes` under `publicKey`; a malformed signature or key is false. */
export function verifyBytes(bytes: Uint8Array, signature: string, publicKey: string): boolean {
  if (!/^[A-Za-z0-9_-]{86}$/.test(signature)) return false;
  try {
    return verify(null, bytes, publicKeyObject(publicKey), Buffer.from(signature, 'base64url'));
  } catch {
    return false;
  }
}

/**
 * The exact bytes a command signature covers: the tag `agora.command.v1`, then the canonical JSON
 * of commandId, type, actor, issuedAt, payload, and correlationId and causationId when present
 * (it names the actor; `signature` is not part of it). `known`: values whose canonical JSON is
 * already built (canonicalJson), such as the payload's.
 */
export function signingBytes(envelope: UnsignedCommand, known?: ReadonlyMap<object, string>): Buffer {
  return Buffer.from(commandSigningText(envelope, known), 'utf8');
}

export function signCommand(envelope: UnsignedCommand, secretKey: string): SignedCommand {
  return { ...envelope, signature: signBytes(signingBytes(envelope), secretKey) };
}

/** True when `signature` is `actor`'s signature (under `publicKey`) of exactly this envelope. */
export function verifyCommandSignature(envelope: SignedCommand, publicKey: string): boolean {
  const signature = Buffer.from(envelope.signature, 'base64url');
  if (signature.length !== 64) return false;
  return verify(null, signingBytes(envelope), publicKeyObject(publicKey), signature);
}

/** Builds and signs a command: what an agent (or the CLI) does to speak to Agora. */
export function createSignedCommand(input: {
  type: string;
  actor: string;
  payload: Record<string, unknown>;
  secretKey: string;
  commandId?: string;
  issuedAt?: Date | string;
  correlationId?: string;
  causationId?: string;
}): SignedCommand {
  const issuedAt = input.issuedAt === undefined ? new Date().toISOString() : typeof input.issuedAt === 'string' ? input.issuedAt : input.issuedAt.toISOString();
  return signCommand(
    {
      commandId: input.commandId ?? randomUUID(),
      type: input.type,
      actor: input.actor,
      issuedAt,
      payload: input.payload,
      ...(input.correlationId === undefined ? {} : { correlationId: input.correlationId }),
      ...(input.causationId === undefined ? {} : { causationId: input.causationId }),
    },
    input.secretKey,
  );
}
