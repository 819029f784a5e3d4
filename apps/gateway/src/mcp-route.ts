import type { IncomingMessage, ServerResponse } from 'node:http';
import { createAgoraMcpServer, McpHttpEndpoint } from '@agora/mcp';
import type { AgoraClient } from '@agora/messaging';
import { Agora, MessagingTransport } from '@agora/sdk';
import { isJsonContentType, readBody } from './body.js';

/**
 * MCP over Streamable HTTP at `/mcp`, a thin layer over an SDK client on the gateway's own
 * connection: queries, waiting tools and resources with update notifications. The gateway holds
 * no agent's key, so it offers no command tools: an agent signs where it runs (`agora mcp`).
 */
export function mcpRoute(client: AgoraClient, options: { maxBodyBytes: number; requestTimeoutMs: number; allowedHostnames?: readonly string[] }) {
  const agora = Agora.over(new MessagingTransport(client), { timeoutMs: options.requestTimeoutMs });
  const endpoint = new McpHttpEndpoint(() => createAgoraMcpServer(agora, { commands: false }), options.allowedHostnames ? { allowedHostnames: options.allowedHostnames } : {});
  const handler = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void): void => {
    void (async () => {
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
      await endpoint.handle(req, res, body);
    })().catch(next);
  };
  return { handler, close: () => endpoint.close() };
}
