import { randomUUID } from 'node:crypto';
import {
  BACKWARDS,
  END,
  KurrentDBClient,
  START,
  excludeSystemEvents,
  jsonEvent,
  type AppendResult as ClientAppendResult,
  type Filter,
  type JSONType,
} from '@kurrent/kurrentdb-client';
import { backoffDelay, sleep } from '../catch-up.js';
import { InvalidEventData, InvalidPosition, StoreUnavailable, StreamNotFound, WrongExpectedRevision } from '../errors.js';
import type { AppendResult, EventData, EventStore, ExpectedRevision, Position, ReadAllOptions, ReadStreamOptions, RecordedEvent, SubscribeOptions, Subscription } from '../port.js';
import { assertValidStreamId, prepareAppend, type PreparedEvent } from '../validation.js';
import {
  commitPlaceOf,
  comparePositions,
  decodePosition,
  describeError,
  encodePosition,
  isSystemEvent,
  isUsablePosition,
  mapAppendError,
  mapPositionCheckError,
  mapReadAllError,
  mapReadStreamError,
  normalizeConnectionString,
  positionMissing,
  redactConnectionString,
  revisionToNumber,
  toActualRevision,
  toRecordedEvent,
  toStreamState,
  withCommitPlace,
  worthRetrying,
  type ClientPosition,
  type ClientRecordedEvent,
} from './mapping.js';
import { kurrentDbSubscription, type KurrentDbLogger } from './subscription.js';

export type { KurrentDbLogger };

export interface KurrentDbEventStoreOptions {
  /** e.g. `kurrentdb://127.0.0.1:2113?tls=false`, or `kurrentdb+discover://user:password@cluster:2113` for a cluster. */
  connectionString: string;
  /** Told about dropped subscriptions and other trouble worth a look. Default: `console`. */
  logger?: KurrentDbLogger;
  /** How long `open` waits for the server to answer its first read. Default 10 s. */
  openTimeoutMs?: number;
  /** Events per $all read request. Default 500. */
  readPageSize?: number;
}

type AllEvent = ClientRecordedEvent & { position: ClientPosition };

/**
 * Every read goes to the leader: the Rust bridge that serves reads holds a connection of its own,
 * which may otherwise be answered by a follower that has not yet indexed an acknowledged append.
 */
const ON_LEADER = { requiresLeader: true } as const;
/** Sends of one append (the first and the retries after a failure that leaves it open whether it was written). */
const APPEND_ATTEMPTS = 4;
/** Tries of one read after a failure worth retrying (a dropped connection, a node that stopped being the leader). */
const READ_ATTEMPTS = 3;
const RETRY_DELAYS = { initialDelayMs: 100, maxDelayMs: 1_000 };
/** Positions known to be this store's (returned by an append, or checked): not checked again. */
const KNOWN_POSITIONS = 10_000;

/**
 * Opens the KurrentDB adapter and checks that the server answers (a one-event read of $all, which
 * also proves the user may read $all, as readAll and subscribe need). Throws StoreUnavailable if not.
 */
export async function openKurrentDbEventStore(options: KurrentDbEventStoreOptions): Promise<EventStore> {
  const pageSize = options.readPageSize ?? 500;
  if (!Number.isSafeInteger(pageSize) || pageSize < 2) throw new RangeError(`readPageSize must be an integer of at least 2, not ${pageSize}`);
  const connectionString = normalizeConnectionString(options.connectionString);
  const where = redactConnectionString(connectionString);
  let client: KurrentDBClient;
  try {
    client = KurrentDBClient.connectionString(connectionString);
  } catch (error) {
    throw new StoreUnavailable(`kurrentdb: cannot use connection string ${where}: ${error instanceof Error ? error.message : String(error)}`, undefined, {
      cause: error,
    });
  }
  const store = new KurrentDbEventStore(client, options.logger ?? console, pageSize);
  const timeoutMs = options.openTimeoutMs ?? 10_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      store.lastPosition(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (error) {
    await store.close().catch(() => undefined);
    const cause = error instanceof StoreUnavailable && error.cause !== undefined ? error.cause : error;
    throw new StoreUnavailable(`kurrentdb: server at ${where} did not answer: ${describeError(cause)}`, undefined, { cause });
  } finally {
    clearTimeout(timer);
  }
  return store;
}

function isValidStreamId(streamId: string): boolean {
  try {
    assertValidStreamId(streamId);
    return true;
  } catch {
    return false;
  }
}

class KurrentDbEventStore implements EventStore {
  readonly kind = 'kurrentdb';
  private closing: Promise<void> | undefined;
  private readonly subscriptions = new Set<Subscription>();
  /** Appends and reads in progress: close() lets them end first. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly knownPositions = new Set<string>();
  /** The gRPC channels appends and subscriptions went through: `dispose()` leaves them open, close() closes them. */
  private readonly channels = new Set<GrpcChannel>();

  constructor(
    private readonly client: KurrentDBClient,
    private readonly logger: KurrentDbLogger,
    /** At least 2: a page starting at the previous page's last event must still be able to show something new. */
    private readonly pageSize: number,
  ) {}

  /**
   * Appends a commit, each event marked with its place in it (see COMMIT_KEY), then reads the
   * commit back from the leader: the server answers a retry of part of a commit (same ids at the
   * same revisions) as if it were the whole, and only the marks tell the two apart. A failure that
   * leaves it open whether the commit was written is answered by sending it again: the server
   * recognises the ids (numeric and `no_stream`: from its index; `any` and `stream_exists`: from a
   * bounded cache, so this adapter first looks for the commit as the stream's last itself).
   */
  append(streamId: string, events: readonly EventData[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    let prepared: PreparedEvent[];
    try {
      prepared = prepareAppend(streamId, events, expectedRevision);
      this.assertOpen(streamId);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.track(this.appendCommit(streamId, prepared, expectedRevision));
  }

  private async appendCommit(streamId: string, prepared: PreparedEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const appendId = randomUUID();
    const proposed = prepared.map((e, i) =>
      jsonEvent({ id: e.id, type: e.type, data: e.data as JSONType, metadata: withCommitPlace(e.metadata, i, prepared.length, appendId) as JSONType }),
    );
    const weak = expected === 'any' || expected === 'stream_exists';
    for (let attempt = 1; ; attempt++) {
      this.assertOpen(streamId);
      if (weak) {
        const stored = await this.lastCommitIfSame(streamId, prepared, appendId);
        if (stored) return stored;
      }
      let result: ClientAppendResult;
      try {
        result = await this.client.appendToStream(streamId, proposed, { streamState: toStreamState(expected) });
      } catch (error) {
        // The server answered (a conflict, a refusal): the channel is there. After a transport failure the client may have dropped it.
        if (!worthRetrying(error)) this.noteChannel();
        const mapped = mapAppendError(streamId, expected, error, prepared[0]!.type);
        if (!(mapped instanceof StoreUnavailable) || !worthRetrying(error) || attempt >= APPEND_ATTEMPTS || this.closing) throw mapped;
        this.logger.warn(`kurrentdb: append to ${streamId} failed (${describeError(error)}); sending it again (attempt ${attempt + 1} of ${APPEND_ATTEMPTS})`);
        await sleep(backoffDelay(attempt, RETRY_DELAYS));
        continue;
      }
      this.noteChannel();
      if (!result.success) {
        // Only with `throwOnAppendFailure=false` in the connection string, and then the revision the client reports is unreliable.
        throw new WrongExpectedRevision(streamId, expected, await this.lastRevision(streamId));
      }
      const stored = await this.storedCommit(streamId, prepared, result.nextExpectedRevision, appendId);
      if (stored === 'not stored') throw new StoreUnavailable(`kurrentdb: ${streamId}@${result.nextExpectedRevision} was reported appended but cannot be read back`, streamId);
      return stored;
    }
  }

  /**
   * The result of the commit of `prepared` if it ends at `lastRevision`: its events, read from the
   * leader, carry exactly these ids in this order, and their marks (when they have them) say they
   * are one whole commit. 'not stored' when nothing is there; InvalidEventData when the ids are
   * stored as part of another commit (a caller retrying part of a commit). `alreadyStored` unless
   * the commit's first event names `appendId` (the call that stored it: this one, on an attempt
   * that failed in transit).
   */
  private async storedCommit(streamId: string, prepared: PreparedEvent[], lastRevision: bigint, appendId: string): Promise<AppendResult | 'not stored'> {
    const size = prepared.length;
    const first = lastRevision - BigInt(size - 1);
    const read = first < 0n ? [] : await this.readRange(streamId, first, size);
    if (read.length === 0) return 'not stored';
    const whole =
      read.length === size &&
      read.every((e, i) => e.id.toLowerCase() === prepared[i]!.id && e.revision === first + BigInt(i)) &&
      read.every((e, i) => {
        const place = commitPlaceOf(e.metadata);
        return place === undefined || (place.index === i && place.size === size);
      });
    if (!whole) {
      throw new InvalidEventData(streamId, prepared[0]!.type, 'events[0].id', `${prepared[0]!.id}: these ids are already stored in ${streamId}, but not as one commit of exactly these events`);
    }
    const last = read[size - 1]!;
    if (!isUsablePosition(last.position)) throw positionMissing(streamId, last.revision);
    const position = encodePosition(last.position);
    this.rememberPosition(position);
    const own = commitPlaceOf(read[0]!.metadata)?.appendId === appendId;
    return { nextExpectedRevision: revisionToNumber(lastRevision), position, ...(own ? {} : { alreadyStored: true as const }) };
  }

  /**
   * The stored commit's result when the stream's last event is the last of `prepared`: how an
   * `any` or `stream_exists` append recognises its own retry once the server no longer does.
   */
  private async lastCommitIfSame(streamId: string, prepared: PreparedEvent[], appendId: string): Promise<AppendResult | undefined> {
    const last = await this.readEvents(streamId, { direction: BACKWARDS, fromRevision: END, maxCount: 1 });
    const event = last[0];
    if (!event || event.id.toLowerCase() !== prepared[prepared.length - 1]!.id) return undefined;
    const stored = await this.storedCommit(streamId, prepared, event.revision, appendId);
    return stored === 'not stored' ? undefined : stored;
  }

  /** `count` events of a stream from `from`, read from the leader; none when the stream has no events. */
  private readRange(streamId: string, from: bigint, count: number): Promise<ClientRecordedEvent[]> {
    return this.readEvents(streamId, { fromRevision: from, maxCount: count });
  }

  private async readEvents(streamId: string, options: { fromRevision: bigint | typeof END; maxCount: number; direction?: typeof BACKWARDS }): Promise<ClientRecordedEvent[]> {
    return this.withReadRetries(async () => {
      const events: ClientRecordedEvent[] = [];
      try {
        for await (const resolved of this.client.readStream(streamId, { ...options, maxCount: BigInt(options.maxCount), ...ON_LEADER })) {
          if (resolved.event) events.push(resolved.event);
        }
      } catch (error) {
        if (mapReadStreamError(streamId, error) instanceof StreamNotFound) return [];
        throw error;
      }
      return events;
    }).catch((error: unknown) => {
      throw mapReadStreamError(streamId, error);
    });
  }

  /** Runs a read again after a failure worth retrying (a dropped connection, a node no longer the leader), a few times. */
  private async withReadRetries<T>(read: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await read();
      } catch (error) {
        if (!worthRetrying(error) || attempt >= READ_ATTEMPTS || this.closing) throw error;
        await sleep(backoffDelay(attempt, RETRY_DELAYS));
      }
    }
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    // No append accepts a malformed name, so such a stream has no events (as the embedded adapter answers too).
    if (!isValidStreamId(streamId)) throw new StreamNotFound(streamId);
    const fromRevision = options.fromRevision ?? 0;
    const maxCount = options.maxCount;
    if (!Number.isSafeInteger(fromRevision) || fromRevision < 0) throw new RangeError(`fromRevision must be a revision number, not ${fromRevision}`);
    if (maxCount !== undefined && (!Number.isSafeInteger(maxCount) || maxCount < 0)) throw new RangeError(`maxCount must be a non-negative integer, not ${maxCount}`);
    this.assertOpen(streamId);
    const events: RecordedEvent[] = [];
    try {
      const reads = this.client.readStream(streamId, {
        fromRevision: BigInt(fromRevision),
        // maxCount 0 still reads one event, so a missing stream is reported as one.
        ...(maxCount === undefined ? {} : { maxCount: BigInt(Math.max(maxCount, 1)) }),
        ...ON_LEADER,
      });
      for await (const resolved of reads) {
        const event = resolved.event;
        if (!event) continue;
        if (!isUsablePosition(event.position)) throw positionMissing(streamId, event.revision);
        events.push(toRecordedEvent(event, event.position));
      }
    } catch (error) {
      throw mapReadStreamError(streamId, error);
    }
    // The server answers an empty read for a stream whose events were all truncated: it has no events, as far as the port is concerned.
    if (events.length === 0 && fromRevision === 0) throw new StreamNotFound(streamId);
    return maxCount === 0 ? [] : events;
  }

  readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    return this.readAllAfter(options);
  }

  /** One backwards read of $all from its end, system events filtered out by the server. */
  comparePositions(a: Position, b: Position): number {
    return comparePositions(decodePosition(a), decodePosition(b));
  }

  async headPosition(): Promise<Position | undefined> {
    this.assertOpen();
    let head: ClientPosition | undefined;
    try {
      head = await this.track(
        this.withReadRetries(async () => {
          for await (const resolved of this.client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 16, filter: excludeSystemEvents(), ...ON_LEADER })) {
            const event = resolved.event;
            if (event && isUsablePosition(event.position) && !isSystemEvent(event)) return event.position;
          }
          return undefined;
        }),
      );
    } catch (error) {
      throw mapReadAllError(error);
    }
    if (head === undefined) return undefined;
    const position = encodePosition(head);
    this.rememberPosition(position);
    return position;
  }

  /** An async generator, so a bad `after` is thrown from iteration, as callers expect of an AsyncIterable. */
  private async *readAllAfter(options: ReadAllOptions): AsyncGenerator<RecordedEvent> {
    let cursor = options.after === undefined ? undefined : decodePosition(options.after);
    let remaining = options.maxCount ?? Number.POSITIVE_INFINITY;
    this.assertOpen();
    if (remaining <= 0) return;
    if (cursor !== undefined) await this.track(this.checkPosition(cursor));
    while (true) {
      this.assertOpen();
      const page = await this.track(this.readAllPage(cursor));
      let advanced = false;
      for (const event of page) {
        // A read of $all from a position includes the event at that position; the port wants strictly after it.
        if (cursor !== undefined && comparePositions(event.position, cursor) <= 0) continue;
        cursor = event.position;
        advanced = true;
        if (isSystemEvent(event)) continue;
        yield toRecordedEvent(event, event.position);
        if (--remaining <= 0) return;
      }
      // Stop only on a page with nothing new: a filtered read may return a short page before the end.
      if (!advanced) return;
    }
  }

  private async readAllPage(after: ClientPosition | undefined): Promise<AllEvent[]> {
    try {
      return await this.withReadRetries(async () => {
        const page: AllEvent[] = [];
        for await (const resolved of this.client.readAll({ fromPosition: after ?? START, maxCount: this.pageSize, filter: excludeSystemEvents(), ...ON_LEADER })) {
          const event = resolved.event;
          if (event && isUsablePosition(event.position)) page.push(event);
        }
        return page;
      });
    } catch (error) {
      throw mapReadAllError(error);
    }
  }

  /**
   * Throws InvalidPosition unless an event of $all sits exactly at `position`. The server takes
   * any pair of numbers and fails, or answers from elsewhere, for one that is not a record of its
   * log (made up, past the end, from before a restore), which this adapter never produces.
   */
  async checkPosition(position: ClientPosition): Promise<void> {
    const encoded = encodePosition(position);
    if (this.knownPositions.has(encoded)) return;
    let found: ClientPosition | undefined;
    try {
      found = await this.withReadRetries(async () => {
        for await (const resolved of this.client.readAll({ fromPosition: position, maxCount: 1, ...ON_LEADER })) {
          return resolved.event?.position ?? resolved.link?.position;
        }
        return undefined;
      });
    } catch (error) {
      throw mapPositionCheckError(position, error);
    }
    if (!isUsablePosition(found) || comparePositions(found, position) !== 0) throw new InvalidPosition(encoded);
    this.rememberPosition(encoded);
  }

  private rememberPosition(position: string): void {
    if (this.knownPositions.size >= KNOWN_POSITIONS) this.knownPositions.clear();
    this.knownPositions.add(position);
  }

  subscribe(options: SubscribeOptions): Subscription {
    this.assertOpen();
    const inner = kurrentDbSubscription(
      {
        client: this.client,
        logger: this.logger,
        onAnswer: () => this.noteChannel(),
        headPosition: () => this.lastPosition(excludeSystemEvents()),
        checkPosition: (position) => this.checkPosition(position),
      },
      options,
    );
    const subscriptions = this.subscriptions;
    const subscription: Subscription = {
      caughtUp: inner.caughtUp,
      get position() {
        return inner.position;
      },
      async stop() {
        try {
          await inner.stop();
        } finally {
          subscriptions.delete(subscription);
        }
      },
    };
    subscriptions.add(subscription);
    return subscription;
  }

  /**
   * Stops the subscriptions, lets appends and reads in progress end (each stops at its next step,
   * and retries no more), cancels the client's streams and closes its gRPC channels. The Rust
   * bridge that serves reads has no close: it holds nothing once no read is running (a read
   * already waiting on a server that does not answer ends at the bridge's own timeout).
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled([...this.subscriptions].map((s) => s.stop()));
      await Promise.allSettled([...this.inFlight]);
      try {
        await this.client.dispose();
        for (const channel of this.channels) channel.close();
      } catch (error) {
        this.logger.warn('kurrentdb: closing the client failed', error);
      }
    })();
    return this.closing;
  }

  /**
   * Remembers the client's current gRPC channel, just after a call through it was answered (so
   * one exists, and asking for it opens none). The client keeps it private; `getChannel` is a
   * property at run time.
   */
  private noteChannel(): void {
    const getChannel = (this.client as unknown as { getChannel?: () => Promise<GrpcChannel> }).getChannel;
    if (typeof getChannel !== 'function' || this.closing) return;
    void this.track(getChannel().then((channel) => void this.channels.add(channel))).catch(() => undefined);
  }

  /** Keeps `work` in the set `close()` waits for, until it settles. */
  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    void work.then(
      () => this.inFlight.delete(work),
      () => this.inFlight.delete(work),
    );
    return work;
  }

  /** Position of the last event in $all (matching `filter`, if given), or undefined when there is none. */
  async lastPosition(filter?: Filter): Promise<ClientPosition | undefined> {
    try {
      for await (const resolved of this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1, ...(filter ? { filter } : {}), ...ON_LEADER })) {
        const position = resolved.event?.position;
        if (isUsablePosition(position)) return position;
      }
      return undefined;
    } catch (error) {
      throw mapReadAllError(error);
    }
  }

  private async lastRevision(streamId: string): Promise<number | 'no_stream'> {
    try {
      for await (const resolved of this.client.readStream(streamId, { direction: BACKWARDS, fromRevision: END, maxCount: 1, ...ON_LEADER })) {
        if (resolved.event) return toActualRevision(resolved.event.revision);
      }
      return 'no_stream';
    } catch (error) {
      const mapped = mapReadStreamError(streamId, error);
      if (mapped instanceof StreamNotFound) return 'no_stream';
      throw mapped;
    }
  }

  private assertOpen(streamId?: string): void {
    if (this.closing) throw new StoreUnavailable('kurrentdb: the store is closed', streamId);
  }
}

/** The part of a grpc-js channel close() uses. */
interface GrpcChannel {
  close(): void;
}
