import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { StoreUnavailable } from '../errors.js';

/**
 * The embedded store's append-only file. One record per commit:
 *   [u32 length of payload][u32 crc32 of payload][payload: UTF-8 JSON]
 * A record is acknowledged only after an fdatasync started after it was written has returned, so
 * every acknowledged record is whole on disk.
 * A crash mid-write can leave a torn last record: it is detected (short or bad checksum at the very
 * end of the file) and cut off at open. A bad record with valid data after it is corruption, not a
 * torn write, and opening refuses rather than silently dropping acknowledged commits. An open reads
 * only what the saved index does not cover (see saved-index.ts); a record it covers is checked
 * whenever it is read, and a bad one is refused there as corruption.
 */
const HEADER = 8;
export const MAX_RECORD = 64 * 1024 * 1024;

export interface LogWarning {
  message: string;
  offset: number;
  droppedBytes: number;
}

export function encodeRecord(payload: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  const record = Buffer.allocUnsafe(HEADER + body.length);
  record.writeUInt32LE(body.length, 0);
  record.writeUInt32LE(crc32(body), 4);
  body.copy(record, HEADER);
  return record;
}

/**
 * Records encoded back to back into one buffer, reused from group to group: a group of commits
 * goes to the file in one write. Not to be cleared while a write of its bytes is in progress.
 */
export class RecordBatch {
  private buf = Buffer.allocUnsafe(BATCH_BUFFER);
  private used = 0;

  /** Appends a record whose payload is `json` (a JSON text); returns the record's size on disk. */
  add(json: string): number {
    // At most 3 bytes of UTF-8 per UTF-16 code unit.
    const room = HEADER + json.length * 3;
    if (this.used + room > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.used + room));
      this.buf.copy(bigger, 0, 0, this.used);
      this.buf = bigger;
    }
    const start = this.used;
    const length = this.buf.write(json, start + HEADER, 'utf8');
    this.buf.writeUInt32LE(length, start);
    this.buf.writeUInt32LE(crc32(this.buf.subarray(start + HEADER, start + HEADER + length)), start + 4);
    this.used += HEADER + length;
    return HEADER + length;
  }

  get length(): number {
    return this.used;
  }

  /** The records added since the last clear. */
  bytes(): Buffer {
    return this.buf.subarray(0, this.used);
  }

  clear(): void {
    this.used = 0;
    // A group of huge commits does not keep its buffer for good.
    if (this.buf.length > 16 * BATCH_BUFFER) this.buf = Buffer.allocUnsafe(BATCH_BUFFER);
  }
}

const BATCH_BUFFER = 64 * 1024;

function isZeroFilled(buf: Buffer): boolean {
  for (const b of buf) if (b !== 0) return false;
  return true;
}

/** An exclusive lock on the data directory, so two processes never append to one file. */
export function acquireLock(lockPath: string): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          unlinkSync(lockPath);
        } catch {
          /* already gone */
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readLockHolder(lockPath);
      if (holder !== undefined && holder !== process.pid && isAlive(holder)) {
        throw new StoreUnavailable(`event store directory is in use by process ${holder} (${lockPath})`);
      }
      // Stale lock of a process that died (or of this very process, reopened after a crash in a test).
      unlinkSync(lockPath);
    }
  }
  throw new StoreUnavailable(`could not lock ${lockPath}`);
}

function readLockHolder(lockPath: string): number | undefined {
  try {
    const fd = openSync(lockPath, 'r');
    const buf = Buffer.alloc(32);
    const n = readSync(fd, buf, 0, 32, 0);
    closeSync(fd);
    const pid = Number(buf.subarray(0, n).toString('utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A whole record found while scanning the file at open: where it starts, its size on disk, its payload. */
export interface ScannedRecord {
  offset: number;
  length: number;
  payload: unknown;
}

/** Bytes read at a time while scanning at open: memory stays at about this much whatever the file's size. */
const SCAN_CHUNK = 8 * 1024 * 1024;

/**
 * The open log: scanned once at open (record by record, a chunk at a time, never whole in memory),
 * then read by offset and appended in batches: one write per batch, made durable by an fdatasync
 * that may run while the next batch is written.
 */
export class LogFile {
  private constructor(
    handle: FileHandle | undefined,
    private size: number,
    /** Opened by `openToRead`: another process writes the file, at this path. */
    private readonly readOnly?: string,
  ) {
    this.end = size;
    this.opened = handle;
  }

  /** The open file; undefined only for a reader of a log its writer has not made yet. */
  private opened: FileHandle | undefined;

  private get handle(): FileHandle {
    if (!this.opened) throw new StoreUnavailable('the event log is not there yet');
    return this.opened;
  }

  /** Bytes written, durable or not: where the next record will be written. */
  private end: number;

  /** Bytes of whole, durable records. */
  get length(): number {
    return this.size;
  }

  /** Bytes written, durable or not: where the next record will be written. */
  get written(): number {
    return this.end;
  }

  /**
   * Opens (creating) the file and hands every whole record from byte `from` on, its checksum checked,
   * in file order, to `visit`. `from` is a record boundary the caller knows (the end of what a saved
   * index covers, whose last record it has checked): the records before it are not read at all, so an
   * open costs what was written since the index was saved, not the log's length (each record's
   * checksum is checked again whenever it is read). A torn final record is cut off with a warning.
   */
  static async open(path: string, onWarning: (w: LogWarning) => void, visit: (record: ScannedRecord) => void, from = 0): Promise<LogFile> {
    const handle = await open(path, 'a+');
    try {
      const { size } = await stat(path);
      const validLength = await scan(handle, size, from, visit, from);
      if (validLength < size) {
        const reason = await tornReason(handle, size, validLength);
        onWarning({ message: `dropped a torn final record (${reason}): a write was interrupted before it was acknowledged`, offset: validLength, droppedBytes: size - validLength });
        await handle.truncate(validLength);
        await handle.datasync();
      }
      return new LogFile(handle, validLength);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /**
   * Opens the file of a log another process may be writing, to read only: nothing is ever written,
   * created or cut. Hands every whole record from byte `from` on to `visit` as `open` does; what
   * follows the last whole record (a commit being written, or the torn record of a writer that
   * died, which the writer cuts off at its next open) is left for `readOn`. No file yet: an empty
   * log, until its writer makes it.
   */
  static async openToRead(path: string, visit: (record: ScannedRecord) => void, from = 0): Promise<LogFile> {
    const handle = await openIfThere(path);
    if (!handle) {
      if (from > 0) throw new IndexMismatch(`there is no log at ${path}`);
      return new LogFile(undefined, 0, path);
    }
    try {
      const { size } = await handle.stat();
      return new LogFile(handle, await scan(handle, size, from, visit, from), path);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /**
   * A log opened to read: hands the whole records the writer added since the last call to `visit`,
   * in file order (every checksum checked); returns how many. A record still being written is
   * left for a later call. Throws StoreUnavailable when the file is now shorter than the records
   * read (the writer cut back a write whose fdatasync failed, after this reader had read it).
   */
  async readOn(visit: (record: ScannedRecord) => void): Promise<number> {
    if (this.readOnly === undefined) throw new Error('readOn is for a log opened to read');
    this.opened ??= await openIfThere(this.readOnly);
    if (!this.opened) return 0;
    const { size } = await this.handle.stat();
    if (size < this.size) throw new StoreUnavailable(`the event log is ${size} bytes long now, shorter than the ${this.size} bytes of whole records already read: it was cut back`);
    if (size === this.size) return 0;
    let count = 0;
    // Records handed over before a failure (corruption further on) are not handed over again.
    let read = this.size;
    try {
      read = await scan(this.handle, size, this.size, (record) => (count++, visit(record), (read = record.offset + record.length)), this.size);
    } finally {
      this.size = this.end = read;
    }
    return count;
  }

  /** Reads `length` bytes at `offset`: one or more whole records written earlier. */
  async readSpan(offset: number, length: number): Promise<Buffer> {
    const buf = Buffer.allocUnsafe(length);
    let read = 0;
    while (read < length) {
      const { bytesRead } = await this.handle.read(buf, read, length - read, offset + read);
      if (bytesRead === 0) throw new StoreUnavailable(`event log ends before byte ${offset + length}`);
      read += bytesRead;
    }
    return buf;
  }

  /**
   * Writes whole records at the end of the file; they are durable once a `sync` started after this
   * returned has returned. One write at a time (the next starts after this one has returned).
   */
  async write(records: Buffer): Promise<void> {
    try {
      for (let written = 0; written < records.length; ) {
        const { bytesWritten } = await this.handle.write(records, written, records.length - written);
        written += bytesWritten;
        this.end += bytesWritten;
      }
    } catch (error) {
      throw new StoreUnavailable('could not write the event log', undefined, { cause: error });
    }
  }

  /** Makes every record written before the call durable (fdatasync). Several may be in progress. */
  async sync(): Promise<void> {
    const upTo = this.end;
    try {
      await this.handle.datasync();
    } catch (error) {
      throw new StoreUnavailable('could not write the event log', undefined, { cause: error });
    }
    this.size = Math.max(this.size, upTo);
  }

  /** After a failed write or sync, with none in progress: cuts the file back to `length` bytes (what follows was never acknowledged). */
  async cutBack(length: number): Promise<void> {
    await this.handle.truncate(length).catch(() => undefined);
    this.end = length;
    this.size = Math.min(this.size, length);
  }

  async close(): Promise<void> {
    await this.opened?.close();
  }
}

/** The file at `path` opened to read, or undefined when there is none. */
async function openIfThere(path: string): Promise<FileHandle | undefined> {
  try {
    return await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new StoreUnavailable(`could not read the event log ${path}`, undefined, { cause: error });
  }
}

/** The saved index does not fit this log (the caller scans the whole log instead). */
export class IndexMismatch extends Error {}

/** Decodes the records of `buf`, a span of whole records read back from the file. */
export function decodeSpan(buf: Buffer, visit: (payload: unknown, offset: number, body: Buffer) => void): void {
  let offset = 0;
  while (offset < buf.length) {
    const length = buf.readUInt32LE(offset);
    const body = buf.subarray(offset + HEADER, offset + HEADER + length);
    if (body.length !== length || crc32(body) !== buf.readUInt32LE(offset + 4)) {
      throw new StoreUnavailable(`event log corrupt: the record read back at byte ${offset} of a span does not match its checksum`);
    }
    visit(JSON.parse(body.toString('utf8')), offset, body);
    offset += HEADER + length;
  }
}

/** Every record of a whole log file's bytes (tools and tests that read or rewrite a copy of the log). */
export function decodeRecords(buf: Buffer): { records: unknown[] } {
  const records: unknown[] = [];
  decodeSpan(buf, (payload) => records.push(payload));
  return { records };
}

/**
 * Visits every whole, checksummed record from `from`, reading the file's first `size` bytes from
 * byte `start` (0, or a record boundary known not to be after `from`); returns where valid data
 * ends. Throws on a bad record followed by more data.
 */
async function scan(handle: FileHandle, size: number, from: number, visit: (record: ScannedRecord) => void, start: number): Promise<number> {
  let buf = Buffer.allocUnsafe(0);
  /** File offset of buf[0]. */
  let base = start;
  let at = 0;
  const checkBoundary = (end: number) => {
    if (end < from) throw new IndexMismatch(`the log's valid records end at byte ${end}, before byte ${from}`);
  };
  for (;;) {
    if (buf.length - at < HEADER || HEADER + buf.readUInt32LE(at) > buf.length - at) {
      // Not a whole record left in the buffer: read on, keeping the partial record.
      const fileAt = base + buf.length;
      if (fileAt >= size) return (checkBoundary(base + at), base + at);
      const wanted = buf.length - at >= HEADER ? HEADER + buf.readUInt32LE(at) : 0;
      if (wanted > MAX_RECORD + HEADER) return (checkBoundary(base + at), base + at);
      const chunk = Math.min(size - fileAt, Math.max(SCAN_CHUNK, wanted));
      const next = Buffer.allocUnsafe(buf.length - at + chunk);
      buf.copy(next, 0, at);
      let read = 0;
      while (read < chunk) {
        const { bytesRead } = await handle.read(next, buf.length - at + read, chunk - read, fileAt + read);
        if (bytesRead === 0) break;
        read += bytesRead;
      }
      base += at;
      buf = next.subarray(0, next.length - (chunk - read));
      at = 0;
      if (read === 0) return (checkBoundary(base), base);
      continue;
    }
    const length = buf.readUInt32LE(at);
    if (length > MAX_RECORD) return (checkBoundary(base + at), base + at);
    const body = buf.subarray(at + HEADER, at + HEADER + length);
    if (crc32(body) !== buf.readUInt32LE(at + 4)) {
      const end = base + at + HEADER + length;
      if (end === size || (await zeroFilled(handle, end, size))) return (checkBoundary(base + at), base + at);
      throw new StoreUnavailable(`event log corrupt at byte ${base + at}: checksum mismatch in a record followed by more data; refusing to start rather than drop acknowledged commits`);
    }
    const offset = base + at;
    if (offset >= from) visit({ offset, length: HEADER + length, payload: JSON.parse(body.toString('utf8')) });
    else if (offset + HEADER + length > from) throw new IndexMismatch(`byte ${from} is inside the record at byte ${offset}`);
    at += HEADER + length;
  }
}

async function tornReason(handle: FileHandle, size: number, validLength: number): Promise<string> {
  const remaining = size - validLength;
  if (remaining < HEADER) return `${remaining} bytes of a record header`;
  const header = Buffer.alloc(HEADER);
  await handle.read(header, 0, HEADER, validLength);
  const length = header.readUInt32LE(0);
  if (length > MAX_RECORD || validLength + HEADER + length > size) return `a record of ${length} bytes with only ${remaining - HEADER} bytes left`;
  return 'a last record whose checksum does not match';
}

async function zeroFilled(handle: FileHandle, from: number, size: number): Promise<boolean> {
  const buf = Buffer.allocUnsafe(Math.min(SCAN_CHUNK, size - from));
  for (let at = from; at < size; ) {
    const { bytesRead } = await handle.read(buf, 0, Math.min(buf.length, size - at), at);
    if (bytesRead === 0) return true;
    if (!isZeroFilled(buf.subarray(0, bytesRead))) return false;
    at += bytesRead;
  }
  return true;
}
