/**
 * JSON Schema, AsyncAPI 3 and OpenAPI 3.1 documents generated from the zod contracts, so an agent
 * written in any language can speak to Agora from the documents alone. `npm run contracts` writes
 * them to libs/contracts/generated/ (with the signing test vectors, which libs/identity makes); a
 * test fails when the checked-in copies are stale.
 */
import { authorizationTableMarkdown } from './authorization.js';
import { z } from 'zod';
import { commands, events, queries } from './catalog.js';
import { queryOwner, type EventDefinition, type QueryDefinition } from './define.js';
import { CommandEnvelope, CommandResult, ErrorReply, MIN_POSITION_FIELD, MinPosition } from './envelope.js';
import { ERROR_CODES } from './errors.js';
import { EventMetadata } from './metadata.js';
import { envelopeOf, publishedEventOf, replyOf, schemaOf, type JsonSchema } from './json-schema.js';
import { openApiDocument } from './openapi.js';
import { SIGNING_SPEC } from './signing-spec.js';

/** The JSON Schema dialect of every schema in the documents, as AsyncAPI names it in `schemaFormat`. */
export const SCHEMA_FORMAT = 'application/schema+json;version=draft-2020-12';
export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/**
 * NATS headers of a relayed event on `agora.evt.<category>.<type>`, so a listener can filter or
 * dedupe without parsing the body (at least once: dedupe on `Agora-Event-Id`).
 */
export const EVENT_HEADERS = {
  id: 'Agora-Event-Id',
  type: 'Agora-Event-Type',
  stream: 'Agora-Stream',
  revision: 'Agora-Revision',
  position: 'Agora-Position',
  /** Lets a JetStream stream that captures `agora.evt.>` drop the copies an at-least-once relay resends. */
  natsMsgId: 'Nats-Msg-Id',
  /** The schema version of the body's `data` (as `metadata.schemaVersion`): a listener can skip a version it does not know without parsing the body. */
  schemaVersion: 'Agora-Schema-Version',
} as const;

/** JSON Schema of the headers of a relayed event. */
export function eventHeadersSchema(e: EventDefinition): JsonSchema {
  return {
    type: 'object',
    properties: {
      [EVENT_HEADERS.id]: { type: 'string', format: 'uuid', description: 'The event id (as `id` in the body): a listener dedupes on it, the relay delivering at least once' },
      [EVENT_HEADERS.type]: { const: e.type, description: 'The event type' },
      [EVENT_HEADERS.stream]: { type: 'string', description: `The stream, \`${e.category}-<id>\`` },
      [EVENT_HEADERS.revision]: { type: 'string', pattern: '^[0-9]+$', description: 'Revision of the event in its stream, in decimal' },
      [EVENT_HEADERS.position]: { type: 'string', description: 'Opaque global position' },
      [EVENT_HEADERS.natsMsgId]: { type: 'string', format: 'uuid', description: 'The event id again, for JetStream deduplication' },
      [EVENT_HEADERS.schemaVersion]: { const: String(e.version), description: `The schema version of the body's data, in decimal (as metadata.schemaVersion): ${e.version} for the shape described here` },
    },
    required: Object.values(EVENT_HEADERS),
  };
}

/** Where the HTTP gateway serves a query, as data: method, path template, and which params go in the path or the query string. */
export function httpRouteOf(q: QueryDefinition): { method: 'GET'; path: string; pathParams: string[]; queryParams: string[] } {
  const pathParams = [...q.httpPath.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1] as string);
  const properties = Object.keys((schemaOf(q.params)['properties'] ?? {}) as Record<string, unknown>);
  return { method: 'GET', path: `/v1/${q.service}/${q.httpPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}')}`, pathParams, queryParams: properties.filter((p) => !pathParams.includes(p)) };
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
  for (const e of events) files[`json-schema/events/${e.type}.json`] = json({ $schema: 'https://json-schema.org/draft/2020-12/schema', title: `${e.type} event, version ${e.version}`, description: e.summary, ...schemaOf(publishedEventOf(e), 'output') });
  for (const q of queries) {
    // Query names are unique within a service only: `<service>.<name>` is unique (it is the subject's tail).
    const id = `${q.service}.${q.name}`;
    files[`json-schema/queries/${id}.params.json`] = json({ $schema: 'https://json-schema.org/draft/2020-12/schema', title: `${id} params`, ...schemaOf(q.params) });
    files[`json-schema/queries/${id}.result.json`] = json({ $schema: 'https://json-schema.org/draft/2020-12/schema', title: `${id} result`, ...schemaOf(q.result, 'output') });
  }
  files['json-schema/EventMetadata.json'] = json({ $schema: 'https://json-schema.org/draft/2020-12/schema', title: 'Event metadata', ...schemaOf(EventMetadata, 'output') });
  files['asyncapi.json'] = json(asyncApi(version));
  files['openapi.json'] = json(openApiDocument({ version }));
  files['authorization.md'] = `# Who may send each command\n\nGenerated from libs/contracts (authorizeCommand); docs/security.md has the same table.\n\n${authorizationTableMarkdown()}`;
  return { files };
}

/** A query's request body on NATS: its params, and `minPosition` (read your writes), which every query takes. */
export function queryRequestSchema(q: QueryDefinition): JsonSchema {
  const params = schemaOf(q.params);
  return { ...params, properties: { ...((params['properties'] ?? {}) as JsonSchema), [MIN_POSITION_FIELD]: schemaOf(MinPosition) } };
}

const channelId = (subject: string) => subject.replace(/^agora\./, '').replace(/\./g, '_');

function asyncApi(version: string): JsonSchema {
  const channels: JsonSchema = {};
  const operations: JsonSchema = {};
  const messages: JsonSchema = {};
  const multiFormat = (schema: JsonSchema) => ({ schemaFormat: SCHEMA_FORMAT, schema });
  const schemas: JsonSchema = {
    ErrorReply: multiFormat(schemaOf(ErrorReply, 'output')),
    CommandResult: multiFormat(schemaOf(CommandResult, 'output')),
    EventMetadata: multiFormat(schemaOf(EventMetadata, 'output')),
  };
  const ref = (path: string) => ({ $ref: `#/${path}` });

  const addRequestReply = (subject: string, name: string, summary: string, request: JsonSchema, reply: JsonSchema, description: string, extensions: JsonSchema) => {
    const id = channelId(subject);
    messages[name] = { name, title: name, summary, contentType: 'application/json', payload: multiFormat(request) };
    messages[`${name}Reply`] = { name: `${name}Reply`, contentType: 'application/json', payload: multiFormat(reply) };
    channels[id] = { address: subject, messages: { [name]: ref(`components/messages/${name}`) } };
    channels[`${id}_reply`] = { address: null, description: 'The NATS reply inbox of the request', messages: { [`${name}Reply`]: ref(`components/messages/${name}Reply`) } };
    operations[id] = {
      action: 'receive',
      channel: ref(`channels/${id}`),
      summary,
      description,
      messages: [ref(`channels/${id}/messages/${name}`)],
      reply: { channel: ref(`channels/${id}_reply`), messages: [ref(`channels/${id}_reply/messages/${name}Reply`)] },
      ...extensions,
    };
  };

  for (const c of commands) {
    addRequestReply(
      c.subject,
      c.type,
      c.summary,
      envelopeOf(c),
      schemaOf(replyOf(CommandResult), 'output'),
      `Request/reply, served by the \`${c.service}\` queue group; also POST /v1/commands on the gateway. Signed by the actor: Ed25519 over "agora.command.v1\\n" followed by the RFC 8785 canonical JSON of commandId, type, actor, issuedAt, payload, and correlationId and causationId when present (see the signing specification in info.description). ${c.roles.length === 0 ? `Service-only: issued by ${(c.issuers ?? []).map((s) => `service:${s}`).join(', ')} on its own behalf; refused from any agent (service_only).` : `Roles: ${c.roles.join(', ')}.`}${c.relation ? ` Relation: ${c.relation}.` : ''}`,
      { 'x-agora-queue-group': c.service, 'x-agora-roles': [...c.roles], ...(c.issuers ? { 'x-agora-issuers': c.issuers.map((s) => `service:${s}`) } : {}), ...(c.relation ? { 'x-agora-relation': c.relation } : {}), 'x-agora-http': { method: 'POST', path: '/v1/commands' } },
    );
  }
  for (const q of queries) {
    const route = httpRouteOf(q);
    addRequestReply(
      q.subject,
      `Query_${q.service}_${q.name.replace(/\./g, '_')}`,
      q.summary,
      queryRequestSchema(q),
      schemaOf(replyOf(q.result), 'output'),
      `Request/reply, served by the \`${queryOwner(q)}\` queue group; also ${route.method} ${route.path} on the gateway (x-agora-http).`,
      { 'x-agora-queue-group': queryOwner(q), 'x-agora-http': route },
    );
  }
  for (const e of events) {
    const id = channelId(e.subject);
    messages[e.type] = {
      name: e.type,
      title: `${e.type} (version ${e.version})`,
      summary: e.summary,
      'x-agora-schema-version': e.version,
      contentType: 'application/json',
      headers: multiFormat(eventHeadersSchema(e)),
      payload: multiFormat(schemaOf(publishedEventOf(e), 'output')),
    };
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
        'Every schema is JSON Schema 2020-12 (schemaFormat). Events carry the headers Agora-Event-Id (dedupe on it), Agora-Event-Type, Agora-Stream, Agora-Revision, Agora-Position, Nats-Msg-Id and Agora-Schema-Version.',
        "Every event names the schema version of its data (metadata.schemaVersion and the Agora-Schema-Version header; each event message's x-agora-schema-version is the version it describes). Agora upcasts older events before delivering them, so the version is today's; a listener that meets a version it does not know must not read the data as one it knows (docs/event-versions.md).",
        'The same commands and queries over HTTP: POST /v1/commands and the GET routes in x-agora-http (openapi.json beside this document).',
      ].join(' ') + `\n\n${SIGNING_SPEC}`,
    },
    defaultContentType: 'application/json',
    servers: {
      nats: { host: '127.0.0.1:4222', protocol: 'nats', description: 'The NATS server (or cluster) the services are connected to' },
      gateway: { host: '127.0.0.1:8080', protocol: 'http', description: 'The HTTP gateway (openapi.json): POST /v1/commands, the query routes in x-agora-http, GET /v1/events' },
    },
    channels,
    operations,
    components: { messages, schemas },
  };
}
