/**
 * Signing with an agent's own key: the command envelopes `Agora` sends, and the same envelopes and read
 * tokens for a caller that sends them itself (an A2A client puts the envelope in its message and the token
 * in its `Authorization` header; docs/a2a.md). The key never leaves the process.
 */
import { readFileSync } from 'node:fs';
import { createSignedCommand, mintReadToken, parseKeyFile, type SignedCommand } from '@agora/identity';
import { commandDefinition, type CommandInput, type CommandName } from './catalog.js';

/** Who signs: a key file written by `agora keys new` (`{agentId, publicKey, secretKey}`), or the key itself. */
export type Signer = { keyFile: string; agentId?: string } | { secretKey: string; agentId: string };

/** A signer's agent and secret key, checked (a key file is read). */
export interface SigningKey {
  agentId: string;
  secretKey: string;
}

/**
 * The envelope's own ids: `commandId` (default a random UUID; a repeat is answered with the first reply and writes nothing), `correlationId`, `causationId`;
 * and `issuedAt` (default now; Agora takes it within 5 minutes of its clock), so an envelope drafted elsewhere (an A2A task's, docs/a2a.md) is signed as it is.
 */
export interface EnvelopeOptions {
  commandId?: string;
  issuedAt?: string;
  correlationId?: string;
  causationId?: string;
}

/** The signer's agent and key; a key file that names no agent needs `agentId`. */
export function signingKey(signer: Signer): SigningKey {
  if ('secretKey' in signer) return { agentId: signer.agentId, secretKey: parseKeyFile(JSON.stringify({ secretKey: signer.secretKey })).secretKey };
  const key = parseKeyFile(readFileSync(signer.keyFile, 'utf8'));
  const agentId = signer.agentId ?? key.agentId;
  if (agentId === undefined) throw new TypeError(`the key file ${signer.keyFile} names no agentId: pass agentId`);
  return { agentId, secretKey: key.secretKey };
}

/** The signed envelope of a command of the key's agent, issued now. */
export function signedEnvelope(key: SigningKey, type: string, payload: Record<string, unknown>, options: EnvelopeOptions = {}): SignedCommand {
  return createSignedCommand({
    type,
    actor: key.agentId,
    payload,
    secretKey: key.secretKey,
    ...(options.commandId === undefined ? {} : { commandId: options.commandId }),
    ...(options.issuedAt === undefined ? {} : { issuedAt: options.issuedAt }),
    ...(options.correlationId === undefined ? {} : { correlationId: options.correlationId }),
    ...(options.causationId === undefined ? {} : { causationId: options.causationId }),
  });
}

/**
 * A command envelope signed by `signer` (its `actor`), as `Agora.send` signs it, for a caller that sends it
 * itself: in an A2A message (`{"command": <envelope>}`), or to `POST /v1/commands/<type>`. The payload is typed
 * from the contracts; an unknown type throws.
 */
export function signCommand<N extends CommandName>(input: { type: N; payload: CommandInput<N>; signer: Signer } & EnvelopeOptions): SignedCommand {
  commandDefinition(input.type);
  return signedEnvelope(signingKey(input.signer), input.type, input.payload as Record<string, unknown>, input);
}

/**
 * A fresh read token of `signer`'s agent (`Authorization: Bearer <token>` on a gateway that closes reads, and on
 * `/a2a` and `/mcp`): for `audience` (default the gateways' default; a gateway names its own in `GET /health`),
 * living `lifetimeSeconds` (default and most: the longest a gateway accepts).
 */
export function readToken(signer: Signer, options: { audience?: string; lifetimeSeconds?: number } = {}): string {
  const { agentId, secretKey } = signingKey(signer);
  return mintReadToken({ agentId, secretKey, ...(options.audience === undefined ? {} : { audience: options.audience }), ...(options.lifetimeSeconds === undefined ? {} : { lifetimeSeconds: options.lifetimeSeconds }) });
}
