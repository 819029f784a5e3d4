import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Position } from '@agora/eventstore';

/** Where a consumer keeps the position of the last event it handled, to resume strictly after it. */
export interface CheckpointStore {
  /** The saved position, or undefined when `name` has none yet (start from the beginning). */
  load(name: string): Promise<Position | undefined>;
  save(name: string, position: Position): Promise<void>;
}

const NAME_RE = /^[A-Za-z0-9_.-]{1,200}$/;

/** Checkpoint names are file names: letters, digits, `_`, `-`, `.`; not `.` or `..`. */
export function assertValidCheckpointName(name: string): void {
  if (typeof name !== 'string' || !NAME_RE.test(name) || /^\.+$/.test(name)) {
    throw new TypeError(`invalid checkpoint name ${JSON.stringify(name)}: use 1 to 200 letters, digits, '_', '-' or '.'`);
  }
}

function assertValidPosition(name: string, position: Position): void {
  if (typeof position !== 'string' || position.length === 0) throw new TypeError(`checkpoint ${name}: position must be a non-empty string`);
}

export class MemoryCheckpointStore implements CheckpointStore {
  private readonly positions = new Map<string, Position>();

  async load(name: string): Promise<Position | undefined> {
    assertValidCheckpointName(name);
    return this.positions.get(name);
  }

  async save(name: string, position: Position): Promise<void> {
    assertValidCheckpointName(name);
    assertValidPosition(name, position);
    this.positions.set(name, position);
  }
}

interface CheckpointFile {
  name: string;
  position: Position;
  savedAt: string;
}

/**
 * One small JSON file per name, `<directory>/<name>.checkpoint.json`, replaced atomically (write a
 * temp file, fsync it, rename it over the old one, fsync the directory): a crash leaves the old
 * checkpoint or the new one, never a torn file. Saves of one name are applied in call order.
 */
export class FileCheckpointStore implements CheckpointStore {
  private readonly directory: string;
  /** Last save of each name in progress: the next save of that name waits for it, so an older position never lands last. */
  private readonly saving = new Map<string, Promise<void>>();

  constructor(directory: string) {
    this.directory = resolve(directory);
  }

  async load(name: string): Promise<Position | undefined> {
    assertValidCheckpointName(name);
    await this.saving.get(name);
    const file = this.fileOf(name);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    // Refuse to guess on a damaged file: starting over would redeliver the whole log.
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error(`checkpoint file ${file} is not JSON`);
    }
    const position = (parsed as Partial<CheckpointFile> | null)?.position;
    if (typeof position !== 'string' || position.length === 0) throw new Error(`checkpoint file ${file} holds no position`);
    return position;
  }

  save(name: string, position: Position): Promise<void> {
    try {
      assertValidCheckpointName(name);
      assertValidPosition(name, position);
    } catch (error) {
      return Promise.reject(error);
    }
    const previous = this.saving.get(name) ?? Promise.resolve();
    const current = previous.catch(() => undefined).then(() => this.write(name, position));
    this.saving.set(name, current);
    // Forget the entry once settled, unless a later save has replaced it.
    const forget = () => {
      if (this.saving.get(name) === current) this.saving.delete(name);
    };
    current.then(forget, forget);
    return current;
  }

  private fileOf(name: string): string {
    return join(this.directory, `${name}.checkpoint.json`);
  }

  private async write(name: string, position: Position): Promise<void> {
    const body: CheckpointFile = { name, position, savedAt: new Date().toISOString() };
    await writeFileAtomically(this.directory, this.fileOf(name), `${JSON.stringify(body)}\n`);
  }
}

/**
 * Replaces `file` (in `directory`) with `text` atomically: a temp file, fsync, rename over the old
 * one, fsync the directory. A crash leaves the old content or the new, never a torn file.
 */
export async function writeFileAtomically(directory: string, file: string, text: string): Promise<void> {
  await mkdir(directory, { recursive: true });
  const temp = `${file}.${randomUUID()}.tmp`;
  try {
    const handle = await open(temp, 'wx');
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncDirectory(directory);
}

/** Makes a rename durable: the directory entry is only on disk once the directory is synced. */
async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } catch (error) {
    // Some platforms and file systems refuse fsync on a directory; the rename is still atomic there.
    if (!isUnsupported(error)) throw error;
  } finally {
    await handle.close();
  }
}

function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

function isUnsupported(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'EINVAL' || code === 'EISDIR' || code === 'EPERM' || code === 'ENOTSUP';
}
