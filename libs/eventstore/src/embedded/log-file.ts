import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { StoreUnavailable } from '../errors.js';

/**
 * The embedded store's append-only file. One record per commit:
 *   [u32 length of payload][u32 crc32 of payload][payload: UTF-8 JSON]
 * A record is acknowledged only after fdatasync, so every acknowledged record is whole on disk.
 * A crash mid-write can leave a torn last record: it is detected (short or bad checksum at the very
 * end of the file) and cut off at open. A bad record with valid data after it is corruption, not a
 * torn write, and opening refuses rather than silently dropping acknowledged commits.
 */
const HEADER = 8;
const MAX_RECORD = 64 * 1024 * 1024;

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

/** Parses every whole record of `buf`; returns them and the offset where valid data ends. */
export function decodeRecords(buf: Buffer): { records: unknown[]; validLength: number; tornReason?: string } {
  const records: unknown[] = [];
  let offset = 0;
  while (offset < buf.length) {
    const remaining = buf.length - offset;
    if (remaining < HEADER) return { records, validLength: offset, tornReason: `${remaining} bytes of a record header` };
    const length = buf.readUInt32LE(offset);
    const checksum = buf.readUInt32LE(offset + 4);
    const end = offset + HEADER + length;
    if (length > MAX_RECORD || end > buf.length) {
      return { records, validLength: offset, tornReason: `a record of ${length} bytes with only ${remaining - HEADER} bytes left` };
    }
    const body = buf.subarray(offset + HEADER, end);
    if (crc32(body) !== checksum) {
      if (end === buf.length || isZeroFilled(buf.subarray(end))) {
        return { records, validLength: offset, tornReason: 'a last record whose checksum does not match' };
      }
      throw new StoreUnavailable(`event log corrupt at byte ${offset}: checksum mismatch in a record followed by more data; refusing to start rather than drop acknowledged commits`);
    }
    records.push(JSON.parse(body.toString('utf8')));
    offset = end;
  }
  return { records, validLength: offset };
}

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

/** The open log: reads everything at open, then appends batches, one fdatasync per batch. */
export class LogFile {
  private constructor(
    private readonly handle: FileHandle,
    private size: number,
  ) {}

  static async open(path: string, onWarning: (w: LogWarning) => void): Promise<{ log: LogFile; records: unknown[] }> {
    const handle = await open(path, 'a+');
    try {
      const { size } = await stat(path);
      const buf = Buffer.allocUnsafe(size);
      let read = 0;
      while (read < size) {
        const { bytesRead } = await handle.read(buf, read, size - read, read);
        if (bytesRead === 0) break;
        read += bytesRead;
      }
      const { records, validLength, tornReason } = decodeRecords(buf.subarray(0, read));
      if (tornReason !== undefined) {
        onWarning({ message: `dropped a torn final record (${tornReason}): a write was interrupted before it was acknowledged`, offset: validLength, droppedBytes: read - validLength });
        await handle.truncate(validLength);
        await handle.datasync();
      }
      return { log: new LogFile(handle, validLength), records };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Writes the records and makes them durable; on failure cuts the file back to where it was. */
  async appendDurably(records: Buffer[]): Promise<void> {
    const before = this.size;
    const total = records.reduce((n, r) => n + r.length, 0);
    try {
      let written = 0;
      while (written < total) {
        const chunk = written === 0 ? records : [Buffer.concat(records).subarray(written)];
        const { bytesWritten } = await this.handle.writev(chunk);
        written += bytesWritten;
      }
      await this.handle.datasync();
      this.size = before + total;
    } catch (error) {
      await this.handle.truncate(before).catch(() => undefined);
      throw new StoreUnavailable('could not write the event log', undefined, { cause: error });
    }
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}
