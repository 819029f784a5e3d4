import { closeSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AppendNotifier, catchUpSubscription } from '../catch-up.js';
import { InvalidEventData, InvalidPosition, StoreUnavailable, StreamNotFound } from '../errors.js';
import type { AppendResult, EventData, EventStore, ExpectedRevision, Position, ReadAllOptions, ReadStreamOptions, RecordedEvent, SubscribeOptions, Subscription } from '../port.js';
import { checkExpectedRevision, prepareAppend, type PreparedEvent } from '../validation.js';
import { acquireLock, decodeSpan, IndexMismatch, LogFile, RecordBatch, type LogWarning, type ScannedRecord } from './log-file.js';
import { EventIdIndex, NumberColumn } from './log-index.js';

export interface EmbeddedStoreOptions {
  /** Directory holding `events.log` (created if missing). */
  directory: string;
  /** Told about a torn final record dropped at open. Default: console.warn. */
  onWarning?: (warning: LogWarning & { file: string }) => void;
  /**
   * Bytes of recently written or read commits kept decoded in memory (as they are on disk; decoded
   * they take a few times more). Everything else is read back from the file. Default 8 MiB.
   */
  cacheBytes?: number;
  /** Told why a saved index (events.idx) was not used and the log is scanned whole. Default: console.warn. */
  onIndex?: (message: string) => void;
}

/** At most this many bytes are read from the file at once for a page of $all (a single larger commit is read whole). */
const MAX_READ_SPAN = 4 * 1024 * 1024;

/** What one commit looks like on disk. Short keys: the log holds many of them. */
interface CommitRecord {
  s: string;
  r: number;
  t: string;
  e: Array<{ i: string; y: string; d: unknown; m: Record<string, unknown> }>;
}

interface PendingAppend {
  streamId: string;
  events: PreparedEvent[];
  /** The events as stored, and as JSON: encoded when the append is made, while the previous group is being written. */
  entries: CommitRecord['e'];
  entriesJson: string;
  expected: ExpectedRevision;
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
}

/** A commit of a group being written: the append it answers, its record, its size on disk, and retries of it made meanwhile. */
interface GroupCommit {
  pending: PendingAppend;
  record: CommitRecord;
  bytes: number;
  retries: PendingAppend[];
}

/**
 * A group of commits written with one write and made durable by one fdatasync, with what the
 * next group's checks need to know of it until it is in the index.
 */
interface Group {
  commits: GroupCommit[];
  /** Byte offset of its first record in the log. */
  offset: number;
  /** Per stream, its last revision once the group is stored. */
  lastRevision: Map<string, number>;
  /** Its commits by their first event's id: a retry of one made meanwhile waits for it. */
  byFirstId: Map<string, GroupCommit>;
  ids: Set<string>;
  /** Settles when written (with the write's error, if any). */
  written?: Promise<unknown>;
  /** Settles when durable, indexed and answered, or refused. */
  done?: Promise<void>;
  /** True once done: the index holds it (or it failed). */
  finished: boolean;
  failed?: unknown;
}

/** A stored commit, read back: its record and where it is in the log. */
interface StoredCommit {
  index: number;
  record: CommitRecord;
  result: AppendResult;
}

/**
 * In-process event store persisted to an append-only file. Appends are queued and written in
 * groups: every append that arrives while a group is being written goes into the next one, one
 * write and one fdatasync for the whole group (group commit). While a group's fdatasync runs, the
 * next group is checked, written and its own fdatasync started, so the disk is kept busy; a group
 * is answered once it and the group before it are durable. The global position is the 1-based
 * index of an event in the log.
 *
 * Memory does not grow with the events' payloads: the store keeps an index (per commit its offset
 * in the file and its first event; per stream its events; a hash table of event ids for idempotent
 * retries), a few bytes an event, and reads events back from the file, keeping a bounded cache of
 * recently written and read commits (`cacheBytes`).
 */
export class EmbeddedEventStore implements EventStore {
  readonly kind = 'embedded';
  /** Per commit: byte offset in the file, bytes on disk, global index (0-based) of its first event. */
  private readonly commitOffset = new NumberColumn('f64');
  private readonly commitBytes = new NumberColumn('u32');
  private readonly commitFirst = new NumberColumn('u32');
  private eventCount = 0;
  /** Stream -> global indexes (0-based) of its events, in revision order. */
  private readonly streams = new Map<string, number[]>();
  private readonly eventIds = new EventIdIndex();
  /** Decoded commits by commit index, oldest first; evicted in insertion order beyond `cacheLimit` bytes. */
  private readonly cache = new Map<number, CommitRecord>();
  private cachedBytes = 0;
  private readonly notifier = new AppendNotifier();
  private readonly subscriptions = new Set<Subscription>();
  private queue: PendingAppend[] = [];
  private writing: Promise<void> | undefined;
  /** Wakes the drain waiting on a group's fdatasync when an append is queued meanwhile. */
  private arrived: (() => void) | undefined;
  /** Where the log is cut back to once no write or sync is in progress, after one failed. */
  private cutTo: number | undefined;
  /** The group being written, encoded. */
  private readonly batch = new RecordBatch();
  private closed = false;
  private readonly counters = { commits: 0, syncs: 0 };

  private log!: LogFile;
  private indexFile = '';
  private logFile = '';

  private constructor(
    private readonly unlock: () => void,
    private readonly cacheLimit: number,
  ) {}

  static async open(options: EmbeddedStoreOptions): Promise<EmbeddedEventStore> {
    const directory = resolve(options.directory);
    mkdirSync(directory, { recursive: true });
    const file = join(directory, 'events.log');
    const unlock = acquireLock(join(directory, 'events.lock'));
    try {
      const warn = options.onWarning ?? ((w) => console.warn(`[eventstore] ${w.file}: ${w.message} (${w.droppedBytes} bytes at offset ${w.offset})`));
      const cacheBytes = options.cacheBytes ?? 8 * 1024 * 1024;
      if (!Number.isSafeInteger(cacheBytes) || cacheBytes < 0) throw new RangeError(`cacheBytes must be a non-negative integer, got ${String(cacheBytes)}`);
      const store = new EmbeddedEventStore(unlock, cacheBytes);
      store.indexFile = join(directory, 'events.idx');
      store.logFile = file;
      // The index saved at the last close covers a prefix of the log: only the records after it are scanned.
      const onIndex = options.onIndex ?? ((message) => console.warn(`[eventstore] ${message}`));
      const from = store.loadIndex(file, onIndex);
      const visit = ({ payload, offset, length }: ScannedRecord) => store.index(payload as CommitRecord, offset, length);
      try {
        store.log = await LogFile.open(file, (w) => warn({ ...w, file }), visit, from);
      } catch (error) {
        if (!(error instanceof IndexMismatch)) throw error;
        onIndex(`${store.indexFile} not used (${error.message}); scanning the whole log`);
        store.resetIndex();
        store.log = await LogFile.open(file, (w) => warn({ ...w, file }), visit, 0);
      }
      return store;
    } catch (error) {
      unlock();
      throw error;
    }
  }

  /** Commits and durable writes (each a group of commits) made since open: commits/syncs is the group-commit factor. */
  get stats(): { commits: number; syncs: number; events: number } {
    return { ...this.counters, events: this.eventCount };
  }

  append(streamId: string, events: readonly EventData[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    try {
      const prepared = prepareAppend(streamId, events, expectedRevision);
      if (this.closed) throw new StoreUnavailable('event store is closed', streamId);
      const entries = prepared.map((e) => ({ i: e.id, y: e.type, d: e.data, m: e.metadata }));
      const entriesJson = JSON.stringify(entries);
      return new Promise((resolve, reject) => {
        this.queue.push({ streamId, events: prepared, entries, entriesJson, expected: expectedRevision, resolve, reject });
        if (this.writing) this.arrived?.();
        else this.writing = this.drain();
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const indexes = this.streams.get(streamId);
    if (!indexes) throw new StreamNotFound(streamId);
    const from = options.fromRevision ?? 0;
    const to = options.maxCount === undefined ? indexes.length : Math.min(indexes.length, from + options.maxCount);
    const events: RecordedEvent[] = [];
    // A stream's events within one commit are consecutive in $all: one read per commit.
    for (let i = from; i < to; ) {
      const commit = await this.commitAt(this.commitFirst.floorIndex(indexes[i]!));
      const first = this.commitFirst.at(commit.index);
      for (let k = indexes[i]! - first; k < commit.record.e.length && i < to; k++, i++) events.push(toEvent(commit.record, k, first + k));
    }
    return events;
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    let next = this.indexAfter(options.after);
    const end = options.maxCount === undefined ? Infinity : next + options.maxCount;
    while (next < this.eventCount && next < end) {
      const page = await this.readEvents(next, Math.min(end, next + 512));
      yield* page;
      next += page.length;
    }
  }

  async headPosition(): Promise<Position | undefined> {
    if (this.closed) throw new StoreUnavailable('event store is closed');
    return this.eventCount === 0 ? undefined : String(this.eventCount);
  }

  subscribe(options: SubscribeOptions): Subscription {
    if (options.after !== undefined) this.indexAfter(options.after);
    if (this.closed) throw new StoreUnavailable('event store is closed');
    const inner = catchUpSubscription(
      {
        notifier: this.notifier,
        pollIntervalMs: 1_000,
        readPage: async (after, maxCount) => {
          const start = this.indexAfter(after);
          return this.readEvents(start, start + maxCount);
        },
      },
      options,
    );
    let stopping: Promise<void> | undefined;
    const subscription: Subscription = {
      caughtUp: inner.caughtUp,
      get position() {
        return inner.position;
      },
      stop: () => (stopping ??= inner.stop().finally(() => this.subscriptions.delete(subscription))),
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    await this.writing;
    await this.log.close();
    try {
      this.saveIndex();
    } catch (error) {
      console.warn(`[eventstore] could not save ${this.indexFile} (the next open scans the whole log): ${String(error)}`);
    }
    this.unlock();
    this.notifier.notify();
  }

  /**
   * Saves the index beside the log (atomically: a temp file renamed over the old one), with the
   * log length it covers and the checksum of the last record it covers.
   */
  private saveIndex(): void {
    const commits = this.commitFirst.length;
    if (commits === 0) return;
    const lastOffset = this.commitOffset.at(commits - 1);
    const streams = Buffer.from(JSON.stringify([...this.streams]), 'utf8');
    const ids = this.eventIds.bytes();
    const header = Buffer.from(JSON.stringify({ format: INDEX_FORMAT, logBytes: this.log.length, commits, events: this.eventCount, lastOffset, lastChecksum: recordHeaderAt(this.logFile, lastOffset)?.checksum, streamsBytes: streams.length }), 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32LE(header.length, 0);
    const temp = `${this.indexFile}.tmp`;
    writeFileSync(temp, Buffer.concat([length, header, this.commitOffset.bytes(), this.commitBytes.bytes(), this.commitFirst.bytes(), streams, ...ids]));
    renameSync(temp, this.indexFile);
  }

  /** Loads the saved index if it matches the log; returns the log offset to scan from (0: no usable index). */
  private loadIndex(logFile: string, onIndex: (message: string) => void): number {
    let buf: Buffer;
    try {
      buf = readFileSync(this.indexFile);
    } catch {
      return 0;
    }
    try {
      const headerLength = buf.readUInt32LE(0);
      const header = JSON.parse(buf.toString('utf8', 4, 4 + headerLength)) as { format: number; logBytes: number; commits: number; events: number; lastOffset: number; lastChecksum: number; streamsBytes: number };
      if (header.format !== INDEX_FORMAT) throw new Error(`format ${header.format}, expected ${INDEX_FORMAT}`);
      // The log must still hold, at the same place, the last record the index covers.
      const last = recordHeaderAt(logFile, header.lastOffset);
      if (!last || last.checksum !== header.lastChecksum || header.lastOffset + 8 + last.length !== header.logBytes) {
        throw new Error(`the log's record at byte ${header.lastOffset} is not the one it was saved with`);
      }
      let at = 4 + headerLength;
      this.commitOffset.load(buf.subarray(at), header.commits);
      at += header.commits * 8;
      this.commitBytes.load(buf.subarray(at), header.commits);
      at += header.commits * 4;
      this.commitFirst.load(buf.subarray(at), header.commits);
      at += header.commits * 4;
      for (const [stream, indexes] of JSON.parse(buf.toString('utf8', at, at + header.streamsBytes)) as Array<[string, number[]]>) this.streams.set(stream, indexes);
      at += header.streamsBytes;
      this.eventIds.load(buf.subarray(at));
      this.eventCount = header.events;
      return header.logBytes;
    } catch (error) {
      onIndex(`${this.indexFile} not used (${error instanceof Error ? error.message : String(error)}); scanning the whole log`);
      this.resetIndex();
      return 0;
    }
  }

  private resetIndex(): void {
    this.commitOffset.load(Buffer.alloc(0), 0);
    this.commitBytes.load(Buffer.alloc(0), 0);
    this.commitFirst.load(Buffer.alloc(0), 0);
    this.streams.clear();
    this.eventIds.clear();
    this.eventCount = 0;
    rmSync(this.indexFile, { force: true });
  }

  comparePositions(a: Position, b: Position): number {
    return embeddedPositionIndex(a) - embeddedPositionIndex(b);
  }

  /** Global index of the first event strictly after `position`. */
  private indexAfter(position: Position | undefined): number {
    if (position === undefined) return 0;
    const n = embeddedPositionIndex(position);
    if (n > this.eventCount) throw new InvalidPosition(position);
    return n;
  }

  /** Events with global indexes in [start, end), as far as they exist: cached commits from memory, the others read in spans. */
  private async readEvents(start: number, end: number): Promise<RecordedEvent[]> {
    end = Math.min(end, this.eventCount);
    const events: RecordedEvent[] = [];
    if (start >= end) return events;
    const commits = this.commitFirst.length;
    let c = this.commitFirst.floorIndex(start);
    const last = this.commitFirst.floorIndex(end - 1);
    while (c <= last) {
      const records: CommitRecord[] = [];
      const cached = this.cache.get(c);
      if (cached) records.push(cached);
      else {
        // A run of uncached, adjacent commits read in one go.
        let to = c;
        const offset = this.commitOffset.at(c);
        while (to + 1 <= last && to + 1 < commits && !this.cache.has(to + 1) && this.commitOffset.at(to + 1) + this.commitBytes.at(to + 1) - offset <= MAX_READ_SPAN) to++;
        const span = await this.log.readSpan(offset, this.commitOffset.at(to) + this.commitBytes.at(to) - offset);
        decodeSpan(span, (payload) => records.push(payload as CommitRecord));
      }
      for (const record of records) {
        const first = this.commitFirst.at(c);
        for (let k = Math.max(0, start - first); k < record.e.length && first + k < end; k++) events.push(toEvent(record, k, first + k));
        c++;
      }
    }
    return events;
  }

  /** One commit, from the cache or the file (then cached). */
  private async commitAt(index: number): Promise<StoredCommit> {
    let record = this.cache.get(index);
    if (!record) {
      const span = await this.log.readSpan(this.commitOffset.at(index), this.commitBytes.at(index));
      decodeSpan(span, (payload) => (record = payload as CommitRecord));
      this.remember(index, record!, this.commitBytes.at(index));
    }
    const lastEvent = this.commitFirst.at(index) + record!.e.length - 1;
    return { index, record: record!, result: { nextExpectedRevision: record!.r + record!.e.length - 1, position: String(lastEvent + 1) } };
  }

  private remember(index: number, record: CommitRecord, bytes: number): void {
    if (bytes > this.cacheLimit || this.cache.has(index)) return;
    this.cache.set(index, record);
    this.cachedBytes += bytes;
    if (this.cachedBytes <= this.cacheLimit) return;
    for (const oldest of this.cache.keys()) {
      if (this.cachedBytes <= this.cacheLimit) break;
      this.cachedBytes -= this.commitBytes.at(oldest);
      this.cache.delete(oldest);
    }
  }

  /** The stored event with this id, if any: the commit holding it and its place there. */
  private async findEvent(id: string): Promise<{ commit: StoredCommit; k: number } | undefined> {
    for (const candidate of this.eventIds.candidates(id)) {
      const commit = await this.commitAt(this.commitFirst.floorIndex(candidate));
      const k = candidate - this.commitFirst.at(commit.index);
      if (commit.record.e[k]?.i === id) return { commit, k };
    }
    return undefined;
  }

  /**
   * Writes the queued appends, a group at a time, until the queue is empty and every group is done.
   * Two groups at most are in progress: while one's fdatasync runs, the appends queued meanwhile
   * are checked (against the index and that group) and written as the next group, whose fdatasync
   * starts at once; a group is answered once it and the group before it are durable.
   */
  private async drain(): Promise<void> {
    let previous: Group | undefined;
    for (;;) {
      if (this.cutTo !== undefined) {
        await previous?.done;
        await this.log.cutBack(this.cutTo);
        this.cutTo = undefined;
      }
      if (previous?.finished) previous = undefined;
      if (this.queue.length === 0) {
        if (!previous) break;
        // Wait for the group being synced, or for appends to write meanwhile.
        const syncing = previous;
        await new Promise<void>((resolve) => {
          this.arrived = resolve;
          void syncing.done!.then(resolve);
        });
        this.arrived = undefined;
        continue;
      }
      const group = await this.checkGroup(this.takeQueue(), previous);
      if (group.commits.length === 0) continue;
      this.startGroup(group, previous);
      await group.written;
      // The next group starts once this one is written and the one before it is done.
      await previous?.done;
      previous = group;
    }
    this.writing = undefined;
  }

  private takeQueue(): PendingAppend[] {
    const queued = this.queue;
    this.queue = [];
    return queued;
  }

  /**
   * Checks queued appends in order against the stored state, the group `previous` while it is not
   * yet in the index, and the group's own earlier commits, and encodes those accepted into `batch`;
   * the others are answered (refused, or a retry of a stored commit given that commit's result).
   */
  private async checkGroup(queued: PendingAppend[], previous: Group | undefined): Promise<Group> {
    const group: Group = { commits: [], offset: 0, lastRevision: new Map(), byFirstId: new Map(), ids: new Set(), finished: false };
    const { lastRevision, byFirstId, ids: pendingIds } = group;
    /** The previous group, while the index does not hold it (it may be done during an await below). */
    const unindexed = () => (previous && !previous.finished ? previous : undefined);
    const recordedAt = new Date().toISOString();
    this.batch.clear();
    // Answers given here are held until the previous group is in the index: a caller refused because
    // of a commit of that group (or told its commit is stored there) must be able to read it at once.
    const answers: (() => void)[] = [];

    for (const p of queued) {
      const first = p.entries[0]!.i;
      const inGroup = byFirstId.get(first) ?? unindexed()?.byFirstId.get(first);
      if (inGroup) {
        if (inGroup.pending.streamId === p.streamId && sameIds(inGroup.record.e, p.entries)) inGroup.retries.push(p);
        else answers.push(() => p.reject(alreadyStored(p, 0, inGroup.pending.streamId)));
        continue;
      }
      // Ids already in the log: a retry of a whole commit gets that commit's result; anything else is refused.
      let repeated = -1;
      let settled = false;
      for (let n = 0; n < p.entries.length && repeated < 0; n++) {
        const id = p.entries[n]!.i;
        if (pendingIds.has(id) || unindexed()?.ids.has(id)) repeated = n;
        else if (this.eventIds.candidates(id).length > 0) {
          const found = await this.findEvent(id);
          if (!found) continue;
          if (n === 0 && found.k === 0) {
            const stored = found.commit.record;
            const result = found.commit.result;
            if (stored.s === p.streamId && sameIds(stored.e, p.entries)) answers.push(() => p.resolve({ ...result, alreadyStored: true }));
            else answers.push(() => p.reject(alreadyStored(p, 0, stored.s)));
            settled = true;
            break;
          }
          repeated = n;
        }
      }
      if (settled) continue;
      if (repeated >= 0) {
        const index = repeated;
        answers.push(() => p.reject(alreadyStored(p, index)));
        continue;
      }
      const last = lastRevision.get(p.streamId) ?? unindexed()?.lastRevision.get(p.streamId) ?? (this.streams.get(p.streamId)?.length ?? 0) - 1;
      try {
        checkExpectedRevision(p.streamId, p.expected, last);
      } catch (error) {
        answers.push(() => p.reject(error));
        continue;
      }
      lastRevision.set(p.streamId, last + p.entries.length);
      const record: CommitRecord = { s: p.streamId, r: last + 1, t: recordedAt, e: p.entries };
      // The same text as JSON.stringify(record), the events' part encoded when the append was made.
      const bytes = this.batch.add(`{"s":${JSON.stringify(record.s)},"r":${record.r},"t":"${recordedAt}","e":${p.entriesJson}}`);
      const commit: GroupCommit = { pending: p, record, bytes, retries: [] };
      group.commits.push(commit);
      byFirstId.set(first, commit);
      for (const e of p.entries) pendingIds.add(e.i);
    }
    const answerAll = () => {
      for (const answer of answers) answer();
    };
    const holding = unindexed();
    if (holding) void holding.done!.then(answerAll);
    else answerAll();
    return group;
  }

  /**
   * Starts writing the group encoded in `batch` (the previous group's write has ended), then its
   * fdatasync; once it and `previous` are durable, adds it to the index and answers its appends.
   * A group fails when its write or sync fails or when `previous` failed (its checks counted on
   * it): its appends are refused and the log is cut back to where the failed group began.
   */
  private startGroup(group: Group, previous: Group | undefined): void {
    group.offset = this.log.written;
    const write = this.log.write(this.batch.bytes());
    group.written = write.then(
      () => undefined,
      (error: unknown) => error,
    );
    group.done = (async () => {
      let failure: unknown;
      try {
        await write;
        await this.log.sync();
        this.counters.syncs++;
      } catch (error) {
        failure = error;
      }
      await previous?.done;
      if (failure === undefined && previous?.failed !== undefined) failure = previous.failed;
      group.finished = true;
      if (failure !== undefined) {
        group.failed = failure;
        this.cutTo = Math.min(this.cutTo ?? Infinity, group.offset);
        for (const { pending, retries } of group.commits) {
          pending.reject(failure);
          for (const r of retries) r.reject(failure);
        }
        return;
      }
      this.counters.commits += group.commits.length;
      let offset = group.offset;
      for (const { pending, record, bytes, retries } of group.commits) {
        const result = this.index(record, offset, bytes);
        this.remember(this.commitFirst.length - 1, record, bytes);
        offset += bytes;
        pending.resolve(result);
        for (const r of retries) r.resolve({ ...result, alreadyStored: true });
      }
      this.notifier.notify();
    })();
  }

  /** Adds a commit written at `offset` (`bytes` long on disk) to the index. */
  private index(record: CommitRecord, offset: number, bytes: number): AppendResult {
    let indexes = this.streams.get(record.s);
    if (!indexes) this.streams.set(record.s, (indexes = []));
    this.commitOffset.push(offset);
    this.commitBytes.push(bytes);
    this.commitFirst.push(this.eventCount);
    for (const e of record.e) {
      indexes.push(this.eventCount);
      this.eventIds.add(e.i, this.eventCount);
      this.eventCount++;
    }
    return { nextExpectedRevision: indexes.length - 1, position: String(this.eventCount) };
  }
}

/** A position's number (the count of events up to it), or InvalidPosition for a string not of that form. */
function embeddedPositionIndex(position: Position): number {
  if (typeof position !== 'string' || !/^[1-9][0-9]{0,15}$/.test(position)) throw new InvalidPosition(String(position));
  return Number(position);
}

function toEvent(record: CommitRecord, k: number, globalIndex: number): RecordedEvent {
  const e = record.e[k]!;
  return { id: e.i, type: e.y, data: e.d, metadata: e.m, streamId: record.s, revision: record.r + k, position: String(globalIndex + 1), recordedAt: record.t };
}

/** Version of the saved index's layout: an index of another version is not used (the log is scanned). */
const INDEX_FORMAT = 1;

/** The 8-byte header (length, checksum) of the record at `offset` of `file`, or undefined past its end. */
function recordHeaderAt(file: string, offset: number): { length: number; checksum: number } | undefined {
  const fd = openSync(file, 'r');
  try {
    const header = Buffer.alloc(8);
    if (readSync(fd, header, 0, 8, offset) < 8) return undefined;
    return { length: header.readUInt32LE(0), checksum: header.readUInt32LE(4) };
  } finally {
    closeSync(fd);
  }
}

function sameIds(a: CommitRecord['e'], b: CommitRecord['e']): boolean {
  return a.length === b.length && a.every((e, i) => e.i === b[i]!.i);
}

function alreadyStored(p: PendingAppend, index: number, otherStream?: string): InvalidEventData {
  const where = otherStream && otherStream !== p.streamId ? ` in stream ${otherStream}` : ' in another commit';
  return new InvalidEventData(p.streamId, p.events[index]!.type, `events[${index}].id`, `${p.events[index]!.id} is already stored${where}`);
}

export function openEmbeddedEventStore(options: EmbeddedStoreOptions): Promise<EventStore> {
  return EmbeddedEventStore.open(options);
}
