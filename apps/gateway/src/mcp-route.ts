import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CommandDefinition, CommandResult, QueryDefinition, Reader, Reply } from '@agora/contracts';
import type { RecordedEvent } from '@agora/eventstore';
import type { SignedCommand } from '@agora/identity';
import { createAgoraMcpServer, jsonRpcError, McpHttpEndpoint, type CallerRef } from '@agora/mcp';
import type { AgoraClient } from '@agora/messaging';
import { Agora, MessagingTransport, type AgoraEvent, type EventFilter, type Transport } from '@agora/sdk';
import { isJsonContentType, readBody } from './body.js';
import { challengeUnauthenticated, GatewayError } from './http-reply.js';
import type { ReadAccess } from './read-auth.js';
import { answerQuery, eventViewFor, publicMetadataOf, type StreamParties } from './read-visibility.js';

/** An MCP session's caller: the reader its requests' read tokens prove (reads closed). */
interface McpReader {
  id: string;
  reader: Reader;
}

/**
 * The gateway's bus seen by one reader: every query answered as the gateway answers it over HTTP
 * (answerQuery: the visibility table, `forbidden` that says nothing of what exists), and the
 * log's events as GET /v1/events gives them to this reader (whole, metadata only, or not at all).
 * It sends no command: the gateway holds no agent's key.
 */
class ReaderTransport implements Transport {
  readonly kind = 'messaging';

  constructor(
    private readonly bus: Transport,
    private readonly caller: CallerRef<McpReader>,
    private readonly parties: StreamParties,
  ) {}

  private reader(): Reader {
    const reader = this.caller.current?.reader;
    if (reader === undefined) throw new GatewayError('unauthenticated', 'this MCP session has no reader');
    return reader;
  }

  async command(_definition: CommandDefinition, _envelope: SignedCommand, _timeoutMs: number): Promise<Reply<CommandResult>> {
    return { ok: false, error: { code: 'forbidden', message: "the gateway's /mcp sends no commands: an agent signs where it runs (agora mcp)" } };
  }

  async query(definition: QueryDefinition, params: Record<string, unknown>, timeoutMs: number): Promise<Reply<unknown>> {
    try {
      return await answerQuery(this.reader(), definition, params, (asked) => this.bus.query(definition, asked, timeoutMs));
    } catch (error) {
      if (error instanceof GatewayError) return error.toReply();
      throw error;
    }
  }

  async *events(filter: EventFilter): AsyncGenerator<AgoraEvent> {
    const view = eventViewFor(this.reader(), this.parties);
    for await (const event of this.bus.events(filter)) {
      if (view === undefined) {
        yield event;
        continue;
      }
      const recorded = event as unknown as RecordedEvent;
      await view.prepare([recorded]);
      const sight = view.sight(recorded);
      if (sight === 'full') yield event;
      else if (sight === 'metadata') yield { ...event, data: {}, metadata: publicMetadataOf(event) };
    }
  }

  async close(): Promise<void> {}
}

/**
 * MCP over Streamable HTTP at `/mcp`, a thin layer over an SDK client on the gateway's own
 * connection: queries, waiting tools and resources with update notifications. The gateway holds
 * no agent's key, so it offers no command tools: an agent signs where it runs (`agora mcp`).
 * With reads closed, every request carries a read token (Authorization: Bearer), a session
 * belongs to the reader that opened it, and its queries, waits and resources see what the
 * visibility table gives that reader; a refusal is a tool error (or an MCP error) `forbidden: ...`.
 */
export function mcpRoute(client: AgoraClient, access: { reads: ReadAccess; parties: StreamParties }, options: { maxBodyBytes: number; requestTimeoutMs: number; allowedHostnames?: readonly string[] }) {
  const bus = new MessagingTransport(client);
  const open = Agora.over(bus, { timeoutMs: options.requestTimeoutMs });
  const endpoint = new McpHttpEndpoint<McpReader>(
    (caller) => createAgoraMcpServer(caller.current === undefined ? open : Agora.over(new ReaderTransport(bus, caller, access.parties), { timeoutMs: options.requestTimeoutMs }), { commands: false }),
    options.allowedHostnames ? { allowedHostnames: options.allowedHostnames } : {},
  );
  const handler = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void): void => {
    void (async () => {
      let reader: Reader | undefined;
      try {
        reader = await access.reads.reader(req);
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
      await endpoint.handle(req, res, body, reader === undefined ? undefined : { id: reader.agentId, reader });
    })().catch(next);
  };
  return { handler, close: () => endpoint.close() };
}
