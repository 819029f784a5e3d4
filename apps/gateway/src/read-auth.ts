/**
 * Who reads: the read token of a request (signing specification, "Read tokens"), checked against
 * the agent directory, turned into the Reader the visibility table speaks of. With reads open
 * (AGORA_READS=open, for a trusted network only) nobody is asked.
 */
import type { IncomingMessage } from 'node:http';
import { AgoraError, READ_TOKEN, readerOf, type Reader } from '@agora/contracts';
import { readerOfToken, type AgentDirectory } from '@agora/messaging';
import { ConfigError, positiveIntSetting } from '@agora/runtime';
import { CredentialWatch, type Credential } from './credentials.js';
import { GatewayError } from './http-reply.js';
import { DEFAULT_SESSION_BOUNDS, sessionCookieOf, SessionStore, type SessionOptions } from './sessions.js';

export interface ReadAccessOptions {
  /** `closed`: every read needs a read token and sees what the visibility table gives its reader. Default `open` here; the processes default to `closed` (readAccessFromEnv). */
  mode?: 'open' | 'closed';
  /** Whose tokens are good: the registry's agents and the bootstrap operators (`context.directory`). Needed when closed. */
  directory?: AgentDirectory;
  /** The audience tokens must name. Default READ_TOKEN.defaultAudience. */
  audience?: string;
  /** Clock of the token check. Default: now. */
  now?: () => Date;
  /** Browser sessions (POST /v1/login): their lifetime and bounds. Used when closed. */
  sessions?: SessionOptions;
}

/** The console's login settings: the environment variable of each SessionOptions member. */
const SESSION_ENV = {
  sessionSeconds: ['AGORA_SESSION_SECONDS', 'seconds'],
  sessionsPerAgent: ['AGORA_CONSOLE_SESSIONS_PER_AGENT', 'sessions'],
  maxSessions: ['AGORA_CONSOLE_SESSIONS_MAX', 'sessions'],
  challengesPerSource: ['AGORA_LOGIN_CHALLENGES_PER_SOURCE', 'challenges'],
  maxChallenges: ['AGORA_LOGIN_CHALLENGES_MAX', 'challenges'],
} as const satisfies Record<string, readonly [string, string]>;

/**
 * AGORA_READS (default closed), AGORA_READ_AUDIENCE, AGORA_SESSION_SECONDS and the bounds of the
 * console's logins as ReadAccessOptions (without the directory). Throws on a value it does not understand.
 */
export function readAccessFromEnv(env: NodeJS.ProcessEnv): Pick<ReadAccessOptions, 'mode' | 'audience' | 'sessions'> {
  const mode = env['AGORA_READS']?.trim() || 'closed';
  if (mode !== 'open' && mode !== 'closed') throw new ConfigError(`AGORA_READS must be open or closed (got ${JSON.stringify(mode)})`);
  const sessions: SessionOptions = {};
  for (const [key, [name, what]] of Object.entries(SESSION_ENV)) {
    const value = positiveIntSetting(env, name, what);
    if (value !== undefined) sessions[key as keyof typeof SESSION_ENV] = value;
  }
  return { mode, audience: env['AGORA_READ_AUDIENCE'] || READ_TOKEN.defaultAudience, ...(Object.keys(sessions).length > 0 ? { sessions } : {}) };
}

/** The help text of AGORA_READS, AGORA_READ_AUDIENCE, AGORA_SESSION_SECONDS and the login bounds (the gateway's and `npm start`'s --help). */
export const READS_ENV_HELP = `AGORA_READS                closed (default): every read needs a read token (agora token) or a console login,
                           and sees what the visibility table gives its reader; open: anyone who reaches
                           the gateway reads everything (for a trusted network only)
AGORA_READ_AUDIENCE        the audience read tokens must name (default agora)
AGORA_SESSION_SECONDS      how long a console login lasts with reads closed, in seconds (default 900)
AGORA_CONSOLE_SESSIONS_PER_AGENT  console sessions one agent holds; its next login ends its own oldest (default ${DEFAULT_SESSION_BOUNDS.sessionsPerAgent})
AGORA_CONSOLE_SESSIONS_MAX        console sessions in all; past that a login is refused, too_many_sessions (default ${DEFAULT_SESSION_BOUNDS.maxSessions})
AGORA_LOGIN_CHALLENGES_PER_SOURCE unanswered login challenges one remote address (an IPv6 /64) holds;
                           its next one drops its own oldest (default ${DEFAULT_SESSION_BOUNDS.challengesPerSource})
AGORA_LOGIN_CHALLENGES_MAX        unanswered login challenges in all; past that one is refused, too_many_sessions (default ${DEFAULT_SESSION_BOUNDS.maxChallenges})`;

/** The startup line that says how reads stand: a gateway with open reads says so loudly. */
export function readsLine(reads: Pick<ReadAccessOptions, 'mode' | 'audience'>): string {
  return reads.mode === 'open'
    ? 'reads are OPEN (AGORA_READS=open): anyone who reaches the gateway reads every proposal, review and event; use it on a trusted network only'
    : `reads are closed: every read needs a read token for audience "${reads.audience ?? READ_TOKEN.defaultAudience}" (agora token) or a console login`;
}

/** The token a request carries: `Authorization: Bearer <token>`, else `?access_token=`. */
export function tokenOf(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw new GatewayError('invalid_token', 'the Authorization header must be "Bearer <read token>"');
    return match[1];
  }
  const query = new URL(req.url ?? '/', 'http://gateway').searchParams.get(READ_TOKEN.queryParameter);
  return query === null || query === '' ? undefined : query;
}

export class ReadAccess {
  readonly closed: boolean;
  readonly audience: string;
  /** Browser sessions (POST /v1/login): there only when reads are closed. */
  readonly sessions: SessionStore | undefined;
  /** What ends the streams readers keep open (their credentials' expiry, the directory's changes): there only when reads are closed. */
  readonly credentials: CredentialWatch | undefined;

  constructor(private readonly options: ReadAccessOptions = {}) {
    this.closed = options.mode === 'closed';
    this.audience = options.audience ?? READ_TOKEN.defaultAudience;
    if (this.closed && options.directory === undefined) throw new Error('closed reads need the agent directory to check read tokens against');
    this.sessions = this.closed ? new SessionStore(options.directory!, this.audience, options.sessions, options.now) : undefined;
    const now = options.now;
    this.credentials = this.closed ? new CredentialWatch(options.directory!, this.sessions, now ? () => now().getTime() : Date.now) : undefined;
  }

  /**
   * The reader of a request: undefined when reads are open (everything may be read); with reads
   * closed, the token's agent and roles (else the session cookie's, POST /v1/login), or a 401 (or
   * `actor_disabled`, 403) naming what is wrong.
   */
  async reader(req: IncomingMessage): Promise<Reader | undefined> {
    return (await this.read(req))?.reader;
  }

  /**
   * The reader of a request and the credential it reads on (what ends a stream it opens: the
   * token's expiry, the session's end, a change of the agent), or undefined when reads are open.
   */
  async read(req: IncomingMessage): Promise<{ reader: Reader; credential: Credential } | undefined> {
    if (!this.closed) return undefined;
    const token = tokenOf(req);
    if (token === undefined) {
      const cookie = sessionCookieOf(req);
      if (cookie !== undefined) return this.sessionReader(cookie);
      throw new GatewayError('unauthenticated', `this gateway closes reads: send a read token as "Authorization: Bearer <token>" or ?${READ_TOKEN.queryParameter}=<token> (\`agora token --key <key file>\` makes one), or log in (POST /v1/login)`);
    }
    let agentId: string;
    try {
      agentId = (await readerOfToken(token, { directory: this.options.directory!, audience: this.audience, ...(this.options.now ? { now: this.options.now } : {}) })).agentId;
    } catch (error) {
      throw error instanceof AgoraError ? new GatewayError(error.code, error.message) : error;
    }
    // The record the reader is decided on and the credential bound to it are one and the same look.
    const record = await this.options.directory!.get(agentId);
    if (record === undefined) throw new GatewayError('unknown_actor', `agent ${agentId} is no longer registered`);
    if (record.status !== 'active') throw new GatewayError('actor_disabled', `agent ${agentId} is disabled`);
    return { reader: readerOf(agentId, record.roles), credential: { agentId, roles: record.roles, publicKey: record.publicKey, expiresAt: expiryOf(token) } };
  }

  /**
   * The reader of a request that opens a stream: as `read`, but a read token already past its `exp`
   * (still good for one read within the clock skew the signing specification allows) opens none:
   * `token_expired`, rather than the whole backlog once before the stream's end.
   */
  async readStream(req: IncomingMessage): Promise<{ reader: Reader; credential: Credential } | undefined> {
    const read = await this.read(req);
    if (read !== undefined && this.pastExpiry(read.credential)) throw new GatewayError('token_expired', 'the read token has expired: a stream is opened with a token still good (a fresh one: agora token)');
    return read;
  }

  /** Whether a read token's credential is past its `exp` (a session's is never: it ends). */
  pastExpiry(credential: Credential): boolean {
    return credential.session === undefined && credential.expiresAt <= (this.options.now?.() ?? new Date()).getTime();
  }

  /** The reader of a session: its agent's roles as the directory has them now (a role change or a disabled agent applies to the next read). */
  private async sessionReader(id: string): Promise<{ reader: Reader; credential: Credential }> {
    const session = this.sessions!.get(id);
    if (session === undefined) throw new GatewayError('unauthenticated', 'the session has ended (logged out or expired): log in again');
    const record = await this.options.directory!.get(session.agentId);
    if (record === undefined) throw new GatewayError('unknown_actor', `agent ${session.agentId} is no longer registered`);
    if (record.status !== 'active') throw new GatewayError('actor_disabled', `agent ${session.agentId} is disabled`);
    return { reader: readerOf(session.agentId, record.roles), credential: { agentId: session.agentId, roles: record.roles, publicKey: record.publicKey, expiresAt: session.expiresAt, session: session.id } };
  }
}

/** A verified read token's `exp`, in ms since the epoch. */
function expiryOf(token: string): number {
  const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp: number };
  return claims.exp * 1000;
}
