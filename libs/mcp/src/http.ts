import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

/** Host names a browser page on another site cannot make a request look like it comes from (DNS rebinding). */
export const LOCAL_HOSTNAMES = ['localhost', '127.0.0.1', '[::1]'];

export interface McpHttpOptions {
  /** Host names (without port) the endpoint answers to besides the local ones, e.g. the gateway's public name. */
  allowedHostnames?: readonly string[];
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
  private readonly sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer; caller: CallerRef<C> }>();
  private readonly allowed: ReadonlySet<string>;

  constructor(
    private readonly createServer: (caller: CallerRef<C>) => McpServer,
    options: McpHttpOptions = {},
  ) {
    this.allowed = new Set([...LOCAL_HOSTNAMES, ...(options.allowedHostnames ?? [])].map((h) => h.toLowerCase()));
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
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) return jsonRpcError(res, 400, -32000, 'Bad Request: no valid session id (start with initialize)');
    const ref: CallerRef<C> = { current: caller };
    const server = this.createServer(ref);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void this.sessions.set(id, { transport, server, caller: ref }),
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  /** Open sessions. */
  get size(): number {
    return this.sessions.size;
  }

  async close(): Promise<void> {
    const open = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(open.map(({ server }) => server.close().catch(() => undefined)));
  }
}
