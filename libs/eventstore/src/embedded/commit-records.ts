// The embedded store's records and the pure checks on them (embedded-store.ts holds the store).
import { closeSync, openSync, readSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { InvalidEventData, InvalidPosition, WrongExpectedRevision } from '../errors.js';
import type { AppendResult, ExpectedRevision, Position, RecordedEvent } from '../port.js';
import type { PreparedEvent } from '../validation.js';
import { MAX_RECORD } from './log-file.js';

export interface CommitRecord {
  s: string;
  r: number;
  t: string;
  e: Array<{ i: string; y: string; d: unknown; m: Record<string, unknown> }>;
}

export interface PendingAppend {
  streamId: string;
  events: PreparedEvent[];
  /** The events as stored, and as JSON: encoded when the append is made, while the previous group is being written. */
  entries: CommitRecord['e'];
  entriesJson: string;
  expected: ExpectedRevision;
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
  /** The appends of one `appendMany`, queued together: checked together, written in one group (one write), or refused together. */
  unit?: PendingAppend[];
}

/** What checking one queued append against the log and the groups in progress decided. */
export type Check =
  | { kind: 'accept'; last: number }
  /** A copy of a commit in this group or the previous one: answered with it. */
  | { kind: 'copy'; of: GroupCommit }
  /** A retry of a whole commit in the log: answered with its result. */
  | { kind: 'stored'; result: AppendResult }
  | { kind: 'refused'; error: unknown };

/** A commit of a group being written: the append it answers, its record, its size on disk, and retries of it made meanwhile. */
export interface GroupCommit {
  pending: PendingAppend;
  record: CommitRecord;
  bytes: number;
  retries: PendingAppend[];
}

/**
 * A group of commits written with one write and made durable by one fdatasync, with what the
 * next group's checks need to know of it until it is in the index.
 */
export interface Group {
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
export interface StoredCommit {
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
/** A position's number (the count of events up to it), or InvalidPosition for a string not of that form. */
export function embeddedPositionIndex(position: Position): number {
  if (typeof position !== 'string' || !/^[1-9][0-9]{0,15}$/.test(position)) throw new InvalidPosition(String(position));
  return Number(position);
}

export function toEvent(record: CommitRecord, k: number, globalIndex: number): RecordedEvent {
  const e = record.e[k]!;
  return { id: e.i, type: e.y, data: e.d, metadata: e.m, streamId: record.s, revision: record.r + k, position: String(globalIndex + 1), recordedAt: record.t };
}

/** Version of the saved index's layout: an index of another version is not used (the log is scanned). */
export const INDEX_FORMAT = 1;

/**
 * The 8-byte header (length, checksum) of the record at `offset` of `file`, and whether its body is
 * all there and matches the checksum (`intact`); undefined past the file's end.
 */
export function recordHeaderAt(file: string, offset: number): { length: number; checksum: number; intact: boolean } | undefined {
  const fd = openSync(file, 'r');
  try {
    const header = Buffer.alloc(8);
    if (readSync(fd, header, 0, 8, offset) < 8) return undefined;
    const length = header.readUInt32LE(0);
    const checksum = header.readUInt32LE(4);
    if (length > MAX_RECORD) return { length, checksum, intact: false };
    const body = Buffer.alloc(length);
    const read = readSync(fd, body, 0, length, offset + 8);
    return { length, checksum, intact: read === length && crc32(body) === checksum };
  } finally {
    closeSync(fd);
  }
}

/**
 * Why the appends of one appendMany are refused together, or undefined when each may be answered as
 * checked: all accepted (written together), or all copies of stored commits (a retry of the whole).
 * Otherwise the first refusal stands for all; a commit stored already beside others that are not is
 * a stream that moved (WrongExpectedRevision), as a single append at that revision would be told.
 */
export function unitRefusal(unit: PendingAppend[], checks: Check[]): unknown {
  if (unit.length === 1) return undefined;
  const refused = checks.find((c) => c.kind === 'refused');
  if (refused) return refused.error;
  if (checks.every((c) => c.kind === 'accept') || checks.every((c) => c.kind !== 'accept')) return undefined;
  const i = checks.findIndex((c) => c.kind !== 'accept');
  const check = checks[i]!;
  const revision = check.kind === 'stored' ? check.result.nextExpectedRevision : check.kind === 'copy' ? check.of.record.r + check.of.record.e.length - 1 : -1;
  return new WrongExpectedRevision(unit[i]!.streamId, unit[i]!.expected, revision);
}

export function sameIds(a: CommitRecord['e'], b: CommitRecord['e']): boolean {
  return a.length === b.length && a.every((e, i) => e.i === b[i]!.i);
}

export function alreadyStored(p: PendingAppend, index: number, otherStream?: string): InvalidEventData {
  const where = otherStream && otherStream !== p.streamId ? ` in stream ${otherStream}` : ' in another commit';
  return new InvalidEventData(p.streamId, p.events[index]!.type, `events[${index}].id`, `${p.events[index]!.id} is already stored${where}`);
}

