import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { EmbeddedEventStore, openEmbeddedEventStore } from '../src/embedded/embedded-store.js';
import { StoreUnavailable } from '../src/errors.js';
import { describeEventStoreContract, ev } from './contract.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agora-embedded-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describeEventStoreContract('embedded', () => openEmbeddedEventStore({ directory: tempDir() }));

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
