/**
 * Read tokens (the signing specification, "Read tokens"): a compact JWS with EdDSA whose header
 * and claims are canonical JSON, signed by the reader with the key that signs its commands. The
 * CLI and the SDK mint them with mintReadToken; the gateway checks them with verifyReadToken.
 */
import { READ_TOKEN } from '@agora/contracts';
import { canonicalJson } from './canonical-json.js';
import { signBytes, verifyBytes } from './envelope-signing.js';

/** What a read token claims: who reads (`sub`), at which gateway (`aud`), from `iat` to `exp` (seconds since 1970). */
export interface ReadTokenClaims {
  sub: string;
  aud: string;
  iat: number;
  exp: number;
  jti?: string;
}

const b64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
const HEADER_PART = b64url(canonicalJson(READ_TOKEN.header));

/** The token for exactly these claims (deterministic: Ed25519 signs the same bytes the same way). */
export function signReadToken(claims: ReadTokenClaims, secretKey: string): string {
  const { sub, aud, iat, exp, jti } = claims;
  const signingInput = `${HEADER_PART}.${b64url(canonicalJson({ aud, exp, iat, sub, ...(jti === undefined ? {} : { jti }) }))}`;
  return `${signingInput}.${signBytes(Buffer.from(signingInput, 'ascii'), secretKey)}`;
}

/**
 * A fresh read token for `agentId`: issued now, for `lifetimeSeconds` (default and most: the
 * longest the gateway accepts), for `audience` (default: the gateways' default audience).
 */
export function mintReadToken(input: { agentId: string; secretKey: string; audience?: string; lifetimeSeconds?: number; now?: Date }): string {
  const lifetime = input.lifetimeSeconds ?? READ_TOKEN.maxLifetimeSeconds;
  if (!Number.isInteger(lifetime) || lifetime < 1 || lifetime > READ_TOKEN.maxLifetimeSeconds) {
    throw new RangeError(`a read token lives 1 to ${READ_TOKEN.maxLifetimeSeconds} seconds (got ${lifetime})`);
  }
  const iat = Math.floor((input.now ?? new Date()).getTime() / 1000);
  return signReadToken({ sub: input.agentId, aud: input.audience ?? READ_TOKEN.defaultAudience, iat, exp: iat + lifetime }, input.secretKey);
}

/** Why a token is refused: the error code of the signing specification's table, and a message for the reader. */
export interface ReadTokenRefusal {
  ok: false;
  code: 'invalid_token' | 'unknown_actor' | 'actor_disabled' | 'bad_signature' | 'wrong_audience' | 'token_lifetime_too_long' | 'token_not_yet_valid' | 'token_expired';
  message: string;
}

/** A token taken apart, its signature not yet checked. */
export interface ParsedReadToken {
  claims: ReadTokenClaims;
  signingInput: string;
  signature: string;
}

const PART = /^[A-Za-z0-9_-]+$/;

function decodePart(part: string): unknown {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Takes a token apart; a refusal `invalid_token` says what is wrong with its form. */
export function parseReadToken(token: string): ParsedReadToken | ReadTokenRefusal {
  const invalid = (why: string): ReadTokenRefusal => ({ ok: false, code: 'invalid_token', message: `not an Agora read token: ${why}` });
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((p) => PART.test(p))) return invalid('a token is three base64url parts joined by "."');
  const [headerPart, claimsPart, signature] = parts as [string, string, string];
  const header = decodePart(headerPart);
  if (header === undefined || canonicalJson(header) !== canonicalJson(READ_TOKEN.header)) return invalid(`its header must be ${JSON.stringify(READ_TOKEN.header)}`);
  const raw = decodePart(claimsPart) as Record<string, unknown> | undefined;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return invalid('its claims are not a JSON object');
  const { sub, aud, iat, exp, jti } = raw;
  if (typeof sub !== 'string' || sub === '') return invalid('"sub" (the agent id) must be a non-empty string');
  if (typeof aud !== 'string') return invalid('"aud" must be a string');
  if (!Number.isInteger(iat) || !Number.isInteger(exp)) return invalid('"iat" and "exp" must be whole seconds since 1970');
  if (jti !== undefined && typeof jti !== 'string') return invalid('"jti", when present, must be a string');
  const claims: ReadTokenClaims = { sub, aud, iat: iat as number, exp: exp as number, ...(jti === undefined ? {} : { jti: jti as string }) };
  return { claims, signingInput: `${headerPart}.${claimsPart}`, signature };
}

/**
 * Checks a token as the gateway does, in the specification's order: form, reader known and
 * active, signature, audience, lifetime, time. `lookup` gives the reader's registered key and
 * status (undefined: unknown).
 */
export async function verifyReadToken(
  token: string,
  options: {
    audience: string;
    lookup: (agentId: string) => Promise<{ publicKey: string; status: 'active' | 'disabled' } | undefined> | { publicKey: string; status: 'active' | 'disabled' } | undefined;
    now?: Date;
    clockSkewSeconds?: number;
  },
): Promise<{ ok: true; claims: ReadTokenClaims } | ReadTokenRefusal> {
  const parsed = parseReadToken(token);
  if ('ok' in parsed) return parsed;
  const { claims, signingInput, signature } = parsed;
  const agent = await options.lookup(claims.sub);
  if (agent === undefined) return { ok: false, code: 'unknown_actor', message: `no agent "${claims.sub}" is registered` };
  if (!verifyBytes(Buffer.from(signingInput, 'ascii'), signature, agent.publicKey)) {
    return { ok: false, code: 'bad_signature', message: `the read token's signature does not verify under ${claims.sub}'s registered key` };
  }
  if (agent.status !== 'active') return { ok: false, code: 'actor_disabled', message: `agent ${claims.sub} is disabled` };
  if (claims.aud !== options.audience) {
    return { ok: false, code: 'wrong_audience', message: `the read token is for audience ${JSON.stringify(claims.aud)}; this gateway's is ${JSON.stringify(options.audience)}` };
  }
  const lifetime = claims.exp - claims.iat;
  if (lifetime <= 0 || lifetime > READ_TOKEN.maxLifetimeSeconds) {
    return { ok: false, code: 'token_lifetime_too_long', message: `the read token lives ${lifetime} s (exp - iat); the gateway accepts 1 to ${READ_TOKEN.maxLifetimeSeconds} s` };
  }
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const skew = options.clockSkewSeconds ?? READ_TOKEN.clockSkewSeconds;
  if (claims.iat > now + skew) return { ok: false, code: 'token_not_yet_valid', message: `the read token is issued ${claims.iat - now} s in the future (clock skew allowed: ${skew} s)` };
  if (claims.exp < now - skew) return { ok: false, code: 'token_expired', message: `the read token expired ${now - claims.exp} s ago: make a new one` };
  return { ok: true, claims };
}
