import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

/** Host names a browser page on another site cannot make a request look like it comes from (DNS rebinding). */
export const LOCAL_HOSTNAMES = ['localhost', '127.0.0.1', '[::1]'];

export interface McpHttpOptions<C extends McpCaller = McpCaller> {
  /** Host names (without port) the endpoint answers to besides the local ones, e.g. the gateway's public name. */
  allowedHostnames?: readonly string[];
  /** Sessions one caller the host names may hold (by its id); past that an `initialize` is refused 429. Callers it names none of (the gateway with reads open) have only the bound of all. Default DEFAULT_MCP_BOUNDS. */
  sessionsPerCaller?: number;
  /** Sessions in all; past that an `initialize` is refused 503: no session is ever ended to make room for another caller's. */
  maxSessions?: number;
  /** A session that has had no request this long (ms), and has none in progress, is closed. */
  idleMs?: number;
  /** Binds each session to what its caller holds (the gateway: its read credential); see McpSessionGuard. */
  guard?: McpSessionGuard<C>;
}

export const DEFAULT_MCP_BOUNDS = { sessionsPerCaller: 8, maxSessions: 256, idleMs: 600_000 } as const;

/** The owner of the sessions of callers the host names none of. */
const ANONYMOUS = 'anonymous';

/** What a host may do to an open session (McpSessionGuard). */
export interface McpSessionControls {
  /**
   * Sends a last log message (`notifications/message`, level warning, data `{event: 'end', reason}`)
   * on the session's notification stream and closes that stream (the client reconnects it with its
   * next credential); the session stays.
   */
  endNotifications(reason: string): Promise<void>;
  /** The same last log message, then the session closes (its requests are answered `Session not found`). */
  close(reason: string): Promise<void>;
}

/** Told when a session opens (with its caller and its controls), after each request of it (the caller may have changed), and when it closes. */
export type McpSessionGuard<C extends McpCaller> = (caller: CallerRef<C>, controls: McpSessionControls) => { updated(): void; closed(): void };

interface OpenSession<C extends McpCaller> {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  caller: CallerRef<C>;
  owner: string;
  /** When its last request ended (or started); a session with a request in progress (its notification stream) is not idle. */
  lastSeen: number;
  inFlight: number;
  guard?: { updated(): void; closed(): void };
}

/** A JSON-RPC error answered over HTTP before any MCP session handles the request; `data` e.g. `{code: 'forbidden'}` (Agora's code). */
export function jsonRpcError(res: ServerResponse, status: number, code: number, message: string, data?: Record<string, unknown>): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message, ...(data === undefined ? {} : { data }) }, id: null }));
}

/** Who calls, as the host proved it (a reader of the gateway): an MCP session belongs to the caller that opened it. */
export interface McpCaller {
  /** The caller's identity (an agent id): later requests of the session must come from the same one. */
  id: string;
}

/** The caller of a session as of its latest request (a role change applies to the next request). */
export interface CallerRef<C extends McpCaller> {
  current: C | undefined;
}

function hostnameOf(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    return new URL(value.includes('://') ? value : `http://${value}`).hostname;
  } catch {
    return undefined;
  }
}

/**
 * MCP's Streamable HTTP transport on one path: a session (its own McpServer) per `initialize`,
 * found again by its `Mcp-Session-Id`; requests whose Host or Origin is not an allowed host name
 * are refused (DNS rebinding protection).
 */
export class McpHttpEndpoint<C extends McpCaller = McpCaller> {
  private readonly sessions = new Map<string, OpenSession<C>>();
  /** Sessions by owner, counting those still being initialized. */
  private readonly owned = new Map<string, number>();
  private readonly allowed: ReadonlySet<string>;
  private readonly bounds: { sessionsPerCaller: number; maxSessions: number; idleMs: number };
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly createServer: (caller: CallerRef<C>) => McpServer,
    private readonly options: McpHttpOptions<C> = {},
  ) {
    this.allowed = new Set([...LOCAL_HOSTNAMES, ...(options.allowedHostnames ?? [])].map((h) => h.toLowerCase()));
    this.bounds = {
      sessionsPerCaller: options.sessionsPerCaller ?? DEFAULT_MCP_BOUNDS.sessionsPerCaller,
      maxSessions: options.maxSessions ?? DEFAULT_MCP_BOUNDS.maxSessions,
      idleMs: options.idleMs ?? DEFAULT_MCP_BOUNDS.idleMs,
    };
  }

  /**
   * Handles one request; `body` is the parsed JSON of a POST; `caller` who makes it, when the host
   * checks (a session opened by one caller is refused to any other, `forbidden`).
   */
  async handle(req: IncomingMessage, res: ServerResponse, body?: unknown, caller?: C): Promise<void> {
    const host = hostnameOf(req.headers.host);
    if (host === undefined || !this.allowed.has(host)) return jsonRpcError(res, 403, -32000, `Invalid Host header: ${req.headers.host ?? '(none)'}`);
    const origin = req.headers.origin;
    if (origin !== undefined && !this.allowed.has(hostnameOf(origin) ?? '')) return jsonRpcError(res, 403, -32000, `Invalid Origin header: ${origin}`);
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = this.sessions.get(sessionId);
      if (!session) return jsonRpcError(res, 404, -32001, 'Session not found');
      // Said exactly as for an unknown session: another caller learns nothing of whose session it is.
      if (session.caller.current?.id !== caller?.id) return jsonRpcError(res, 404, -32001, 'Session not found');
      session.caller.current = caller;
      session.lastSeen = Date.now();
      session.inFlight++;
      res.once('close', () => {
        session.inFlight--;
        session.lastSeen = Date.now();
      });
      session.guard?.updated();
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) return jsonRpcError(res, 400, -32000, 'Bad Request: no valid session id (start with initialize)');
    this.sweep();
    // A caller the host names (a reader) is bounded on its own; callers it names none of (reads open) share the bound of all.
    const owner = caller === undefined ? ANONYMOUS : `caller:${caller.id}`;
    const held = this.owned.get(owner) ?? 0;
    if (caller !== undefined && held >= this.bounds.sessionsPerCaller) {
      return jsonRpcError(res, 429, -32000, `too_many_sessions: ${caller.id} holds ${held} MCP sessions, the most one reader may (AGORA_MCP_SESSIONS_PER_READER): end one (DELETE /mcp with its Mcp-Session-Id) or let it idle out (${Math.round(this.bounds.idleMs / 1000)} s without a request)`, { code: 'too_many_sessions' });
    }
    if (this.opened() >= this.bounds.maxSessions) {
      res.setHeader('retry-after', String(Math.max(1, Math.ceil(this.bounds.idleMs / 1000))));
      return jsonRpcError(res, 503, -32000, `too_many_sessions: the gateway holds its most MCP sessions (${this.bounds.maxSessions}, AGORA_MCP_SESSIONS_MAX); try again once one ends or idles out`, { code: 'too_many_sessions' });
    }
    this.owned.set(owner, held + 1);
    let counted = true;
    const release = () => {
      if (!counted) return;
      counted = false;
      const left = (this.owned.get(owner) ?? 1) - 1;
      if (left > 0) this.owned.set(owner, left);
      else this.owned.delete(owner);
    };
    const ref: CallerRef<C> = { current: caller };
    let server: McpServer;
    try {
      server = this.createServer(ref);
    } catch (error) {
      release();
      throw error;
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        const session: OpenSession<C> = { transport, server, caller: ref, owner, lastSeen: Date.now(), inFlight: 0 };
        this.sessions.set(id, session);
        session.guard = this.options.guard?.(ref, this.controlsOf(session));
        this.startSweeping();
      },
    });
    transport.onclose = () => {
      const session = transport.sessionId === undefined ? undefined : this.sessions.get(transport.sessionId);
      if (session !== undefined) {
        this.sessions.delete(transport.sessionId!);
        session.guard?.closed();
      }
      release();
    };
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } finally {
      // An initialize that opened no session holds no place.
      if (transport.sessionId === undefined || !this.sessions.has(transport.sessionId)) release();
    }
  }

  private controlsOf(session: OpenSession<C>): McpSessionControls {
    const lastWord = (reason: string) => session.server.sendLoggingMessage({ level: 'warning', logger: 'agora', data: { event: 'end', reason } }).catch(() => undefined);
    return {
      endNotifications: async (reason) => {
        await lastWord(reason);
        session.transport.closeStandaloneSSEStream();
      },
      close: async (reason) => {
        await lastWord(reason);
        await session.server.close().catch(() => undefined);
      },
    };
  }

  /** Sessions open or being initialized. */
  private opened(): number {
    let count = 0;
    for (const held of this.owned.values()) count += held;
    return count;
  }

  private startSweeping(): void {
    if (this.sweeper !== undefined) return;
    this.sweeper = setInterval(() => this.sweep(), Math.max(250, Math.min(this.bounds.idleMs / 2, 30_000)));
    this.sweeper.unref();
  }

  /** Closes the sessions that had no request for idleMs. */
  private sweep(): void {
    const before = Date.now() - this.bounds.idleMs;
    for (const [id, session] of this.sessions) {
      if (session.inFlight > 0 || session.lastSeen > before) continue;
      this.sessions.delete(id);
      session.guard?.closed();
      void session.server.close().catch(() => undefined);
    }
    if (this.sessions.size === 0 && this.sweeper !== undefined) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /** Open sessions. */
  get size(): number {
    return this.sessions.size;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    const open = [...this.sessions.values()];
    this.sessions.clear();
    for (const session of open) session.guard?.closed();
    await Promise.all(open.map(({ server }) => server.close().catch(() => undefined)));
  }
}
