import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedEventStore, type EventStore, type RecordedEvent } from '@agora/eventstore';

const dirs: string[] = [];

/** A fresh directory, removed after all tests of the file. */
export function tempDir(prefix = 'agora-es-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** The real embedded store in a fresh directory. */
export async function openTempStore(): Promise<{ store: EventStore; directory: string }> {
  const directory = tempDir();
  return { store: await openEmbeddedEventStore({ directory }), directory };
}

/** A category no other test uses (letters and digits only). */
export function freshCategory(prefix = 'c'): string {
  return `${prefix}${randomUUID().replace(/-/g, '').slice(0, 10)}`;
}

export async function readAll(store: EventStore): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  for await (const e of store.readAll()) out.push(e);
  return out;
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` until it returns true, or fails after `timeoutMs`. */
export async function eventually(check: () => boolean, timeoutMs = 3_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(5);
  }
}

/** A logger that keeps what it is told, for assertions (and keeps test output quiet). */
export function recordingLogger(): { warn: (message: string, ...details: unknown[]) => void; messages: string[] } {
  const messages: string[] = [];
  return { messages, warn: (message: string) => void messages.push(message) };
}
