// Rebuilding a recorded command envelope from event metadata, free of node:crypto (the console checks signatures in the browser with it).
import type { SignedCommand } from './signing-text.js';

/** The envelope a commit's first event records, or a reason why there is none. */
export function envelopeOfMetadata(metadata: Readonly<Record<string, unknown>>): { envelope: SignedCommand } | { reason: string } {
  const { actor, commandId, commandType, issuedAt, signature, correlationId, causationId, commandPayload } = metadata;
  if (typeof signature !== 'string') return { reason: 'unsigned: the metadata carries no signature' };
  if (typeof actor !== 'string' || typeof commandId !== 'string' || typeof commandType !== 'string' || typeof issuedAt !== 'string') {
    return { reason: 'the metadata lacks actor, commandId, commandType or issuedAt' };
  }
  if (commandPayload === null || typeof commandPayload !== 'object' || Array.isArray(commandPayload)) {
    return { reason: 'the metadata carries no commandPayload (only the first event of a commit does)' };
  }
  if (correlationId !== undefined && typeof correlationId !== 'string') return { reason: 'correlationId is not a string' };
  if (causationId !== undefined && typeof causationId !== 'string') return { reason: 'causationId is not a string' };
  return {
    envelope: {
      commandId,
      type: commandType,
      actor,
      issuedAt,
      payload: commandPayload as Record<string, unknown>,
      ...(correlationId === undefined ? {} : { correlationId }),
      ...(causationId === undefined ? {} : { causationId }),
      signature,
    },
  };
}

/**
 * The signed envelopes an event's metadata may stand for (the signing specification, "Re-verifying
 * an event from the log"), with `payload` the commit's `commandPayload` (only the commit's first
 * event records it): one candidate, or two when the metadata's correlationId equals the commandId
 * (the envelope omitted it, or set it to its own id: the recorded form is the same). Empty when the
 * metadata carries no signature.
 */
export function envelopesFromMetadata(metadata: Readonly<Record<string, unknown>>, payload: Record<string, unknown>): SignedCommand[] {
  const found = envelopeOfMetadata({ ...metadata, commandPayload: payload });
  if ('reason' in found) return [];
  const { envelope } = found;
  if (envelope.correlationId === undefined || envelope.correlationId !== envelope.commandId) return [envelope];
  const { correlationId: _implied, ...without } = envelope;
  return [without, envelope];
}
