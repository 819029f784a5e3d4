// The SSE reader of the gateway's tests (the widget service they run behind it: @agora/messaging/testing).
import { get, type IncomingMessage } from 'node:http';

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
