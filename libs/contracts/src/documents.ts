/**
 * JSON Schema and AsyncAPI 3 documents generated from the zod contracts, so an agent written in
 * any language can speak to Agora from the documents alone. `npm run contracts` writes them to
 * libs/contracts/generated/; a test fails when the checked-in copies are stale.
 */
import { z } from 'zod';
import { commands, events, queries } from './catalog.js';
import type { CommandDefinition, EventDefinition } from './define.js';
import { CommandEnvelope, CommandResult, ErrorReply } from './envelope.js';
import { ERROR_CODES } from './errors.js';

export type JsonSchema = Record<string, unknown>;

/** JSON Schema (2020-12) of a zod schema, without `$schema`: embeddable in other documents. */
export function schemaOf(type: z.ZodType, io: 'input' | 'output' = 'input'): JsonSchema {
  const schema = z.toJSONSchema(type, { io, unrepresentable: 'any' }) as JsonSchema;
  delete schema['$schema'];
  return schema;
}

/** The envelope of one command type: the generic envelope with `type` fixed and `payload` typed. */
export function envelopeOf(c: CommandDefinition): JsonSchema {
  const envelope = CommandEnvelope.extend({ type: z.literal(c.type), payload: c.payload, signature: z.string().regex(/^[A-Za-z0-9_-]{86}$/) });
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
    metadata: z.record(z.string(), z.unknown()).describe('actor, commandId, commandType, issuedAt, signature, correlationId, causationId'),
  });
}

export interface GeneratedDocuments {
  /** Relative path under libs/contracts/generated/ -> file content. */
  files: Record<string, string>;
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

export function buildDocuments(version = '0.1.0'): GeneratedDocuments {
  const files: Record<string, string> = {};
  files['json-schema/CommandEnvelope.json'] = json({ $schema: 'https://json-schema.org/draft/2020-12/schema', title: 'Command envelope', ...schemaOf(CommandEnvelope) });
  files['json-schema/Reply.json'] = json({ $schema: 'https://json-schema.org/draft/2020-12/schema', title: 'Reply', ...schemaOf(replyOf(z.unknown()), 'output') });
  for (const c of commands) files[`json-schema/commands/${c.type}.json`] = json({ $schema: 'https://json-schema.org/draft/2020-12/schema', ...envelopeOf(c) });
  for (const e of events) files[`json-schema/events/${e.type}.json`] = json({ $schema: 'https://json-schema.org/draft/2020-12/schema', title: `${e.type} event`, description: e.summary, ...schemaOf(publishedEventOf(e), 'output') });
  for (const q of queries) {
    // Query names are unique within a service only: `<service>.<name>` is unique (it is the subject's tail).
    const id = `${q.service}.${q.name}`;
    files[`json-schema/queries/${id}.params.json`] = json({ $schema: 'https://json-schema.org/draft/2020-12/schema', title: `${id} params`, ...schemaOf(q.params) });
    files[`json-schema/queries/${id}.result.json`] = json({ $schema: 'https://json-schema.org/draft/2020-12/schema', title: `${id} result`, ...schemaOf(q.result, 'output') });
  }
  files['asyncapi.json'] = json(asyncApi(version));
  return { files };
}

const channelId = (subject: string) => subject.replace(/^agora\./, '').replace(/\./g, '_');

function asyncApi(version: string): JsonSchema {
  const channels: JsonSchema = {};
  const operations: JsonSchema = {};
  const messages: JsonSchema = {};
  const schemas: JsonSchema = {
    ErrorReply: schemaOf(ErrorReply, 'output'),
    CommandResult: schemaOf(CommandResult, 'output'),
  };
  const ref = (path: string) => ({ $ref: `#/${path}` });

  const addRequestReply = (subject: string, name: string, summary: string, request: JsonSchema, reply: JsonSchema, description: string) => {
    const id = channelId(subject);
    messages[name] = { name, title: name, summary, contentType: 'application/json', payload: request };
    messages[`${name}Reply`] = { name: `${name}Reply`, contentType: 'application/json', payload: reply };
    channels[id] = { address: subject, messages: { [name]: ref(`components/messages/${name}`) } };
    channels[`${id}_reply`] = { address: null, description: 'The NATS reply inbox of the request', messages: { [`${name}Reply`]: ref(`components/messages/${name}Reply`) } };
    operations[id] = {
      action: 'receive',
      channel: ref(`channels/${id}`),
      summary,
      description,
      messages: [ref(`channels/${id}/messages/${name}`)],
      reply: { channel: ref(`channels/${id}_reply`), messages: [ref(`channels/${id}_reply/messages/${name}Reply`)] },
    };
  };

  for (const c of commands) {
    addRequestReply(
      c.subject,
      c.type,
      c.summary,
      envelopeOf(c),
      schemaOf(replyOf(CommandResult), 'output'),
      `Request/reply, served by the \`${c.service}\` queue group. Signed by the actor (Ed25519 over the canonical JSON of every field but \`signature\`, prefixed with "agora.command.v1\\n"). Roles: ${c.roles.join(', ')}.`,
    );
  }
  for (const q of queries) {
    addRequestReply(q.subject, `Query_${q.service}_${q.name.replace(/\./g, '_')}`, q.summary, schemaOf(q.params), schemaOf(replyOf(q.result), 'output'), `Request/reply, served by the \`${q.service}\` queue group; also GET /v1/${q.service}/${q.httpPath} on the gateway.`);
  }
  for (const e of events) {
    const id = channelId(e.subject);
    messages[e.type] = { name: e.type, title: e.type, summary: e.summary, contentType: 'application/json', payload: schemaOf(publishedEventOf(e), 'output') };
    channels[id] = { address: e.subject, messages: { [e.type]: ref(`components/messages/${e.type}`) } };
    operations[id] = { action: 'send', channel: ref(`channels/${id}`), summary: `Published after ${e.type} is committed (at least once, in order)`, messages: [ref(`channels/${id}/messages/${e.type}`)] };
  }

  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Agora',
      version,
      description: [
        'Governance and deliberation for fleets of AI agents. Commands are NATS requests on agora.cmd.<service>.<aggregate>.<verb> carrying a signed envelope;',
        'queries are requests on agora.qry.<service>.<name>; committed events are published on agora.evt.<category>.<EventType>.',
        'Every reply is {ok:true,result} or {ok:false,error:{code,message,details}}. Error codes:',
        ...Object.entries(ERROR_CODES).map(([code, { meaning }]) => `${code}: ${meaning}.`),
      ].join(' '),
    },
    defaultContentType: 'application/json',
    servers: { nats: { host: '127.0.0.1:4222', protocol: 'nats', description: 'The NATS server (or cluster) the services are connected to' } },
    channels,
    operations,
    components: { messages, schemas },
  };
}
