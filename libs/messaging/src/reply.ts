import { AgoraError, type ErrorBody, type ErrorCode, type Reply } from '@agora/contracts';

export interface MessagingLogger {
  error(message: string, error?: unknown): void;
  warn(message: string): void;
}

export function okReply<T>(result: T): Reply<T> {
  return { ok: true, result };
}

export function errorReply(code: ErrorCode, message: string, details?: Record<string, unknown>): Reply<never> {
  return { ok: false, error: errorBody(code, message, details) };
}

export function errorBody(code: ErrorCode, message: string, details?: Record<string, unknown>): ErrorBody {
  return details === undefined ? { code, message } : { code, message, details };
}

/**
 * The event store's errors name their kind in `code` (@agora/eventstore's errors.ts, which this
 * package does not depend on); `store_unavailable` is an outage, which a caller may retry.
 */
function isStoreOutage(error: unknown): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === 'store_unavailable';
}

/**
 * What a caller learns about a failed handler: an AgoraError (DomainError extends it) is meant
 * for them and goes out as is; anything else is our bug or an outage, so the caller gets a generic
 * `internal` (`unavailable` when the event store did not answer) and the log gets the real error
 * (it may hold paths, queries or secrets).
 */
export function replyForError(error: unknown, logger: MessagingLogger, context: string): Reply<never> {
  if (error instanceof AgoraError) return errorReply(error.code, error.message, error.details);
  logger.error(`${context} failed`, error);
  if (isStoreOutage(error)) return errorReply('unavailable', 'the event store does not answer; try again');
  return errorReply('internal', 'an unexpected error occurred; the service log has the details');
}
