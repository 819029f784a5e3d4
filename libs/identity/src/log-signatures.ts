import { verifyCommandSignature, type SignedCommand } from './envelope-signing.js';
import { envelopeOfMetadata, envelopesFromMetadata } from './log-envelope.js';

export { envelopeOfMetadata, envelopesFromMetadata } from './log-envelope.js';

/**
 * Offline verification of what the log holds. Every commit carries, in the metadata of each of
 * its events, the envelope of the command that made it (`actor`, `commandId`, `commandType`,
 * `issuedAt`, `signature`, `correlationId`, `causationId`), and the first event of the commit its
 * signed payload (`commandPayload`). An agent's command and a service's own command (signed by
 * `service:<name>` with its service key) are recorded alike, so one function verifies both.
 */

export type SignatureCheck = { ok: true; envelope: SignedCommand } | { ok: false; reason: string };

/**
 * Verifies the envelope recorded in a commit's first event under `publicKey`: the key the signer
 * had when it signed (an agent's from the registry's events up to then, rotations included; a
 * service's from the service keyring, see `serviceKeyAt`). Pure. A command sent without a
 * correlation id is recorded with `correlationId` = its commandId, so that case is verified both
 * ways.
 */
export function verifyMetadataSignature(metadata: Readonly<Record<string, unknown>>, publicKey: string): SignatureCheck {
  const found = envelopeOfMetadata(metadata);
  if ('reason' in found) return { ok: false, reason: found.reason };
  const { envelope } = found;
  let valid: boolean;
  try {
    valid = envelopesFromMetadata(metadata, envelope.payload).some((candidate) => verifyCommandSignature(candidate, publicKey));
  } catch (error) {
    return { ok: false, reason: `the key ${publicKey} is not usable: ${(error as Error).message}` };
  }
  return valid ? { ok: true, envelope } : { ok: false, reason: `the signature of ${envelope.actor} on ${envelope.type} ${envelope.commandId} does not verify under ${publicKey}` };
}
