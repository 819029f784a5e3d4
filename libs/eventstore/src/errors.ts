import type { ExpectedRevision } from './port.js';

/** Base of every error the event store throws on purpose. `code` is stable and snake_case. */
export abstract class EventStoreError extends Error {
  abstract readonly code: string;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The stream was not at the expected revision; nothing was written. */
export class WrongExpectedRevision extends EventStoreError {
  readonly code = 'wrong_expected_revision';
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    /** Revision of the stream's last event, or `no_stream`. */
    readonly actual: number | 'no_stream',
  ) {
    super(`stream ${streamId}: expected revision ${String(expected)}, actual ${String(actual)}`);
  }
}

export class StreamNotFound extends EventStoreError {
  readonly code = 'stream_not_found';
  constructor(readonly streamId: string) {
    super(`stream ${streamId} not found`);
  }
}

/** The store could not be reached or failed; the operation may or may not have taken effect. */
export class StoreUnavailable extends EventStoreError {
  readonly code = 'store_unavailable';
  constructor(
    message: string,
    readonly streamId?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The store refused the operation for a reason no retry will fix: the user lacks the right to it,
 * the stream was deleted for good, or the server cannot keep the log's promises (a clustered
 * JetStream log on a nats-server older than 2.11.0). Nothing was written (unlike StoreUnavailable,
 * which leaves it open).
 */
export class StoreRefused extends EventStoreError {
  readonly code = 'store_refused';
  constructor(
    message: string,
    readonly reason: 'access_denied' | 'stream_deleted' | 'unsupported_server' | 'stream_not_ready',
    readonly streamId?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A read found two commits of one stream claiming the same revision: the log was written by a
 * server that let concurrent appends at one expected revision through (a clustered JetStream log
 * on nats-server before 2.9.21, nats-io/nats-server#4320). The stream is not folded: an aggregate
 * built from both commits, or from either alone, would decide on a history that never was.
 */
export class DuplicateRevision extends EventStoreError {
  readonly code = 'duplicate_revision';
  constructor(
    readonly streamId: string,
    /** The first revision two commits both claim. */
    readonly revision: number,
    /** Where the two commits are in the log (the adapter's sequence numbers), earlier first. */
    readonly at: readonly [number, number],
  ) {
    super(
      `stream ${streamId}: two commits claim revision ${revision} (log sequences ${at[0]} and ${at[1]}); refusing to fold it. ` +
        `The log was written by a server that let concurrent appends through (nats-server before 2.9.21 in a cluster, nats-io/nats-server#4320): run agora audit and repair the stream`,
    );
  }
}

/** Bad input: refused before anything was written. */
export class InvalidStreamName extends EventStoreError {
  readonly code = 'invalid_stream_name';
  constructor(
    readonly streamId: string,
    readonly reason: string,
  ) {
    super(`invalid stream name ${JSON.stringify(streamId)}: ${reason}`);
  }
}

export class InvalidEventType extends EventStoreError {
  readonly code = 'invalid_event_type';
  constructor(
    readonly streamId: string,
    readonly eventType: string,
    readonly reason: string,
  ) {
    super(`invalid event type ${JSON.stringify(eventType)} for stream ${streamId}: ${reason}`);
  }
}

export class InvalidEventData extends EventStoreError {
  readonly code = 'invalid_event_data';
  constructor(
    readonly streamId: string,
    readonly eventType: string,
    /** JSON-pointer-like path of the offending value, e.g. `data.items[2].when`. */
    readonly path: string,
    readonly reason: string,
  ) {
    super(`event ${eventType} for stream ${streamId}: ${path} ${reason}`);
  }
}

export class InvalidExpectedRevision extends EventStoreError {
  readonly code = 'invalid_expected_revision';
  constructor(
    readonly streamId: string,
    readonly expected: unknown,
  ) {
    super(`stream ${streamId}: expected revision ${String(expected)} is not a revision number, 'no_stream', 'stream_exists' or 'any'`);
  }
}

/** A position handed back by a caller that this store did not produce. */
export class InvalidPosition extends EventStoreError {
  readonly code = 'invalid_position';
  constructor(readonly position: string) {
    super(`invalid position ${JSON.stringify(position)}`);
  }
}
