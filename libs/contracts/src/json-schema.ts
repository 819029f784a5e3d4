/**
 * The pieces the generated documents (documents.ts: JSON Schema and AsyncAPI; openapi.ts: OpenAPI)
 * are built of: JSON Schema of a zod schema, a command's envelope, a reply, a relayed event.
 */
import { z } from 'zod';
import type { CommandDefinition, EventDefinition } from './define.js';
import { CommandEnvelope, CommandSignature, ErrorReply } from './envelope.js';
import { EventMetadata } from './metadata.js';

export type JsonSchema = Record<string, unknown>;

/** JSON Schema (2020-12) of a zod schema, without `$schema`: embeddable in other documents. */
export function schemaOf(type: z.ZodType, io: 'input' | 'output' = 'input'): JsonSchema {
  const schema = z.toJSONSchema(type, { io, unrepresentable: 'any' }) as JsonSchema;
  delete schema['$schema'];
  return schema;
}

/** The envelope of one command type: the generic envelope with `type` fixed and `payload` typed. */
export function envelopeOf(c: CommandDefinition): JsonSchema {
  const envelope = CommandEnvelope.extend({ type: z.literal(c.type), payload: c.payload, signature: CommandSignature });
  return { title: `${c.type} command`, description: c.summary, ...schemaOf(envelope) };
}

/** `{ok:true, result}` with a typed result, or the error reply. */
export const replyOf = (result: z.ZodType): z.ZodType => z.union([z.object({ ok: z.literal(true), result }).strict(), ErrorReply]);

/** An event as the relay publishes it on `agora.evt.<category>.<type>`. */
export function publishedEventOf(e: EventDefinition): z.ZodType {
  return z.object({
    id: z.uuid(),
    type: z.literal(e.type),
    streamId: z.string().describe(`\`${e.category}-<id>\``),
    revision: z.number().int().min(0),
    position: z.string().describe('Opaque global position; resume an SSE stream after it with Last-Event-ID'),
    recordedAt: z.string(),
    data: e.data,
    metadata: EventMetadata.extend({
      schemaVersion: z
        .literal(e.version)
        .describe(`The schema version of \`data\`: this document describes ${e.type} version ${e.version}. Any other version is not this shape: a reader that does not know it must not read the data as this one (docs/event-versions.md)`),
    }),
  });
}
