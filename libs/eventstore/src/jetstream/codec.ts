import { createHash } from 'node:crypto';
import { InvalidPosition } from '../errors.js';
import type { AppendResult, Position, RecordedEvent } from '../port.js';
import type { PreparedEvent } from '../validation.js';

/**
 * The body of one JetStream message: every event of one append, with the revision of the first.
 * Revisions of the others follow from their index, so a commit is self-describing and can be
 * read alone (by a direct get of the subject's last message).
 */
export interface StoredCommit {
  v: 1;
  /** Revision of the first event. */
  r: number;
  e: StoredEvent[];
}

export interface StoredEvent {
  id: string;
  type: string;
  data: unknown;
  metadata: Record<string, unknown>;
}

/** JSON of the events of an append, computed once and reused if the append is retried at another revision. */
export function encodeEvents(events: readonly PreparedEvent[]): string {
  return JSON.stringify(events.map(({ id, type, data, metadata }) => ({ id, type, data, metadata })));
}

export function encodeCommit(firstRevision: number, eventsJson: string): string {
  return `{"v":1,"r":${firstRevision},"e":${eventsJson}}`;
}

const decoder = new TextDecoder();

/** The commit in a message body, or undefined when the message is not one of ours (a foreign publish on our subjects). */
export function decodeCommit(data: Uint8Array): StoredCommit | undefined {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(data));
  } catch {
    return undefined;
  }
  return isStoredCommit(value) ? value : undefined;
}

function isStoredCommit(value: unknown): value is StoredCommit {
  if (typeof value !== 'object' || value === null) return false;
  const { v, r, e } = value as Partial<StoredCommit>;
  if (v !== 1 || !Number.isSafeInteger(r) || (r as number) < 0 || !Array.isArray(e) || e.length === 0) return false;
  return e.every((x) => typeof x === 'object' && x !== null && typeof x.id === 'string' && typeof x.type === 'string' && typeof x.metadata === 'object' && x.metadata !== null);
}

/** Revision of the last event of a commit. */
export function lastRevisionOf(commit: StoredCommit): number {
  return commit.r + commit.e.length - 1;
}

export function appendResultOf(commit: StoredCommit, seq: number): AppendResult {
  return { nextExpectedRevision: lastRevisionOf(commit), position: formatPosition(seq, commit.e.length - 1) };
}

/** Appends the events of a commit from `fromIndex` on to `out` (no intermediate array: replay is hot). */
export function pushRecordedEvents(out: RecordedEvent[], commit: StoredCommit, streamId: string, seq: number, timestampMs: number, fromIndex = 0): void {
  const recordedAt = isoTime(timestampMs);
  for (let i = fromIndex; i < commit.e.length; i++) {
    const e = commit.e[i]!;
    out.push({ id: e.id, type: e.type, data: e.data, metadata: e.metadata, streamId, revision: commit.r + i, position: formatPosition(seq, i), recordedAt });
  }
}

let cachedSecond = Number.NaN;
let cachedSecondIso = '';

/** `Date#toISOString`, reusing the formatted second: consecutive messages mostly share it, and formatting dominates replay otherwise. */
export function isoTime(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedSecondIso = new Date(second * 1000).toISOString().slice(0, 19);
  }
  return `${cachedSecondIso}.${String(ms - second * 1000).padStart(3, '0')}Z`;
}

/**
 * The JetStream message id of a commit: a hash of the stream and the event ids, so a retried
 * append carries the same id (and JetStream deduplicates it) while any other commit, even one
 * reusing some of the ids or the same ids on another stream, gets a different one.
 */
export function commitIdOf(streamId: string, events: readonly PreparedEvent[]): string {
  const hash = createHash('sha256').update(streamId);
  for (const e of events) hash.update('\n').update(e.id);
  return hash.digest('base64url');
}

/**
 * A position is `<stream sequence>:<index of the event in its commit>`, zero-padded so that
 * positions sort as strings in the global order.
 */
const POSITION_RE = /^(\d{16}):(\d{6,9})$/;

export interface ParsedPosition {
  seq: number;
  index: number;
}

export function formatPosition(seq: number, index: number): Position {
  return `${String(seq).padStart(16, '0')}:${String(index).padStart(6, '0')}`;
}

export function parsePosition(position: Position): ParsedPosition {
  const match = typeof position === 'string' ? POSITION_RE.exec(position) : null;
  const seq = Number(match?.[1]);
  const index = Number(match?.[2]);
  if (!match || !Number.isSafeInteger(seq) || seq < 1) throw new InvalidPosition(String(position));
  return { seq, index };
}
