import { z } from 'zod';

/** Agent ids: lowercase letters, digits, `_` and `-`; they appear in stream names and subjects. */
export const AgentId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'agent ids are 1 to 64 lowercase letters, digits, "_" or "-", starting with a letter or digit')
  .describe('Agent id, e.g. `security_bot`');

/** Aggregate ids chosen by callers (proposal ids, session ids): UUIDs or similar safe tokens. */
export const EntityId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/, 'ids are 1 to 100 letters, digits, "_" or "-"')
  .describe('Id of an aggregate: letters, digits, "_" or "-" (a UUID fits)');

export const Timestamp = z.iso.datetime({ offset: true }).describe('ISO-8601 date and time');

/** Public keys in text form: `ed25519:` followed by the 32-byte raw key in base64url. */
export const PublicKeyText = z
  .string()
  .regex(/^ed25519:[A-Za-z0-9_-]{43}$/, 'public keys are "ed25519:" followed by 43 base64url characters (32 bytes)')
  .describe('Ed25519 public key: `ed25519:<base64url of the 32-byte key>`');

export const Role = z
  .enum(['executive', 'reviewer', 'validator', 'operator', 'observer', 'debater', 'auditor'], {
    error: (issue) =>
      issue.input === 'service'
        ? 'the role "service" belongs to Agora\'s own services (their keys come from configuration); no agent can hold it'
        : 'roles are executive, reviewer, validator, operator, observer, debater or auditor',
  })
  .describe('What an agent may do');
export type Role = z.infer<typeof Role>;

/** The role a service identity presents to deciders (`context.actorRoles`); never an agent's. */
export const SERVICE_ROLE = 'service';
/** A role as deciders see it: an agent's, or a service's. */
export type ActorRole = Role | typeof SERVICE_ROLE;

/** Short free text (names, reasons). */
export const ShortText = (max = 200) => z.string().trim().min(1).max(max);

/**
 * The category of a stream id `<category>-<id>`: the part before the first `-` (categories contain no
 * `-`). A name without `-` is its own category: the store refuses such a stream at append
 * (assertValidStreamId), so one only comes from outside the log, and a reader (the audit, a feed, the
 * console) reports or filters it by that name rather than failing on it.
 */
export function categoryOf(streamId: string): string {
  const dash = streamId.indexOf('-');
  return dash < 0 ? streamId : streamId.slice(0, dash);
}

/** `value` when it is a whole number of at least 1; a RangeError naming it otherwise (an argument or option out of range). */
export function positiveInt(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive whole number, got ${String(value)}`);
  return value;
}
