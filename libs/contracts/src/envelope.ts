import { z } from 'zod';
import { AgentId, Timestamp } from './common.js';
import { SERVICE_NAMES } from './define.js';
import { ErrorCodeSchema } from './errors.js';

/** A command's signature: Ed25519, 64 bytes, base64url without padding. */
export const CommandSignature = z
  .string()
  .regex(/^[A-Za-z0-9_-]{86}$/)
  .describe('Ed25519 signature (64 bytes, base64url without padding) of "agora.command.v1\\n" followed by the RFC 8785 canonical JSON of every other member');

/** Who may sign a command: an agent, or one of Agora's services (`service:<name>`) sending another service a command only it may issue. */
export const CommandActor = z.union([AgentId, z.enum(SERVICE_NAMES.map((name) => `service:${name}` as const)).describe('An Agora service, signing with its service key')]);

/**
 * A command as it travels: signed by `actor` over "agora.command.v1\n" and the RFC 8785 canonical
 * JSON of every member but `signature` (the signing specification, signing-spec.ts; libs/identity
 * implements it). `signature` is optional here only so that an unsigned envelope gets its own error
 * code (`unsigned_command`) rather than a schema error.
 */
export const CommandEnvelope = z
  .object({
    commandId: z.uuid().describe('Unique per command; a repeat gets the first reply and writes nothing'),
    type: z.string().regex(/^[A-Z][A-Za-z0-9]{1,63}$/).describe('Command type, e.g. `RegisterAgent`'),
    actor: CommandActor.describe('The agent issuing (and signing) the command, or `service:<name>` for a command one service sends another (signed with its service key)'),
    issuedAt: Timestamp.describe('When the command was signed; must be within the accepted window (default 5 minutes)'),
    payload: z.record(z.string(), z.unknown()).describe('The command payload; its schema depends on `type`'),
    correlationId: z.string().min(1).max(100).optional().describe('Ties a chain of commands and events together; signed when present'),
    causationId: z.string().min(1).max(100).optional().describe('The command or event that caused this one; signed when present'),
    signature: CommandSignature.optional(),
  })
  .strict();
export type CommandEnvelope = z.infer<typeof CommandEnvelope>;
export type UnsignedEnvelope = Omit<CommandEnvelope, 'signature'>;

export const ErrorBody = z
  .object({
    code: ErrorCodeSchema,
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
export type ErrorBody = z.infer<typeof ErrorBody>;

export const OkReply = <T extends z.ZodType>(result: T) => z.object({ ok: z.literal(true), result }).strict();
export const ErrorReply = z.object({ ok: z.literal(false), error: ErrorBody }).strict();
export const Reply = z.discriminatedUnion('ok', [OkReply(z.unknown()), ErrorReply]);
export type Reply<T = unknown> = { ok: true; result: T } | { ok: false; error: ErrorBody };

/** What a command that was accepted answers with. */
export const CommandResult = z
  .object({
    commandId: z.uuid(),
    streamId: z.string().describe('The aggregate stream the command was decided on'),
    events: z.array(z.string()).describe('Types of the events appended, in order; empty when the command was already satisfied'),
    revision: z.number().int().min(-1).describe('Revision of the stream after the command (-1: the stream has no events)'),
    position: z.string().optional().describe('Global position of the last event of the command in the log; give it as `minPosition` to a query to read your own write'),
    duplicate: z.boolean().describe('true when this commandId had been handled before: nothing new was written'),
  })
  .strict();
export type CommandResult = z.infer<typeof CommandResult>;

/** Read your writes: the field of every query request on NATS, and the query parameter of every GET (query and event stream) on the gateway. */
export const MIN_POSITION_FIELD = 'minPosition';
export const MinPosition = z
  .string()
  .min(1)
  .max(100)
  .describe(
    "Read your writes: answer only once the read model serving this request has taken in this log position (the `position` of a command's reply); after a bounded wait (AGORA_READ_MODEL_WAIT_MS, default 2 s) the answer is `read_model_behind` (503, details {minPosition, position})",
  );
