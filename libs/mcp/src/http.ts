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

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
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
export class McpHttpEndpoint {
  private readonly sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  private readonly allowed: ReadonlySet<string>;

  constructor(
    private readonly createServer: () => McpServer,
    options: McpHttpOptions = {},
  ) {
    this.allowed = new Set([...LOCAL_HOSTNAMES, ...(options.allowedHostnames ?? [])].map((h) => h.toLowerCase()));
  }

  /** Handles one request; `body` is the parsed JSON of a POST. */
  async handle(req: IncomingMessage, res: ServerResponse, body?: unknown): Promise<void> {
    const host = hostnameOf(req.headers.host);
    if (host === undefined || !this.allowed.has(host)) return jsonRpcError(res, 403, -32000, `Invalid Host header: ${req.headers.host ?? '(none)'}`);
    const origin = req.headers.origin;
    if (origin !== undefined && !this.allowed.has(hostnameOf(origin) ?? '')) return jsonRpcError(res, 403, -32000, `Invalid Origin header: ${origin}`);
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = this.sessions.get(sessionId);
      if (!session) return jsonRpcError(res, 404, -32001, 'Session not found');
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) return jsonRpcError(res, 400, -32000, 'Bad Request: no valid session id (start with initialize)');
    const server = this.createServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void this.sessions.set(id, { transport, server }),
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
