/**
 * The metadata of a recorded event: the one definition of what an event carries besides its data.
 * The event store keeps it, the relay publishes it, and every generated event schema embeds it
 * (components/schemas/EventMetadata in the AsyncAPI and OpenAPI documents). A new metadata field is
 * added here, with its description, and nowhere else; the signing specification (signing-spec.ts)
 * says how an auditor uses these fields to re-verify a command's signature.
 */
import { z } from 'zod';
import { Timestamp } from './common.js';

export const EventMetadata = z
  .object({
    actor: z.string().min(1).describe('Who issued the command that appended the event: an agent id, or `service:<name>` (for example `service:tribunal`) for what a service appends on its own behalf, signed with that service\'s key'),
    commandId: z.string().min(1).describe("The command's id (a UUID for signed commands; derived from the cause for a service's own commands). Every event of one commit carries it"),
    commandType: z.string().min(1).describe('The command type, e.g. `SubmitProposal`; the envelope member `type`'),
    issuedAt: Timestamp.describe("The envelope's signed `issuedAt` (a service's own commands: the service clock or the deadline's due time)"),
    signature: z
      .string()
      .regex(/^[A-Za-z0-9_-]{86}$/)
      .optional()
      .describe("The command envelope's Ed25519 signature (base64url), by the actor's key: an agent's, or a service's for what it appends on its own behalf"),
    correlationId: z
      .string()
      .min(1)
      .optional()
      .describe("The chain the command belongs to: the envelope's correlationId, or the commandId when the envelope had none; a reaction's is its cause's"),
    causationId: z.string().min(1).optional().describe("The envelope's causationId; a reaction's is the id of the event it answers"),
    commandPayload: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('The command payload exactly as signed, on the first event of the commit only (with the other fields it rebuilds the signed envelope)'),
    decision: z
      .object({
        now: Timestamp.describe("The decider's clock (`context.now`): the service clock, or a deadline's due time"),
        actorRoles: z.array(z.string()).describe("The actor's roles the decider saw"),
        payload: z.record(z.string(), z.unknown()).optional().describe('The payload the decider decided on, when it is not the signed one (a service enriched it)'),
        rules: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe('The release of the deciders\' rules it was decided under (RULES_VERSION); absent in a log written before rules were numbered: 1. An audit decides the command again under these rules'),
      })
      .strict()
      .optional()
      .describe('On the first event of a commit: the context its decider saw, so an audit can decide the command again and compare'),
    schemaVersion: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        "The schema version of the event's `data` (its type's `version` in the contracts; docs/event-versions.md). Every event Agora delivers carries it, upcast to today's version; an event stored without it was written before versions existed and is version 1. A reader that does not know the version must not read the data as a version it knows",
      ),
    prevCommitHash: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional()
      .describe('The link to the previous commit of the same stream (hex SHA-256; see commitHash and genesisCommitHash in libs/identity): the hash of that commit, or the genesis value of the stream for its first commit'),
    traceparent: z
      .string()
      .regex(/^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/)
      .optional()
      .describe('The W3C trace context of the command that appended the event, when tracing was on (OTEL_*): a reaction or a deadline the event causes continues that trace. Not signed, and not part of the decision'),
  })
  .strict()
  .describe('What an event carries besides its data: who decided it, and enough to re-verify the signature of the command behind it');
export type EventMetadata = z.infer<typeof EventMetadata>;
