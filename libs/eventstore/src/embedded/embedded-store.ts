import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AppendNotifier, catchUpSubscription } from '../catch-up.js';
import { InvalidPosition, StoreRefused, StoreUnavailable, StreamNotFound } from '../errors.js';
import type { AppendResult, EventData, EventStore, ExpectedRevision, Position, ReadAllOptions, ReadStreamOptions, RecordedEvent, StreamAppend, SubscribeOptions, Subscription } from '../port.js';
import { checkExpectedRevision, prepareAppend, prepareAppendMany, type PreparedEvent } from '../validation.js';
import { alreadyStored, type Check, type CommitRecord, embeddedPositionIndex, type Group, type GroupCommit, type PendingAppend, sameIds, type StoredCommit, toEvent, unitRefusal } from './commit-records.js';
import { acquireLock, decodeSpan, IndexMismatch, LogFile, RecordBatch, type LogWarning, type ScannedRecord } from './log-file.js';
import { EventIdIndex, NumberColumn } from './log-index.js';
import { type IndexColumns, loadIndexFile, saveIndexFile } from './saved-index.js';
import { storedEvents } from './stored-bytes.js';

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
  /**
   * Read the log only, beside the process that writes it (`npm start`): the lock is not taken and
   * nothing is written (no directory, log or index made, no torn record cut, appends refused with
   * StoreRefused `access_denied`). The commits the writer adds are read as they land, each once it
   * is whole in the file: the file is looked at every `followIntervalMs`.
   */
  readOnly?: boolean;
  /** How often a read-only store looks for commits the writer added. Default 100 ms. */
  followIntervalMs?: number;
}

/** At most this many bytes are read from the file at once for a page of $all (a single larger commit is read whole). */
const MAX_READ_SPAN = 4 * 1024 * 1024;

/** What one commit looks like on disk. Short keys: the log holds many of them. */
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
  /** Read-only: what looks for the writer's new commits, and the look in progress. */
  private follower: NodeJS.Timeout | undefined;
  private following: Promise<void> | undefined;

  private constructor(
    private readonly unlock: () => void,
    private readonly cacheLimit: number,
    private readonly readOnly = false,
  ) {}

  static async open(options: EmbeddedStoreOptions): Promise<EmbeddedEventStore> {
    const directory = resolve(options.directory);
    const file = join(directory, 'events.log');
    const readOnly = options.readOnly === true;
    if (!readOnly) mkdirSync(directory, { recursive: true });
    const unlock = readOnly ? () => undefined : acquireLock(join(directory, 'events.lock'));
    try {
      const warn = options.onWarning ?? ((w) => console.warn(`[eventstore] ${w.file}: ${w.message} (${w.droppedBytes} bytes at offset ${w.offset})`));
      const cacheBytes = options.cacheBytes ?? 8 * 1024 * 1024;
      if (!Number.isSafeInteger(cacheBytes) || cacheBytes < 0) throw new RangeError(`cacheBytes must be a non-negative integer, got ${String(cacheBytes)}`);
      const store = new EmbeddedEventStore(unlock, cacheBytes, readOnly);
      store.indexFile = join(directory, 'events.idx');
      store.logFile = file;
      // The index saved at the last close covers a prefix of the log: only the records after it are scanned.
      const onIndex = options.onIndex ?? ((message) => console.warn(`[eventstore] ${message}`));
      const from = store.loadIndex(file, onIndex);
      const visit = ({ payload, offset, length }: ScannedRecord) => store.index(payload as CommitRecord, offset, length);
      const openLog = (at: number) => (readOnly ? LogFile.openToRead(file, visit, at) : LogFile.open(file, (w) => warn({ ...w, file }), visit, at));
      try {
        store.log = await openLog(from);
      } catch (error) {
        if (!(error instanceof IndexMismatch)) throw error;
        onIndex(`${store.indexFile} not used (${error.message}); scanning the whole log`);
        store.resetIndex();
        store.log = await openLog(0);
      }
      if (readOnly) {
        store.follower = setInterval(() => void store.readOn().catch(() => undefined), options.followIntervalMs ?? 100);
        store.follower.unref();
      }
      return store;
    } catch (error) {
      unlock();
      throw error;
    }
  }

  /**
   * Read-only: indexes the commits the writer added since the last look (one look at a time) and
   * wakes the subscriptions. Rejects when the log cannot be read on; subscriptions retry.
   */
  private readOn(): Promise<void> {
    return (this.following ??= (async () => {
      try {
        const visit = ({ payload, offset, length }: ScannedRecord) => this.index(payload as CommitRecord, offset, length);
        if (!this.closed && (await this.log.readOn(visit)) > 0) this.notifier.notify();
      } finally {
        this.following = undefined;
      }
    })());
  }

  /** Commits and durable writes (each a group of commits) made since open: commits/syncs is the group-commit factor. */
  get stats(): { commits: number; syncs: number; events: number } {
    return { ...this.counters, events: this.eventCount };
  }

  append(streamId: string, events: readonly EventData[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    try {
      const prepared = prepareAppend(streamId, events, expectedRevision);
      this.checkWritable(streamId);
      const [appended] = this.enqueue([{ streamId, prepared, expected: expectedRevision }]);
      return appended!;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The commits go into one group, so one write (one record each, written and synced together), or are all refused. */
  appendMany(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    try {
      const prepared = prepareAppendMany(appends);
      this.checkWritable(appends[0]!.streamId);
      return Promise.all(this.enqueue(appends.map((a, i) => ({ streamId: a.streamId, prepared: prepared[i]!, expected: a.expectedRevision }))));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private checkWritable(streamId: string): void {
    if (this.closed) throw new StoreUnavailable('event store is closed', streamId);
    if (this.readOnly) throw new StoreRefused(`the event store at ${this.logFile} is open read-only`, 'access_denied', streamId);
  }

  private enqueue(appends: { streamId: string; prepared: PreparedEvent[]; expected: ExpectedRevision }[]): Promise<AppendResult>[] {
    const unit: PendingAppend[] | undefined = appends.length > 1 ? [] : undefined;
    const answers = appends.map(
      ({ streamId, prepared, expected }) =>
        new Promise<AppendResult>((resolve, reject) => {
          const entries = prepared.map((e) => ({ i: e.id, y: e.type, d: e.data, m: e.metadata }));
          const pending: PendingAppend = { streamId, events: prepared, entries, entriesJson: JSON.stringify(entries), expected, resolve, reject, ...(unit ? { unit } : {}) };
          unit?.push(pending);
          this.queue.push(pending);
        }),
    );
    if (this.writing) this.arrived?.();
    else this.writing = this.drain();
    return answers;
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
      const page = await this.readEvents(next, Math.min(end, next + 512), options.stored === true);
      yield* page;
      next += page.length;
    }
  }

  async headPosition(): Promise<Position | undefined> {
    if (this.closed) throw new StoreUnavailable('event store is closed');
    if (this.readOnly) await this.readOn();
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
          if (this.readOnly) await this.readOn();
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
    clearInterval(this.follower);
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    await this.writing;
    await this.following?.catch(() => undefined);
    await this.log.close();
    if (this.readOnly) return this.notifier.notify();
    try {
      this.saveIndex();
    } catch (error) {
      console.warn(`[eventstore] could not save ${this.indexFile} (the next open scans the whole log): ${String(error)}`);
    }
    this.unlock();
    this.notifier.notify();
  }

  /** The index as saved beside the log. */
  private get columns(): IndexColumns {
    return { commitOffset: this.commitOffset, commitBytes: this.commitBytes, commitFirst: this.commitFirst, streams: this.streams, eventIds: this.eventIds };
  }

  private saveIndex(): void {
    saveIndexFile(this.indexFile, this.logFile, this.log.length, this.eventCount, this.columns);
  }

  /** Loads the saved index if it matches the log; returns the log offset to scan from (0: no usable index). */
  private loadIndex(logFile: string, onIndex: (message: string) => void): number {
    try {
      const loaded = loadIndexFile(this.indexFile, logFile, this.columns);
      if (!loaded) return 0;
      this.eventCount = loaded.events;
      return loaded.logBytes;
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
    if (!this.readOnly) rmSync(this.indexFile, { force: true });
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

  /**
   * Events with global indexes in [start, end), as far as they exist: cached commits from memory,
   * the others read in spans (those with their stored bytes when `stored`).
   */
  private async readEvents(start: number, end: number, stored = false): Promise<RecordedEvent[]> {
    end = Math.min(end, this.eventCount);
    const events: RecordedEvent[] = [];
    if (start >= end) return events;
    const commits = this.commitFirst.length;
    let c = this.commitFirst.floorIndex(start);
    const last = this.commitFirst.floorIndex(end - 1);
    while (c <= last) {
      const records: CommitRecord[] = [];
      const bodies: (Buffer | undefined)[] = [];
      const cached = this.cache.get(c);
      if (cached) records.push(cached);
      else {
        // A run of uncached, adjacent commits read in one go.
        let to = c;
        const offset = this.commitOffset.at(c);
        while (to + 1 <= last && to + 1 < commits && !this.cache.has(to + 1) && this.commitOffset.at(to + 1) + this.commitBytes.at(to + 1) - offset <= MAX_READ_SPAN) to++;
        const span = await this.log.readSpan(offset, this.commitOffset.at(to) + this.commitBytes.at(to) - offset);
        decodeSpan(span, (payload, _offset, body) => {
          records.push(payload as CommitRecord);
          if (stored) bodies.push(body);
        });
      }
      records.forEach((record, r) => {
        const first = this.commitFirst.at(c);
        const body = bodies[r];
        const bytes = body && storedEvents(body, record.e.length);
        for (let k = Math.max(0, start - first); k < record.e.length && first + k < end; k++) {
          const event = toEvent(record, k, first + k);
          if (bytes) event.stored = bytes[k]!;
          events.push(event);
        }
        c++;
      });
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
    /** The previous group, while the index does not hold it (it may be done during an await below). */
    const unindexed = () => (previous && !previous.finished ? previous : undefined);
    const recordedAt = new Date().toISOString();
    this.batch.clear();
    // Answers given here are held until the previous group is in the index: a caller refused because
    // of a commit of that group (or told its commit is stored there) must be able to read it at once.
    const answers: (() => void)[] = [];

    for (let q = 0; q < queued.length; ) {
      const p = queued[q]!;
      // The appends of one appendMany are queued one after another.
      const unit = p.unit ?? [p];
      q += unit.length;
      const checks: Check[] = [];
      for (const part of unit) checks.push(await this.check(part, group, unindexed()));
      const refusal = unitRefusal(unit, checks);
      unit.forEach((part, i) => {
        const check = checks[i]!;
        if (refusal !== undefined) answers.push(() => part.reject(refusal));
        else if (check.kind === 'copy') check.of.retries.push(part);
        else if (check.kind === 'stored') answers.push(() => part.resolve({ ...check.result, alreadyStored: true }));
        else if (check.kind === 'refused') answers.push(() => part.reject(check.error));
        else this.addToGroup(group, part, check.last, recordedAt);
      });
    }
    const answerAll = () => {
      for (const answer of answers) answer();
    };
    const holding = unindexed();
    if (holding) void holding.done!.then(answerAll);
    else answerAll();
    return group;
  }

  /** Checks one append against the stored state, the group `previous` while it is not yet in the index, and `group`'s own earlier commits. Changes nothing. */
  private async check(p: PendingAppend, group: Group, previous: Group | undefined): Promise<Check> {
    const first = p.entries[0]!.i;
    const inGroup = group.byFirstId.get(first) ?? previous?.byFirstId.get(first);
    if (inGroup) {
      if (inGroup.pending.streamId === p.streamId && sameIds(inGroup.record.e, p.entries)) return { kind: 'copy', of: inGroup };
      return { kind: 'refused', error: alreadyStored(p, 0, inGroup.pending.streamId) };
    }
    // Ids already in the log: a retry of a whole commit gets that commit's result; anything else is refused.
    for (let n = 0; n < p.entries.length; n++) {
      const id = p.entries[n]!.i;
      if (group.ids.has(id) || previous?.ids.has(id)) return { kind: 'refused', error: alreadyStored(p, n) };
      if (this.eventIds.candidates(id).length === 0) continue;
      const found = await this.findEvent(id);
      if (!found) continue;
      if (n === 0 && found.k === 0) {
        const stored = found.commit.record;
        if (stored.s === p.streamId && sameIds(stored.e, p.entries)) return { kind: 'stored', result: found.commit.result };
        return { kind: 'refused', error: alreadyStored(p, 0, stored.s) };
      }
      return { kind: 'refused', error: alreadyStored(p, n) };
    }
    const last = this.lastRevisionOf(p.streamId, group, previous);
    try {
      checkExpectedRevision(p.streamId, p.expected, last);
    } catch (error) {
      return { kind: 'refused', error };
    }
    return { kind: 'accept', last };
  }

  private lastRevisionOf(streamId: string, group: Group, previous: Group | undefined): number {
    return group.lastRevision.get(streamId) ?? previous?.lastRevision.get(streamId) ?? (this.streams.get(streamId)?.length ?? 0) - 1;
  }

  /** Encodes an accepted append into `batch` as the group's next commit. */
  private addToGroup(group: Group, p: PendingAppend, last: number, recordedAt: string): void {
    group.lastRevision.set(p.streamId, last + p.entries.length);
    const record: CommitRecord = { s: p.streamId, r: last + 1, t: recordedAt, e: p.entries };
    // The same text as JSON.stringify(record), the events' part encoded when the append was made.
    const bytes = this.batch.add(`{"s":${JSON.stringify(record.s)},"r":${record.r},"t":"${recordedAt}","e":${p.entriesJson}}`);
    const commit: GroupCommit = { pending: p, record, bytes, retries: [] };
    group.commits.push(commit);
    group.byFirstId.set(p.entries[0]!.i, commit);
    for (const e of p.entries) group.ids.add(e.i);
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

export function openEmbeddedEventStore(options: EmbeddedStoreOptions): Promise<EventStore> {
  return EmbeddedEventStore.open(options);
}
