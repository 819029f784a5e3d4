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
import { StoreUnavailable, StreamNotFound, WrongExpectedRevision } from '../errors.js';
import type { AppendResult, EventData, EventStore, ExpectedRevision, ReadAllOptions, ReadStreamOptions, RecordedEvent, SubscribeOptions, Subscription } from '../port.js';
import { assertValidStreamId, prepareAppend } from '../validation.js';
import {
  comparePositions,
  decodePosition,
  describeError,
  encodePosition,
  isSystemEvent,
  isUsablePosition,
  mapAppendError,
  mapReadAllError,
  mapReadStreamError,
  neverSent,
  normalizeConnectionString,
  positionMissing,
  redactConnectionString,
  revisionToNumber,
  toActualRevision,
  toRecordedEvent,
  toStreamState,
  unavailable,
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

  constructor(
    private readonly client: KurrentDBClient,
    private readonly logger: KurrentDbLogger,
    /** At least 2: a page starting at the previous page's last event must still be able to show something new. */
    private readonly pageSize: number,
  ) {}

  async append(streamId: string, events: readonly EventData[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    const prepared = prepareAppend(streamId, events, expectedRevision);
    this.assertOpen(streamId);
    const proposed = prepared.map((e) => jsonEvent({ id: e.id, type: e.type, data: e.data as JSONType, metadata: e.metadata as JSONType }));
    let result: ClientAppendResult | undefined;
    for (let attempt = 1; result === undefined; attempt++) {
      try {
        result = await this.client.appendToStream(streamId, proposed, { streamState: toStreamState(expectedRevision) });
      } catch (error) {
        if (attempt < 3 && neverSent(error)) continue;
        throw mapAppendError(streamId, expectedRevision, error);
      }
    }
    if (!result.success) {
      // Only with `throwOnAppendFailure=false` in the connection string, and then the revision the client reports is unreliable.
      throw new WrongExpectedRevision(streamId, expectedRevision, await this.lastRevision(streamId));
    }
    // An append the server recognises as a retry (same event ids) reports no position: take it from the stored event.
    const position = isUsablePosition(result.position) ? result.position : await this.positionAt(streamId, result.nextExpectedRevision);
    return { nextExpectedRevision: revisionToNumber(result.nextExpectedRevision), position: encodePosition(position) };
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

  /** An async generator, so a bad `after` is thrown from iteration, as callers expect of an AsyncIterable. */
  private async *readAllAfter(options: ReadAllOptions): AsyncGenerator<RecordedEvent> {
    let cursor = options.after === undefined ? undefined : decodePosition(options.after);
    let remaining = options.maxCount ?? Number.POSITIVE_INFINITY;
    this.assertOpen();
    if (remaining <= 0) return;
    while (true) {
      const page = await this.readAllPage(cursor);
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
    const page: AllEvent[] = [];
    try {
      for await (const resolved of this.client.readAll({ fromPosition: after ?? START, maxCount: this.pageSize, filter: excludeSystemEvents() })) {
        const event = resolved.event;
        if (event && isUsablePosition(event.position)) page.push(event);
      }
    } catch (error) {
      throw mapReadAllError(error);
    }
    return page;
  }

  subscribe(options: SubscribeOptions): Subscription {
    this.assertOpen();
    const inner = kurrentDbSubscription({ client: this.client, logger: this.logger, headPosition: () => this.lastPosition(excludeSystemEvents()) }, options);
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

  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled([...this.subscriptions].map((s) => s.stop()));
      try {
        await this.client.dispose();
      } catch (error) {
        this.logger.warn('kurrentdb: closing the client failed', error);
      }
    })();
    return this.closing;
  }

  /** Position of the last event in $all (matching `filter`, if given), or undefined when there is none. */
  async lastPosition(filter?: Filter): Promise<ClientPosition | undefined> {
    try {
      for await (const resolved of this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1, ...(filter ? { filter } : {}) })) {
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
      for await (const resolved of this.client.readStream(streamId, { direction: BACKWARDS, fromRevision: END, maxCount: 1 })) {
        if (resolved.event) return toActualRevision(resolved.event.revision);
      }
      return 'no_stream';
    } catch (error) {
      const mapped = mapReadStreamError(streamId, error);
      if (mapped instanceof StreamNotFound) return 'no_stream';
      throw mapped;
    }
  }

  private async positionAt(streamId: string, revision: bigint): Promise<ClientPosition> {
    let event: ClientRecordedEvent | undefined;
    try {
      for await (const resolved of this.client.readStream(streamId, { fromRevision: revision, maxCount: 1 })) {
        event = resolved.event;
      }
    } catch (error) {
      throw unavailable(`position lookup of ${streamId}@${revision} after an append`, error, streamId);
    }
    if (!event || event.revision !== revision) {
      throw new StoreUnavailable(`kurrentdb: ${streamId}@${revision} was reported appended but cannot be read back`, streamId);
    }
    if (!isUsablePosition(event.position)) throw positionMissing(streamId, revision);
    return event.position;
  }

  private assertOpen(streamId?: string): void {
    if (this.closing) throw new StoreUnavailable('kurrentdb: the store is closed', streamId);
  }
}
