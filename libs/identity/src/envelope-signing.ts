import { randomUUID, sign, verify } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import { publicKeyObject, secretKeyObject } from './keys.js';

/** The fields of a command envelope that the signature covers: all of them but `signature`. */
export interface UnsignedCommand {
  commandId: string;
  type: string;
  actor: string;
  issuedAt: string;
  payload: Record<string, unknown>;
  correlationId?: string;
  causationId?: string;
}
export interface SignedCommand extends UnsignedCommand {
  signature: string;
}

/** Domain separation: these bytes can never be mistaken for another kind of signed message. */
const DOMAIN = 'agora.command.v1\n';

/** The exact bytes signed: a domain tag, then the canonical JSON of the envelope without its signature (it names the actor). */
export function signingBytes(envelope: UnsignedCommand): Buffer {
  const { commandId, type, actor, issuedAt, payload, correlationId, causationId } = envelope;
  return Buffer.from(DOMAIN + canonicalJson({ commandId, type, actor, issuedAt, payload, correlationId, causationId }), 'utf8');
}

export function signCommand(envelope: UnsignedCommand, secretKey: string): SignedCommand {
  const signature = sign(null, signingBytes(envelope), secretKeyObject(secretKey)).toString('base64url');
  return { ...envelope, signature };
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
