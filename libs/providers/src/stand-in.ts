import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ProviderEndpoint, ProviderKind } from './config.js';

/**
 * Stand-in servers for the paid model providers: real local HTTP servers that speak each
 * provider's wire API (OpenAI chat completions, Anthropic messages, Gemini generateContent), so
 * the production adapters run unchanged, pointed at them by base URL. What they answer is
 * scripted per test (or per demo): an answer (JSON or text, with token usage), an error with the
 * provider's real error body, a delay. Every request they receive is kept, to assert on what was
 * (or was not) called.
 */

/** A request as the stand-in received it. */
export interface StandInRequest {
  kind: ProviderKind;
  model: string;
  /** The system prompt (joined when given in parts). */
  system: string;
  /** The user messages' text, joined. */
  prompt: string;
  /** Whether the caller asked for structured (JSON-schema) output. */
  structured: boolean;
  /** The request body as sent. */
  body: Record<string, unknown>;
  /** The request's `Authorization`/`x-api-key`/`x-goog-api-key` was present (never its value). */
  authenticated: boolean;
  receivedAt: number;
}

/** What the stand-in answers: `json` (an object, sent as the provider's structured output) or `text`; or an error status with the provider's error body; after `delayMs`. */
export type StandInReply =
  | { json: unknown; usage?: { input: number; output: number }; delayMs?: number }
  | { text: string; usage?: { input: number; output: number }; delayMs?: number }
  | { status: number; message: string; body?: unknown; retryAfterSeconds?: number; delayMs?: number };

export type StandInScript = (request: StandInRequest, index: number) => StandInReply | Promise<StandInReply>;

const DEFAULT_SCRIPT: StandInScript = () => ({ status: 500, message: 'the stand-in has no script for this request' });

/** The provider's own error body for a status and message. */
export function providerErrorBody(kind: ProviderKind, status: number, message: string): unknown {
  switch (kind) {
    case 'anthropic': {
      const type = status === 429 ? 'rate_limit_error' : status === 529 ? 'overloaded_error' : status === 401 ? 'authentication_error' : status === 404 ? 'not_found_error' : status >= 500 ? 'api_error' : 'invalid_request_error';
      return { type: 'error', error: { type, message } };
    }
    case 'google': {
      const statusText = status === 429 ? 'RESOURCE_EXHAUSTED' : status === 503 ? 'UNAVAILABLE' : status === 404 ? 'NOT_FOUND' : status === 401 ? 'UNAUTHENTICATED' : status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT';
      return { error: { code: status, message, status: statusText } };
    }
    default: {
      const type = status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error';
      return { error: { message, type, param: null, code: status === 429 ? 'rate_limit_exceeded' : null } };
    }
  }
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '')).join('');
  return '';
}

function parseRequest(kind: ProviderKind, url: string, body: Record<string, unknown>, authenticated: boolean): StandInRequest | undefined {
  const receivedAt = Date.now();
  switch (kind) {
    case 'openai':
    case 'openai-compatible': {
      if (!url.endsWith('/chat/completions')) return undefined;
      const messages = (body['messages'] as { role: string; content: unknown }[] | undefined) ?? [];
      const format = body['response_format'] as { type?: string } | undefined;
      return {
        kind,
        model: String(body['model']),
        system: messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => textOf(m.content)).join('\n'),
        prompt: messages.filter((m) => m.role === 'user').map((m) => textOf(m.content)).join('\n'),
        structured: format?.type === 'json_schema' || format?.type === 'json_object',
        body,
        authenticated,
        receivedAt,
      };
    }
    case 'anthropic': {
      if (!url.endsWith('/messages')) return undefined;
      const messages = (body['messages'] as { role: string; content: unknown }[] | undefined) ?? [];
      const tools = (body['tools'] as { name?: string }[] | undefined) ?? [];
      return {
        kind,
        model: String(body['model']),
        system: textOf(body['system']),
        prompt: messages.filter((m) => m.role === 'user').map((m) => textOf(m.content)).join('\n'),
        structured: tools.some((t) => t.name === 'json') || body['output_config'] !== undefined || body['output_format'] !== undefined,
        body,
        authenticated,
        receivedAt,
      };
    }
    case 'google': {
      const match = /\/models\/([^/:]+):generateContent$/.exec(url);
      if (!match) return undefined;
      const contents = (body['contents'] as { role?: string; parts?: unknown }[] | undefined) ?? [];
      const config = (body['generationConfig'] as Record<string, unknown> | undefined) ?? {};
      return {
        kind,
        model: decodeURIComponent(match[1]!),
        system: textOf((body['systemInstruction'] as { parts?: unknown } | undefined)?.parts),
        prompt: contents.filter((c) => c.role !== 'model').map((c) => textOf(c.parts)).join('\n'),
        structured: config['responseMimeType'] === 'application/json',
        body,
        authenticated,
        receivedAt,
      };
    }
  }
}

const estimateTokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

function successBody(kind: ProviderKind, request: StandInRequest, reply: { json?: unknown; text?: string; usage?: { input: number; output: number } }, index: number): unknown {
  const text = 'json' in reply && reply.json !== undefined ? JSON.stringify(reply.json) : (reply.text ?? '');
  const usage = reply.usage ?? { input: estimateTokens(request.system + request.prompt), output: estimateTokens(text) };
  const id = `standin-${index}`;
  switch (kind) {
    case 'anthropic': {
      const tools = (request.body['tools'] as { name?: string }[] | undefined) ?? [];
      const asTool = tools.some((t) => t.name === 'json') && 'json' in reply && reply.json !== undefined;
      return {
        id: `msg_${id}`,
        type: 'message',
        role: 'assistant',
        model: request.model,
        content: asTool ? [{ type: 'tool_use', id: `toolu_${id}`, name: 'json', input: reply.json }] : [{ type: 'text', text }],
        stop_reason: asTool ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: usage.input, output_tokens: usage.output },
      };
    }
    case 'google':
      return {
        candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: usage.input, candidatesTokenCount: usage.output, totalTokenCount: usage.input + usage.output },
        modelVersion: request.model,
      };
    default:
      return {
        id: `chatcmpl-${id}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: request.model,
        choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
        usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
      };
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** One stand-in server for one provider kind. */
export class StandInServer {
  /** Every request received, in order (a request to an unknown path is answered 404 and not kept). */
  readonly requests: StandInRequest[] = [];
  private scriptFn: StandInScript;
  private readonly server: Server;
  private readonly sockets = new Set<import('node:net').Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private port = 0;

  private constructor(
    readonly kind: ProviderKind,
    script: StandInScript,
  ) {
    this.scriptFn = script;
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  static async start(kind: ProviderKind, script: StandInScript = DEFAULT_SCRIPT, port = 0): Promise<StandInServer> {
    const stand = new StandInServer(kind, script);
    await new Promise<void>((resolve, reject) => {
      stand.server.once('error', reject);
      stand.server.listen(port, '127.0.0.1', () => resolve());
    });
    stand.port = (stand.server.address() as AddressInfo).port;
    return stand;
  }

  /** The base URL to give the SDK (as the provider's real one: `/v1` for OpenAI and Anthropic, `/v1beta` for Gemini). */
  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}${this.kind === 'google' ? '/v1beta' : '/v1'}`;
  }

  /** Replaces the script. */
  script(script: StandInScript): void {
    this.scriptFn = script;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      if (res.destroyed) return;
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(await readBody(req)) as Record<string, unknown>;
    } catch {
      return send(400, providerErrorBody(this.kind, 400, 'the request body is not JSON'));
    }
    const authenticated = Boolean(req.headers['authorization'] || req.headers['x-api-key'] || req.headers['x-goog-api-key']);
    const request = parseRequest(this.kind, (req.url ?? '').split('?')[0]!, body, authenticated);
    if (req.method !== 'POST' || !request) return send(404, providerErrorBody(this.kind, 404, `no such endpoint ${req.method} ${req.url}`));
    const index = this.requests.push(request) - 1;
    let reply: StandInReply;
    try {
      reply = await this.scriptFn(request, index);
    } catch (error) {
      reply = { status: 500, message: `stand-in script failed: ${(error as Error).message}` };
    }
    if (reply.delayMs) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => (this.timers.delete(timer), resolve()), reply.delayMs);
        this.timers.add(timer);
      });
    }
    if ('status' in reply) {
      return send(reply.status, reply.body ?? providerErrorBody(this.kind, reply.status, reply.message), reply.retryAfterSeconds ? { 'retry-after': String(reply.retryAfterSeconds) } : {});
    }
    send(200, successBody(this.kind, request, reply, index));
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The three stand-ins of the default panel (OpenAI, Anthropic, Google), one server each. */
export class StandIns {
  private constructor(readonly servers: Record<'openai' | 'anthropic' | 'google', StandInServer>) {}

  static async start(script: StandInScript = DEFAULT_SCRIPT): Promise<StandIns> {
    const [openai, anthropic, google] = await Promise.all([StandInServer.start('openai', script), StandInServer.start('anthropic', script), StandInServer.start('google', script)]);
    return new StandIns({ openai, anthropic, google });
  }

  /** The same script for all three. */
  script(script: StandInScript): void {
    for (const server of Object.values(this.servers)) server.script(script);
  }

  /** Every request received by any of them, in arrival order. */
  get requests(): StandInRequest[] {
    return Object.values(this.servers)
      .flatMap((s) => s.requests)
      .sort((a, b) => a.receivedAt - b.receivedAt);
  }

  /** The default providers pointed at the stand-ins (keys still read from the usual variables). */
  get providers(): ProviderEndpoint[] {
    return [
      { id: 'openai', kind: 'openai', baseUrl: this.servers.openai.baseUrl, apiKeyEnv: 'OPENAI_API_KEY' },
      { id: 'anthropic', kind: 'anthropic', baseUrl: this.servers.anthropic.baseUrl, apiKeyEnv: 'ANTHROPIC_API_KEY' },
      { id: 'google', kind: 'google', baseUrl: this.servers.google.baseUrl, apiKeyEnv: 'GOOGLE_GENERATIVE_AI_API_KEY' },
    ];
  }

  /** Environment that points the default providers at the stand-ins, with placeholder keys. */
  get env(): Record<string, string> {
    return {
      OPENAI_BASE_URL: this.servers.openai.baseUrl,
      ANTHROPIC_BASE_URL: this.servers.anthropic.baseUrl,
      GOOGLE_GENERATIVE_AI_BASE_URL: this.servers.google.baseUrl,
      OPENAI_API_KEY: 'stand-in',
      ANTHROPIC_API_KEY: 'stand-in',
      GOOGLE_GENERATIVE_AI_API_KEY: 'stand-in',
    };
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.servers).map((s) => s.close()));
  }
}
