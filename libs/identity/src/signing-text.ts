import { canonicalJson } from './canonical-json.js';

/**
 * The text of a command signature, free of node:crypto so that a browser (the console) builds
 * exactly the bytes a service verifies: a domain tag, then the canonical JSON of the envelope
 * without its signature (it names the actor). Domain separation: these bytes can never be
 * mistaken for another kind of signed message.
 */
export const COMMAND_SIGNING_TAG = 'agora.command.v1';
export const COMMAND_SIGNING_DOMAIN = `${COMMAND_SIGNING_TAG}\n`;
/** SIGNING_TAGS.login of @agora/contracts (kept here as text: the browser bundle imports no contracts runtime). */
export const LOGIN_SIGNING_TAG = 'agora.login.v1';

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

/**
 * The text of a domain-tagged signature (the signing specification): the tag, a newline, and the
 * RFC 8785 canonical JSON of the value. Each kind of signed message has its own tag (SIGNING_TAGS
 * in libs/contracts), so bytes signed for one purpose never pass for another.
 */
export function domainSigningText(tag: string, value: unknown, known?: ReadonlyMap<object, string>): string {
  if (tag.includes('\n')) throw new TypeError('a signing tag is one line');
  return `${tag}\n${canonicalJson(value, known)}`;
}

/** `known`: values whose canonical JSON is already built (canonicalJson), such as the payload's. */
export function commandSigningText(envelope: UnsignedCommand, known?: ReadonlyMap<object, string>): string {
  const { commandId, type, actor, issuedAt, payload, correlationId, causationId } = envelope;
  return domainSigningText(COMMAND_SIGNING_TAG, { commandId, type, actor, issuedAt, payload, correlationId, causationId }, known);
}

/** What a login signs (the signing specification, "Logging in"): the gateway's audience, its one-time challenge, and who logs in. */
export interface LoginChallengeAnswer {
  aud: string;
  challenge: string;
  sub: string;
}

/** The text a reader signs to answer a login challenge: `agora.login.v1`, a newline, canonical JSON of {aud, challenge, sub}. */
export function loginSigningText(answer: LoginChallengeAnswer): string {
  return domainSigningText(LOGIN_SIGNING_TAG, { aud: answer.aud, challenge: answer.challenge, sub: answer.sub });
}

/** Text forms of keys: `ed25519:<base64url of the 32-byte public key>`, `ed25519-secret:<base64url of the 32-byte seed>`. */
export const PUBLIC_KEY_PREFIX = 'ed25519:';
export const SECRET_KEY_PREFIX = 'ed25519-secret:';
