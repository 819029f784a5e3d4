/**
 * The embedded log read beside the process that writes it (`readOnly`): a writer in a process of
 * its own holds the lock and appends; readers in this process open the same directory without the
 * lock, see only whole commits, follow the new ones as they land, and wait when the writer dies
 * in the middle of a write.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { EmbeddedEventStore, openEmbeddedEventStore } from '../src/embedded/embedded-store.js';
import { encodeRecord } from '../src/embedded/log-file.js';
import { StoreRefused } from '../src/errors.js';
import type { RecordedEvent } from '../src/port.js';
import { ev } from './contract.js';
import { tempDirs } from './support/temp-dirs.js';

const tempDir = tempDirs('agora-embedded-reader');

/** A writer process (fixtures/append-until-killed.ts): commits of `perCommit` events of `padBytes` each; the ids it has acknowledged, with when. */
function startWriter(directory: string, perCommit: number, padBytes: number, commits = Infinity, pauseMs = 0) {
  const child: ChildProcess = spawn(process.execPath, ['--conditions=agora-source', '--import', './tools/ts-run/register.mjs', 'libs/eventstore/test/fixtures/append-until-killed.ts', directory, String(perCommit), String(padBytes), String(commits), String(pauseMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const acknowledged = new Map<string, number>();
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  createInterface({ input: child.stdout! }).on('line', (id) => acknowledged.set(id, Date.now()));
  const until = async (what: () => boolean, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!what()) {
      if (Date.now() > deadline) throw new Error('timed out waiting for the writer');
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  return { acknowledged, until, kill: async () => (child.kill('SIGKILL'), exited) };
}

/** The commits a reader was handed, checked whole: each commit's events in order, none missing, none cut. */
function wholeCommits(events: readonly RecordedEvent[]): number {
  let commits = 0;
  let expected: { w: number; n: number; k: number; of: number } | undefined;
  for (const event of events) {
    const data = event.data as { w: number; n: number; k: number; of: number };
    if (expected) expect({ w: data.w, n: data.n, k: data.k }).toEqual({ w: expected.w, n: expected.n, k: expected.k });
    else expect(data.k).toBe(0);
    expected = data.k + 1 < data.of ? { ...data, k: data.k + 1 } : undefined;
    if (!expected) commits++;
  }
  expect(expected).toBeUndefined();
  return commits;
}

/** Whether the log file ends in a record written only in part (its records' lengths walked from the start). */
function endsTorn(file: string): boolean {
  const bytes = readFileSync(file);
  let at = 0;
  while (at + 8 <= bytes.length && at + 8 + bytes.readUInt32LE(at) <= bytes.length) at += 8 + bytes.readUInt32LE(at);
  return at < bytes.length;
}

/** Every event of the log; with `upToHead`, only those it held when asked (a writer may add faster than a reader reads). */
async function readAll(store: EmbeddedEventStore, upToHead = false): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  const maxCount = upToHead ? Number((await store.headPosition()) ?? 0) : undefined;
  for await (const event of store.readAll(maxCount === undefined ? {} : { maxCount })) events.push(event);
  return events;
}

describe('embedded store read beside its writer (readOnly)', () => {
  it('reads the log a writer process holds locked, refuses appends, and writes nothing', async () => {
    const directory = tempDir();
    const writer = startWriter(directory, 3, 100);
    try {
      await writer.until(() => writer.acknowledged.size >= 300);
      const before = statSync(join(directory, 'events.lock')).mtimeMs;
      const reader = await EmbeddedEventStore.open({ directory, readOnly: true });
      expect(wholeCommits(await readAll(reader))).toBeGreaterThanOrEqual(100);
      await expect(reader.append('crash-0', [ev('Refused')], 'any')).rejects.toBeInstanceOf(StoreRefused);
      await expect(reader.appendMany([{ streamId: 'crash-0', events: [ev('Refused')], expectedRevision: 'any' }])).rejects.toBeInstanceOf(StoreRefused);
      await reader.close();
      // The writer's lock is as it was, and the reader left no index behind.
      expect(statSync(join(directory, 'events.lock')).mtimeMs).toBe(before);
      expect(existsSync(join(directory, 'events.idx'))).toBe(false);
    } finally {
      await writer.kill();
    }
  }, 60_000);

  it('reads a directory with no log yet as an empty log, making nothing, and follows the writer that starts there', async () => {
    const directory = join(tempDir(), 'not-yet');
    const reader = await EmbeddedEventStore.open({ directory, readOnly: true });
    expect(await reader.headPosition()).toBeUndefined();
    expect(existsSync(directory)).toBe(false);
    const events: RecordedEvent[] = [];
    const subscription = reader.subscribe({ handler: (event) => void events.push(event) });
    const writer = startWriter(directory, 2, 100);
    try {
      await writer.until(() => writer.acknowledged.size >= 20);
      const first = [...writer.acknowledged.keys()].slice(0, 20);
      await writer.until(() => first.every((id) => events.some((e) => e.id === id)), 5_000);
    } finally {
      await writer.kill();
    }
    await subscription.stop();
    await reader.close();
    wholeCommits(events);
  }, 60_000);

  it('follows the commits a writer process adds: each read whole within a second of its being acknowledged', async () => {
    const directory = tempDir();
    const writer = startWriter(directory, 4, 100);
    const seen = new Map<string, number>();
    const events: RecordedEvent[] = [];
    const errors: unknown[] = [];
    try {
      await writer.until(() => writer.acknowledged.size >= 40);
      const reader = await EmbeddedEventStore.open({ directory, readOnly: true });
      const subscription = reader.subscribe({ handler: (event) => (events.push(event), void seen.set(event.id, Date.now())), onError: (error) => errors.push(error) });
      await subscription.caughtUp;
      const since = Date.now();
      // 1,500 more commits from here, however many the writer made while the reader caught up.
      const atCatchUp = writer.acknowledged.size;
      await writer.until(() => writer.acknowledged.size >= atCatchUp + 1_500);
      // The commits acknowledged once the reader had caught up with the log.
      const acknowledged = [...writer.acknowledged].filter(([, at]) => at > since);
      expect(acknowledged.length).toBeGreaterThan(1_000);
      await writer.until(() => seen.has(acknowledged.at(-1)![0]), 5_000);
      await subscription.stop();
      await reader.close();
      const late = acknowledged.map(([id, at]) => (seen.get(id) ?? Infinity) - at).filter((ms) => ms > 1_000);
      expect(late).toEqual([]);
      expect(errors).toEqual([]);
      wholeCommits(events);
    } finally {
      await writer.kill();
    }
  }, 60_000);

  it('a reader opened while the writer is in the middle of a commit sees only whole commits', async () => {
    const directory = tempDir();
    // Commits of 4 x 32 KiB, 8 in flight (each writer pausing 20 ms after a commit, so that the log
    // stays small): writing one takes long enough for readers to open during it. Readers open until 4
    // of them opened and read while the writer went on acknowledging, however slowly a busy machine
    // lets either run.
    const writer = startWriter(directory, 4, 32 * 1024, Infinity, 20);
    let whileWriting = 0;
    try {
      await writer.until(() => writer.acknowledged.size >= 8);
      for (let opened = 0; opened < 20 && whileWriting < 4; opened++) {
        const acknowledged = writer.acknowledged.size;
        const reader = await EmbeddedEventStore.open({ directory, readOnly: true });
        expect(wholeCommits(await readAll(reader, true))).toBeGreaterThanOrEqual(2);
        await reader.close();
        if (writer.acknowledged.size > acknowledged) whileWriting++;
      }
    } finally {
      await writer.kill();
    }
    expect(whileWriting).toBe(4);

    // The same on a log whose last record is written only in part (as a write in progress leaves
    // it): the reader sees the commits before it; once the rest is written, it reads the commit.
    const file = join(directory, 'events.log');
    const recovered = await openEmbeddedEventStore({ directory, onWarning: () => undefined });
    const before = (await readAll(recovered as EmbeddedEventStore)).length;
    await recovered.close();
    const id = randomUUID();
    const record = encodeRecord({ s: 'crash-9', r: 0, t: new Date().toISOString(), e: [0, 1].map((k) => ({ i: k === 0 ? id : randomUUID(), y: 'Appended', d: { w: 9, n: 0, k, of: 2 }, m: {} })) });
    appendFileSync(file, record.subarray(0, record.length - 7));
    const reader = await EmbeddedEventStore.open({ directory, readOnly: true });
    expect(await readAll(reader)).toHaveLength(before);
    const sawIt = new Promise<number>((resolve) => reader.subscribe({ after: String(before), handler: (event) => void (event.id === id && resolve(Date.now())) }));
    await new Promise((r) => setTimeout(r, 300));
    expect(await reader.headPosition()).toBe(String(before));
    const written = Date.now();
    appendFileSync(file, record.subarray(record.length - 7));
    expect((await sawIt) - written).toBeLessThan(1_000);
    expect(wholeCommits((await readAll(reader)).slice(before))).toBe(1);
    await reader.close();
  }, 60_000);

  it('a damaged record with more data after it fails the reads, and the whole records before it are read once', async () => {
    const directory = tempDir();
    const writer = await openEmbeddedEventStore({ directory });
    await writer.append('log-1', [ev('First')], 'no_stream');
    await writer.close();
    const reader = await EmbeddedEventStore.open({ directory, readOnly: true, followIntervalMs: 60_000 });
    const record = (n: number) => encodeRecord({ s: 'log-1', r: n, t: new Date().toISOString(), e: [{ i: randomUUID(), y: `Appended${n}`, d: {}, m: {} }] });
    const damaged = record(2);
    damaged.writeUInt8(damaged.readUInt8(damaged.length - 1) ^ 0xff, damaged.length - 1);
    appendFileSync(join(directory, 'events.log'), Buffer.concat([record(1), damaged, record(3)]));
    await expect(reader.headPosition()).rejects.toThrow(/corrupt/);
    await expect(reader.headPosition()).rejects.toThrow(/corrupt/);
    expect((await readAll(reader)).map((e) => e.type)).toEqual(['First', 'Appended1']);
    await reader.close();
  });

  it('a writer killed in the middle of a write leaves the reader waiting, then reading what the next writer appends', async () => {
    const directory = tempDir();
    const first = startWriter(directory, 4, 16 * 1024);
    const events: RecordedEvent[] = [];
    const errors: unknown[] = [];
    await first.until(() => first.acknowledged.size >= 40);
    const reader = await EmbeddedEventStore.open({ directory, readOnly: true });
    const subscription = reader.subscribe({ handler: (event) => void events.push(event), onError: (error) => errors.push(error) });
    await first.until(() => first.acknowledged.size >= 400);
    expect(await first.kill()).toBe('SIGKILL');
    // Should the kill have come between two writes, the log is made to end as a write cut short leaves it.
    const file = join(directory, 'events.log');
    if (!endsTorn(file)) {
      const record = encodeRecord({ s: 'crash-9', r: 0, t: new Date().toISOString(), e: [{ i: randomUUID(), y: 'Appended', d: { w: 9, n: 0, k: 0, of: 1 }, m: {} }] });
      appendFileSync(file, record.subarray(0, record.length >> 1));
    }
    expect(endsTorn(file)).toBe(true);
    await new Promise((r) => setTimeout(r, 500));
    const whole = events.length;
    expect(whole).toBe(Number(await reader.headPosition()));
    expect(errors).toEqual([]);
    wholeCommits(events);

    // The next writer cuts the torn record off and appends; the reader goes on from where it was.
    const second = startWriter(directory, 4, 16 * 1024);
    try {
      await second.until(() => second.acknowledged.size >= 40);
      const last = [...second.acknowledged.keys()][39]!;
      await second.until(() => events.some((e) => e.id === last), 5_000);
    } finally {
      await second.kill();
    }
    await subscription.stop();
    await reader.close();
    expect(errors).toEqual([]);
    expect(events.length).toBeGreaterThan(whole);
    wholeCommits(events);
  }, 60_000);
});
