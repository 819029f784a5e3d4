/**
 * Who reads: the read token of a request (signing specification, "Read tokens"), checked against
 * the agent directory, turned into the Reader the visibility table speaks of. With reads open
 * (AGORA_READS=open, for a trusted network only) nobody is asked.
 */
import type { IncomingMessage } from 'node:http';
import { AgoraError, READ_TOKEN, readerOf, type Reader } from '@agora/contracts';
import { readerOfToken, type AgentDirectory } from '@agora/messaging';
import { ConfigError } from '@agora/runtime';
import { GatewayError } from './http-reply.js';
import { sessionCookieOf, SessionStore, type SessionOptions } from './sessions.js';

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

/**
 * AGORA_READS (default closed), AGORA_READ_AUDIENCE and AGORA_SESSION_SECONDS as ReadAccessOptions
 * (without the directory). Throws on a value it does not understand.
 */
export function readAccessFromEnv(env: NodeJS.ProcessEnv): Pick<ReadAccessOptions, 'mode' | 'audience' | 'sessions'> {
  const mode = env['AGORA_READS']?.trim() || 'closed';
  if (mode !== 'open' && mode !== 'closed') throw new ConfigError(`AGORA_READS must be open or closed (got ${JSON.stringify(mode)})`);
  const seconds = env['AGORA_SESSION_SECONDS'];
  if (seconds !== undefined && seconds !== '' && !(/^\d+$/.test(seconds) && Number(seconds) > 0)) throw new ConfigError(`AGORA_SESSION_SECONDS must be a positive whole number of seconds (got ${JSON.stringify(seconds)})`);
  return { mode, audience: env['AGORA_READ_AUDIENCE'] || READ_TOKEN.defaultAudience, ...(seconds ? { sessions: { sessionSeconds: Number(seconds) } } : {}) };
}

/** The help text of AGORA_READS, AGORA_READ_AUDIENCE and AGORA_SESSION_SECONDS (the gateway's and `npm start`'s --help). */
export const READS_ENV_HELP = `AGORA_READS                closed (default): every read needs a read token (agora token) or a console login,
                           and sees what the visibility table gives its reader; open: anyone who reaches
                           the gateway reads everything (for a trusted network only)
AGORA_READ_AUDIENCE        the audience read tokens must name (default agora)
AGORA_SESSION_SECONDS      how long a console login lasts with reads closed, in seconds (default 900)`;

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

  constructor(private readonly options: ReadAccessOptions = {}) {
    this.closed = options.mode === 'closed';
    this.audience = options.audience ?? READ_TOKEN.defaultAudience;
    if (this.closed && options.directory === undefined) throw new Error('closed reads need the agent directory to check read tokens against');
    this.sessions = this.closed ? new SessionStore(options.directory!, this.audience, options.sessions, options.now) : undefined;
  }

  /** The id of the live session a request reads with (a session cookie and no read token), if any. */
  sessionOf(req: IncomingMessage): string | undefined {
    if (this.sessions === undefined || tokenOf(req) !== undefined) return undefined;
    const id = sessionCookieOf(req);
    return id === undefined ? undefined : this.sessions.get(id)?.id;
  }

  /**
   * The reader of a request: undefined when reads are open (everything may be read); with reads
   * closed, the token's agent and roles (else the session cookie's, POST /v1/login), or a 401 (or
   * `actor_disabled`, 403) naming what is wrong.
   */
  async reader(req: IncomingMessage): Promise<Reader | undefined> {
    if (!this.closed) return undefined;
    const token = tokenOf(req);
    if (token === undefined) {
      const cookie = sessionCookieOf(req);
      if (cookie !== undefined) return this.sessionReader(cookie);
      throw new GatewayError('unauthenticated', `this gateway closes reads: send a read token as "Authorization: Bearer <token>" or ?${READ_TOKEN.queryParameter}=<token> (\`agora token --key <key file>\` makes one), or log in (POST /v1/login)`);
    }
    try {
      return await readerOfToken(token, { directory: this.options.directory!, audience: this.audience, ...(this.options.now ? { now: this.options.now } : {}) });
    } catch (error) {
      throw error instanceof AgoraError ? new GatewayError(error.code, error.message) : error;
    }
  }

  /** The reader of a session: its agent's roles as the directory has them now (a role change or a disabled agent applies to the next read). */
  private async sessionReader(id: string): Promise<Reader> {
    const session = this.sessions!.get(id);
    if (session === undefined) throw new GatewayError('unauthenticated', 'the session has ended (logged out or expired): log in again');
    const record = await this.options.directory!.get(session.agentId);
    if (record === undefined) throw new GatewayError('unknown_actor', `agent ${session.agentId} is no longer registered`);
    if (record.status !== 'active') throw new GatewayError('actor_disabled', `agent ${session.agentId} is disabled`);
    return readerOf(session.agentId, record.roles);
  }
}
