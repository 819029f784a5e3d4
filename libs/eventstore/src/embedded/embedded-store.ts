import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AppendNotifier, catchUpSubscription } from '../catch-up.js';
import { InvalidEventData, InvalidPosition, StoreUnavailable, StreamNotFound } from '../errors.js';
import type { AppendResult, EventData, EventStore, ExpectedRevision, Position, ReadAllOptions, ReadStreamOptions, RecordedEvent, SubscribeOptions, Subscription } from '../port.js';
import { checkExpectedRevision, prepareAppend, type PreparedEvent } from '../validation.js';
import { acquireLock, encodeRecord, LogFile, type LogWarning } from './log-file.js';

export interface EmbeddedStoreOptions {
  /** Directory holding `events.log` (created if missing). */
  directory: string;
  /** Told about a torn final record dropped at open. Default: console.warn. */
  onWarning?: (warning: LogWarning & { file: string }) => void;
}

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
  expected: ExpectedRevision;
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
}

interface CommitRef {
  streamId: string;
  ids: string[];
  result: AppendResult;
}

/**
 * In-process event store persisted to an append-only file. Appends are queued and written in
 * batches: every append that arrives while a write is in progress shares the next fdatasync
 * (group commit). Events are kept in memory for reads; the global position is the 1-based index
 * of an event in the log.
 */
export class EmbeddedEventStore implements EventStore {
  readonly kind = 'embedded';
  private readonly all: RecordedEvent[] = [];
  private readonly streams = new Map<string, number[]>();
  /** First event id of every commit, for idempotent retries. */
  private readonly commits = new Map<string, CommitRef>();
  private readonly eventIds = new Set<string>();
  private readonly notifier = new AppendNotifier();
  private queue: PendingAppend[] = [];
  private writing: Promise<void> | undefined;
  private closed = false;
  private readonly counters = { commits: 0, syncs: 0 };

  private constructor(
    private readonly log: LogFile,
    private readonly unlock: () => void,
  ) {}

  static async open(options: EmbeddedStoreOptions): Promise<EmbeddedEventStore> {
    const directory = resolve(options.directory);
    mkdirSync(directory, { recursive: true });
    const file = join(directory, 'events.log');
    const unlock = acquireLock(join(directory, 'events.lock'));
    try {
      const warn = options.onWarning ?? ((w) => console.warn(`[eventstore] ${w.file}: ${w.message} (${w.droppedBytes} bytes at offset ${w.offset})`));
      const { log, records } = await LogFile.open(file, (w) => warn({ ...w, file }));
      const store = new EmbeddedEventStore(log, unlock);
      for (const record of records) store.apply(record as CommitRecord);
      return store;
    } catch (error) {
      unlock();
      throw error;
    }
  }

  /** Commits written and fdatasync calls made since open: commits/syncs is the group-commit factor. */
  get stats(): { commits: number; syncs: number; events: number } {
    return { ...this.counters, events: this.all.length };
  }

  append(streamId: string, events: readonly EventData[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    try {
      const prepared = prepareAppend(streamId, events, expectedRevision);
      if (this.closed) throw new StoreUnavailable('event store is closed', streamId);
      return new Promise((resolve, reject) => {
        this.queue.push({ streamId, events: prepared, expected: expectedRevision, resolve, reject });
        this.writing ??= this.drain();
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
    return indexes.slice(from, to).map((i) => this.all[i]!);
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    const start = this.indexAfter(options.after);
    const end = options.maxCount === undefined ? Infinity : start + options.maxCount;
    for (let i = start; i < this.all.length && i < end; i++) yield this.all[i]!;
  }

  subscribe(options: SubscribeOptions): Subscription {
    if (options.after !== undefined) this.indexAfter(options.after);
    return catchUpSubscription(
      {
        notifier: this.notifier,
        pollIntervalMs: 1_000,
        readPage: async (after, maxCount) => {
          const start = this.indexAfter(after);
          return this.all.slice(start, start + maxCount);
        },
      },
      options,
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writing;
    await this.log.close();
    this.unlock();
    this.notifier.notify();
  }

  /** Index in `all` of the first event strictly after `position`. */
  private indexAfter(position: Position | undefined): number {
    if (position === undefined) return 0;
    if (!/^[1-9][0-9]{0,15}$/.test(position)) throw new InvalidPosition(position);
    const n = Number(position);
    if (n > this.all.length) throw new InvalidPosition(position);
    return n;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      await this.writeBatch(batch);
    }
    this.writing = undefined;
  }

  /** Checks a batch in order against the stored state plus the batch's own earlier commits, writes it with one fdatasync, then applies it. */
  private async writeBatch(batch: PendingAppend[]): Promise<void> {
    const lastRevision = new Map<string, number>();
    const pendingCommits = new Map<string, { ids: string[]; streamId: string; waiters: PendingAppend[]; record: CommitRecord }>();
    const pendingIds = new Set<string>();
    const accepted: Array<{ pending: PendingAppend; record: CommitRecord }> = [];
    const buffers: Buffer[] = [];
    const recordedAt = new Date().toISOString();

    for (const p of batch) {
      const ids = p.events.map((e) => e.id);
      const first = ids[0]!;
      const stored = this.commits.get(first);
      const inBatch = pendingCommits.get(first);
      if (stored || inBatch) {
        const same = (stored ?? inBatch)!;
        if (same.streamId === p.streamId && sameIds(same.ids, ids)) {
          if (stored) p.resolve(stored.result);
          else inBatch!.waiters.push(p);
        } else p.reject(alreadyStored(p, 0, same.streamId));
        continue;
      }
      const repeated = ids.findIndex((id) => this.eventIds.has(id) || pendingIds.has(id));
      if (repeated >= 0) {
        p.reject(alreadyStored(p, repeated));
        continue;
      }
      const last = lastRevision.get(p.streamId) ?? (this.streams.get(p.streamId)?.length ?? 0) - 1;
      try {
        checkExpectedRevision(p.streamId, p.expected, last);
      } catch (error) {
        p.reject(error);
        continue;
      }
      lastRevision.set(p.streamId, last + p.events.length);
      const record: CommitRecord = { s: p.streamId, r: last + 1, t: recordedAt, e: p.events.map((e) => ({ i: e.id, y: e.type, d: e.data, m: e.metadata })) };
      buffers.push(encodeRecord(record));
      accepted.push({ pending: p, record });
      pendingCommits.set(first, { ids, streamId: p.streamId, waiters: [], record });
      for (const id of ids) pendingIds.add(id);
    }
    if (accepted.length === 0) return;

    try {
      await this.log.appendDurably(buffers);
      this.counters.syncs++;
      this.counters.commits += accepted.length;
    } catch (error) {
      for (const { pending } of accepted) pending.reject(error);
      for (const c of pendingCommits.values()) for (const w of c.waiters) w.reject(error);
      return;
    }
    for (const { pending, record } of accepted) {
      const result = this.apply(record);
      pending.resolve(result);
      for (const w of pendingCommits.get(record.e[0]!.i)!.waiters) w.resolve(result);
    }
    this.notifier.notify();
  }

  private apply(record: CommitRecord): AppendResult {
    let indexes = this.streams.get(record.s);
    if (!indexes) this.streams.set(record.s, (indexes = []));
    record.e.forEach((e, k) => {
      const index = this.all.length;
      this.all.push({ id: e.i, type: e.y, data: e.d, metadata: e.m, streamId: record.s, revision: record.r + k, position: String(index + 1), recordedAt: record.t });
      indexes.push(index);
      this.eventIds.add(e.i);
    });
    const result: AppendResult = { nextExpectedRevision: indexes.length - 1, position: String(this.all.length) };
    this.commits.set(record.e[0]!.i, { streamId: record.s, ids: record.e.map((e) => e.i), result });
    return result;
  }
}

function sameIds(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

function alreadyStored(p: PendingAppend, index: number, otherStream?: string): InvalidEventData {
  const where = otherStream && otherStream !== p.streamId ? ` in stream ${otherStream}` : ' in another commit';
  return new InvalidEventData(p.streamId, p.events[index]!.type, `events[${index}].id`, `${p.events[index]!.id} is already stored${where}`);
}

export function openEmbeddedEventStore(options: EmbeddedStoreOptions): Promise<EventStore> {
  return EmbeddedEventStore.open(options);
}
