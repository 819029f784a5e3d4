/**
 * The embedded store's index saved beside its log (`events.idx`) at close, so that the next open
 * reads only the records after it: the log length it covers, the checksum of the last record it
 * covers (checked against that record's body: a log cut short, replaced or torn there is recognised),
 * then the index's columns as bytes.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { INDEX_FORMAT, recordHeaderAt } from './commit-records.js';
import type { EventIdIndex, NumberColumn } from './log-index.js';

/** What the store indexes of its log: per commit its offset, bytes and first event; per stream its events; event ids. */
export interface IndexColumns {
  commitOffset: NumberColumn;
  commitBytes: NumberColumn;
  commitFirst: NumberColumn;
  streams: Map<string, number[]>;
  eventIds: EventIdIndex;
}

/** Saves the index of the first `logBytes` of `logFile` (`events` events) atomically: a temp file renamed over the old one. */
export function saveIndexFile(indexFile: string, logFile: string, logBytes: number, events: number, columns: IndexColumns): void {
  const commits = columns.commitFirst.length;
  if (commits === 0) return;
  const lastOffset = columns.commitOffset.at(commits - 1);
  const streams = Buffer.from(JSON.stringify([...columns.streams]), 'utf8');
  const ids = columns.eventIds.bytes();
  const header = Buffer.from(JSON.stringify({ format: INDEX_FORMAT, logBytes, commits, events, lastOffset, lastChecksum: recordHeaderAt(logFile, lastOffset)?.checksum, streamsBytes: streams.length }), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(header.length, 0);
  const temp = `${indexFile}.tmp`;
  writeFileSync(temp, Buffer.concat([length, header, columns.commitOffset.bytes(), columns.commitBytes.bytes(), columns.commitFirst.bytes(), streams, ...ids]));
  renameSync(temp, indexFile);
}

/**
 * Loads the saved index into `columns` (empty) when it fits `logFile`: the events it covers and the
 * log offset to scan on from. Undefined when there is no saved index; throws when it does not fit.
 */
export function loadIndexFile(indexFile: string, logFile: string, columns: IndexColumns): { events: number; logBytes: number } | undefined {
  let buf: Buffer;
  try {
    buf = readFileSync(indexFile);
  } catch {
    return undefined;
  }
  const headerLength = buf.readUInt32LE(0);
  const header = JSON.parse(buf.toString('utf8', 4, 4 + headerLength)) as { format: number; logBytes: number; commits: number; events: number; lastOffset: number; lastChecksum: number; streamsBytes: number };
  if (header.format !== INDEX_FORMAT) throw new Error(`format ${header.format}, expected ${INDEX_FORMAT}`);
  // The log must still hold, at the same place, the last record the index covers.
  const last = recordHeaderAt(logFile, header.lastOffset);
  if (!last?.intact || last.checksum !== header.lastChecksum || header.lastOffset + 8 + last.length !== header.logBytes) {
    throw new Error(`the log's record at byte ${header.lastOffset} is not the one it was saved with`);
  }
  let at = 4 + headerLength;
  columns.commitOffset.load(buf.subarray(at), header.commits);
  at += header.commits * 8;
  columns.commitBytes.load(buf.subarray(at), header.commits);
  at += header.commits * 4;
  columns.commitFirst.load(buf.subarray(at), header.commits);
  at += header.commits * 4;
  for (const [stream, indexes] of JSON.parse(buf.toString('utf8', at, at + header.streamsBytes)) as Array<[string, number[]]>) columns.streams.set(stream, indexes);
  at += header.streamsBytes;
  columns.eventIds.load(buf.subarray(at));
  return { events: header.events, logBytes: header.logBytes };
}
