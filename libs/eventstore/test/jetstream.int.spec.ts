import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import { Empty } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { InvalidPosition, StoreUnavailable, WrongExpectedRevision } from '../src/errors.js';
import { NATS_SERVER_BIN } from '@agora/testing';
import { openJetStreamEventStore, type JetStreamEventStoreOptions } from '../src/jetstream/index.js';
import { takesAtomicBatches } from '../src/jetstream/server-version.js';
import type { EventStore, RecordedEvent } from '../src/port.js';
import { describeEventStoreContract, ev, freshCategory } from './contract.js';

const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const run = randomUUID().replace(/-/g, '').slice(0, 10);

/** Streams this file created on the shared server, deleted at the end. */
const createdStreams: string[] = [];
let counter = 0;
function uniqueNames(): { streamName: string; subjectPrefix: string } {
  counter++;
  const streamName = `AGORA_TEST_${run}_${counter}`;
  createdStreams.push(streamName);
  return { streamName, subjectPrefix: `agoratest.${run}.${counter}` };
}

const quiet = { warn: () => undefined };
const openShared = (extra: Partial<JetStreamEventStoreOptions> = {}) =>
  openJetStreamEventStore({ servers: NATS_URL, ...uniqueNames(), pollIntervalMs: 200, logger: quiet, atomicAppends: true, ...extra });

afterAll(async () => {
  const nc = await connect({ servers: NATS_URL });
  const jsm = await jetstreamManager(nc);
  for (const name of createdStreams) await jsm.streams.delete(name).catch(() => undefined);
  await nc.close();
});

/** The shared server's version, asked once: whether the contract's appendMany cases apply to it (2.12+). */
const sharedVersion = await (async () => {
  const nc = await connect({ servers: NATS_URL });
  try {
    return nc.info?.version;
  } finally {
    await nc.close();
  }
})();

const contractNames = uniqueNames();
describeEventStoreContract(`jetstream (nats-server ${sharedVersion ?? '(version unknown)'})`, () => openShared(contractNames), {
  atomicAppendMany: takesAtomicBatches(sharedVersion),
  neverProduced: ['0000099999999999:000000'],
  processConfig: () => ({ kind: 'jetstream', servers: NATS_URL, ...uniqueNames(), atomicAppends: true }),
  openWriter: () => openJetStreamEventStore({ servers: NATS_URL, ...contractNames, logger: quiet, atomicAppends: true }),
});

describe('jetstream adapter', () => {
  describe('on the shared server', () => {
    let store: EventStore;
    let names: { streamName: string; subjectPrefix: string };
    beforeAll(async () => {
      names = uniqueNames();
      store = await openJetStreamEventStore({ servers: NATS_URL, ...names, logger: quiet });
    });
    afterAll(() => store?.close());

    it('relies on JetStream checking the message id before the expected subject sequence (nats-server 2.9)', async () => {
      const nc = await connect({ servers: NATS_URL });
      try {
        const js = jetstream(nc);
        const subject = `${names.subjectPrefix}.${freshCategory()}-raw`;
        // 0 means "no message on this subject yet".
        const first = await js.publish(subject, Empty, { msgID: `a-${run}`, expect: { lastSubjectSequence: 0 } });
        const refused = await js.publish(subject, Empty, { expect: { lastSubjectSequence: 0 } }).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(JetStreamApiError);
        expect((refused as JetStreamApiError).code).toBe(10071);
        // A duplicate is reported as such (with the original sequence) even when the sequence no longer matches.
        const dup = await js.publish(subject, Empty, { msgID: `a-${run}`, expect: { lastSubjectSequence: 0 } });
        expect(dup).toMatchObject({ duplicate: true, seq: first.seq });
        const probe = await js.publish(subject, Empty, { msgID: `a-${run}`, expect: { lastSubjectSequence: Number.MAX_SAFE_INTEGER } });
        expect(probe).toMatchObject({ duplicate: true, seq: first.seq });
        // And a refused publish does not register its id.
        await expect(js.publish(subject, Empty, { msgID: `b-${run}`, expect: { lastSubjectSequence: Number.MAX_SAFE_INTEGER } })).rejects.toMatchObject({ code: 10071 });
        expect(await js.publish(subject, Empty, { msgID: `b-${run}`, expect: { lastSubjectSequence: first.seq } })).toMatchObject({ duplicate: false });
      } finally {
        await nc.close();
      }
    });

    it('creates a stream with no_stream without reading first, and refuses a second creation with the actual revision', async () => {
      const s = `${freshCategory()}-1`;
      const r = await store.append(s, [ev('Created'), ev('Named')], 'no_stream');
      expect(r.nextExpectedRevision).toBe(1);
      await expect(store.append(s, [ev('Created')], 'no_stream')).rejects.toMatchObject({ constructor: WrongExpectedRevision, actual: 1, streamId: s });
      expect(await store.readStream(s)).toHaveLength(2);
    });

    it('returns the first result for a retried commit that is no longer the last, and writes nothing', async () => {
      const s = `${freshCategory()}-1`;
      const events = [ev('Opened')];
      const r1 = await store.append(s, events, 'no_stream');
      await store.append(s, [ev('Moved')], 0);
      await store.append(s, [ev('Moved')], 1);
      expect(await store.append(s, events, 'no_stream')).toEqual({ ...r1, alreadyStored: true });
      expect(await store.append(s, events, 'any')).toEqual({ ...r1, alreadyStored: true });
      expect((await store.readStream(s)).map((e) => e.type)).toEqual(['Opened', 'Moved', 'Moved']);
    });

    it('gives a commit id of its own to the same event ids on another stream', async () => {
      const cat = freshCategory();
      const events = [ev('Shared')];
      const a = await store.append(`${cat}-a`, events, 'no_stream');
      const b = await store.append(`${cat}-b`, events, 'no_stream');
      expect(b.position).not.toBe(a.position);
      expect(await store.readStream(`${cat}-b`)).toHaveLength(1);
    });

    it('works with a second process appending to the same streams (stale cache)', async () => {
      const other = await openJetStreamEventStore({ servers: NATS_URL, ...names, logger: quiet });
      try {
        const s = `${freshCategory()}-1`;
        await store.append(s, [ev('A')], 'no_stream');
        await other.append(s, [ev('B')], 0);
        // `store` last wrote revision 0: its cache is stale, JetStream refuses, it re-reads.
        await expect(store.append(s, [ev('C')], 0)).rejects.toMatchObject({ constructor: WrongExpectedRevision, actual: 1 });
        expect((await store.append(s, [ev('C')], 1)).nextExpectedRevision).toBe(2);
        await other.append(s, [ev('D')], 'any');
        expect((await store.append(s, [ev('E')], 'any')).nextExpectedRevision).toBe(4);
        expect((await store.readStream(s)).map((e) => [e.type, e.revision])).toEqual([
          ['A', 0],
          ['B', 1],
          ['C', 2],
          ['D', 3],
          ['E', 4],
        ]);
      } finally {
        await other.close();
      }
    });

    it('keeps revisions consecutive under concurrent any-appends from two processes', async () => {
      const other = await openJetStreamEventStore({ servers: NATS_URL, ...names, logger: quiet });
      try {
        const s = `${freshCategory()}-1`;
        await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? store : other).append(s, [ev('E', { i }), ev('F', { i })], 'any')));
        const read = await store.readStream(s);
        expect(read.map((e) => e.revision)).toEqual(Array.from({ length: 80 }, (_, i) => i));
      } finally {
        await other.close();
      }
    });

    it('continues after a position inside a commit, reading and subscribing', async () => {
      const s = `${freshCategory()}-1`;
      await store.append(s, [ev('A'), ev('B'), ev('C')], 'no_stream');
      await store.append(s, [ev('D')], 2);
      const [, b] = await store.readStream(s);
      const read: string[] = [];
      for await (const e of store.readAll({ after: b!.position })) if (e.streamId === s) read.push(e.type);
      expect(read).toEqual(['C', 'D']);

      const seen: string[] = [];
      let done!: () => void;
      const finished = new Promise<void>((r) => (done = r));
      const sub = store.subscribe({
        after: b!.position,
        handler: (e) => {
          if (e.streamId !== s) return;
          seen.push(e.type);
          if (seen.length === 2) done();
        },
      });
      await finished;
      await sub.stop();
      expect(seen).toEqual(['C', 'D']);
    });

    it('delivers a commit larger than a subscription page whole and in order, then continues', async () => {
      const s = `${freshCategory()}-1`;
      const start = (await store.append(`${freshCategory()}-marker`, [ev('Marker')], 'no_stream')).position;
      await store.append(s, Array.from({ length: 1_300 }, (_, i) => ev('Big', { i })), 'no_stream');
      await store.append(s, [ev('After')], 1_299);
      const revisions: number[] = [];
      let done!: () => void;
      const finished = new Promise<void>((r) => (done = r));
      const sub = store.subscribe({
        after: start,
        handler: (e) => {
          if (e.streamId !== s) return;
          revisions.push(e.revision);
          if (revisions.length === 1_301) done();
        },
      });
      await finished;
      await sub.stop();
      expect(revisions).toEqual(Array.from({ length: 1_301 }, (_, i) => i));
    });

    it('reads a stream across commits from a revision, at most maxCount events', async () => {
      const s = `${freshCategory()}-1`;
      for (let c = 0; c < 5; c++) await store.append(s, [ev('E', { n: 3 * c }), ev('E', { n: 3 * c + 1 }), ev('E', { n: 3 * c + 2 })], c === 0 ? 'no_stream' : 3 * c - 1);
      const part = await store.readStream(s, { fromRevision: 4, maxCount: 7 });
      expect(part.map((e) => e.revision)).toEqual([4, 5, 6, 7, 8, 9, 10]);
      expect(part.map((e) => (e.data as { n: number }).n)).toEqual([4, 5, 6, 7, 8, 9, 10]);
      expect((await store.readStream(s, { maxCount: 0 })).length).toBe(0);
      await expect(store.readStream(`${freshCategory()}-1`, { maxCount: 0 })).rejects.toMatchObject({ code: 'stream_not_found' });
    });

    it('reads thousands of commits across many pulls: each once, in order, stopping at maxCount', async () => {
      const cat = freshCategory();
      const start = (await store.append(`${cat}-marker`, [ev('Marker')], 'no_stream')).position;
      const appended = new Map<string, number>();
      let next = 0;
      await Promise.all(
        Array.from({ length: 32 }, async (_, w) => {
          for (let i = next++; i < 3_000; i = next++) {
            const r = await store.append(`${cat}-${w}`, [ev('Bulk', { i })], 'any');
            appended.set(r.position, i);
          }
        }),
      );
      const read: RecordedEvent[] = [];
      for await (const e of store.readAll({ after: start })) if (e.streamId.startsWith(`${cat}-`)) read.push(e);
      expect(read).toHaveLength(3_000);
      expect(read.map((e) => e.position)).toEqual([...appended.keys()].sort());
      expect(new Set(read.map((e) => (e.data as { i: number }).i)).size).toBe(3_000);
      let counted = 0;
      for await (const _ of store.readAll({ after: start, maxCount: 2_100 })) counted++;
      expect(counted).toBe(2_100);

      const seen: string[] = [];
      let done!: () => void;
      const finished = new Promise<void>((r) => (done = r));
      const sub = store.subscribe({
        after: start,
        handler: (e) => {
          if (!e.streamId.startsWith(`${cat}-`)) return;
          seen.push(e.position);
          if (seen.length === 3_000) done();
        },
      });
      await finished;
      await sub.stop();
      expect(seen).toEqual(read.map((e) => e.position));
    }, 20_000);

    it('refuses positions it did not produce', async () => {
      for (const bad of ['0000000000000000:000000', '1:0', '', '0000000000000001:00000x', '0000000000000001:000000 ']) {
        await expect(store.readAll({ after: bad })[Symbol.asyncIterator]().next()).rejects.toBeInstanceOf(InvalidPosition);
      }
      expect(() => store.subscribe({ after: 'garbage', handler: () => undefined })).toThrow(InvalidPosition);
    });

    it('skips foreign messages on its subjects when reading', async () => {
      const s = `${freshCategory()}-1`;
      await store.append(s, [ev('Mine')], 'no_stream');
      const nc = await connect({ servers: NATS_URL });
      await jetstream(nc).publish(`${names.subjectPrefix}.${freshCategory()}-foreign`, 'not a commit');
      await nc.close();
      const after = (await store.readStream(s))[0]!.position;
      const later: RecordedEvent[] = [];
      for await (const e of store.readAll({ after })) later.push(e);
      expect(later).toEqual([]);
    });

    it('names no head on an empty log, and steps over foreign messages after the last commit to find it', async () => {
      const ownNames = uniqueNames();
      const own = await openShared(ownNames);
      try {
        expect(await own.headPosition()).toBeUndefined();
        const { position } = await own.append(`${freshCategory()}-1`, [ev('Mine'), ev('Mine')], 'no_stream');
        const nc = await connect({ servers: NATS_URL });
        await jetstream(nc).publish(`${ownNames.subjectPrefix}.${freshCategory()}-foreign`, 'not a commit');
        await nc.close();
        expect(await own.headPosition()).toBe(position);
      } finally {
        await own.close();
      }
    });

    it('brings an existing stream up to what it needs', async () => {
      const own = uniqueNames();
      const nc = await connect({ servers: NATS_URL });
      try {
        const jsm = await jetstreamManager(nc);
        await jsm.streams.add({ name: own.streamName, subjects: [`${own.subjectPrefix}.>`], allow_direct: false, max_msgs_per_subject: 5, duplicate_window: 10e9 });
        const upgraded = await openJetStreamEventStore({ servers: NATS_URL, ...own, logger: quiet });
        await upgraded.close();
        const { config } = await jsm.streams.info(own.streamName);
        expect(config).toMatchObject({ allow_direct: true, max_msgs_per_subject: -1, deny_delete: true, deny_purge: true, duplicate_window: 120e9 });
      } finally {
        await nc.close();
      }
    });

    it('lets appends in progress finish on close', async () => {
      const closing = await openJetStreamEventStore({ servers: NATS_URL, ...names, logger: quiet });
      const cat = freshCategory();
      const appends = Array.from({ length: 50 }, (_, i) => closing.append(`${cat}-${i % 5}`, [ev('Last')], 'any'));
      await closing.close();
      const results = await Promise.allSettled(appends);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(50);
    });

    it('fails an append with StoreUnavailable, quickly, when no JetStream stream takes its subject', async () => {
      const own = uniqueNames();
      const orphan = await openJetStreamEventStore({ servers: NATS_URL, ...own, logger: quiet, requestTimeoutMs: 5_000 });
      try {
        const nc = await connect({ servers: NATS_URL });
        await (await jetstreamManager(nc)).streams.delete(own.streamName);
        await nc.close();
        const started = Date.now();
        // A new stream: the append publishes without reading first, and the server answers "no responders".
        const failed = await orphan.append(`${freshCategory()}-1`, [ev('Lost')], 'no_stream').catch((error: unknown) => error);
        expect(failed).toBeInstanceOf(StoreUnavailable);
        expect((failed as Error).message).toMatch(/no responders/);
        expect(Date.now() - started).toBeLessThan(4_000);
      } finally {
        await orphan.close();
      }
    });

    it('leaves a lent connection open on close', async () => {
      const nc = await connect({ servers: NATS_URL });
      const lent = await openJetStreamEventStore({ connection: nc, ...names, logger: quiet });
      await lent.close();
      await lent.close();
      expect(nc.isClosed()).toBe(false);
      await expect(lent.append(`${freshCategory()}-1`, [ev('Late')], 'any')).rejects.toBeInstanceOf(StoreUnavailable);
      await nc.close();
    });
  });

  describe('the live end of the log', () => {
    /** Events a subscription got, by position, and a wait for a count. */
    function follow(store: EventStore, after?: string) {
      const got: RecordedEvent[] = [];
      const waiters: { n: number; resolve: () => void }[] = [];
      const sub = store.subscribe({
        ...(after === undefined ? {} : { after }),
        handler: (e) => {
          got.push(e);
          for (const w of waiters.filter((x) => got.length >= x.n)) w.resolve();
        },
      });
      const reach = (n: number) => (got.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve })));
      return { sub, got, reach };
    }

    async function appendMany(writer: EventStore, count: number, inFlight: number): Promise<void> {
      let next = 0;
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          const s = `${freshCategory()}-1`;
          for (let revision = -1; next < count; revision++) {
            next++;
            await writer.append(s, [ev('Live', { n: next })], revision === -1 ? 'no_stream' : revision);
          }
        }),
      );
    }

    it('is read once for every subscription there: one consumer, every event to each, in order, whatever their start', async () => {
      const names = uniqueNames();
      const reader = await openJetStreamEventStore({ servers: NATS_URL, ...names, pollIntervalMs: 200, logger: quiet });
      const writer = await openJetStreamEventStore({ servers: NATS_URL, ...names, logger: quiet });
      const nc = await connect({ servers: NATS_URL });
      const consumers = async () => (await (await jetstreamManager(nc)).consumers.list(names.streamName).next()).length;
      const followers: ReturnType<typeof follow>[] = [];
      try {
        await appendMany(writer, 40, 4);
        followers.push(follow(reader), follow(reader), follow(reader));
        await Promise.all(followers.map((f) => f.sub.caughtUp));
        await appendMany(writer, 600, 16);
        await Promise.all(followers.map((f) => f.reach(640)));
        const log: RecordedEvent[] = [];
        for await (const e of writer.readAll()) log.push(e);
        expect(log).toHaveLength(640);
        for (const f of followers) expect(f.got.map((e) => e.position)).toEqual(log.map((e) => e.position));
        // Three subscriptions at the end: one consumer (the shared tail's), not one each.
        expect(await consumers()).toBe(1);

        // One that starts among the recent events, and one that starts from the beginning (its own consumer, then the tail).
        const recent = follow(reader, log[629]!.position);
        const fromStart = follow(reader);
        followers.push(recent, fromStart);
        await Promise.all([recent.sub.caughtUp, fromStart.sub.caughtUp]);
        // One stops; the others go on.
        await followers[0]!.sub.stop();
        await appendMany(writer, 100, 8);
        for await (const e of writer.readAll({ after: log.at(-1)!.position })) log.push(e);
        expect(log).toHaveLength(740);
        await Promise.all(followers.slice(1).map((f, i) => f.reach(i < 2 ? 740 : i === 2 ? 110 : 740)));
        expect(followers[1]!.got.map((e) => e.position)).toEqual(log.map((e) => e.position));
        expect(followers[2]!.got.map((e) => e.position)).toEqual(log.map((e) => e.position));
        expect(recent.got.map((e) => e.position)).toEqual(log.slice(630).map((e) => e.position));
        expect(fromStart.got.map((e) => e.position)).toEqual(log.map((e) => e.position));
        expect(followers[0]!.got.length).toBeGreaterThanOrEqual(640);
        expect(followers[0]!.got.length).toBeLessThan(740);
        expect(await consumers()).toBe(1);
      } finally {
        await Promise.all(followers.map((f) => f.sub.stop()));
        await Promise.all([reader.close(), writer.close(), nc.close()]);
      }
    });
  });

  describe('beyond the dedup window', () => {
    it('a retry of the last commit is still recognised; one of an earlier commit is a conflict', async () => {
      const store = await openShared({ duplicateWindowMs: 500 });
      try {
        const s = `${freshCategory()}-1`;
        const first = [ev('First')];
        const second = [ev('Second')];
        await store.append(s, first, 'no_stream');
        const r2 = await store.append(s, second, 0);
        await new Promise((r) => setTimeout(r, 1_200));
        expect(await store.append(s, second, 0)).toEqual({ ...r2, alreadyStored: true });
        // Documented limit: an earlier commit retried after the window is not found again.
        await expect(store.append(s, first, 'no_stream')).rejects.toBeInstanceOf(WrongExpectedRevision);
        expect(await store.readStream(s)).toHaveLength(2);
      } finally {
        await store.close();
      }
    }, 10_000);
  });
});

/** A nats-server of our own, to kill and restart. */
class PrivateServer {
  private child: ChildProcess | undefined;
  readonly dir = mkdtempSync(join(tmpdir(), 'agora-js-'));

  constructor(readonly port: number) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(NATS_SERVER_BIN, ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      let log = '';
      const timer = setTimeout(() => reject(new Error(`nats-server did not start:\n${log}`)), 10_000);
      child.stderr!.on('data', (chunk: Buffer) => {
        log += chunk.toString();
        if (log.includes('Server is ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`nats-server exited with ${code}:\n${log}`));
      });
    });
    child.stderr!.resume();
  }

  async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  async dispose(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function eventually<T>(what: string, attempt: () => Promise<T>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what}: still failing after ${timeoutMs} ms`, { cause: error });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe('jetstream adapter with a server that goes away', () => {
  let server: PrivateServer;
  let store: EventStore | undefined;

  beforeAll(async () => {
    server = new PrivateServer(await freePort());
    await server.start();
  });
  afterAll(async () => {
    await store?.close();
    await server?.dispose();
  });

  it('cannot be opened without a server: StoreUnavailable', async () => {
    await expect(openJetStreamEventStore({ servers: `nats://127.0.0.1:${await freePort()}`, logger: quiet })).rejects.toBeInstanceOf(StoreUnavailable);
  });

  it('a subscription resumes after the server restarts: every event once, in order', async () => {
    store = await openJetStreamEventStore({ servers: server.url, requestTimeoutMs: 1_000, pollIntervalMs: 100, logger: quiet });
    const s = `${freshCategory()}-1`;
    const expected: string[] = [];
    const append = async (i: number) => {
      const e = ev('Numbered', { i });
      await store!.append(s, [e], i === 0 ? 'no_stream' : i - 1);
      expected.push(e.id!);
    };
    for (let i = 0; i < 10; i++) await append(i);

    const seen: RecordedEvent[] = [];
    const errors: unknown[] = [];
    let reached!: () => void;
    const allSeen = new Promise<void>((resolve) => (reached = resolve));
    const subscription = store.subscribe({
      retry: { initialDelayMs: 50, maxDelayMs: 500 },
      onError: (error) => errors.push(error),
      handler: (e) => {
        seen.push(e);
        if (seen.length === 25) reached();
      },
    });
    await subscription.caughtUp;
    expect(seen).toHaveLength(10);

    await server.kill();
    const refused = await store.append(s, [ev('WhileDown')], 9).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StoreUnavailable);
    expect(refused).toMatchObject({ streamId: s });
    expect((refused as StoreUnavailable).cause).toBeDefined();
    await expect(store.readStream(s)).rejects.toMatchObject({ constructor: StoreUnavailable, streamId: s });

    // The subscription notices (and says so) before the server comes back.
    await eventually('a read failure reported', async () => expect(errors.length).toBeGreaterThan(0), 10_000);
    await server.start();
    await eventually('append after restart', () => append(10));
    for (let i = 11; i < 25; i++) await append(i);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`saw ${seen.length} of 25`)), 20_000)));
    await Promise.race([allSeen, timedOut]).finally(() => clearTimeout(timer));
    await subscription.stop();

    expect(seen.map((e) => e.id)).toEqual(expected);
    expect(seen.map((e) => e.revision)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect(errors.every((e) => e instanceof StoreUnavailable)).toBe(true);
  }, 60_000);
});
