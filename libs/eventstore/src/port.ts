/**
 * The event store port. Every adapter (embedded, jetstream, kurrentdb) implements exactly this,
 * and the contract suite in `test/contract.ts` is the definition of what "implements" means.
 *
 * Vocabulary
 * - A stream is `<category>-<id>`; its events carry revisions 0, 1, 2, ... in append order.
 * - A commit is the events of one `append` call: stored all together or not at all.
 * - A position is an opaque string naming a place in the global order ($all). Callers never parse
 *   or compare positions; they store the position of the last event they handled (a checkpoint)
 *   and hand it back to `readAll` / `subscribe` to continue strictly after it.
 */

/** Revision a stream must be at for an append to go through. */
export type ExpectedRevision =
  /** the stream's last event has exactly this revision */
  | number
  /** the stream has no events */
  | 'no_stream'
  /** the stream has at least one event */
  | 'stream_exists'
  /** no check */
  | 'any';

export type Position = string;

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export interface EventData<T = unknown> {
  /** Unique id of the event (a UUID). Supplying the same ids again makes the append idempotent. Generated when absent. */
  id?: string;
  /** Stable type name, e.g. `ProposalSubmitted` or `V2.VoteCast`. */
  type: string;
  /** JSON-serializable payload. */
  data: T;
  /** JSON-serializable metadata (actor, commandId, correlationId, ...). */
  metadata?: Record<string, unknown>;
}

export interface RecordedEvent<T = unknown> {
  id: string;
  type: string;
  data: T;
  metadata: Record<string, unknown>;
  streamId: string;
  /** 0-based revision of this event in its stream. */
  revision: number;
  /** Opaque global position; pass it back as `after` to continue strictly after this event. */
  position: Position;
  /** ISO-8601 time the store recorded the commit. */
  recordedAt: string;
  /**
   * The data and metadata exactly as stored, present only when reading changed them (an upcaster
   * turned an older schema version into today's, or the version was filled in: see upcasting.ts).
   * Hashes and signatures cover what was written: the commit chain and the log hash use this.
   */
  written?: { data: unknown; metadata: Record<string, unknown> };
  /**
   * The data and metadata as the store holds them, in bytes: present only when asked
   * (`readAll({ stored: true })`) and kept by the store in that form (the embedded store). Each
   * range of `bytes` is the UTF-8 of JSON.stringify of the value as written, so a hash over the
   * written values (the log hash) can be computed over these bytes without serializing them again.
   */
  stored?: StoredBytes;
}

/** Where an event's data and metadata lie, as written, in bytes the store holds (its commit's record). */
export interface StoredBytes {
  bytes: Uint8Array;
  /** [start, end) of the data's JSON in `bytes`. */
  data: readonly [number, number];
  /** [start, end) of the metadata's JSON in `bytes`. */
  metadata: readonly [number, number];
}

export interface AppendResult {
  /** Revision of the last event now in the stream: pass it as the expected revision of the next append. */
  nextExpectedRevision: number;
  /** Position of the last event of the commit. */
  position: Position;
  /**
   * true when this append wrote nothing because the commit was already stored (the same event
   * ids, appended earlier or by a copy racing this one: another replica handling the same
   * command). Of the appends of one commit, however many race and however they are spread in
   * time, exactly one stores it and leaves this out, unless that one failed with StoreUnavailable
   * after the server stored the commit (then every later copy says true).
   */
  alreadyStored?: true;
}

/** One stream's part of an atomic append to several streams (`EventStore.appendMany`). */
export interface StreamAppend {
  streamId: string;
  /** Stored as one commit of this stream, as `append` stores them. */
  events: readonly EventData[];
  expectedRevision: ExpectedRevision;
}

export interface ReadStreamOptions {
  /** First revision to return (inclusive). Default 0. */
  fromRevision?: number;
  /** At most this many events. Default: all. */
  maxCount?: number;
}

export interface ReadAllOptions {
  /** Return events strictly after this position. Default: from the beginning. */
  after?: Position;
  /** At most this many events. Default: all. */
  maxCount?: number;
  /** Hand each event's stored bytes (RecordedEvent.stored) where the store keeps JSON.stringify's form of them. Default: false. */
  stored?: boolean;
}

export interface SubscribeOptions {
  /** A short name for logs. */
  name?: string;
  /** Checkpoint: deliver events strictly after this position. Default: from the beginning. */
  after?: Position;
  /**
   * Called once per event, in global order, one at a time: the next call starts only after the
   * returned promise resolves. A handler that throws is called again with the same event (after a
   * backoff) until it succeeds; no later event is delivered before that.
   */
  handler: (event: RecordedEvent) => Promise<void> | void;
  /** Told about every failed handler call and every dropped connection before the retry. */
  onError?: (error: unknown, context: { event?: RecordedEvent; attempt: number }) => void;
  /** Backoff between retries, in ms: starts at `initialDelayMs`, doubles, capped at `maxDelayMs`. */
  retry?: { initialDelayMs?: number; maxDelayMs?: number };
}

export interface Subscription {
  /**
   * Resolves once every event that existed when the subscription started has been handled.
   * Rejects with InvalidPosition, and the subscription ends, when the store finds only after
   * `subscribe` returned (by asking its server) that `after` is not one of its positions.
   */
  readonly caughtUp: Promise<void>;
  /** Position of the last event handled successfully, if any. */
  readonly position: Position | undefined;
  /** Stops delivering; resolves once the handler in progress (if any) has returned. */
  stop(): Promise<void>;
}

export interface EventStore {
  /** Name of the adapter: `embedded`, `jetstream` or `kurrentdb`. */
  readonly kind: string;

  /**
   * Appends `events` to `streamId` as one commit, if the stream is at `expectedRevision`.
   * Throws WrongExpectedRevision (nothing written) when it is not. An append whose event ids are
   * already stored in the stream as one commit returns that commit's result, marked
   * `alreadyStored`, and writes nothing (also after the store restarted); ids stored otherwise, as part of a commit, are refused
   * (InvalidEventData or WrongExpectedRevision), never answered with a revision inside a commit.
   * StoreUnavailable leaves it open whether the commit was written: sending it again is safe.
   * StoreRefused and the Invalid* errors mean nothing was written and no retry will help.
   */
  append(streamId: string, events: readonly EventData[], expectedRevision: ExpectedRevision): Promise<AppendResult>;

  /**
   * Appends one commit to each of several streams (distinct, at most 16), all or none: present only
   * where the store can make them one write (the embedded store; JetStream on nats-server 2.12+,
   * as one atomic batch). A caller without it makes one `append` per stream.
   * - Every expected revision holds and no commit is stored yet: all are stored, together, in the
   *   order given (their positions follow one another in $all), and the results come in that order.
   * - Every commit is already stored (the same event ids, each the commit of its stream: a retry of
   *   the whole, or a copy racing this one): nothing is written, each result marked `alreadyStored`.
   * - Otherwise nothing is written: WrongExpectedRevision names the first stream whose revision
   *   does not hold (a commit stored already with `no_stream` or a revision: its stream has moved);
   *   ids stored otherwise are refused as `append` refuses them.
   * StoreUnavailable leaves it open whether all were written (never some): sending it again is safe.
   */
  appendMany?(appends: readonly StreamAppend[]): Promise<AppendResult[]>;

  /** Events of one stream in revision order. Throws StreamNotFound when the stream has no events. */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;

  /** Every event of every stream in the one global order. */
  readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent>;

  /**
   * Position of the newest event of $all (undefined while the log is empty), at the cost of one
   * request whatever the log's length: `readAll` or `subscribe` after it gives only what is
   * appended from then on. Concurrent appends may land just before or just after it.
   */
  headPosition(): Promise<Position | undefined>;

  /**
   * The order of two positions in $all: negative when `a` comes first, 0 when they are one, positive
   * after. Synchronous, no request: for a reader that must wait until it has seen a position (read
   * your writes). Throws InvalidPosition for a string that is not in the form of this store's
   * positions (a position not reached yet is fine).
   */
  comparePositions(a: Position, b: Position): number;

  /** Catch-up subscription to all events: history first, then live, resuming after drops. */
  subscribe(options: SubscribeOptions): Subscription;

  /** Stops subscriptions and releases connections and files: nothing of the store keeps the process alive after. Safe to call twice. */
  close(): Promise<void>;
}
