import { randomBytes } from 'node:crypto';
import { get, type IncomingMessage } from 'node:http';
import { AgoraError, defineCommand, defineQuery, EntityId, ERROR_CODES, NextCursor, pageParams, type CommandDefinition, type ErrorCode, type QueryDefinition } from '@agora/contracts';
import { createSignedCommand, generateKeyPair, type KeyPair, type SignedCommand } from '@agora/identity';
import { StaticAgentDirectory, type VerifiedCommand } from '@agora/messaging';
import { z } from 'zod';

// Copied in spirit from libs/messaging/test/fixtures.ts (tests do not import across packages).

/** A service name no other test run uses. */
export function uniqueName(prefix = 'svc'): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

/** Commands and queries of a made-up service, so the gateway's tests do not depend on a real service's rules. */
export function widgetCatalog(service: string) {
  const CreateWidget = defineCommand({
    type: 'CreateWidget',
    service,
    aggregate: 'widget',
    verb: 'create',
    roles: ['operator', 'executive'],
    summary: 'Create a widget',
    payload: z.object({ widgetId: EntityId, size: z.number().int().min(1).max(10).default(1), label: z.string().max(50).optional() }).strict(),
  });
  const FailWidget = defineCommand({
    type: 'FailWidget',
    service,
    aggregate: 'widget',
    verb: 'fail',
    roles: ['operator'],
    summary: 'Fails with the error code it is given, or crashes, or answers late',
    payload: z.object({ code: z.string().optional(), how: z.enum(['refuse', 'crash', 'slow']) }).strict(),
  });
  const GetWidget = defineQuery({
    name: 'widgets.get',
    service,
    httpPath: 'widgets/:widgetId',
    summary: 'One widget',
    params: z.object({ widgetId: EntityId, verbose: z.enum(['yes', 'no']).optional(), tag: z.array(z.string()).optional(), count: z.number().int().optional(), deep: z.boolean().optional() }).strict(),
    result: z.object({ widgetId: z.string() }),
  });
  const ListWidgets = defineQuery({
    name: 'widgets.list',
    service,
    httpPath: 'widgets',
    summary: 'Every widget, paged',
    params: z.object({ ...pageParams }).strict(),
    result: z.object({ widgets: z.array(z.string()), nextCursor: NextCursor }),
  });
  const commands: CommandDefinition[] = [CreateWidget, FailWidget];
  const queries: QueryDefinition[] = [GetWidget, ListWidgets];
  return { CreateWidget, FailWidget, GetWidget, ListWidgets, catalog: { commands, queries } };
}

export interface Agents {
  operator: KeyPair;
  observer: KeyPair;
  retired: KeyPair;
  directory: StaticAgentDirectory;
}

export function agents(): Agents {
  const operator = generateKeyPair();
  const observer = generateKeyPair();
  const retired = generateKeyPair();
  const directory = new StaticAgentDirectory({
    operator: { publicKey: operator.publicKey, roles: ['operator'], status: 'active' },
    observer: { publicKey: observer.publicKey, roles: ['observer'], status: 'active' },
    retired: { publicKey: retired.publicKey, roles: ['operator'], status: 'disabled' },
  });
  return { operator, observer, retired, directory };
}

export function signed(type: string, actor: string, key: KeyPair, payload: Record<string, unknown>, extra: { issuedAt?: Date } = {}): SignedCommand {
  return createSignedCommand({ type, actor, payload, secretKey: key.secretKey, ...extra });
}

export function widgetHandlers(widgets: ReturnType<typeof widgetCatalog>) {
  const commands = new Map([
    [widgets.CreateWidget.type, async (cmd: VerifiedCommand) => ({ created: cmd.payload, by: cmd.actor.agentId })],
    [
      widgets.FailWidget.type,
      async (cmd: VerifiedCommand) => {
        const { how, code } = cmd.payload as { how: string; code?: string };
        if (how === 'refuse') {
          if (!code || !(code in ERROR_CODES)) throw new AgoraError('invalid_command', `no such code ${code}`);
          throw new AgoraError(code as ErrorCode, `refused with ${code}`, { asked: code });
        }
        if (how === 'slow') return new Promise((resolve) => setTimeout(() => resolve('late'), 400));
        throw new Error('disk on fire at /var/secret/path');
      },
    ],
  ]);
  const queries = new Map<string, (params: unknown) => Promise<unknown>>([
    [widgets.GetWidget.subject, async (params: unknown) => ({ widgetId: (params as { widgetId: string }).widgetId, params })],
    [
      widgets.ListWidgets.subject,
      async (params: unknown) => {
        // A stand-in for the services' paging: the cursor is the next widget's index.
        const { limit = 100, cursor = 'i0' } = params as { limit?: number; cursor?: string };
        const from = Number(cursor.slice(1));
        const all = ['w1', 'w2'];
        return { widgets: all.slice(from, from + limit), ...(from + limit < all.length ? { nextCursor: `i${from + limit}` } : {}) };
      },
    ],
  ]);
  return { commands, queries };
}

/** One SSE message as a client sees it. */
export interface SseMessage {
  id: string | undefined;
  event: string | undefined;
  data: string;
}

/**
 * A small Server-Sent Events client over http.get: parses the stream as it arrives and lets a
 * test wait for the next messages.
 */
export class SseReader {
  readonly messages: SseMessage[] = [];
  comments = 0;
  status = 0;
  private buffer = '';
  private waiters: Array<() => void> = [];
  private response: IncomingMessage | undefined;
  private request: ReturnType<typeof get> | undefined;

  private constructor() {}

  /** Connects and resolves once the response headers are in. */
  static open(url: string, headers: Record<string, string> = {}): Promise<SseReader> {
    const reader = new SseReader();
    return new Promise((resolve, reject) => {
      reader.request = get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
        reader.response = res;
        reader.status = res.statusCode ?? 0;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => reader.feed(chunk));
        res.on('end', () => reader.wake());
        resolve(reader);
      });
      reader.request.on('error', reject);
    });
  }

  get contentType(): string | undefined {
    return this.response?.headers['content-type'];
  }

  /** The body so far (for a non-SSE error answer). */
  get text(): string {
    return this.buffer;
  }

  private feed(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const message: SseMessage = { id: undefined, event: undefined, data: '' };
      let hasData = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments++;
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') message.id = value;
        else if (field === 'event') message.event = value;
        else if (field === 'data') {
          message.data = hasData ? `${message.data}\n${value}` : value;
          hasData = true;
        }
      }
      if (hasData) this.messages.push(message);
    }
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Waits until `count` messages have arrived in all (or fails after `timeoutMs`). */
  async waitFor(count: number, timeoutMs = 3_000): Promise<SseMessage[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.messages.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`expected ${count} SSE messages, got ${this.messages.length}: ${JSON.stringify(this.messages)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.messages.slice(0, count);
  }

  /** Waits until the predicate holds (comments, status...). */
  async until(predicate: () => boolean, timeoutMs = 3_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  close(): void {
    this.request?.destroy();
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
