import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Reader } from '@agora/contracts';
import { createAgoraMcpServer, jsonRpcError, McpHttpEndpoint, type CallerRef, type McpSessionControls } from '@agora/mcp';
import type { AgoraClient } from '@agora/messaging';
import { Agora, MessagingTransport } from '@agora/sdk';
import { isJsonContentType, readBody } from './body.js';
import type { Credential, CredentialWatch } from './credentials.js';
import { challengeUnauthenticated, GatewayError } from './http-reply.js';
import type { ReadAccess } from './read-auth.js';
import { markRoute } from './metrics.js';
import type { StreamParties } from './read-visibility.js';
import { ReaderTransport, type ReaderSource } from './reader-transport.js';

/** An MCP session's caller: the reader its requests' read tokens prove (reads closed), and the credential of the latest. */
interface McpReader {
  id: string;
  reader: Reader;
  credential: Credential;
}

/** The bounds of /mcp's sessions (AGORA_MCP_SESSIONS_PER_READER, AGORA_MCP_SESSIONS_MAX, AGORA_MCP_SESSION_IDLE_SECONDS). */
export interface McpSessionBounds {
  sessionsPerReader?: number;
  maxSessions?: number;
  idleSeconds?: number;
}

/**
 * Binds an MCP session to its reader's credential, renewed by each request's: when the latest
 * credential expires, the session's notification stream gets a last log message
 * `{event: 'end', reason: 'token_expired'}` and closes (the client reconnects it with a fresh
 * token), and until a request renews it the session's waits and resource updates deliver nothing;
 * when the registry disables the agent or changes its roles or key, the session closes with that
 * reason (a new one is decided on the agent as it is now).
 */
function credentialGuard(credentials: CredentialWatch, expired: WeakSet<CallerRef<McpReader>>) {
  return (caller: CallerRef<McpReader>, controls: McpSessionControls) => {
    let bound: { credential: Credential; unbind: () => void } | undefined;
    // The latest request's credential takes over when the bound one has expired, or it lasts longer or names another key.
    const renews = (credential: Credential) => bound === undefined || expired.has(caller) || credential.expiresAt > bound.credential.expiresAt || credential.publicKey !== bound.credential.publicKey;
    const bind = () => {
      const credential = caller.current?.credential;
      if (credential === undefined || !renews(credential)) return;
      bound?.unbind();
      expired.delete(caller);
      const unbind = credentials.bind(credential, (reason) => {
        bound = undefined;
        if (reason === 'token_expired' || reason === 'session_ended') {
          expired.add(caller);
          void controls.endNotifications(reason);
        } else void controls.close(reason);
      });
      bound = { credential, unbind };
    };
    bind();
    return {
      updated: bind,
      closed: () => {
        bound?.unbind();
        bound = undefined;
      },
    };
  };
}

/** An MCP session's reader: its latest request's, held back while that credential has expired (a request with a fresh token renews it). */
function mcpReader(caller: CallerRef<McpReader>, expired: WeakSet<CallerRef<McpReader>>): ReaderSource {
  return {
    reader() {
      const reader = caller.current?.reader;
      if (reader === undefined) throw new GatewayError('unauthenticated', 'this MCP session has no reader');
      if (expired.has(caller)) throw new GatewayError('token_expired', "this MCP session's read token has expired: send a request with a fresh one");
      return reader;
    },
    paused: () => expired.has(caller),
    commandRefusal: "the gateway's /mcp sends no commands: an agent signs where it runs (agora mcp)",
  };
}

/**
 * MCP over Streamable HTTP at `/mcp`, a thin layer over an SDK client on the gateway's own
 * connection: queries, waiting tools and resources with update notifications. The gateway holds
 * no agent's key, so it offers no command tools: an agent signs where it runs (`agora mcp`).
 * With reads closed, every request carries a read token (Authorization: Bearer), a session
 * belongs to the reader that opened it, and its queries, waits and resources see what the
 * visibility table gives that reader; a refusal is a tool error (or an MCP error) `forbidden: ...`.
 */
export function mcpRoute(client: AgoraClient, access: { reads: ReadAccess; parties: StreamParties }, options: { maxBodyBytes: number; requestTimeoutMs: number; allowedHostnames?: readonly string[]; sessions?: McpSessionBounds }) {
  const bus = new MessagingTransport(client);
  const open = Agora.over(bus, { timeoutMs: options.requestTimeoutMs });
  const expired = new WeakSet<CallerRef<McpReader>>();
  const bounds = options.sessions ?? {};
  const endpoint = new McpHttpEndpoint<McpReader>(
    (caller) => {
      if (caller.current === undefined) return createAgoraMcpServer(open, { commands: false });
      const transport = new ReaderTransport(client, bus, mcpReader(caller, expired), access.parties);
      // The queries the session's reader may read anything of (the visibility table), as `agora mcp` offers an agent's.
      const server = createAgoraMcpServer(Agora.over(transport, { timeoutMs: options.requestTimeoutMs }), { commands: false, reader: caller.current.reader });
      const onclose = server.server.onclose;
      server.server.onclose = () => {
        void transport.close();
        onclose?.();
      };
      return server;
    },
    {
      ...(options.allowedHostnames ? { allowedHostnames: options.allowedHostnames } : {}),
      ...(bounds.sessionsPerReader === undefined ? {} : { sessionsPerCaller: bounds.sessionsPerReader }),
      ...(bounds.maxSessions === undefined ? {} : { maxSessions: bounds.maxSessions }),
      ...(bounds.idleSeconds === undefined ? {} : { idleMs: bounds.idleSeconds * 1000 }),
      ...(access.reads.credentials ? { guard: credentialGuard(access.reads.credentials, expired) } : {}),
    },
  );
  const handler = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void): void => {
    // A GET is the session's server-sent event stream: counted, kept out of the durations.
    markRoute(req, '/mcp', { streaming: req.method === 'GET' });
    void (async () => {
      let read: { reader: Reader; credential: Credential } | undefined;
      try {
        read = await access.reads.read(req);
      } catch (error) {
        if (!(error instanceof GatewayError)) throw error;
        req.resume();
        challengeUnauthenticated(res, error.status, error.toReply());
        return jsonRpcError(res, error.status, -32001, `${error.code}: ${error.message}`, { code: error.code });
      }
      let body: unknown;
      if (req.method === 'POST') {
        if (!isJsonContentType(req.headers['content-type'])) {
          res.writeHead(415, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Unsupported Media Type: Content-Type must be application/json' }, id: null }));
          return;
        }
        const text = (await readBody(req, options.maxBodyBytes)).toString('utf8');
        try {
          body = JSON.parse(text);
        } catch {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }));
          return;
        }
      }
      await endpoint.handle(req, res, body, read === undefined ? undefined : { id: read.reader.agentId, ...read });
    })().catch(next);
  };
  return { handler, close: () => endpoint.close() };
}
