import { InvalidPosition } from './errors.js';
import type { Position, RecordedEvent, SubscribeOptions, Subscription } from './port.js';

/**
 * Wakes subscriptions when something was appended. `version` only grows; a reader takes it before
 * reading, and `wait(version)` returns at once if anything was appended since.
 */
export class AppendNotifier {
  private current = 0;
  private waiters = new Set<() => void>();

  get version(): number {
    return this.current;
  }

  notify(): void {
    this.current++;
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const wake of waiters) wake();
  }

  /** Resolves when the version moves past `since`, after `timeoutMs`, or when `signal` aborts. */
  wait(since: number, timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (this.current > since || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal.addEventListener('abort', done, { once: true });
      this.waiters.add(done);
    });
  }
}

export interface CatchUpSource {
  /**
   * Up to `maxCount` events strictly after `after`, in global order. May throw when the store is
   * unreachable (retried), or InvalidPosition when `after` is not one of its positions (final).
   */
  readPage(after: Position | undefined, maxCount: number): Promise<RecordedEvent[]>;
  notifier: AppendNotifier;
  /** How long to sleep when caught up and not woken, before reading again. */
  pollIntervalMs: number;
  pageSize?: number;
}

/** Sleeps `ms`, or less if `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

export function backoffDelay(attempt: number, retry: SubscribeOptions['retry']): number {
  const initial = retry?.initialDelayMs ?? 100;
  const max = retry?.maxDelayMs ?? 5_000;
  return Math.min(max, initial * 2 ** Math.min(attempt - 1, 20));
}

/**
 * A catch-up subscription over any store that can read pages of $all after a position:
 * history first, then live (woken by the notifier, with polling as a safety net). Read failures
 * (a dropped connection) are retried from the last handled position with backoff, so the
 * subscription resumes by itself. Events are handed to the handler one at a time; a failing
 * handler gets the same event again until it succeeds. A starting position the store finds it
 * never produced ends the subscription: `caughtUp` rejects with the InvalidPosition.
 */
/**
 * A subscription's `caughtUp` and the two ways to settle it, once (a later resolve or reject changes
 * nothing). Whoever awaits it sees a rejection; nobody awaiting it is no reason to crash.
 */
export function caughtUpSignal(): { promise: Promise<void>; resolve(): void; reject(error: unknown): void } {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  promise.catch(() => undefined);
  return { promise, resolve: () => resolve(), reject: (error) => reject(error) };
}

export function catchUpSubscription(source: CatchUpSource, options: SubscribeOptions): Subscription {
  const abort = new AbortController();
  const { signal } = abort;
  const pageSize = source.pageSize ?? 512;
  let position = options.after;
  const caughtUp = caughtUpSignal();

  const loop = async (): Promise<void> => {
    let readFailures = 0;
    while (!signal.aborted) {
      const version = source.notifier.version;
      let page: RecordedEvent[];
      try {
        page = await source.readPage(position, pageSize);
        readFailures = 0;
      } catch (error) {
        readFailures++;
        if (signal.aborted) return;
        options.onError?.(error, { attempt: readFailures });
        if (error instanceof InvalidPosition && position === options.after) {
          caughtUp.reject(error);
          return;
        }
        await sleep(backoffDelay(readFailures, options.retry), signal);
        continue;
      }
      if (page.length === 0) {
        caughtUp.resolve();
        await source.notifier.wait(version, source.pollIntervalMs, signal);
        continue;
      }
      for (const event of page) {
        for (let attempt = 1; ; attempt++) {
          if (signal.aborted) return;
          try {
            await options.handler(event);
            break;
          } catch (error) {
            if (signal.aborted) return;
            options.onError?.(error, { event, attempt });
            await sleep(backoffDelay(attempt, options.retry), signal);
          }
        }
        position = event.position;
      }
    }
  };

  const running = loop().finally(caughtUp.resolve);
  return {
    caughtUp: caughtUp.promise,
    get position() {
      return position;
    },
    async stop() {
      abort.abort();
      await running;
    },
  };
}
