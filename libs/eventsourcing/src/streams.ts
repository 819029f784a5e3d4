import { categoryOf } from '@agora/contracts';

/** A predicate on stream ids: true for every stream when `categories` is undefined, else for those of the listed categories. */
export function streamFilter(categories: readonly string[] | undefined): (streamId: string) => boolean {
  if (categories === undefined) return () => true;
  const wanted = new Set(categories);
  return (streamId) => wanted.has(categoryOf(streamId));
}

/** Where this library reports trouble no caller is waiting on (a failing handler or timer); `console` fits. */
export interface EventSourcingLogger {
  warn(message: string, ...details: unknown[]): void;
}

/** Backoff of a retried handler or timer, in ms: starts at `initialDelayMs`, doubles, capped at `maxDelayMs`. */
export interface RetryOptions {
  initialDelayMs?: number;
  maxDelayMs?: number;
}
