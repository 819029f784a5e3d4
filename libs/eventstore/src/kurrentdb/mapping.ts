/**
 * Pure translations between the event store port and `@kurrent/kurrentdb-client`: positions,
 * expected revisions, recorded events and errors. No I/O here, so all of it is unit-tested.
 */
import {
  ANY,
  AccessDeniedError,
  UnavailableError,
  NO_STREAM,
  STREAM_EXISTS,
  StreamDeletedError,
  StreamNotFoundError,
  StreamTombstonedError,
  WrongExpectedVersionError,
  type AppendStreamState,
  type Position as ClientPosition,
} from '@kurrent/kurrentdb-client';
import { EventStoreError, InvalidPosition, StoreUnavailable, StreamNotFound, WrongExpectedRevision } from '../errors.js';
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

export function mapAppendError(streamId: string, expected: ExpectedRevision, error: unknown): Error {
  if (error instanceof EventStoreError) return error;
  if (error instanceof WrongExpectedVersionError) return new WrongExpectedRevision(streamId, expected, toActualRevision(error.actualState));
  if (error instanceof StreamDeletedError || error instanceof StreamTombstonedError) {
    // The port has no "deleted" error, and a conflict would send the caller into a retry loop that can never succeed.
    return new StoreUnavailable(`kurrentdb: append to ${streamId} refused: the stream was deleted (tombstoned) and cannot be written again`, streamId, {
      cause: error,
    });
  }
  return unavailable(`append to ${streamId}`, error, streamId);
}

export function mapReadStreamError(streamId: string, error: unknown): Error {
  if (error instanceof EventStoreError) return error;
  if (error instanceof StreamNotFoundError || error instanceof StreamDeletedError || error instanceof StreamTombstonedError) {
    return new StreamNotFound(streamId);
  }
  return unavailable(`read of stream ${streamId}`, error, streamId);
}

export function mapReadAllError(error: unknown): Error {
  if (error instanceof EventStoreError) return error;
  return unavailable('read of $all', error);
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

export function toRecordedEvent(event: ClientRecordedEvent, position: ClientPosition): RecordedEvent {
  const created = event.created instanceof Date && !Number.isNaN(event.created.getTime()) ? event.created : new Date(0);
  return {
    id: event.id,
    type: event.type,
    data: event.data,
    metadata: isPlainObject(event.metadata) ? event.metadata : {},
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
