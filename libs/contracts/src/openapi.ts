/**
 * The OpenAPI 3.1 document of the HTTP gateway, generated from the same zod contracts as the
 * JSON Schema and AsyncAPI documents (the schema conversion is documents.ts'): POST /v1/commands
 * with one envelope schema per command type, one GET route per query, the SSE event stream, and
 * the error reply every route answers with when something fails.
 */
import { commands as catalogCommands, events as catalogEvents, queries as catalogQueries } from './catalog.js';
import type { CommandDefinition, EventDefinition, QueryDefinition } from './define.js';
import { envelopeOf, publishedEventOf, replyOf, schemaOf, type JsonSchema } from './json-schema.js';
import { DEBATE_SSE_TYPES } from './debate/index.js';
import { CommandEnvelope, CommandResult, ErrorReply, MIN_POSITION_FIELD, MinPosition } from './envelope.js';
import { ERROR_CODES, type ErrorCode } from './errors.js';
import { LOGIN, SIGNING_SPEC, SIGNING_TAGS } from './signing-spec.js';

export interface OpenApiOptions {
  /** What to describe. Default: the contracts catalog. */
  catalog?: {
    commands: readonly CommandDefinition[];
    queries: readonly QueryDefinition[];
    events?: readonly EventDefinition[];
  };
  /** `info.version`. Default 0.1.0. */
  version?: string;
  /** `servers[].url`, e.g. the gateway's own address. Default: none (relative to where the document was fetched). */
  serverUrl?: string;
}

/** `agents/:agentId` -> `agents/{agentId}`. */
export function openApiPath(httpPath: string): string {
  return httpPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

/** Names of the `:param` placeholders of a query's httpPath, in order. */
export function pathParamsOf(httpPath: string): string[] {
  return [...httpPath.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1] as string);
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

/** One response per HTTP status the given codes map to, each naming its codes. */
function errorResponses(codes: readonly ErrorCode[]): Record<string, JsonSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_CODES[code].status, [...(byStatus.get(ERROR_CODES[code].status) ?? []), code]);
  const responses: Record<string, JsonSchema> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: list.map((code) => `\`${code}\`: ${ERROR_CODES[code].meaning}`).join('; '),
      content: json(ref('ErrorReply')),
    };
  }
  return responses;
}

const ALL_CODES = Object.keys(ERROR_CODES) as ErrorCode[];
const QUERY_CODES: ErrorCode[] = ['invalid_command', 'not_found', 'forbidden', 'unavailable', 'read_model_behind', 'timeout', 'internal'];

/** The `minPosition` query parameter every query and event stream takes (read your writes). */
const minPositionParameter = (): JsonSchema => {
  const schema = schemaOf(MinPosition);
  return { name: MIN_POSITION_FIELD, in: 'query', required: false, description: schema['description'], schema };
};

/** Path and query-string parameters of a query route, from its params schema. */
function queryParameters(q: QueryDefinition): JsonSchema[] {
  const schema = schemaOf(q.params);
  const properties = (schema['properties'] ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema['required'] ?? []) as string[]);
  const inPath = new Set(pathParamsOf(q.httpPath));
  const parameters: JsonSchema[] = [];
  for (const name of inPath) parameters.push({ name, in: 'path', required: true, schema: properties[name] ?? { type: 'string' } });
  for (const [name, property] of Object.entries(properties)) {
    if (inPath.has(name)) continue;
    parameters.push({ name, in: 'query', required: required.has(name), schema: property, ...(typeof property['description'] === 'string' ? { description: property['description'] } : {}) });
  }
  parameters.push(minPositionParameter());
  return parameters;
}

const componentName = (text: string) => text.replace(/[^A-Za-z0-9._-]/g, '_');

export function openApiDocument(options: OpenApiOptions = {}): JsonSchema {
  const commands = options.catalog?.commands ?? catalogCommands;
  const queries = options.catalog?.queries ?? catalogQueries;
  const events = options.catalog?.events ?? (options.catalog ? [] : catalogEvents);

  const schemas: Record<string, JsonSchema> = {
    CommandEnvelope: schemaOf(CommandEnvelope),
    CommandResult: schemaOf(CommandResult, 'output'),
    CommandReply: schemaOf(replyOf(CommandResult), 'output'),
    ErrorReply: { description: 'Every failure, on every route: a stable snake_case code, a message for people, optional details', ...schemaOf(ErrorReply, 'output') },
  };
  for (const c of commands) schemas[componentName(`${c.type}Command`)] = envelopeOf(c);
  for (const e of events) schemas[componentName(`${e.type}Event`)] = { title: `${e.type} event`, description: e.summary, ...schemaOf(publishedEventOf(e), 'output') };

  const paths: Record<string, JsonSchema> = {};
  paths['/v1/commands'] = {
    post: {
      operationId: 'sendCommand',
      summary: 'Send a signed command',
      description: [
        'The body is a command envelope signed by its actor: Ed25519 over "agora.command.v1\\n" followed by the RFC 8785 canonical JSON of commandId, type, actor, issuedAt, payload, and correlationId and causationId when present (the signing specification is in info.description).',
        'The gateway picks the service by `type` and forwards the envelope unchanged; the service verifies the schema, the signature, the clock window and the roles.',
        `Command types: ${commands.map((c) => `\`${c.type}\` (${c.summary}; roles ${c.roles.join(', ')})`).join('; ')}.`,
      ].join(' '),
      requestBody: {
        required: true,
        content: json({
          oneOf: commands.map((c) => ref(componentName(`${c.type}Command`))),
          discriminator: { propertyName: 'type', mapping: Object.fromEntries(commands.map((c) => [c.type, `#/components/schemas/${componentName(`${c.type}Command`)}`])) },
        }),
      },
      responses: {
        '200': { description: 'The command was accepted (or had already been)', content: json(ref('CommandReply')) },
        ...errorResponses(ALL_CODES),
        '415': { description: '`invalid_command`: the body is not sent as application/json', content: json(ref('ErrorReply')) },
      },
    },
  };

  for (const q of queries) {
    const resultName = componentName(`${q.service}.${q.name}.result`);
    schemas[resultName] = schemaOf(q.result, 'output');
    paths[`/v1/${q.service}/${openApiPath(q.httpPath)}`] = {
      get: {
        operationId: componentName(`${q.service}.${q.name}`).replace(/[._-]+(.)/g, (_m, c: string) => c.toUpperCase()),
        summary: q.summary,
        description: `Forwarded as a request on \`${q.subject}\`; path and query-string parameters form the params object.`,
        parameters: queryParameters(q),
        responses: {
          '200': { description: q.summary, content: json({ type: 'object', properties: { ok: { const: true }, result: ref(resultName) }, required: ['ok', 'result'], additionalProperties: false }) },
          ...errorResponses(QUERY_CODES),
        },
      },
    };
  }

  /** How a stream ends with its reader's credential (docs/security-reads.md, "Streams end with their credential"). */
  const END_OF_STREAM =
    'With reads closed a stream ends with the credential it was opened with: a last message `event: end`, `data: {reason, resumeAfter}` (reason `token_expired`, `session_ended`, `reader_disabled`, `roles_changed` or `key_changed`), then nothing; reconnect with a fresh token and `Last-Event-ID`.';

  paths['/v1/events'] = {
    get: {
      operationId: 'streamEvents',
      summary: 'Committed events as Server-Sent Events: history, then live',
      description: [
        'Each message has `id: <position>`, `event: <event type>` and `data: <the recorded event as JSON>` (components/schemas/*Event).',
        'Reconnect with the `Last-Event-ID` header (EventSource does it by itself) to continue strictly after the last event received: nothing is skipped or repeated.',
        'A comment line is sent every 15 seconds to keep proxies from closing an idle stream.',
        END_OF_STREAM,
      ].join(' '),
      parameters: [
        { name: 'Last-Event-ID', in: 'header', required: false, description: 'Continue after this position; wins over `after`', schema: { type: 'string' } },
        { name: 'after', in: 'query', required: false, description: 'Continue after this position (default: from the first event)', schema: { type: 'string' } },
        { name: 'from', in: 'query', required: false, description: '`end`: skip history, send only events committed from now on', schema: { type: 'string', enum: ['end'] } },
        { name: 'category', in: 'query', required: false, description: 'Only streams of this category (`agent` for `agent-<id>`); repeat for several', schema: { type: 'array', items: { type: 'string' } }, style: 'form', explode: true },
        { name: 'type', in: 'query', required: false, description: 'Only events of this type; repeat for several', schema: { type: 'array', items: { type: 'string' } }, style: 'form', explode: true },
        minPositionParameter(),
      ],
      responses: {
        '200': {
          description: 'An endless text/event-stream',
          content: {
            'text/event-stream': {
              schema: { type: 'string', description: 'id, event and data lines per event; `data` is one of the event schemas' },
              ...(events.length > 0 ? { 'x-agora-data': { oneOf: events.map((e) => ref(componentName(`${e.type}Event`))) } } : {}),
            },
          },
        },
        ...errorResponses(['invalid_command', 'unavailable', 'read_model_behind']),
      },
    },
  };
  if (queries.some((q) => q.service === 'debate')) {
    paths['/v1/debates/{debateId}/events'] = {
      get: {
        operationId: 'streamDebateEvents',
        summary: "One debate's events as Server-Sent Events, with seed 004's event names: history, then live",
        description: [
          `Each message has \`id: <position>\`, \`event: <name>\`, one for every debate event (${Object.values(DEBATE_SSE_TYPES).join(', ')})`,
          'and `data: {type, logType, logSchemaVersion, position, recordedAt, ...the event data}` (logSchemaVersion: the schema version of the log event\'s data, as its metadata.schemaVersion). Reconnect with `Last-Event-ID` to continue strictly after the last event received.',
          END_OF_STREAM,
        ].join(' '),
        parameters: [
          { name: 'debateId', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'Last-Event-ID', in: 'header', required: false, description: 'Continue after this position; wins over `after`', schema: { type: 'string' } },
          { name: 'after', in: 'query', required: false, description: 'Continue after this position (default: the debate from its first event)', schema: { type: 'string' } },
          minPositionParameter(),
        ],
        responses: {
          '200': { description: 'An endless text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
          ...errorResponses(['invalid_command', 'not_found', 'unavailable', 'read_model_behind']),
        },
      },
    };
  }
  // Logging in (the signing specification, "Logging in"): a session cookie for a browser's reads, when the gateway closes reads.
  const okOf = (result: JsonSchema) => json({ type: 'object', properties: { ok: { const: true }, result }, required: ['ok', 'result'] });
  const who = { type: 'object', properties: { agentId: { type: 'string' }, roles: { type: 'array', items: { type: 'string' } }, expiresAt: { type: 'string', format: 'date-time' } }, required: ['agentId', 'roles', 'expiresAt'] };
  paths['/v1/login/challenge'] = {
    post: {
      operationId: 'loginChallenge',
      summary: 'A one-time challenge to sign for POST /v1/login (reads closed only)',
      responses: { '200': { description: 'The challenge, good for one attempt within a minute', content: okOf({ type: 'object', properties: { challenge: { type: 'string' }, audience: { type: 'string' }, expiresAt: { type: 'string', format: 'date-time' } }, required: ['challenge', 'audience', 'expiresAt'] }) }, ...errorResponses(['not_found']) },
    },
  };
  paths['/v1/login'] = {
    post: {
      operationId: 'login',
      summary: `Log in with a signed challenge: sets the session cookie ${LOGIN.cookie} (HttpOnly, SameSite=Strict) that reads as this agent`,
      requestBody: { required: true, content: json({ type: 'object', properties: { agentId: { type: 'string' }, challenge: { type: 'string' }, signature: { type: 'string', description: `Ed25519 over "${SIGNING_TAGS.login}\\n" + canonicalJson({aud, challenge, sub}), base64url` } }, required: ['agentId', 'challenge', 'signature'] }) },
      responses: { '200': { description: 'Logged in', content: okOf(who) }, ...errorResponses(['invalid_command', 'invalid_token', 'unknown_actor', 'bad_signature', 'actor_disabled', 'not_found']) },
    },
  };
  paths['/v1/session'] = {
    get: { operationId: 'session', summary: 'Who the session cookie reads as', responses: { '200': { description: 'The session', content: okOf({ ...who, properties: { ...who.properties, readsAll: { type: 'boolean' } } }) }, '204': { description: 'No session cookie: not logged in' }, ...errorResponses(['unauthenticated', 'not_found']) } },
  };
  paths['/v1/logout'] = {
    post: { operationId: 'logout', summary: 'End the session of the cookie (its event streams close) and clear the cookie', responses: { '200': { description: 'Logged out', content: okOf({ type: 'object' }) }, ...errorResponses(['not_found']) } },
  };
  paths['/health'] = {
    get: {
      operationId: 'health',
      summary: 'Liveness, and which event store the gateway reads',
      responses: {
        '200': { description: 'Up', content: json({ type: 'object', properties: { status: { const: 'ok' }, store: { type: 'string' } }, required: ['status', 'store'] }) },
        '503': { description: 'The event store does not answer', content: json({ type: 'object', properties: { status: { const: 'unavailable' }, store: { type: 'string' } } }) },
      },
    },
  };
  paths['/metrics'] = {
    get: { operationId: 'metrics', summary: 'Prometheus metrics of the gateway', responses: { '200': { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } } } },
  };
  for (const path of ['/docs', '/docs/openapi.json']) {
    paths[path] = {
      get: { operationId: path === '/docs' ? 'docs' : 'openApiJson', summary: 'This document', responses: { '200': { description: 'OpenAPI 3.1', content: json({ type: 'object' }) } } },
    };
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Agora gateway',
      version: options.version ?? '0.1.0',
      description: [
        'HTTP and Server-Sent Events for people and for agents without NATS. Commands are signed envelopes; every reply is',
        '{ok:true,result} or {ok:false,error:{code,message,details}}, with the HTTP status of its code. Error codes:',
        ...ALL_CODES.map((code) => `${code} (${ERROR_CODES[code].status}): ${ERROR_CODES[code].meaning}.`),
      ].join(' ') + `\n\n${SIGNING_SPEC}`,
    },
    ...(options.serverUrl ? { servers: [{ url: options.serverUrl }] } : {}),
    paths,
    components: { schemas },
  };
}
