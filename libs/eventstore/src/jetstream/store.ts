import type { JetStreamManager, MsgRequest, StoredMsg } from '@nats-io/jetstream';
import { Empty, type NatsConnection, type Subscription as NatsSubscription } from '@nats-io/nats-core';
import { AppendNotifier, catchUpSubscription, sleep } from '../catch-up.js';
import { DuplicateRevision, EventStoreError, InvalidEventData, InvalidPosition, StoreUnavailable, StreamNotFound, WrongExpectedRevision } from '../errors.js';
import type {
  AppendResult,
  EventData,
  EventStore,
  ExpectedRevision,
  Position,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  StreamAppend,
  SubscribeOptions,
  Subscription,
} from '../port.js';
import { assertValidStreamId, checkExpectedRevision, prepareAppend, prepareAppendMany, type PreparedEvent } from '../validation.js';
import { appendBatch, type BatchContext, type BatchPart } from './append-many.js';
import { AllPager, type AllReaderContext, TailCursor } from './all-reader.js';
import {
  appendResultOf,
  commitIdOf,
  decodeCommit,
  encodeCommit,
  encodeEvents,
  formatPosition,
  lastRevisionOf,
  parsePosition,
  pushRecordedEvents,
  type StoredCommit,
} from './codec.js';
import { InFlightWait, NOT_YET, WRONG_LAST_SEQUENCE } from './in-flight.js';
import { PubAcks } from './pub-acks.js';
import { PullReader, type RawMessage } from './pull-reader.js';
import { SharedTail } from './shared-tail.js';
import { IMPOSSIBLE_SEQ, KeyedQueue, NEW_STREAM, type StreamState, StreamStateCache } from './stream-state.js';

export interface JetStreamStoreLogger {
  warn(message: string, ...details: unknown[]): void;
  /** What the store chose at start (how a command's commits are written); `warn` when absent. */
  info?(message: string, ...details: unknown[]): void;
}

export interface JetStreamStoreConfig {
  streamName: string;
  subjectPrefix: string;
  pollIntervalMs: number;
  requestTimeoutMs: number;
  logger: JetStreamStoreLogger;
}

/** Rounds of "the stream moved, re-read, try again" before an `any` append gives up. */
const MAX_APPEND_ATTEMPTS = 50;
const READ_BATCH = 1024;
/** Events a catch-up subscription asks for per page (the shared tail reads its pages this size). */
const SUBSCRIPTION_PAGE = 512;
/** Commits before the last that `readStream` fetches one by one at most; beyond, a consumer is cheaper. */
const READ_BY_GET_COMMITS = 6;
/**
 * Consumers a stream read opens at most, waiting a little longer each time, while the server that
 * answers one is behind the stream leader (a replica catching up after a partition or a restart):
 * its consumer ends before the last commit the leader named, and what it gave is a stale prefix.
 */
const BEHIND_ATTEMPTS = 6;
/**
 * Streams whose last commit the store remembers (at least this many, at most twice). A command
 * appends two streams, its aggregate and its command-id reservation, and the command kit keeps
 * 10,000 aggregates: with room for only 10,000 streams, half the aggregates a replica decides on
 * from its cache were forgotten here, and each such append read the stream's last commit first
 * (a direct get: a round trip, about 3 % of a replica's CPU per command). About 5 MB at most.
 */
const STATE_CACHE_ENTRIES = 30_000;
/** A reader's consumer outlives this much inactivity (a subscription's handler may be slow). */
const READER_INACTIVE_THRESHOLD_MS = 60_000;
const API_PREFIX = '$JS.API';
/** Room left in a message for the commit's envelope (`{"v":1,"r":...,"e":...}`) and headers. */
const COMMIT_OVERHEAD_BYTES = 1_024;

type PublishOutcome = { kind: 'stored'; seq: number } | { kind: 'duplicate'; seq: number } | { kind: 'moved' } | { kind: 'in_flight'; reason: string };

/** The error to throw for a failure of the store: ours as they are, anything else as StoreUnavailable. */
function unavailable(what: string, error: unknown, streamId?: string): EventStoreError {
  if (error instanceof EventStoreError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new StoreUnavailable(`jetstream: ${what}: ${reason}`, streamId, { cause: error });
}

/** The WrongExpectedRevision that `checkExpectedRevision` would throw, or undefined when the revision is acceptable. */
function conflictWith(streamId: string, expected: ExpectedRevision, lastRevision: number): WrongExpectedRevision | undefined {
  try {
    checkExpectedRevision(streamId, expected, lastRevision);
    return undefined;
  } catch (error) {
    if (error instanceof WrongExpectedRevision) return error;
    throw error;
  }
}

function resultOf(state: StreamState): AppendResult {
  return { nextExpectedRevision: state.lastRevision, position: formatPosition(state.lastSeq, state.lastIndex) };
}

function assertReadRange(name: string, value: number | undefined): void {
  if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
}

export class JetStreamEventStore implements EventStore {
  readonly kind = 'jetstream';
  private readonly states = new StreamStateCache(STATE_CACHE_ENTRIES);
  private readonly appendQueue = new KeyedQueue();
  private readonly notifier = new AppendNotifier();
  private readonly subscriptions = new Set<Subscription>();
  /** Appends in progress: `close()` lets them finish (each is bounded by the request timeout). */
  private readonly appending = new Set<Promise<unknown>>();
  /** Present when the server and the stream take atomic batches (nats-server 2.12+, `allow_atomic`): see append-many.ts. */
  readonly appendMany?: (appends: readonly StreamAppend[]) => Promise<AppendResult[]>;
  private readonly batchContext: BatchContext;
  private readonly readerContext: AllReaderContext;
  private readonly acks: PubAcks;
  /** The live end of the log, read once for every subscription that is there. */
  private readonly tail: SharedTail;
  private notifierSubscription: NatsSubscription | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly config: JetStreamStoreConfig,
    /** Whether `close()` closes the connection (false when the caller lent it). */
    private readonly ownsConnection: boolean,
    /** Whether the server and the stream take atomic batches. */
    atomicBatches = false,
  ) {
    this.acks = new PubAcks(nc);
    this.batchContext = {
      requestTimeoutMs: config.requestTimeoutMs,
      known: (streamId) => this.states.get(streamId),
      remember: (streamId, state) => this.states.set(streamId, state),
      forget: (streamId) => this.states.delete(streamId),
      readLastCommit: (streamId, from) => this.readLastCommit(streamId, from),
      publishBatch: (batchId, messages) => this.acks.publishBatch(batchId, messages, config.requestTimeoutMs),
    };
    if (atomicBatches) this.appendMany = (appends) => this.appendAtomically(appends);
    this.readerContext = {
      nc,
      jsm,
      streamName: config.streamName,
      apiPrefix: API_PREFIX,
      timeoutMs: config.requestTimeoutMs,
      subjectPrefix: config.subjectPrefix,
      inactiveThresholdMs: READER_INACTIVE_THRESHOLD_MS,
      onForeignMessage: (m) => config.logger.warn(`jetstream event store: skipping message ${m.seq} on ${m.subject}: not an event commit`),
    };
    this.tail = new SharedTail(this.readerContext, this.notifier, SUBSCRIPTION_PAGE);
  }

  async append(streamId: string, events: readonly EventData[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    const prepared = prepareAppend(streamId, events, expectedRevision);
    this.assertOpen(streamId);
    const commitId = commitIdOf(streamId, prepared);
    const eventsJson = this.encodeWithinPayload(streamId, prepared);
    const appending = this.appendQueue.run(streamId, async () => {
      try {
        return await this.appendInOrder(streamId, eventsJson, prepared.length, expectedRevision, commitId);
      } catch (error) {
        // After a timeout we cannot know whether the commit was stored: forget what we knew.
        if (!(error instanceof EventStoreError)) this.states.delete(streamId);
        throw unavailable(`append to ${streamId}`, error, streamId);
      }
    });
    return this.track(appending);
  }

  /** appendMany on a server that takes atomic batches: queued behind this process's appends to each of the streams (taken in name order). */
  private async appendAtomically(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    const prepared = prepareAppendMany(appends);
    this.assertOpen(appends[0]!.streamId);
    const parts: BatchPart[] = appends.map(({ streamId, expectedRevision }, i) => ({
      streamId,
      subject: this.subjectOf(streamId),
      eventsJson: this.encodeWithinPayload(streamId, prepared[i]!),
      count: prepared[i]!.length,
      expected: expectedRevision,
      commitId: commitIdOf(streamId, prepared[i]!),
    }));
    const names = parts.map((p) => p.streamId);
    const task = async () => {
      try {
        return await appendBatch(this.batchContext, parts);
      } catch (error) {
        if (!(error instanceof EventStoreError)) for (const name of names) this.states.delete(name);
        throw unavailable(`atomic append to ${names.join(', ')}`, error, names[0]);
      }
    };
    const queued = [...names].sort().reduceRight<() => Promise<AppendResult[]>>((inner, name) => () => this.appendQueue.run(name, inner), task);
    return this.track(queued());
  }

  /** The events as JSON, refused as bad input when one commit of them would not fit in a message. */
  private encodeWithinPayload(streamId: string, prepared: PreparedEvent[]): string {
    const eventsJson = encodeEvents(prepared);
    const maxPayload = this.nc.info?.max_payload;
    const size = Buffer.byteLength(eventsJson);
    if (maxPayload !== undefined && size + COMMIT_OVERHEAD_BYTES > maxPayload) {
      throw new InvalidEventData(streamId, prepared[0]!.type, 'events', `take ${size} bytes, more than one commit may (the NATS server's max_payload is ${maxPayload} bytes)`);
    }
    return eventsJson;
  }

  /** `close()` lets an append in progress finish. */
  private track<T>(appending: Promise<T>): Promise<T> {
    this.appending.add(appending);
    void appending.catch(() => undefined).finally(() => this.appending.delete(appending));
    return appending;
  }

  /**
   * The stream's last commit is taken from the cache, assumed absent for `no_stream` (JetStream
   * checks it), or read; the commit is published stating that commit's sequence, so JetStream
   * stores it only if nothing was appended since. A check that fails locally is confirmed with
   * the stream leader before it becomes a WrongExpectedRevision.
   */
  private async appendInOrder(streamId: string, eventsJson: string, count: number, expected: ExpectedRevision, commitId: string): Promise<AppendResult> {
    const subject = this.subjectOf(streamId);
    let state = this.states.get(streamId) ?? (expected === 'no_stream' ? NEW_STREAM : await this.readLastCommit(streamId, 'direct'));
    let confirmed = false;
    const inFlight = new InFlightWait(streamId, this.config.requestTimeoutMs);
    for (let attempt = 1; attempt <= MAX_APPEND_ATTEMPTS; attempt++) {
      // The same events retried after they were stored (even beyond the dedup window) as the last commit.
      // Stored by another append: this call publishes only once, and stops when it was stored.
      if (state.commitId === commitId) return { ...resultOf(state), alreadyStored: true };
      const conflict = conflictWith(streamId, expected, state.lastRevision);
      if (conflict) {
        if (!confirmed) {
          state = await this.readLastCommit(streamId, 'leader');
          confirmed = true;
          continue;
        }
        const earlier = await this.resultOfEarlierCopy(subject, streamId, commitId, conflict);
        if (earlier !== 'in_flight') return earlier;
        // A copy of this commit is in flight: once stored, it is the stream's last commit, or after it.
        await inFlight.wait('a copy of this commit is in flight');
        state = await this.readLastCommit(streamId, 'leader');
        attempt--;
        continue;
      }
      const outcome = await this.publish(subject, encodeCommit(state.lastRevision + 1, eventsJson), commitId, state.lastSeq);
      if (outcome.kind === 'stored') {
        const stored: StreamState = { lastRevision: state.lastRevision + count, lastSeq: outcome.seq, lastIndex: count - 1, commitId };
        this.states.set(streamId, stored);
        return resultOf(stored);
      }
      if (outcome.kind === 'duplicate') return await this.resultOfStoredCommit(streamId, outcome.seq);
      // Another append got in first, or is in flight (or this is a retry of an earlier commit: a
      // clustered 2.9 leader may check the sequence before the message id, so that is decided by the probe).
      const tried = state.lastSeq;
      this.states.delete(streamId);
      if (outcome.kind === 'in_flight') await inFlight.wait(outcome.reason);
      state = await this.readLastCommit(streamId, 'leader');
      confirmed = true;
      if (outcome.kind === 'in_flight' || state.lastSeq === tried) {
        // Refused because of a write the leader has not finished (or a read does not show yet):
        // waiting for it is not a lost round, and trying again at once would only be refused again.
        if (outcome.kind === 'moved') await inFlight.wait('another append to the stream is in flight');
        attempt--;
      }
    }
    throw new StoreUnavailable(`jetstream: append to ${streamId}: gave up after ${MAX_APPEND_ATTEMPTS} attempts, the stream kept moving`, streamId);
  }

  private async publish(subject: string, body: string | Uint8Array, msgID: string, expectedSeq: number): Promise<PublishOutcome> {
    const ack = await this.acks.publish(subject, body, { msgId: msgID, lastSubjectSequence: expectedSeq, timeoutMs: this.config.requestTimeoutMs });
    if (ack.kind === 'ack') return ack.duplicate ? { kind: 'duplicate', seq: ack.seq } : { kind: 'stored', seq: ack.seq };
    if (WRONG_LAST_SEQUENCE.has(ack.errCode)) return { kind: 'moved' };
    if (NOT_YET.has(ack.errCode)) return { kind: 'in_flight', reason: `${ack.description} (error ${ack.errCode})` };
    throw new Error(`JetStream refused a publish on ${subject}: ${ack.description} (error ${ack.errCode})`);
  }

  /**
   * The expected revision does not hold, but the events may be an earlier commit that is no
   * longer the stream's last: ask JetStream, whose dedup check answers before its sequence check,
   * with a sequence that can never match so that nothing is ever written. (The sequence is also
   * above the stream's last, so a clustered leader's early sequence check lets it through.)
   */
  private async resultOfEarlierCopy(subject: string, streamId: string, commitId: string, conflict: WrongExpectedRevision): Promise<AppendResult | 'in_flight'> {
    const outcome = await this.publish(subject, Empty, commitId, IMPOSSIBLE_SEQ);
    if (outcome.kind === 'duplicate') return this.resultOfStoredCommit(streamId, outcome.seq);
    if (outcome.kind === 'in_flight') return 'in_flight';
    if (outcome.kind === 'stored') throw new StoreUnavailable(`jetstream: append to ${streamId}: a probe with an impossible expected sequence was stored (seq ${outcome.seq})`, streamId);
    throw conflict;
  }

  /** The append result of the commit stored at `seq` (the original of a duplicate: another append's, as this call publishes a commit once). */
  private async resultOfStoredCommit(streamId: string, seq: number): Promise<AppendResult> {
    const msg = await this.jsm.streams.getMessage(this.config.streamName, { seq });
    const commit = msg && msg.subject === this.subjectOf(streamId) ? decodeCommit(msg.data) : undefined;
    if (!commit) throw new StoreUnavailable(`jetstream: append to ${streamId}: JetStream called it a duplicate of message ${seq}, which is not a commit of this stream`, streamId);
    return { ...appendResultOf(commit, seq), alreadyStored: true };
  }

  /**
   * The last commit of a stream. A direct get may be answered by any replica, possibly one
   * that lags: good enough to try a publish (JetStream checks the sequence), not to refuse one.
   */
  private async readLastCommit(streamId: string, from: 'direct' | 'leader'): Promise<StreamState> {
    const query = { last_by_subj: this.subjectOf(streamId) };
    const msg: StoredMsg | null =
      from === 'direct' ? await this.jsm.direct.getMessage(this.config.streamName, query) : await this.jsm.streams.getMessage(this.config.streamName, query);
    if (!msg) return NEW_STREAM;
    const commit = decodeCommit(msg.data);
    if (!commit) throw new StoreUnavailable(`jetstream: the last message on ${msg.subject} (seq ${msg.seq}) is not an event commit`, streamId);
    const state: StreamState = { lastRevision: lastRevisionOf(commit), lastSeq: msg.seq, lastIndex: commit.e.length - 1, commitId: msg.header.get('Nats-Msg-Id') || undefined };
    this.states.set(streamId, state);
    return state;
  }

  /**
   * Short streams (and the tail of a stream whose earlier commits this process knows) are read
   * with stream message gets, answered by the stream leader: the subject's last commit first,
   * which is all there is to read when the stream has one commit or nothing is new after
   * `fromRevision`; then the commits before it one by one (`next_by_subj`), when there can be at
   * most READ_BY_GET_COMMITS of them. Anything longer goes through a consumer filtered on the
   * subject, as creating, using and deleting one costs about as much as six gets.
   */
  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    assertValidStreamId(streamId);
    assertReadRange('fromRevision', options.fromRevision);
    assertReadRange('maxCount', options.maxCount);
    this.assertOpen(streamId);
    const fromRevision = options.fromRevision ?? 0;
    const maxCount = options.maxCount ?? Number.POSITIVE_INFINITY;
    let reader: PullReader | undefined;
    try {
      const read = await this.readStreamByGets(streamId, fromRevision, maxCount);
      if (Array.isArray(read)) return read;
      for (let attempt = 1; ; attempt++) {
        reader = await PullReader.open(this.readerContext, { startSeq: read.startSeq, filterSubject: this.subjectOf(streamId), inactiveThresholdMs: READER_INACTIVE_THRESHOLD_MS });
        const events = await this.readStreamWith(reader, streamId, fromRevision, maxCount, read.lastSeq);
        reader.close();
        reader = undefined;
        if (events !== undefined) return events;
        if (attempt >= BEHIND_ATTEMPTS) throw new StoreUnavailable(`jetstream: read stream ${streamId}: the server answering its consumer stayed behind the stream leader (sequence ${read.lastSeq}) after ${attempt} attempts`, streamId);
        await sleep(25 * 2 ** attempt);
      }
    } catch (error) {
      throw unavailable(`read stream ${streamId}`, error, streamId);
    } finally {
      reader?.close();
    }
  }

  /**
   * The events from `fromRevision` on, read with message gets, or the stream sequence a consumer
   * should start from when that would take more than READ_BY_GET_COMMITS gets. Reads what the
   * stream held when its last commit was fetched: commits appended after that are left out.
   * Whenever it returns the last commit's events, it also checks that the commit read before it
   * (or the stream's start) is directly followed by the last one: two commits claiming one
   * revision are refused (DuplicateRevision), never folded.
   */
  private async readStreamByGets(streamId: string, fromRevision: number, maxCount: number): Promise<RecordedEvent[] | { startSeq: number; lastSeq: number }> {
    const subject = this.subjectOf(streamId);
    // A commit known from an earlier append or read: what is after it is after its sequence.
    const hint = this.states.get(streamId);
    const lastMsg = await this.getMessage({ last_by_subj: subject });
    if (!lastMsg) throw new StreamNotFound(streamId);
    const last = decodeCommit(lastMsg.data);
    // A foreign message on the subject: the consumer skips it (and says so).
    if (!last) return { startSeq: 1, lastSeq: lastMsg.seq };
    // A later commit that claims a revision of the one this process knows: two at one revision.
    if (hint !== undefined && lastMsg.seq > hint.lastSeq && last.r <= hint.lastRevision) throw new DuplicateRevision(streamId, last.r, [hint.lastSeq, lastMsg.seq]);
    this.states.set(streamId, { lastRevision: lastRevisionOf(last), lastSeq: lastMsg.seq, lastIndex: last.e.length - 1, commitId: lastMsg.header.get('Nats-Msg-Id') || undefined });
    if (lastRevisionOf(last) < fromRevision) return [];

    const out: RecordedEvent[] = [];
    const fromHint = hint !== undefined && hint.lastRevision < fromRevision && hint.lastSeq < lastMsg.seq;
    let seq = fromHint ? hint.lastSeq + 1 : 1;
    let nextRevision = fromHint ? hint.lastRevision + 1 : 0;
    let previousSeq = fromHint ? hint.lastSeq : 0;
    // Commits before the last are read when asked for, and the link to the last checked when it is one get away.
    if (fromRevision < last.r || nextRevision === last.r) {
      // Each commit before the last holds at least one of the revisions nextRevision .. last.r - 1.
      if (last.r - nextRevision > READ_BY_GET_COMMITS) return { startSeq: seq, lastSeq: lastMsg.seq };
      for (let gets = 0; out.length < maxCount; gets++) {
        const msg = gets < READ_BY_GET_COMMITS + 2 ? await this.getMessage({ seq, next_by_subj: subject }) : null;
        // Fewer commits than the revisions promise, or foreign messages between them: let the consumer sort it out.
        if (!msg || msg.seq > lastMsg.seq) return { startSeq: 1, lastSeq: lastMsg.seq };
        if (msg.seq === lastMsg.seq) break;
        seq = msg.seq + 1;
        const commit = decodeCommit(msg.data);
        if (!commit) {
          this.config.logger.warn(`jetstream event store: skipping message ${msg.seq} on ${msg.subject}: not an event commit`);
          continue;
        }
        if (commit.r < nextRevision) throw new DuplicateRevision(streamId, commit.r, [previousSeq, msg.seq]);
        if (lastRevisionOf(commit) >= last.r) throw new DuplicateRevision(streamId, last.r, [msg.seq, lastMsg.seq]);
        previousSeq = msg.seq;
        if (lastRevisionOf(commit) >= fromRevision) pushRecordedEvents(out, commit, streamId, msg.seq, Date.parse(msg.timestamp), Math.max(0, fromRevision - commit.r));
        nextRevision = lastRevisionOf(commit) + 1;
      }
    }
    if (out.length < maxCount) pushRecordedEvents(out, last, streamId, lastMsg.seq, Date.parse(lastMsg.timestamp), Math.max(0, fromRevision - last.r));
    if (out.length > maxCount) out.length = maxCount;
    return out;
  }

  /** A message of the log by a stream message get, answered by the stream leader (so never behind an acknowledged append); null when there is none. */
  private getMessage(query: { last_by_subj: string } | { seq: number; next_by_subj: string }): Promise<StoredMsg | null> {
    // nats-server 2.9 takes next_by_subj on the stream API too; the client only types it for direct gets.
    return this.jsm.streams.getMessage(this.config.streamName, query as unknown as MsgRequest);
  }

  /**
   * Reads the commits that were on the subject when the consumer was created (they are all there is
   * to the stream); undefined when they end before `lastSeq`, the last commit the stream leader
   * named, while more were asked for: the consumer's server is behind the leader.
   */
  private async readStreamWith(reader: PullReader, streamId: string, fromRevision: number, maxCount: number, lastSeq: number): Promise<RecordedEvent[] | undefined> {
    const out: RecordedEvent[] = [];
    const seen: { last?: { message: RawMessage; commit: StoredCommit }; duplicate?: DuplicateRevision; seq: number } = { seq: 0 };
    const onMessage = (message: RawMessage): void => {
      seen.seq = message.seq;
      const commit = decodeCommit(message.data);
      if (!commit) return this.readerContext.onForeignMessage(message);
      // Revisions rise from commit to commit; one that claims a revision already read is a second claimant.
      if (seen.last && commit.r <= lastRevisionOf(seen.last.commit)) seen.duplicate ??= new DuplicateRevision(streamId, commit.r, [seen.last.message.seq, message.seq]);
      seen.last = { message, commit };
      if (lastRevisionOf(commit) < fromRevision || out.length >= maxCount) return;
      pushRecordedEvents(out, commit, streamId, message.seq, message.timestampMs, Math.max(0, fromRevision - commit.r));
    };
    let remaining = reader.initialPending;
    // Until maxCount is reached, and at least until the first commit (the stream exists even when maxCount is 0).
    while (remaining > 0 && (out.length < maxCount || !seen.last)) {
      const batch = Math.min(remaining, READ_BATCH);
      const received = await reader.pull(batch, onMessage);
      remaining -= received;
      if (seen.duplicate) throw seen.duplicate;
      if (received < batch) break;
    }
    if (out.length > maxCount) out.length = maxCount;
    // A replica behind the leader (catching up after a partition) answers with a stale prefix: never handed on, nor remembered.
    if (out.length < maxCount && seen.seq < lastSeq) return undefined;
    if (!seen.last) throw new StreamNotFound(streamId);
    // Read to the end: remember the last commit, so that appending next needs no read.
    const { message, commit } = seen.last;
    if (remaining === 0 && message.pending === 0) {
      this.states.set(streamId, { lastRevision: lastRevisionOf(commit), lastSeq: message.seq, lastIndex: commit.e.length - 1, commitId: message.msg.headers?.get('Nats-Msg-Id') || undefined });
    }
    return out;
  }

  async *readAll(options: ReadAllOptions = {}): AsyncGenerator<RecordedEvent> {
    if (options.after !== undefined) parsePosition(options.after);
    assertReadRange('maxCount', options.maxCount);
    this.assertOpen();
    const maxCount = options.maxCount ?? Number.POSITIVE_INFINITY;
    if (maxCount === 0) return;
    let pager: AllPager | undefined;
    try {
      if (options.after !== undefined) await this.assertProduced(options.after);
      pager = await AllPager.open(this.readerContext, options.after);
      let yielded = 0;
      while (true) {
        const page = await pager.next(Math.min(READ_BATCH, maxCount - yielded));
        if (page.length === 0) return;
        for (const event of page) {
          yield event;
          if (++yielded >= maxCount) return;
        }
      }
    } catch (error) {
      throw unavailable('read all', error);
    } finally {
      pager?.close();
    }
  }

  /**
   * The stream's last sequence (stream info: one request, whatever the log's length) and the
   * commit stored there, whose last event is the head. Foreign messages after the last commit are
   * stepped over one get at a time.
   */
  comparePositions(a: Position, b: Position): number {
    const [x, y] = [parsePosition(a), parsePosition(b)];
    return x.seq !== y.seq ? x.seq - y.seq : x.index - y.index;
  }

  async headPosition(): Promise<Position | undefined> {
    this.assertOpen();
    try {
      const { state } = await this.jsm.streams.info(this.config.streamName);
      for (let seq = state.last_seq; seq >= Math.max(1, state.first_seq); seq--) {
        // null: a message deleted from the middle of the stream.
        const msg = await this.jsm.streams.getMessage(this.config.streamName, { seq });
        const commit = msg && msg.subject.startsWith(`${this.config.subjectPrefix}.`) ? decodeCommit(msg.data) : undefined;
        if (commit) return formatPosition(seq, commit.e.length - 1);
      }
      return undefined;
    } catch (error) {
      throw unavailable('head position', error);
    }
  }

  subscribe(options: SubscribeOptions): Subscription {
    if (options.after !== undefined) parsePosition(options.after);
    this.assertOpen();
    const cursor = new TailCursor(this.readerContext);
    this.retainNotifier();
    let startChecked = options.after === undefined;
    // History through its own consumer; at the log's end (or just behind it) pages from the shared tail.
    const readPage = async (after: Position | undefined, maxCount: number): Promise<RecordedEvent[]> => {
      if (!startChecked) {
        await this.assertProduced(after!);
        startChecked = true;
      }
      const shared = await this.tail.readPage(after, maxCount);
      if (shared) {
        cursor.release();
        return shared;
      }
      const page = await cursor.readPage(after, maxCount);
      // A short page reached the log's end (as it was then): the tail can start, or move up, there.
      const end = page.length < maxCount ? (page.at(-1)?.position ?? after) : undefined;
      if (end !== undefined) this.tail.offerEnd(end, (a, b) => this.comparePositions(a, b));
      return page;
    };
    const inner = catchUpSubscription(
      {
        readPage: (after, maxCount) =>
          readPage(after, maxCount).catch((error: unknown) => {
            throw unavailable(`subscription${options.name ? ` ${options.name}` : ''} reading $all`, error);
          }),
        notifier: this.notifier,
        pollIntervalMs: this.config.pollIntervalMs,
        pageSize: SUBSCRIPTION_PAGE,
      },
      options,
    );
    let stopping: Promise<void> | undefined;
    const subscription: Subscription = {
      caughtUp: inner.caughtUp,
      get position() {
        return inner.position;
      },
      stop: () =>
        (stopping ??= inner.stop().finally(() => {
          cursor.close();
          this.subscriptions.delete(subscription);
          this.releaseNotifier();
        })),
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  close(): Promise<void> {
    return (this.closing ??= this.shutdown());
  }

  /**
   * Throws InvalidPosition unless `position` names an event of a commit in the log: past the end,
   * or inside nothing, it is not one this store produced (`parsePosition` checks only its form).
   */
  private async assertProduced(position: Position): Promise<void> {
    const { seq, index } = parsePosition(position);
    const msg = await this.jsm.streams.getMessage(this.config.streamName, { seq });
    const commit = msg && msg.subject.startsWith(`${this.config.subjectPrefix}.`) ? decodeCommit(msg.data) : undefined;
    if (!commit || index >= commit.e.length) throw new InvalidPosition(position);
  }

  private async shutdown(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    await Promise.allSettled([...this.appending]);
    this.acks.close();
    if (this.ownsConnection && !this.nc.isClosed()) await this.nc.close();
  }

  /**
   * One core NATS subscription on our subjects wakes every subscription of this store when
   * anything is published there (JetStream-captured subjects still reach core subscribers);
   * polling covers what it misses. Only held while a subscription exists, so that a store that
   * only appends does not receive its own commits back.
   */
  private retainNotifier(): void {
    if (this.notifierSubscription) return;
    this.notifierSubscription = this.nc.subscribe(`${this.config.subjectPrefix}.>`, { callback: () => this.notifier.notify() });
  }

  private releaseNotifier(): void {
    if (this.subscriptions.size > 0) return;
    this.tail.close();
    this.notifierSubscription?.unsubscribe();
    this.notifierSubscription = undefined;
  }

  private subjectOf(streamId: string): string {
    return `${this.config.subjectPrefix}.${streamId}`;
  }

  private assertOpen(streamId?: string): void {
    if (this.closing || this.nc.isClosed()) throw new StoreUnavailable('jetstream: the event store is closed', streamId);
  }
}
