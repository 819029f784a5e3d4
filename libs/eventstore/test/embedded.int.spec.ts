import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { EmbeddedEventStore, openEmbeddedEventStore } from '../src/embedded/embedded-store.js';
import { StoreUnavailable } from '../src/errors.js';
import type { RecordedEvent } from '../src/port.js';
import { describeEventStoreContract, ev } from './contract.js';
import { tempDirs } from './support/temp-dirs.js';

const tempDir = tempDirs('agora-embedded');

const contractDirectory = tempDir();
describeEventStoreContract('embedded', () => openEmbeddedEventStore({ directory: contractDirectory }), {
  neverProduced: ['999999999'],
  processConfig: () => ({ kind: 'embedded', directory: tempDir() }),
  atomicAppendMany: true,
});

describe('embedded store on disk', () => {
  it('restores every acknowledged event after reopening', async () => {
    const directory = tempDir();
    const store = await openEmbeddedEventStore({ directory });
    await store.append('order-1', [ev('Placed', { total: 10 }), ev('Paid', { total: 10 })], 'no_stream');
    await store.append('order-2', [ev('Placed', { total: 3 })], 'no_stream');
    await store.append('order-1', [ev('Shipped')], 1);
    const before = [];
    for await (const e of store.readAll()) before.push(e);
    await store.close();

    const reopened = await openEmbeddedEventStore({ directory });
    const after = [];
    for await (const e of reopened.readAll()) after.push(e);
    expect(after).toEqual(before);
    await expect(reopened.append('order-1', [ev('Late')], 1)).rejects.toMatchObject({ code: 'wrong_expected_revision', actual: 2 });
    expect((await reopened.append('order-1', [ev('Delivered')], 2)).nextExpectedRevision).toBe(3);
    await reopened.close();
  });

  it('shares one fdatasync among concurrent appends (group commit)', async () => {
    const store = await EmbeddedEventStore.open({ directory: tempDir() });
    await Promise.all(Array.from({ length: 200 }, (_, i) => store.append(`gc-${i % 7}`, [ev('E', { i })], 'any')));
    expect(store.stats.commits).toBe(200);
    expect(store.stats.syncs).toBeLessThan(100);
    await store.close();
  });

  /** The store's log with its fdatasync held until `release` (then done, or failed with `failure`). */
  function holdSync(store: EmbeddedEventStore): { release: (failure?: Error) => void; written: () => number } {
    const log = (store as unknown as { log: { sync(): Promise<void>; written: number } }).log;
    const sync = log.sync.bind(log);
    let release!: (failure?: Error) => void;
    const held = new Promise<Error | undefined>((resolve) => (release = resolve));
    log.sync = async () => {
      const failure = await held;
      if (failure) throw failure;
      return sync();
    };
    return { release, written: () => log.written };
  }
  const until = async (condition: () => boolean) => {
    while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
  };

  it('writes the next group while the last one is being synced, checked against it, and answers both once durable', async () => {
    const directory = tempDir();
    const store = await EmbeddedEventStore.open({ directory });
    const sync = holdSync(store);
    const first = ev('First');
    const a1 = store.append('pipe-1', [first], 'no_stream');
    await until(() => sync.written() > 0);
    const firstGroupBytes = sync.written();
    // Made while the first group's fdatasync is held: its expected revision counts on that group, and a retry of it waits for it.
    const a2 = store.append('pipe-1', [ev('Second')], 0);
    const retry = store.append('pipe-1', [first], 'no_stream');
    const late = store.append('pipe-1', [ev('Late')], 'no_stream');
    await until(() => sync.written() > firstGroupBytes);
    let answered = false;
    void a1.then(() => (answered = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(answered).toBe(false);
    expect(store.stats.commits).toBe(0);
    sync.release();
    const r1 = await a1;
    expect(r1).toEqual({ nextExpectedRevision: 0, position: '1' });
    expect(await a2).toEqual({ nextExpectedRevision: 1, position: '2' });
    expect(await retry).toEqual({ ...r1, alreadyStored: true });
    await expect(late).rejects.toMatchObject({ code: 'wrong_expected_revision' });
    await store.close();
    const reopened = await openEmbeddedEventStore({ directory });
    expect((await reopened.readStream('pipe-1')).map((e) => e.type)).toEqual(['First', 'Second']);
    await reopened.close();
  });

  it('refuses a group whose fdatasync fails and the group written after it, and cuts the log back to before them', async () => {
    const directory = tempDir();
    const store = await EmbeddedEventStore.open({ directory });
    await store.append('kept-1', [ev('Kept')], 'no_stream');
    const goodSize = statSync(join(directory, 'events.log')).size;
    const sync = holdSync(store);
    const a1 = store.append('lost-1', [ev('First')], 'no_stream');
    await until(() => sync.written() > goodSize);
    const firstEnd = sync.written();
    const a2 = store.append('lost-1', [ev('Second')], 0);
    await until(() => sync.written() > firstEnd);
    sync.release(new Error('EIO'));
    await expect(a1).rejects.toThrow('EIO');
    await expect(a2).rejects.toThrow('EIO');
    await until(() => statSync(join(directory, 'events.log')).size === goodSize);
    await expect(store.readStream('lost-1')).rejects.toMatchObject({ code: 'stream_not_found' });
    await store.close();
    const reopened = await openEmbeddedEventStore({ directory });
    expect((await reopened.readStream('kept-1')).map((e) => e.type)).toEqual(['Kept']);
    await expect(reopened.readStream('lost-1')).rejects.toMatchObject({ code: 'stream_not_found' });
    expect((await reopened.append('lost-1', [ev('Again')], 'no_stream')).position).toBe('2');
    await reopened.close();
  });

  it('drops a torn final record with a warning and keeps everything before it', async () => {
    const directory = tempDir();
    const store = await openEmbeddedEventStore({ directory });
    await store.append('torn-1', [ev('Kept', { n: 1 })], 'no_stream');
    await store.append('torn-1', [ev('Kept', { n: 2 })], 0);
    await store.close();
    const file = join(directory, 'events.log');
    const goodSize = statSync(file).size;
    // A record header announcing 500 bytes, followed by only a few: a write cut short.
    const header = Buffer.alloc(8);
    header.writeUInt32LE(500, 0);
    appendFileSync(file, Buffer.concat([header, Buffer.from('{"s":"torn-1"')]));

    const warnings: string[] = [];
    const reopened = await openEmbeddedEventStore({ directory, onWarning: (w) => warnings.push(w.message) });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/torn final record/);
    expect((await reopened.readStream('torn-1')).map((e) => (e.data as { n: number }).n)).toEqual([1, 2]);
    expect(statSync(file).size).toBe(goodSize);
    await reopened.append('torn-1', [ev('After', { n: 3 })], 1);
    await reopened.close();
    const again = await openEmbeddedEventStore({ directory, onWarning: (w) => warnings.push(w.message) });
    expect((await again.readStream('torn-1')).map((e) => (e.data as { n: number }).n)).toEqual([1, 2, 3]);
    expect(warnings).toHaveLength(1);
    await again.close();
  });

  it('drops a final record whose checksum does not match', async () => {
    const directory = tempDir();
    const store = await openEmbeddedEventStore({ directory });
    await store.append('crc-1', [ev('Kept')], 'no_stream');
    await store.append('crc-1', [ev('Garbled')], 0);
    await store.close();
    const file = join(directory, 'events.log');
    const bytes = readFileSync(file);
    bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 0xff;
    writeFileSync(file, bytes);
    const warnings: string[] = [];
    const reopened = await openEmbeddedEventStore({ directory, onWarning: (w) => warnings.push(w.message) });
    expect(warnings[0]).toMatch(/checksum/);
    expect((await reopened.readStream('crc-1')).map((e) => e.type)).toEqual(['Kept']);
    await reopened.close();
  });

  it('refuses to start on corruption in the middle of the log rather than drop acknowledged commits', async () => {
    const directory = tempDir();
    const store = await openEmbeddedEventStore({ directory });
    await store.append('mid-1', [ev('First')], 'no_stream');
    await store.append('mid-1', [ev('Second')], 0);
    await store.close();
    const file = join(directory, 'events.log');
    const bytes = readFileSync(file);
    bytes[12] = bytes[12]! ^ 0xff;
    writeFileSync(file, bytes);
    // The index saved at close covers the bad record: an open does not read it (its cost is what was
    // written since), and reading it refuses as corruption; nothing is dropped.
    const opened = await openEmbeddedEventStore({ directory });
    await expect(opened.readStream('mid-1')).rejects.toThrow(/corrupt/);
    await opened.close();
    // Without the index, the open reads the whole log and refuses to start.
    rmSync(join(directory, 'events.idx'));
    await expect(openEmbeddedEventStore({ directory })).rejects.toThrow(/corrupt at byte 0/);
  });

  it('refuses a second process on the same directory but takes over a stale lock', async () => {
    const directory = tempDir();
    writeFileSync(join(directory, 'events.lock'), String(process.pid));
    const store = await openEmbeddedEventStore({ directory });
    writeFileSync(join(directory, 'events.lock'), '1');
    await expect(openEmbeddedEventStore({ directory })).rejects.toBeInstanceOf(StoreUnavailable);
    await store.close();
  });

  it('an empty file or one cut inside a header opens as an empty or shorter log', async () => {
    const directory = tempDir();
    writeFileSync(join(directory, 'events.log'), Buffer.from([1, 2, 3]));
    const warnings: string[] = [];
    const store = await openEmbeddedEventStore({ directory, onWarning: (w) => warnings.push(w.message) });
    expect(warnings).toHaveLength(1);
    const all = [];
    for await (const e of store.readAll()) all.push(e);
    expect(all).toEqual([]);
    await store.close();
  });

  it('keeps every acknowledged append when the process is killed mid-append (SIGKILL)', async () => {
    const directory = tempDir();
    const child = spawn(process.execPath, ['--conditions=agora-source', '--import', './tools/ts-run/register.mjs', 'libs/eventstore/test/fixtures/append-until-killed.ts', directory], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const acknowledged: string[] = [];
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    await new Promise<void>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      lines.on('line', (id) => {
        acknowledged.push(id);
        if (acknowledged.length === 3_000) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.on('exit', () => resolve());
      child.on('error', reject);
    });
    expect(await exited).toBe('SIGKILL');
    expect(acknowledged.length).toBeGreaterThanOrEqual(3_000);

    const store = await openEmbeddedEventStore({ directory, onWarning: () => undefined });
    const stored = new Set<string>();
    for await (const e of store.readAll()) stored.add(e.id);
    const missing = acknowledged.filter((id) => !stored.has(id));
    expect(missing).toEqual([]);
    // The store still takes appends after the crash.
    await store.append(`crash-${randomUUID()}`, [ev('AfterCrash')], 'no_stream');
    await store.close();
  }, 60_000);
});

describe('embedded store memory: an index in memory, events read back from the file', () => {
  it('reads a log larger than its scan chunk back from the file, with no cache, the same before and after reopening', async () => {
    const directory = tempDir();
    const store = await EmbeddedEventStore.open({ directory, cacheBytes: 0 });
    const pad = 'x'.repeat(400);
    // 24,000 events of about 500 bytes: about 12 MB, more than one 8 MiB scan chunk.
    for (let batch = 0; batch < 24; batch++) {
      await Promise.all(
        Array.from({ length: 100 }, (_, j) => {
          const n = batch * 100 + j;
          return store.append(`big-${n % 50}`, Array.from({ length: 10 }, (_, k) => ev('Padded', { n, k, pad })), 'any');
        }),
      );
    }
    expect(store.stats.events).toBe(24_000);
    const before: RecordedEvent[] = [];
    for await (const e of store.readAll()) before.push(e);
    expect(before.map((e) => e.position)).toEqual(Array.from({ length: 24_000 }, (_, i) => String(i + 1)));
    const stream = await store.readStream('big-7', { fromRevision: 15, maxCount: 30 });
    expect(stream.map((e) => e.revision)).toEqual(Array.from({ length: 30 }, (_, i) => 15 + i));
    expect(stream.every((e) => e.streamId === 'big-7' && (e.data as { n: number }).n % 50 === 7)).toBe(true);
    await store.close();

    const reopened = await EmbeddedEventStore.open({ directory, cacheBytes: 0 });
    const after: RecordedEvent[] = [];
    for await (const e of reopened.readAll()) after.push(e);
    expect(after).toEqual(before);
    const page: RecordedEvent[] = [];
    for await (const e of reopened.readAll({ after: '11999', maxCount: 3 })) page.push(e);
    expect(page).toEqual(before.slice(11_999, 12_002));
    // A retried commit from the middle of the log is recognised from the index and the file.
    const commit = before.filter((e) => e.streamId === 'big-3').slice(20, 30);
    const retry = commit.map((e) => ({ id: e.id, type: e.type, data: e.data }));
    await expect(reopened.append('big-3', retry, 'any')).resolves.toEqual({ nextExpectedRevision: commit[9]!.revision, position: commit[9]!.position, alreadyStored: true });
    await expect(reopened.append('big-4', retry, 'any')).rejects.toMatchObject({ code: 'invalid_event_data' });
    await expect(reopened.append('big-3', [ev('New'), retry[4]!], 'any')).rejects.toMatchObject({ code: 'invalid_event_data' });
    expect(reopened.stats.events).toBe(24_000);
    await reopened.close();
  }, 120_000);
});

describe('embedded store index file', () => {
  async function fill(directory: string, stream: string, count: number, onIndex?: (m: string) => void): Promise<RecordedEvent[]> {
    const store = await EmbeddedEventStore.open({ directory, ...(onIndex ? { onIndex } : {}) });
    for (let i = 0; i < count; i++) await store.append(`${stream}-${i % 3}`, [ev('Filled', { i })], 'any');
    const all: RecordedEvent[] = [];
    for await (const e of store.readAll()) all.push(e);
    await store.close();
    return all;
  }

  it('opens from the index saved at close, scanning only the records after it; an index of another log is not used (logged)', async () => {
    const directory = tempDir();
    const messages: string[] = [];
    await fill(directory, 'idx', 30, (m) => messages.push(m));
    // An index covering only a prefix (as after a crash): the records after it are scanned.
    const prefixIndex = readFileSync(join(directory, 'events.idx'));
    const all = await fill(directory, 'idx', 20, (m) => messages.push(m));
    writeFileSync(join(directory, 'events.idx'), prefixIndex);
    const reopened = await EmbeddedEventStore.open({ directory, onIndex: (m) => messages.push(m) });
    const read: RecordedEvent[] = [];
    for await (const e of reopened.readAll()) read.push(e);
    expect(read).toEqual(all);
    expect(all).toHaveLength(50);
    expect((await reopened.readStream('idx-1')).map((e) => (e.data as { i: number }).i)).toEqual([...all.filter((e) => e.streamId === 'idx-1').map((e) => (e.data as { i: number }).i)]);
    await expect(reopened.append('idx-1', [{ id: all[4]!.id, type: 'Filled', data: { i: 4 } }], 'any')).resolves.toEqual({ nextExpectedRevision: all[4]!.revision, position: '5', alreadyStored: true });
    await reopened.close();
    expect(messages).toEqual([]);

    // Another log's index beside this log.
    const other = tempDir();
    await fill(other, 'elsewhere', 40);
    writeFileSync(join(directory, 'events.idx'), readFileSync(join(other, 'events.idx')));
    const fresh = await EmbeddedEventStore.open({ directory, onIndex: (m) => messages.push(m) });
    const again: RecordedEvent[] = [];
    for await (const e of fresh.readAll()) again.push(e);
    expect(again).toEqual(all);
    expect(messages.join('\n')).toMatch(/events\.idx not used .*scanning the whole log/);
    await fresh.close();
  });
});

describe('embedded store: events with their stored bytes', () => {
  const text = (e: RecordedEvent, range: 'data' | 'metadata') => Buffer.from(e.stored!.bytes.subarray(e.stored![range][0], e.stored![range][1])).toString('utf8');

  it('hands, when asked, the bytes of each event as JSON.stringify wrote its data and metadata', async () => {
    const directory = tempDir();
    const writer = await openEmbeddedEventStore({ directory });
    // Strings that end in backslashes, quotes and brackets inside strings, nesting, non-ASCII text, numbers of every form.
    const tricky = { a: 'x\\', b: '"}]\\"', c: [[{ d: '{' }], [], {}], e: 'é😀\u2028', f: [-0, 1e21, 1.5e-7, 0.1], g: null, h: true, '10': 'first', i: '\\\\"' };
    await writer.append('thing-1', [ev('Made', tricky, { metadata: { note: ']}"\\' } }), ev('Made', { s: 'a "quoted" string' }), ev('Made', { n: 42 })], 'no_stream');
    await writer.append('thing-2', [ev('Made', { list: [tricky, tricky] }, { metadata: { nested: { m: { d: 1 } } } })], 'no_stream');
    await writer.close();
    // Reopened: commits read back from the file (those still in memory since they were written are handed without their bytes).
    const store = await openEmbeddedEventStore({ directory });
    const events: RecordedEvent[] = [];
    for await (const e of store.readAll({ stored: true })) events.push(e);
    expect(events).toHaveLength(4);
    for (const e of events) {
      expect(text(e, 'data')).toBe(JSON.stringify(e.data));
      expect(text(e, 'metadata')).toBe(JSON.stringify(e.metadata));
    }
    // Not asked: not there (an event is handed as it always was).
    for await (const e of store.readAll()) expect(e.stored).toBeUndefined();
    await store.close();
  });
});
