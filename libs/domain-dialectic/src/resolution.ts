/**
 * The signed resolution (seed 001, "Both agents sign resolution"; a signature over the wrong message forges
 * every attestation: sign a canonical payload that names the signer and the session). The payload names the session, the paused
 * agent, its reviewer, the pause, the root cause, the conditions (canonical order) and who decided
 * it; the bytes signed are a domain tag distinct from the command envelope's `agora.command.v1`,
 * then the canonical JSON of `{resolution, signer}`. So a resolution signature can never pass for a
 * command, one party's signature never for the other's, nor one session's for another's.
 */
import { createHash } from 'node:crypto';
import { DomainError } from '@agora/decider';
import type { ResolutionPayload } from '@agora/contracts';
import { canonicalJson, signBytes, verifyBytes } from '@agora/identity';
import { resolutionSigningText } from './resolution-text.js';

export type { ResolutionPayload } from '@agora/contracts';
export { RESOLUTION_SIGNING_TAG, resolutionPayload, resolutionSigningText, type ResolutionInput } from './resolution-text.js';

/** The exact bytes `signer` signs: the tag, a newline, then the canonical JSON of `{resolution, signer}` (resolutionSigningText). */
export function resolutionSigningBytes(payload: ResolutionPayload, signer: string): Buffer {
  return Buffer.from(resolutionSigningText(payload, signer), 'utf8');
}

/** sha256 (hex) of the canonical payload: a short name for what is being signed. */
export function resolutionDigest(payload: ResolutionPayload): string {
  return createHash('sha256').update(canonicalJson(payload), 'utf8').digest('hex');
}

/** What an agent (or the CLI, or a test) does to sign a resolution: base64url Ed25519 signature. */
export function signResolution(payload: ResolutionPayload, signer: string, secretKey: string): string {
  return signBytes(resolutionSigningBytes(payload, signer), secretKey);
}

export interface ResolutionSignature {
  signer: string;
  publicKey: string;
  signature: string;
}

/** True when `signature` is `signer`'s signature, under `publicKey`, of exactly this payload. A malformed key or signature is false. */
export function verifyResolutionSignature(payload: ResolutionPayload, { signer, publicKey, signature }: ResolutionSignature): boolean {
  return verifyBytes(resolutionSigningBytes(payload, signer), signature, publicKey);
}

/**
 * A resolution signature that does not verify: refused with `bad_signature` (401), nothing written.
 * It is a DomainError (so a refusal like any other) whose code is `bad_signature`, which
 * DomainError's constructor does not take yet.
 */
export class BadResolutionSignature extends DomainError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('forbidden', message, details);
    (this as { code: string }).code = 'bad_signature';
    this.name = 'BadResolutionSignature';
  }
}

/** Refuses unless `signature` verifies (see verifyResolutionSignature). */
export function requireValidSignature(payload: ResolutionPayload, signed: ResolutionSignature): void {
  if (verifyResolutionSignature(payload, signed)) return;
  throw new BadResolutionSignature(`the signature of ${signed.signer} does not verify the resolution of session ${payload.sessionId} under ${signed.publicKey}`, {
    sessionId: payload.sessionId,
    signer: signed.signer,
    publicKey: signed.publicKey,
    digest: resolutionDigest(payload),
  });
}

/**
 * For the service, before deciding a command that carries a resolution signature (SignResolution,
 * RecordTieBreak, DecideRecovery): the key it names must be the actor's registered key, or the
 * signature proves nothing about the actor. Refuses with `bad_signature`.
 */
export function requireSignerKey(actor: string, claimedKey: string | undefined, registeredKey: string | undefined): void {
  if (claimedKey === undefined || claimedKey === registeredKey) return;
  throw new BadResolutionSignature(`${claimedKey} is not the registered key of ${actor}: a resolution is signed with the signer's registered key`, { actor, publicKey: claimedKey });
}
