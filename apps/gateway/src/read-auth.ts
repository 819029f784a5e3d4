/**
 * Who reads: the read token of a request (signing specification, "Read tokens"), checked against
 * the agent directory, turned into the Reader the visibility table speaks of. With reads open
 * (the default until the console logs in with a key) nobody is asked.
 */
import type { IncomingMessage } from 'node:http';
import { AgoraError, READ_TOKEN, type Reader } from '@agora/contracts';
import { readerOfToken, type AgentDirectory } from '@agora/messaging';
import { ConfigError } from '@agora/runtime';
import { GatewayError } from './http-reply.js';

export interface ReadAccessOptions {
  /** `closed`: every read needs a read token and sees what the visibility table gives its reader. Default `open`. */
  mode?: 'open' | 'closed';
  /** Whose tokens are good: the registry's agents and the bootstrap operators (`context.directory`). Needed when closed. */
  directory?: AgentDirectory;
  /** The audience tokens must name. Default READ_TOKEN.defaultAudience. */
  audience?: string;
  /** Clock of the token check. Default: now. */
  now?: () => Date;
}

/** AGORA_READS and AGORA_READ_AUDIENCE as ReadAccessOptions (without the directory). Throws on a value it does not understand. */
export function readAccessFromEnv(env: NodeJS.ProcessEnv): Pick<ReadAccessOptions, 'mode' | 'audience'> {
  const mode = env['AGORA_READS'] || 'open';
  if (mode !== 'open' && mode !== 'closed') throw new ConfigError(`AGORA_READS must be open or closed (got ${JSON.stringify(mode)})`);
  return { mode, audience: env['AGORA_READ_AUDIENCE'] || READ_TOKEN.defaultAudience };
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

  constructor(private readonly options: ReadAccessOptions = {}) {
    this.closed = options.mode === 'closed';
    this.audience = options.audience ?? READ_TOKEN.defaultAudience;
    if (this.closed && options.directory === undefined) throw new Error('closed reads need the agent directory to check read tokens against');
  }

  /**
   * The reader of a request: undefined when reads are open (everything may be read); with reads
   * closed, the token's agent and roles, or a 401 (or `actor_disabled`, 403) naming what is wrong.
   */
  async reader(req: IncomingMessage): Promise<Reader | undefined> {
    if (!this.closed) return undefined;
    const token = tokenOf(req);
    if (token === undefined) {
      throw new GatewayError('unauthenticated', `this gateway closes reads: send a read token as "Authorization: Bearer <token>" or ?${READ_TOKEN.queryParameter}=<token> (\`agora token --key <key file>\` makes one)`);
    }
    try {
      return await readerOfToken(token, { directory: this.options.directory!, audience: this.audience, ...(this.options.now ? { now: this.options.now } : {}) });
    } catch (error) {
      throw error instanceof AgoraError ? new GatewayError(error.code, error.message) : error;
    }
  }
}
