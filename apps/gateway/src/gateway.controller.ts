import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AgoraError, DEBATE_CATEGORY, EntityId, openApiDocument } from '@agora/contracts';
import { ReadModelPositions } from '@agora/eventsourcing';
import { StreamNotFound, type Position } from '@agora/eventstore';
import { Controller, Get, Inject, Logger, Post, Req, Res, type Type } from '@nestjs/common';
import { discardBody, isJsonContentType, parseJsonObject, readBody } from './body.js';
import { CommandSender } from './commands.js';
import { DocsSite } from './docs-site.js';
import { EventFeed } from './event-feed.js';
import type { Credential } from './credentials.js';
import { checkPosition, debateSseFrame, EventStreamSession, parseEventStreamRequest, type EventStreamRequest } from './event-stream.js';
import { GatewayError, sendJson, statusOfReply } from './http-reply.js';
import { GatewayMetrics, markRoute, metricsText } from './metrics.js';
import { GATEWAY_OPTIONS, type ResolvedGatewayOptions } from './options.js';
import { matchQueryRoute, queryParams, type QueryRoute } from './query-routes.js';
import { tokenOf } from './read-auth.js';
import { eventViewFor, forwardReader, notAParty, StreamParties } from './read-visibility.js';
import { refuseCrossOrigin, sessionCookie, sessionCookieOf, sourceOf, type SessionStore } from './sessions.js';

/** Open event streams and the feed they read, shared by the controller and `Gateway.close()`. */
export class EventStreams {
  readonly sessions = new Set<EventStreamSession>();
  readonly feed: EventFeed;
  /** The feed's place in the log, for streams given `minPosition` (read your writes). */
  private readonly positions: ReadModelPositions;
  /** Who each stream concerns, for readers who see only what concerns them. */
  readonly parties: StreamParties;

  constructor(options: ResolvedGatewayOptions) {
    this.positions = new ReadModelPositions(options.store, options.readModelWaitMs);
    this.feed = new EventFeed(options.store, { ...options.sseFeed, logger: new Logger('agora:gateway'), positions: this.positions });
    this.parties = new StreamParties(options.store);
  }

  /**
   * Where a stream starts: after Last-Event-ID / ?after= (checked), after the log's head now for
   * `from=end`, else from the first event. Starts the shared feed on first use. With
   * `minPosition`, only once the feed has taken in that position (else `read_model_behind`).
   */
  async startPosition(store: ResolvedGatewayOptions['store'], request: EventStreamRequest): Promise<Position | undefined> {
    try {
      await this.feed.start();
    } catch (error) {
      throw new GatewayError('unavailable', `the event store cannot say where its log ends: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (request.minPosition !== undefined) {
      try {
        await this.positions.waitFor(request.minPosition);
      } catch (error) {
        if (error instanceof AgoraError) throw new GatewayError(error.code, error.message, error.details);
        throw error;
      }
    }
    if (request.after !== undefined) {
      await checkPosition(store, request.after);
      return request.after;
    }
    if (!request.fromEnd) return undefined;
    try {
      return await this.feed.head();
    } catch (error) {
      throw new GatewayError('unavailable', `the event store cannot say where its log ends: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.sessions].map((s) => s.stop()));
    await this.feed.stop();
  }
}

const pathOf = (req: IncomingMessage): string => (req.url ?? '/').split('?')[0] as string;

/**
 * The gateway's fixed routes. The handlers only translate HTTP to a request on the service's
 * subject and the Reply back to HTTP: the services verify signatures, schemas and roles.
 */
@Controller()
export class GatewayController {
  private readonly logger = new Logger('agora:gateway');
  private readonly commands: CommandSender;
  /** The OpenAPI document is generated on first request: it is the same until the catalog changes, i.e. a restart. */
  private document: unknown;
  private readonly docsSite = new DocsSite(() => (this.document ??= openApiDocument({ catalog: this.options.catalog })));

  constructor(
    @Inject(GATEWAY_OPTIONS) private readonly options: ResolvedGatewayOptions,
    @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics,
    @Inject(EventStreams) private readonly streams: EventStreams,
  ) {
    this.commands = new CommandSender(options);
  }

  @Post('v1/commands')
  async command(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    markRoute(req, '/v1/commands');
    const contentType = req.headers['content-type'];
    if (!isJsonContentType(contentType)) {
      await discardBody(req);
      throw new GatewayError(
        'invalid_command',
        `send the command as application/json (got ${contentType ? JSON.stringify(contentType) : 'no content-type'}); with curl: -H 'content-type: application/json'`,
        { contentType: contentType ?? null },
        415,
      );
    }
    const envelope = parseJsonObject(await readBody(req, this.options.maxBodyBytes));
    const reply = await this.commands.send(envelope);
    sendJson(res, statusOfReply(reply), reply);
  }

  @Get('v1/events')
  async events(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    markRoute(req, '/v1/events', { streaming: true });
    const read = await this.options.reads.readStream(req);
    const reader = read?.reader;
    const view = eventViewFor(reader, this.streams.parties);
    const request = parseEventStreamRequest(req);
    const after = await this.streams.startPosition(this.options.store, request);
    // The client may have left while the position was being checked.
    if (res.destroyed) return;
    const session = new EventStreamSession(res, request, { heartbeatMs: this.options.sseHeartbeatMs, slowClientMs: this.options.sseSlowClientMs, logger: this.logger, ...(view ? { view } : {}) });
    session.start(this.streams.feed, after);
    this.follow(res, session, read?.credential);
  }

  /**
   * A debate's events in the seed's SSE vocabulary (debateSseFrame), from its first event or after
   * Last-Event-ID / ?after=, then live; 404 when the debate does not exist.
   */
  @Get('v1/debates/:debateId/events')
  async debateEvents(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    markRoute(req, '/v1/debates/:debateId/events', { streaming: true });
    const read = await this.options.reads.readStream(req);
    const reader = read?.reader;
    const debateId = decodeURIComponent(pathOf(req).split('/')[3] ?? '');
    const parsed = EntityId.safeParse(debateId);
    if (!parsed.success) throw new GatewayError('invalid_command', `"${debateId}" is not a debate id: ${parsed.error.issues[0]?.message ?? 'invalid'}`, { debateId });
    const streamId = `${DEBATE_CATEGORY}-${debateId}`;
    const request = { ...parseEventStreamRequest(req), categories: new Set([DEBATE_CATEGORY]), types: new Set<string>(), streamId };
    // A reader who does not read everything learns nothing of a debate it is no party to, not even that it exists.
    if (reader !== undefined && !reader.readsAll && !(reader.asAgent && (await this.streams.parties.load(streamId)).has(reader.agentId))) throw notAParty(reader, 'this debate');
    if (!(await streamExists(this.options.store, streamId))) throw new GatewayError('not_found', `debate ${debateId} does not exist`, { debateId });
    const after = await this.streams.startPosition(this.options.store, request);
    if (res.destroyed) return;
    const session = new EventStreamSession(res, request, { heartbeatMs: this.options.sseHeartbeatMs, slowClientMs: this.options.sseSlowClientMs, logger: this.logger, frame: debateSseFrame });
    session.start(this.streams.feed, after);
    this.follow(res, session, read?.credential);
  }

  /**
   * Keeps an event stream among the open ones until it closes. With reads closed it is bound to
   * the credential it was opened with: it ends with `event: end` when the token expires, the login
   * session ends (logout, expiry), or the registry disables the agent or changes its roles or key.
   */
  private follow(res: ServerResponse, stream: EventStreamSession, credential: Credential | undefined): void {
    this.streams.sessions.add(stream);
    const unbind = credential === undefined ? undefined : this.options.reads.credentials?.bind(credential, (reason) => void stream.end(reason));
    const closed = () => {
      this.streams.sessions.delete(stream);
      unbind?.();
    };
    if (res.destroyed) closed();
    else res.once('close', closed);
  }

  /** A one-time challenge to sign for POST /v1/login (the signing specification, "Logging in"). */
  @Post('v1/login/challenge')
  async loginChallenge(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    markRoute(req, '/v1/login/challenge');
    await discardBody(req);
    refuseCrossOrigin(req);
    try {
      sendJson(res, 200, { ok: true, result: this.loginSessions().challenge(sourceOf(req)) });
    } catch (error) {
      const retryAfter = error instanceof GatewayError ? error.details?.['retryAfterSeconds'] : undefined;
      if (typeof retryAfter !== 'number') throw error;
      sendJson(res, (error as GatewayError).status, (error as GatewayError).toReply(), { 'retry-after': String(retryAfter) });
    }
  }

  /** `{agentId, challenge, signature}` -> a session cookie (HttpOnly, SameSite=Strict) for this agent's reads. */
  @Post('v1/login')
  async login(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    markRoute(req, '/v1/login');
    const sessions = this.loginSessions();
    try {
      refuseCrossOrigin(req);
    } catch (error) {
      await discardBody(req);
      throw error;
    }
    if (!isJsonContentType(req.headers['content-type'])) {
      await discardBody(req);
      throw new GatewayError('invalid_command', 'send the login as application/json {"agentId", "challenge", "signature"}', undefined, 415);
    }
    const body = parseJsonObject(await readBody(req, 4096));
    const { agentId, challenge, signature } = body;
    if (typeof agentId !== 'string' || typeof challenge !== 'string' || typeof signature !== 'string') throw new GatewayError('invalid_command', 'a login is {"agentId", "challenge", "signature"}, three strings');
    const { session, roles } = await sessions.login({ agentId, challenge, signature });
    sendJson(res, 200, { ok: true, result: { agentId, roles, expiresAt: new Date(session.expiresAt).toISOString() } }, { 'set-cookie': sessionCookie(req, { id: session.id, maxAgeSeconds: sessions.sessionSeconds }) });
  }

  /**
   * Who the session cookie reads as: `{agentId, roles, expiresAt}`; 204 without a session cookie
   * (a page asking before its login: a question, not a failed request a browser logs as an error);
   * 401 `unauthenticated` for a cookie whose session has ended.
   */
  @Get('v1/session')
  async session(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    markRoute(req, '/v1/session');
    const sessions = this.loginSessions();
    const id = sessionCookieOf(req);
    if (id === undefined) {
      res.writeHead(204, { 'cache-control': 'no-store' }).end();
      return;
    }
    const session = sessions.get(id);
    if (session === undefined) throw new GatewayError('unauthenticated', 'the session has ended (logged out or expired): log in again');
    const reader = await this.options.reads.reader(req);
    const roles = (await sessions.roles(session.agentId)) ?? [];
    sendJson(res, 200, { ok: true, result: { agentId: session.agentId, roles, readsAll: reader?.readsAll ?? false, expiresAt: new Date(session.expiresAt).toISOString() } });
  }

  /** Ends the session of the cookie (its event streams close) and clears the cookie. */
  @Post('v1/logout')
  async logout(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    markRoute(req, '/v1/logout');
    const sessions = this.loginSessions();
    await discardBody(req);
    refuseCrossOrigin(req);
    const id = sessionCookieOf(req);
    if (id !== undefined) sessions.end(id);
    sendJson(res, 200, { ok: true, result: { loggedOut: true } }, { 'set-cookie': sessionCookie(req, undefined) });
  }

  /** The session store; with reads open there is nothing to log in to (404). */
  private loginSessions(): SessionStore {
    const sessions = this.options.reads.sessions;
    if (sessions === undefined) throw new GatewayError('not_found', 'this gateway keeps reads open (AGORA_READS=open): no login is needed');
    return sessions;
  }

  @Get('health')
  async health(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    markRoute(req, '/health');
    const store = this.options.store.kind;
    try {
      await storeAnswers(this.options.store);
      sendJson(res, 200, { status: 'ok', store, reads: this.readsInfo() });
    } catch (error) {
      sendJson(res, 503, { status: 'unavailable', store, reads: this.readsInfo(), error: error instanceof Error ? error.message : String(error) });
    }
  }

  /** What a client needs to read here: whether reads need a token, and the audience it must name. */
  private readsInfo(): { mode: 'open' | 'closed'; audience: string } {
    return { mode: this.options.reads.closed ? 'closed' : 'open', audience: this.options.reads.audience };
  }

  @Get('metrics')
  async prometheus(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    markRoute(req, '/metrics');
    const token = this.options.metricsToken;
    const given = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    const text = await metricsText(this.metrics.registry, token !== undefined && given !== undefined && sameSecret(given, token));
    res.writeHead(200, { 'content-type': this.metrics.registry.contentType, 'cache-control': 'no-store' });
    res.end(text);
  }

  /** The API reference (DocsSite): the page for browsers, the OpenAPI JSON for API clients, and the documents it links. */
  @Get(['docs', 'docs/*path'])
  docs(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
    this.docsSite.serve(req, res, pathOf(req).replace(/\/+$/, ''));
  }
}

/**
 * GET /v1/<service>/<httpPath> for every query of the catalog: one handler registered on every
 * route pattern; it finds its query by matching the path again (Nest does not say which of a
 * handler's paths matched). Undefined when the catalog has no queries.
 */
export function queryController(routes: readonly QueryRoute[]): Type<unknown> | undefined {
  if (routes.length === 0) return undefined;

  @Controller()
  class QueryController {
    constructor(@Inject(GATEWAY_OPTIONS) private readonly options: ResolvedGatewayOptions) {}

    @Get(routes.map((r) => r.pattern))
    async query(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
      const url = new URL(req.url ?? '/', 'http://gateway');
      const match = matchQueryRoute(routes, url.pathname);
      if (!match) throw new GatewayError('not_found', `no route GET ${url.pathname}`);
      markRoute(req, match.route.pattern);
      const reader = await this.options.reads.reader(req);
      const params = queryParams(match.route, url.searchParams, match.params);
      // The service decides what the reader sees (the visibility table): the gateway names the reader, and passes its token on.
      const headers = forwardReader(reader, reader === undefined ? undefined : tokenOf(req));
      const reply = await this.options.client.request(match.route.query.subject, params, { timeoutMs: this.options.requestTimeoutMs, ...(headers ? { headers } : {}) });
      sendJson(res, statusOfReply(reply), reply);
    }
  }
  return QueryController;
}

/** Whether a stream has events (a debate exists). */
async function streamExists(store: ResolvedGatewayOptions['store'], streamId: string): Promise<boolean> {
  try {
    return (await store.readStream(streamId, { maxCount: 1 })).length > 0;
  } catch (error) {
    if (error instanceof StreamNotFound) return false;
    throw new GatewayError('unavailable', `the event store cannot be read: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Whether two secrets are the same, in a time that does not say how much of them is. */
function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

const HEALTH_TIMEOUT_MS = 2_000;

/** Asks the store for its head (one request, whatever the log's length): throws when the store is closed or unreachable, or takes over 2 s. */
async function storeAnswers(store: ResolvedGatewayOptions['store']): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const read = store.headPosition();
  // After a timeout nobody awaits `read` any more: a late failure must not go unhandled.
  read.catch(() => undefined);
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`the event store did not answer within ${HEALTH_TIMEOUT_MS} ms`)), HEALTH_TIMEOUT_MS);
  });
  try {
    await Promise.race([read, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
