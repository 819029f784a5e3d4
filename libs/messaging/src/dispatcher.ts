import { AgoraError, commandsOf, isServiceOnly, MIN_POSITION_FIELD, queriesOf, READ_TOKEN, type CommandDefinition, type ErrorCode, type QueryDefinition, type Reader, type Reply } from '@agora/contracts';
import type { NatsConnection } from '@nats-io/nats-core';
import { contextFrom, failed, inSpan, SpanKind, tracingOn, type Attributes } from '@agora/tracing';
import type { z } from 'zod';
import type { IncomingRequest } from './codec.js';
import { CommandGate, invalidCommand, type VerifiedCommand } from './command-gate.js';
import type { AgentDirectory } from './directory.js';
import { answerQuery, readerOfToken, readerOfId, type ReadTokenCheck } from './read-access.js';
import { errorReply, okReply, replyForError, type MessagingLogger } from './reply.js';
import { ReplyCache, replyCacheKey } from './reply-cache.js';
import { ServiceApi } from './service-api.js';

export type CommandHandler<P = unknown> = (command: VerifiedCommand<P>) => Promise<unknown>;
export type QueryHandler<P = unknown> = (params: P) => Promise<unknown>;

/** A typed entry for the `commands` map: `new Map([onCommand(RegisterAgent, async (cmd) => ...)])`. */
export function onCommand<P extends z.ZodType>(definition: CommandDefinition<P>, handler: CommandHandler<z.output<P>>): [string, CommandHandler] {
  return [definition.type, handler as CommandHandler];
}

/**
 * Entries for the `commands` map from a list of the contracts: every command of `definitions` that an
 * agent may send (a service-only one the service issues itself, not over its subject), each to `handler`.
 */
export function onAgentCommands<P>(definitions: readonly CommandDefinition[], handler: CommandHandler<P>): [string, CommandHandler][] {
  return definitions.filter((d) => !isServiceOnly(d)).map((d) => [d.type, handler as CommandHandler]);
}

/** A typed entry for the `queries` map: `new Map([onQuery(GetAgent, async ({agentId}) => ...)])`. */
export function onQuery<P extends z.ZodType, R extends z.ZodType>(definition: QueryDefinition<P, R>, handler: QueryHandler<z.output<P>>): [string, QueryHandler] {
  return [definition.subject, handler as QueryHandler];
}

/** One command this service answered: its type, the error code of a refusal (undefined when accepted) and the time it took. */
export interface CommandObservation {
  service: string;
  type: string;
  code: ErrorCode | undefined;
  seconds: number;
}

/**
 * Watches what a service does, for its process's metrics (libs/runtime): every command answered,
 * and the NATS connection the service serves on. Optional; the dispatcher never depends on it.
 */
export interface DispatchObserver {
  command?(observation: CommandObservation): void;
  natsConnection?(connection: NatsConnection, name: string): void;
}

/**
 * Read your writes: where the read models that answer a service's queries have got to in the log
 * (ReadModelPositions of @agora/eventsourcing). A query whose body carries `minPosition` (the
 * `position` of a command's reply) is answered only once they have reached it.
 */
export interface ReadModelProgress {
  /** Resolves once every read model has reached `minPosition`; throws AgoraError `read_model_behind` after a bounded wait, `invalid_command` for something that is not a position of the log. */
  waitFor(minPosition: unknown): Promise<void>;
}

export interface ServiceCatalog {
  commands: readonly CommandDefinition[];
  queries: readonly QueryDefinition[];
}

export interface DispatcherOptions {
  /** Service name: the `<service>` of its subjects, the queue group, the `$SRV` name. */
  service: string;
  /** One handler per command type of the service. */
  commands: ReadonlyMap<string, CommandHandler>;
  /** One handler per query subject of the service. */
  queries?: ReadonlyMap<string, QueryHandler>;
  directory: AgentDirectory;
  /** The service's commands and queries. Default: the contracts catalog (`commandsOf`, `queriesOf`). */
  catalog?: ServiceCatalog;
  /** See CommandGateOptions. Default 5 minutes. */
  maxClockSkewMs?: number;
  now?: () => number;
  /** Replies kept to answer a retried command without running it again. Default 1000. */
  replyCacheSize?: number;
  /** Read models for queries given `minPosition`. Absent: the service's queries read no log-fed model (answered at once). */
  readModels?: ReadModelProgress;
  /** Reported in `$SRV.INFO`. Default 0.1.0. */
  version?: string;
  /** Reported in `$SRV.PING` and `$SRV.INFO` (the digests of the settings this replica decides under: recordSettings). */
  metadata?: Record<string, string>;
  description?: string;
  logger?: MessagingLogger;
  /** Told of every command answered (metrics). */
  observer?: DispatchObserver;
  /**
   * Closed reads (AGORA_NATS_READS=closed): a query must name its reader, with its read token (header
   * READ_TOKEN.natsHeader, checked here) or, from the gateway (a reply to GATEWAY_INBOX_PREFIX), with
   * the reader the gateway's credential check proved (header READER_HEADER). A query from the gateway
   * naming no reader (its own reads are open) is answered as asked. Absent (open reads): a query is
   * answered as asked unless it names a reader in READER_HEADER (the gateway's, on HTTP, MCP, A2A).
   * Whatever the mode, the visibility table is applied here and only here (answerQuery).
   */
  reads?: ReadTokenCheck;
  /**
   * Read your writes on this replica without a position: a command's reply is sent once the read
   * models its service answers queries from have taken in the command's events (bounded; the reply's
   * `position` still lets a query on another replica wait with `minPosition`).
   */
  commandsVisible?: (position: string) => Promise<unknown>;
}

/** Codes that say the service failed, not the caller: only these mark a span as an error. */
const SERVER_FAULTS: ReadonlySet<ErrorCode> = new Set(['internal', 'unavailable', 'timeout']);

const consoleLogger: MessagingLogger = {
  error: (message, error) => console.error(message, error),
  warn: (message) => console.warn(message),
};

function checkHandlers(what: string, expected: readonly string[], given: Iterable<string>): void {
  const givenSet = new Set(given);
  const missing = expected.filter((k) => !givenSet.has(k));
  const unknown = [...givenSet].filter((k) => !expected.includes(k));
  if (missing.length > 0) throw new Error(`no handler for the ${what} ${missing.join(', ')}`);
  if (unknown.length > 0) throw new Error(`handlers for ${what} this service does not serve: ${unknown.join(', ')}`);
}

/**
 * Routes one request to its handler and turns every outcome into a Reply. Transport-agnostic:
 * the Nest controller calls it for both NATS and the in-process bus.
 */
export class MessageDispatcher {
  readonly service: string;
  readonly catalog: ServiceCatalog;
  readonly serviceApi: ServiceApi;
  private readonly gate: CommandGate;
  private readonly cache: ReplyCache;
  private readonly logger: MessagingLogger;
  private readonly commandsBySubject: ReadonlyMap<string, CommandDefinition>;
  private readonly queriesBySubject: ReadonlyMap<string, QueryDefinition>;

  constructor(private readonly options: DispatcherOptions) {
    this.service = options.service;
    this.catalog = options.catalog ?? { commands: commandsOf(options.service), queries: queriesOf(options.service) };
    const queries = options.queries ?? new Map();
    // A service starts with a handler for every command and query it serves, or not at all.
    // Service-only commands are the service's own (issueInternalCommand): answered `service_only`, never handled.
    const handled = this.catalog.commands.filter((c) => !isServiceOnly(c));
    for (const c of this.catalog.commands) {
      if (isServiceOnly(c) && options.commands.has(c.type)) throw new Error(`${c.type} is service-only: the ${options.service} service issues it on its own behalf (issueInternalCommand), so it has no handler on its subject`);
    }
    checkHandlers('commands', handled.map((c) => c.type), options.commands.keys());
    checkHandlers('queries on', this.catalog.queries.map((q) => q.subject), queries.keys());
    this.commandsBySubject = new Map(this.catalog.commands.map((c) => [c.subject, c]));
    this.queriesBySubject = new Map(this.catalog.queries.map((q) => [q.subject, q]));
    this.logger = options.logger ?? consoleLogger;
    this.gate = new CommandGate({
      directory: options.directory,
      commands: this.catalog.commands,
      ...(options.maxClockSkewMs === undefined ? {} : { maxClockSkewMs: options.maxClockSkewMs }),
      ...(options.now === undefined ? {} : { now: options.now }),
    });
    this.cache = new ReplyCache(options.replyCacheSize);
    this.serviceApi = new ServiceApi({
      name: options.service,
      version: options.version ?? '0.1.0',
      description: options.description ?? `Agora ${options.service} service`,
      ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
      endpoints: [
        ...this.catalog.commands.map((c) => ({ name: c.type, subject: c.subject, queueGroup: options.service, metadata: { kind: 'command', summary: c.summary } })),
        ...this.catalog.queries.map((q) => ({ name: q.name.replaceAll('.', '_'), subject: q.subject, queueGroup: options.service, metadata: { kind: 'query', summary: q.summary } })),
      ],
    });
  }

  /** Every subject the service answers on. */
  subjects(): string[] {
    return [...this.commandsBySubject.keys(), ...this.queriesBySubject.keys()];
  }

  async dispatch(request: IncomingRequest): Promise<Reply> {
    const started = process.hrtime.bigint();
    const command = this.commandsBySubject.get(request.subject);
    const reply = tracingOn() ? await this.traced(request, command) : await this.route(request);
    const elapsed = process.hrtime.bigint() - started;
    this.serviceApi.record(request.subject, elapsed, reply.ok ? undefined : `${reply.error.code}: ${reply.error.message}`);
    const { observer } = this.options;
    if (observer && command) observer.command?.({ service: this.service, type: command.type, code: reply.ok ? undefined : reply.error.code, seconds: Number(elapsed) / 1e9 });
    return reply;
  }

  /**
   * `route` in a server span continuing the caller's trace (the request's traceparent header):
   * `agora.command <Type>` or `agora.query <name>`, with the service, the command type and its
   * outcome (`ok`, or the error code), never the payload.
   */
  private traced(request: IncomingRequest, command: CommandDefinition | undefined): Promise<Reply> {
    const query = command ? undefined : this.queriesBySubject.get(request.subject);
    const name = command ? `agora.command ${command.type}` : query ? `agora.query ${query.service}.${query.name}` : `agora.request ${request.subject}`;
    const attributes: Attributes = { 'agora.service': this.service, 'messaging.system': 'nats', 'messaging.destination.name': request.subject };
    if (command) attributes['agora.command.type'] = command.type;
    if (query) attributes['agora.query.name'] = `${query.service}.${query.name}`;
    return inSpan(name, { kind: SpanKind.SERVER, attributes, parent: contextFrom(request.trace) }, async (span) => {
      const reply = await this.route(request);
      if (reply.ok) {
        span?.setAttribute('agora.outcome', 'ok');
        const result = reply.result as { duplicate?: unknown; events?: unknown } | null;
        if (command && result && typeof result.duplicate === 'boolean') span?.setAttribute('agora.command.duplicate', result.duplicate);
        if (command && result && Array.isArray(result.events)) span?.setAttribute('agora.events', result.events.length);
      } else {
        span?.setAttribute('agora.outcome', reply.error.code);
        span?.setAttribute('agora.error.code', reply.error.code);
        if (SERVER_FAULTS.has(reply.error.code)) failed(span, reply.error.code);
      }
      return reply;
    });
  }

  private async route(request: IncomingRequest): Promise<Reply> {
    if (request.rejection !== undefined) return { ok: false, error: request.rejection };
    const command = this.commandsBySubject.get(request.subject);
    if (command && isServiceOnly(command)) {
      const issuers = (command.issuers ?? []).map((s) => `service:${s}`).join(', ');
      return errorReply('service_only', `${command.type} is issued only by ${issuers} on its own behalf, signed with its service key; it is accepted from no one on ${request.subject}, operators included`, {
        commandType: command.type,
        issuers: command.issuers ?? [],
      });
    }
    if (command) return this.runCommand(command, request.body);
    const query = this.queriesBySubject.get(request.subject);
    if (query) return this.runQuery(query, request.body, request);
    return errorReply('invalid_command', `${this.service} serves nothing on ${request.subject}`);
  }

  private async runCommand(definition: CommandDefinition, body: Record<string, unknown> | undefined): Promise<Reply> {
    if (body === undefined) return errorReply('invalid_command', 'the body is empty; a command is a signed JSON envelope');
    let verified: VerifiedCommand;
    try {
      verified = tracingOn() ? await this.verifyTraced(definition, body) : await this.gate.verify(definition.subject, body);
    } catch (error) {
      return replyForError(error, this.logger, `verifying a command on ${definition.subject}`);
    }
    const handler = this.options.commands.get(verified.definition.type) as CommandHandler;
    const { commandsVisible } = this.options;
    const run = commandsVisible === undefined ? () => handler(verified) : async () => {
      const result = await handler(verified);
      const position = (result as { position?: unknown } | null)?.position;
      if (typeof position === 'string') await commandsVisible(position);
      return result;
    };
    return this.cache.getOrRun(replyCacheKey(verified.envelope), () => this.settle(run, `${verified.definition.type} ${verified.envelope.commandId}`));
  }

  /**
   * The gate's checks in a span `agora.gate`, naming the actor they admitted or the code they
   * refused with (a refusal is the caller's fault: the span is not marked as an error).
   */
  private async verifyTraced(definition: CommandDefinition, body: Record<string, unknown>): Promise<VerifiedCommand> {
    const outcome = await inSpan('agora.gate', { attributes: { 'agora.command.type': definition.type } }, async (span) => {
      try {
        const verified = await this.gate.verify(definition.subject, body);
        span?.setAttributes({ 'agora.actor': verified.actor.agentId, 'agora.command.id': verified.envelope.commandId, 'agora.outcome': 'ok' });
        return { verified };
      } catch (error) {
        const code = error instanceof AgoraError ? error.code : 'internal';
        span?.setAttributes({ 'agora.outcome': code, 'agora.error.code': code });
        return { error };
      }
    });
    if ('error' in outcome) throw outcome.error;
    return outcome.verified;
  }

  private async runQuery(definition: QueryDefinition, body: Record<string, unknown> | undefined, request: { readToken?: string; toGateway?: true; reader?: string }): Promise<Reply> {
    // `minPosition` belongs to every query, not to its params: taken out before they are checked.
    const { [MIN_POSITION_FIELD]: minPosition, ...rest } = body ?? {};
    const handler = this.options.queries?.get(definition.subject) as QueryHandler;
    // The params are checked once the table has had its say (an own-list's parameter is filled in with the reader).
    const ask = async (asked: Record<string, unknown>): Promise<Reply> => {
      const params = definition.params.safeParse(asked);
      if (!params.success) return replyForError(invalidCommand(`invalid ${definition.name} parameters`, params.error.issues), this.logger, definition.subject);
      return this.settle(async () => {
        if (minPosition !== undefined) await this.options.readModels?.waitFor(minPosition);
        return handler(params.data);
      }, `query ${definition.subject}`);
    };
    try {
      return await answerQuery(await this.readerOf(request), definition, rest, ask);
    } catch (error) {
      return replyForError(error, this.logger, `query ${definition.subject}`);
    }
  }

  /**
   * Who asks a query, for the visibility table (undefined: answered as asked). The reader the gateway
   * names is believed where only the gateway can have asked (a reply to its inbox) or where reads are
   * open (naming a reader then only narrows the answer); otherwise, with closed reads, a read token
   * proves the reader, and a query with neither is refused.
   */
  private async readerOf(request: { readToken?: string; toGateway?: true; reader?: string }): Promise<Reader | undefined> {
    const { reads, directory } = this.options;
    if (request.reader !== undefined && (reads === undefined || request.toGateway === true)) return readerOfId(request.reader, directory);
    if (reads === undefined || (request.readToken === undefined && request.toGateway === true)) return undefined;
    if (request.readToken === undefined) throw new AgoraError('forbidden', `${this.service} answers queries on NATS only with a read token: send one in the ${READ_TOKEN.natsHeader} header (the SDK does so for its signer)`);
    return readerOfToken(request.readToken, reads);
  }

  /** Runs a handler; its result, or the error it throws, becomes the reply. */
  private async settle(run: () => Promise<unknown>, context: string): Promise<Reply> {
    try {
      const result = await run();
      // `undefined` would vanish from the JSON and leave `{ok:true}` without a result.
      return okReply(result === undefined ? null : result);
    } catch (error) {
      return replyForError(error, this.logger, context);
    }
  }
}
