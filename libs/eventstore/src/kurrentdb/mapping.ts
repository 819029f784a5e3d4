/**
 * Pure translations between the event store port and `@kurrent/kurrentdb-client`: positions,
 * expected revisions, recorded events and errors. No I/O here, so all of it is unit-tested.
 */
import {
  ANY,
  AccessDeniedError,
  AppendRecordSizeExceededError,
  CancelledError,
  DeadlineExceededError,
  MaxAppendSizeExceededError,
  NO_STREAM,
  NotLeaderError,
  STREAM_EXISTS,
  StreamDeletedError,
  StreamNotFoundError,
  StreamTombstonedError,
  TimeoutError,
  TransactionMaxSizeExceededError,
  UnavailableError,
  UnknownError,
  WrongExpectedVersionError,
  type AppendStreamState,
  type Position as ClientPosition,
} from '@kurrent/kurrentdb-client';
import { EventStoreError, InvalidEventData, InvalidPosition, StoreRefused, StoreUnavailable, StreamNotFound, WrongExpectedRevision } from '../errors.js';
import type { ExpectedRevision, Position, RecordedEvent } from '../port.js';

export type { ClientPosition };

/** Largest unsigned 64-bit value: the server's "no position" marker (old servers put it on events read from a stream). */
export const NO_POSITION = 2n ** 64n - 1n;

/** Positions are `<commit>/<prepare>`, both unsigned 64-bit decimals without leading zeros. */
const POSITION_RE = /^(0|[1-9][0-9]{0,19})\/(0|[1-9][0-9]{0,19})$/;

export function encodePosition(position: ClientPosition): Position {
  return `${position.commit.toString(10)}/${position.prepare.toString(10)}`;
}

/** Parses a position this adapter produced; anything else is an InvalidPosition. */
export function decodePosition(position: Position): ClientPosition {
  if (typeof position !== 'string') throw new InvalidPosition(String(position));
  const match = POSITION_RE.exec(position);
  if (!match) throw new InvalidPosition(position);
  const commit = BigInt(match[1]!);
  const prepare = BigInt(match[2]!);
  if (commit >= NO_POSITION || prepare >= NO_POSITION) throw new InvalidPosition(position);
  return { commit, prepare };
}

/** Order of two $all positions: negative when `a` comes first. */
export function comparePositions(a: ClientPosition, b: ClientPosition): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

/** Whether the client handed us a real $all position (absent, or the server's "none" marker, otherwise). */
export function isUsablePosition(position: ClientPosition | undefined | null): position is ClientPosition {
  if (!position) return false;
  const { commit, prepare } = position;
  return typeof commit === 'bigint' && typeof prepare === 'bigint' && commit >= 0n && prepare >= 0n && commit < NO_POSITION && prepare < NO_POSITION;
}

export function toStreamState(expected: ExpectedRevision): AppendStreamState {
  switch (expected) {
    case 'any':
      return ANY;
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    default:
      return BigInt(expected);
  }
}

/**
 * The stream's actual revision as the port reports it. The client gives a bigint revision, or the
 * string `no_stream`; negative numbers are the server's markers for a stream with no events
 * (-1), or a deleted (-5) or tombstoned (-6) one, none of which has a last revision.
 */
export function toActualRevision(actual: unknown): number | 'no_stream' {
  if (typeof actual === 'bigint') return actual < 0n ? 'no_stream' : revisionToNumber(actual);
  if (typeof actual === 'number' && Number.isSafeInteger(actual)) return actual < 0 ? 'no_stream' : actual;
  return 'no_stream';
}

export function revisionToNumber(revision: bigint): number {
  if (revision < 0n || revision > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`revision ${revision} is not a safe integer`);
  return Number(revision);
}

/** A readable reason; the client's errors from its native reader carry only their class name as message. */
export function describeError(error: unknown): string {
  if (error instanceof UnavailableError) {
    const message = error.message && error.message !== 'UnavailableError' ? `: ${error.message}` : '';
    return `the server is unreachable (UnavailableError${message})`;
  }
  if (error instanceof AccessDeniedError) return 'access denied (the user needs read access to $all, e.g. membership of $admins or $ops)';
  if (error instanceof Error) return error.message || error.constructor.name;
  return String(error);
}

/**
 * Failures after which an append may or may not have been written, and sending it again is the
 * way to find out (the server recognises the same event ids): no answer in time (among them the
 * server's answer to a retry that arrives before the original is indexed: it drops the request),
 * a lost or refused connection, a node that is no longer the leader. Reads retry these too.
 */
export function worthRetrying(error: unknown): boolean {
  return (
    neverSent(error) ||
    error instanceof DeadlineExceededError ||
    error instanceof TimeoutError ||
    error instanceof UnavailableError ||
    error instanceof CancelledError ||
    error instanceof NotLeaderError
  );
}

/** The server's ways of saying a commit is larger than it takes (in one append, one event or one transaction). */
function tooLarge(error: unknown): string | undefined {
  if (error instanceof MaxAppendSizeExceededError) return `the server's maxAppendSize of ${error.maxAppendSize} bytes`;
  if (error instanceof AppendRecordSizeExceededError) return `the server's maximum of ${error.maxSize} bytes for one event`;
  if (error instanceof TransactionMaxSizeExceededError) return `the server's maximum of ${error.maxSize} bytes for one transaction`;
  // A per-event limit the client has no class for reaches it as an UnknownError naming it (batch append: the status message; append: the exception key).
  if (error instanceof UnknownError && /MaximumAppend(Event)?SizeExceeded|maximum-append-(event-)?size-exceeded/i.test(error.message)) {
    return `a size limit of the server (${error.message})`;
  }
  return undefined;
}

export function accessDenied(what: string, error: unknown, streamId?: string): StoreRefused {
  return new StoreRefused(`kurrentdb: ${what} refused: ${describeError(error)}`, 'access_denied', streamId, { cause: error });
}

/** Any failure we cannot name more precisely: the store could not be reached, or failed. */
export function unavailable(what: string, error: unknown, streamId?: string): StoreUnavailable {
  return new StoreUnavailable(`kurrentdb: ${what} failed: ${describeError(error)}`, streamId, { cause: error });
}

/**
 * grpc-js fails calls still queued on a channel it is shutting down with this status: they never
 * left the process. The client shuts its channel down whenever any call (a dropped subscription,
 * say) fails with UNAVAILABLE, so an append issued at that moment fails this way, and is safe to send again.
 */
export function neverSent(error: unknown): boolean {
  return error instanceof Error && error.message.includes('Channel closed before call started');
}

/**
 * The port's error for a failed append. Only failures that may have left the commit written are
 * StoreUnavailable; the others say that nothing was written and that sending it again cannot help.
 */
export function mapAppendError(streamId: string, expected: ExpectedRevision, error: unknown, eventType = '(commit)'): Error {
  if (error instanceof EventStoreError) return error;
  if (error instanceof WrongExpectedVersionError) {
    const actual = toActualRevision(error.actualState);
    // `any`, or `stream_exists` on a stream that exists, cannot be wrong: the server refuses a commit
    // this way when some of its ids, not all, are already stored (it calls that corrupted idempotency).
    if (expected === 'any' || (expected === 'stream_exists' && actual !== 'no_stream')) {
      return new InvalidEventData(streamId, eventType, 'events[0].id', 'some of these event ids are already stored in another commit of this stream');
    }
    return new WrongExpectedRevision(streamId, expected, actual);
  }
  if (error instanceof StreamDeletedError && expected === 'stream_exists') {
    // The server's answer both for a tombstoned stream and for a soft-deleted one (which has no events, and takes an append with `any` or `no_stream`).
    return new WrongExpectedRevision(streamId, expected, 'no_stream');
  }
  if (error instanceof StreamDeletedError || error instanceof StreamTombstonedError) {
    return new StoreRefused(`kurrentdb: append to ${streamId} refused: the stream was deleted for good (tombstoned) and cannot be written again`, 'stream_deleted', streamId, {
      cause: error,
    });
  }
  if (error instanceof AccessDeniedError) return accessDenied(`append to ${streamId}`, error, streamId);
  const limit = tooLarge(error);
  if (limit !== undefined) return new InvalidEventData(streamId, eventType, 'events', `are more than one commit may hold: over ${limit}`);
  return unavailable(`append to ${streamId}`, error, streamId);
}

export function mapReadStreamError(streamId: string, error: unknown): Error {
  if (error instanceof EventStoreError) return error;
  if (error instanceof StreamNotFoundError || error instanceof StreamDeletedError || error instanceof StreamTombstonedError) {
    return new StreamNotFound(streamId);
  }
  if (error instanceof AccessDeniedError) return accessDenied(`read of stream ${streamId}`, error, streamId);
  return unavailable(`read of stream ${streamId}`, error, streamId);
}

export function mapReadAllError(error: unknown): Error {
  if (error instanceof EventStoreError) return error;
  if (error instanceof AccessDeniedError) return accessDenied('read of $all', error);
  return unavailable('read of $all', error);
}

/**
 * The port's error when a read of $all from `position` (to check that it is one of ours) failed:
 * a failure to reach the store is StoreUnavailable, anything else is the server refusing a
 * position that is not a record boundary of its log, which this adapter never produces.
 */
export function mapPositionCheckError(position: ClientPosition, error: unknown): Error {
  if (error instanceof EventStoreError) return error;
  if (error instanceof AccessDeniedError) return accessDenied('read of $all', error);
  if (worthRetrying(error)) return unavailable('read of $all', error);
  return new InvalidPosition(encodePosition(position));
}

/**
 * Where an event sits in its commit, kept in its metadata under this key as `[index, size]`:
 * KurrentDB does not say which events were appended together, and the adapter needs to know to
 * tell a retry of a whole commit from a retry of part of one. The first event of a commit also
 * names the append call that wrote it (`[0, size, appendId]`, a random id per call): the server
 * answers a copy of a stored commit as if it had written it, and only that id tells the call
 * that stored it from the copies (`alreadyStored`). Removed from what reads return.
 */
export const COMMIT_KEY = 'agora.commit';

export function withCommitPlace(metadata: Record<string, unknown>, index: number, size: number, appendId?: string): Record<string, unknown> {
  return { ...metadata, [COMMIT_KEY]: index === 0 && appendId !== undefined ? [index, size, appendId] : [index, size] };
}

/** The `[index, size]` an event was written with (and the append call's id, on a first event that has one), or undefined for an event written otherwise. */
export function commitPlaceOf(metadata: unknown): { index: number; size: number; appendId?: string } | undefined {
  if (!isPlainObject(metadata)) return undefined;
  const place = metadata[COMMIT_KEY];
  if (!Array.isArray(place) || (place.length !== 2 && place.length !== 3)) return undefined;
  const [index, size, appendId] = place as unknown[];
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || (index as number) < 0 || (index as number) >= (size as number)) return undefined;
  return { index: index as number, size: size as number, ...(typeof appendId === 'string' ? { appendId } : {}) };
}

/** The part of the client's recorded event we use; both its read paths (Rust bridge and gRPC) produce it. */
export interface ClientRecordedEvent {
  streamId: string;
  id: string;
  type: string;
  revision: bigint;
  created: Date;
  data: unknown;
  metadata?: unknown;
  isJson: boolean;
  position?: ClientPosition;
}

/** System streams (`$stats-...`, `$$meta`) and system events (`$>` links, `$metadata`) are KurrentDB's, never ours. */
export function isSystemEvent(event: Pick<ClientRecordedEvent, 'streamId' | 'type'>): boolean {
  return event.streamId.startsWith('$') || event.type.startsWith('$');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Raised when the server does not report $all positions on events read from a stream (EventStoreDB before 22.6). */
export function positionMissing(streamId: string, revision: bigint): StoreUnavailable {
  return new StoreUnavailable(
    `kurrentdb: the server did not report the $all position of ${streamId}@${revision}; this adapter needs KurrentDB, or EventStoreDB 22.6 or later`,
    streamId,
  );
}

function withoutCommitPlace(metadata: Record<string, unknown>): Record<string, unknown> {
  if (!(COMMIT_KEY in metadata)) return metadata;
  const { [COMMIT_KEY]: _place, ...rest } = metadata;
  return rest;
}

export function toRecordedEvent(event: ClientRecordedEvent, position: ClientPosition): RecordedEvent {
  const created = event.created instanceof Date && !Number.isNaN(event.created.getTime()) ? event.created : new Date(0);
  return {
    id: event.id,
    type: event.type,
    data: event.data,
    metadata: isPlainObject(event.metadata) ? withoutCommitPlace(event.metadata) : {},
    streamId: event.streamId,
    revision: revisionToNumber(event.revision),
    position: encodePosition(position),
    recordedAt: created.toISOString(),
  };
}

/**
 * `esdb://` and `eventstoredb://` (EventStoreDB's names, which our EVENT_STORE setting accepts) as
 * `kurrentdb://`: the client rejects `eventstoredb`, and warns on the console about `esdb`.
 */
export function normalizeConnectionString(connectionString: string): string {
  return connectionString.trim().replace(/^(?:esdb|eventstoredb)(\+discover)?:\/\//i, 'kurrentdb$1://');
}

/** Hides the password of a connection string (`kurrentdb://user:password@host`) in messages. */
export function redactConnectionString(connectionString: string): string {
  return connectionString.replace(/^([a-z+]+:\/\/)[^@/]*@/i, '$1***@');
}
