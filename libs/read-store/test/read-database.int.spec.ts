import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryCheckpointStore, ReadModelPositions, type SnapshotStore } from '@agora/eventsourcing';
import { openEmbeddedEventStore, type EventStore, type RecordedEvent } from '@agora/eventstore';
import { freshPostgresDatabase, waitFor } from '@agora/testing';
import { PostgresReadDatabase, rebuildSqlProjection, rebuildSqlProjections, SqlCheckpointStore, SqliteReadDatabase, SqlProjectionRunner, SqlSnapshotStore, type ReadDatabase, type RebuildProgress, type SqlExecutor, type SqlProjection } from '../src/index.js';

/**
 * The read side's contract, run against both engines: what a read model may count on from its
 * database, and from the runner that keeps its tables (a log position in the same transaction,
 * one writer among replicas, a version change filling new tables from the log).
 */
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'agora-read-store-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Engine {
  /** A new, empty database, and a way to open it again as a second process would. */
  fresh(): Promise<{ open(): Promise<ReadDatabase>; drop(): Promise<void> }>;
}

const engines: [string, Engine][] = [
  [
    'sqlite',
    {
      async fresh() {
        const file = join(tempDir(), 'read-models.sqlite');
        return { open: async () => new SqliteReadDatabase(file), drop: async () => undefined };
      },
    },
  ],
  [
    'postgres',
    {
      async fresh() {
        const database = await freshPostgresDatabase('readstore');
        return { open: () => PostgresReadDatabase.open(database.url), drop: () => database.drop() };
      },
    },
  ],
];

/** Orders: one row per order with its total; `applied` keeps every event applied, once (its primary key says so). */
function ordersProjection(version = 1): SqlProjection & { batches: number } {
  const projection = {
    name: 'orders',
    version,
    categories: ['order'],
    batches: 0,
    tables: [`applied_v${version}`, `orders_v${version}`],
    schema: (db: Pick<ReadDatabase, 'text'>) => [
      `CREATE TABLE IF NOT EXISTS orders_v${version} (id ${db.text} PRIMARY KEY, total INTEGER NOT NULL, events INTEGER NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS applied_v${version} (event_id ${db.text} PRIMARY KEY)`,
    ],
    async apply(tx: SqlExecutor, events: readonly RecordedEvent[]) {
      projection.batches++;
      for (const event of events) {
        await tx.run(`INSERT INTO applied_v${version} (event_id) VALUES ($1)`, [event.id]);
        const amount = (event.data as { amount: number }).amount;
        await tx.run(`INSERT INTO orders_v${version} (id, total, events) VALUES ($1, $2, 1) ON CONFLICT (id) DO UPDATE SET total = orders_v${version}.total + excluded.total, events = orders_v${version}.events + 1`, [event.streamId, amount]);
      }
    },
  };
  return projection;
}

async function place(store: EventStore, id: string, amounts: number[]): Promise<void> {
  let revision = -1;
  for (const amount of amounts) {
    await store.append(`order-${id}`, [{ type: 'Placed', data: { amount } }], revision < 0 ? 'no_stream' : revision);
    revision++;
  }
}

describe.each(engines)('read database: %s', (_engine, engine) => {
  let db: ReadDatabase;
  let database: Awaited<ReturnType<Engine['fresh']>>;
  const opened: ReadDatabase[] = [];
  const open = async () => {
    const d = await database.open();
    opened.push(d);
    return d;
  };
  beforeEach(async () => {
    database = await engine.fresh();
    db = await open();
  });
  afterEach(async () => {
    for (const d of opened.splice(0)) await d.close();
    await database.drop();
  });

  it('binds $n parameters, upserts, and sorts text byte by byte on both engines', async () => {
    await db.run(`CREATE TABLE t (id ${db.text} PRIMARY KEY, n INTEGER)`);
    for (const [id, n] of [['b', 1], ['B', 2], ['a', 3], ['_', 4]] as const) await db.run('INSERT INTO t (id, n) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET n = excluded.n', [id, n]);
    await db.run('INSERT INTO t (id, n) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET n = excluded.n', ['a', 30]);
    expect(await db.all('SELECT id, n FROM t ORDER BY id')).toEqual([
      { id: 'B', n: 2 },
      { id: '_', n: 4 },
      { id: 'a', n: 30 },
      { id: 'b', n: 1 },
    ]);
    expect(await db.all('SELECT CAST(COUNT(*) AS INTEGER) AS c FROM t WHERE n > $1 AND id <> $2', [1, 'a'])).toEqual([{ c: 2 }]);
  });

  it('a transaction is all or nothing, and queries see it only once committed', async () => {
    await db.run(`CREATE TABLE t (id ${db.text} PRIMARY KEY)`);
    await expect(
      db.transaction(async (tx) => {
        await tx.run('INSERT INTO t (id) VALUES ($1)', ['x']);
        throw new Error('fails half-way');
      }),
    ).rejects.toThrow('fails half-way');
    expect(await db.all('SELECT id FROM t')).toEqual([]);
    let seenInside: unknown;
    await db.transaction(async (tx) => {
      await tx.run('INSERT INTO t (id) VALUES ($1)', ['y']);
      seenInside = await db.all('SELECT id FROM t');
      expect(await tx.all('SELECT id FROM t')).toEqual([{ id: 'y' }]);
    });
    expect(seenInside).toEqual([]);
    expect(await db.all('SELECT id FROM t')).toEqual([{ id: 'y' }]);
  });

  it('a lock has one holder at a time, and is free again once released', async () => {
    const other = await open();
    const held = await db.tryLock('read-model:orders');
    expect(held).toBeDefined();
    // SQLite's locks are the process's own: the second "process" here is a second handle on one process's file.
    expect(await (db.engine === 'postgres' ? other : db).tryLock('read-model:orders')).toBeUndefined();
    await held!.release();
    const again = await (db.engine === 'postgres' ? other : db).tryLock('read-model:orders');
    expect(again).toBeDefined();
    await again!.release();
  });

  it('keeps checkpoints and snapshots that every process on the database shares, and reads an earlier release\'s once', async () => {
    const before = new MemoryCheckpointStore();
    await before.save('reactor.old', '17');
    const checkpoints = new SqlCheckpointStore(db, { before });
    expect(await checkpoints.load('reactor.a')).toBeUndefined();
    // The earlier release's file is read while the table has no row of the name; the table's row wins once saved.
    expect(await checkpoints.load('reactor.old')).toBe('17');
    await checkpoints.save('reactor.old', '18');
    await before.save('reactor.old', '99');
    expect(await checkpoints.load('reactor.old')).toBe('18');
    // Saves of one name land in call order: the last one stands.
    await Promise.all(['1', '2', '3', '4', '5'].map((position) => checkpoints.save('reactor.a', position)));
    await expect(checkpoints.save('../escape', '1')).rejects.toThrow(/invalid checkpoint name/);
    await expect(checkpoints.save('reactor.a', '')).rejects.toThrow(/non-empty/);
    // Another process (a replica) reads what this one saved.
    const other = await open();
    expect(await new SqlCheckpointStore(other).load('reactor.a')).toBe('5');

    const legacy: SnapshotStore = { load: async (name) => (name === 'agents' ? { version: 1, position: '3', previous: '2', eventId: 'e3', state: [['a', { x: 1 }]] } : undefined), save: async () => undefined };
    const snapshots = new SqlSnapshotStore(db, { before: legacy });
    expect(await snapshots.load('agents')).toEqual({ version: 1, position: '3', previous: '2', eventId: 'e3', state: [['a', { x: 1 }]] });
    await snapshots.save('agents', { version: 2, position: '9', previous: null, eventId: 'e9', state: [['a', { x: 2 }], ['b', { y: 'ü' }]] });
    expect(await new SqlSnapshotStore(other).load('agents')).toEqual({ version: 2, position: '9', previous: null, eventId: 'e9', state: [['a', { x: 2 }], ['b', { y: 'ü' }]] });
    expect(await snapshots.load('deadlines.none')).toBeUndefined();
  });

  describe('a projection runner', () => {
    let store: EventStore;
    beforeEach(async () => {
      store = await openEmbeddedEventStore({ directory: tempDir() });
    });
    afterEach(async () => {
      await store.close();
    });
    const orders = (d: ReadDatabase, version = 1) => d.all<{ id: string; total: number; events: number }>(`SELECT id, total, events FROM orders_v${version} ORDER BY id`);

    it('fills its tables from the log in batches, records the position with them, and resumes after it without applying an event twice', async () => {
      await place(store, 'a', [1, 2, 3]);
      await place(store, 'b', [10]);
      await store.append('other-x', [{ type: 'Noise', data: {} }], 'no_stream');
      const positions = new ReadModelPositions(store);
      const projection = ordersProjection();
      const runner = new SqlProjectionRunner(db, store, projection, { positions, logger: { warn: () => undefined }, maxBatch: 2 });
      await runner.start();
      expect(await orders(db)).toEqual([
        { id: 'order-a', total: 6, events: 3 },
        { id: 'order-b', total: 10, events: 1 },
      ]);
      expect(projection.batches).toBeGreaterThanOrEqual(2);
      expect(runner.position).toBe(await store.headPosition());
      // Live: a command's event is in the tables before a read-your-writes wait says so.
      const { position } = await store.append('order-b', [{ type: 'Placed', data: { amount: 5 } }], 0);
      await positions.waitFor(position);
      expect(await orders(db)).toContainEqual({ id: 'order-b', total: 15, events: 2 });
      await runner.stop();

      await place(store, 'c', [7]);
      const again = ordersProjection();
      const resumed = new SqlProjectionRunner(await open(), store, again, { logger: { warn: () => undefined } });
      await resumed.start();
      expect(await orders(db)).toEqual([
        { id: 'order-a', total: 6, events: 3 },
        { id: 'order-b', total: 15, events: 2 },
        { id: 'order-c', total: 7, events: 1 },
      ]);
      expect(again.batches).toBe(1);
      await resumed.stop();
    });

    it('a rebuild puts rows folded again from the log in place of the live ones while the writer goes on, applying no event twice', async () => {
      for (let i = 0; i < 40; i++) await place(store, `o${i}`, [i, 1]);
      const positions = new ReadModelPositions(store);
      const runner = new SqlProjectionRunner(db, store, ordersProjection(), { positions, logger: { warn: () => undefined }, maxBatch: 7 });
      await runner.start();
      // Rows gone wrong (a hand edit, a bug of an earlier release): verify finds them.
      await db.run('UPDATE orders_v1 SET total = 999 WHERE id = $1', ['order-o3']);
      await db.run('DELETE FROM orders_v1 WHERE id = $1', ['order-o4']);
      expect((await runner.verify()).equal).toBe(false);
      // Commands go on while the rebuild runs, in a second process's handle on the database.
      const writing = (async () => {
        for (let i = 0; i < 30; i++) await store.append(`order-o${i}`, [{ type: 'Placed', data: { amount: 100 } }], 1);
      })();
      const progress: RebuildProgress[] = [];
      const result = await rebuildSqlProjection(await open(), store, ordersProjection(), { progress: (p) => progress.push(p), progressEveryMs: 0, maxBatch: 5 });
      await writing;
      await positions.waitFor((await store.headPosition())!);
      // Every order as the log has it; the applied table's primary key would have refused an event applied twice (the writer would be stuck retrying).
      const expected = Array.from({ length: 40 }, (_, i) => ({ id: `order-o${i}`, total: i + 1 + (i < 30 ? 100 : 0), events: i < 30 ? 3 : 2 }));
      expect(new Map((await orders(db)).map((o) => [o.id, o]))).toEqual(new Map(expected.map((o) => [o.id, o])));
      expect((await db.all<{ n: number }>('SELECT CAST(COUNT(*) AS INTEGER) AS n FROM applied_v1'))[0]!.n).toBe(110);
      expect((await runner.verify()).equal).toBe(true);
      expect(result).toMatchObject({ name: 'orders', version: 1, rows: { orders_v1: 40 } });
      expect(result.events).toBeGreaterThanOrEqual(80);
      expect(new Set(progress.map((p) => p.phase))).toEqual(new Set(['fold', 'catch-up', 'switch']));
      expect(progress.at(-1)!.events).toBeGreaterThanOrEqual(80);
      await runner.stop();
    });

    it("a rebuild of several read models reads the log once, and puts each one's rows in place as its own rebuild would", async () => {
      for (let i = 0; i < 20; i++) await place(store, `m${i}`, [i, 2]);
      const runners = [1, 2].map((version) => new SqlProjectionRunner(db, store, ordersProjection(version), { logger: { warn: () => undefined } }));
      for (const runner of runners) await runner.start();
      await db.run('UPDATE orders_v1 SET total = 999 WHERE id = $1', ['order-m3']);
      await db.run('DELETE FROM orders_v2 WHERE id = $1', ['order-m4']);
      for (const runner of runners) expect((await runner.verify()).equal).toBe(false);
      // Passes over the log from its beginning, counted.
      let passes = 0;
      const counting = new Proxy(store, {
        get: (target, key) => {
          if (key === 'readAll') return (options?: { after?: string }) => ((passes += options?.after === undefined ? 1 : 0), target.readAll(options));
          const value = Reflect.get(target, key) as unknown;
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      });
      const switched: string[] = [];
      const results = await rebuildSqlProjections(await open(), counting, [ordersProjection(1), ordersProjection(2)], { maxBatch: 7, switched: (r) => void switched.push(`${r.name} v${r.version}`) });
      expect(passes).toBe(1);
      expect(switched).toEqual(['orders v1', 'orders v2']);
      expect(results.map((r) => r.rows)).toEqual([{ applied_v1: 40, orders_v1: 20 }, { applied_v2: 40, orders_v2: 20 }]);
      for (const runner of runners) expect((await runner.verify()).equal).toBe(true);
      expect(await orders(db, 2)).toEqual(await orders(db, 1));
      for (const runner of runners) await runner.stop();
    });

    it('a new version fills new tables from the log; tables at a position the log does not hold are filled again', async () => {
      await place(store, 'a', [1, 2]);
      const warnings: string[] = [];
      const logger = { warn: (line: string) => void warnings.push(line) };
      const first = new SqlProjectionRunner(db, store, ordersProjection(1), { logger });
      await first.start();
      await first.stop();
      const second = new SqlProjectionRunner(db, store, ordersProjection(2), { logger });
      await second.start();
      expect(await orders(db, 2)).toEqual([{ id: 'order-a', total: 3, events: 2 }]);
      // Beside the old version's, which a replica of the older release may still write and read.
      expect(await orders(db, 1)).toEqual([{ id: 'order-a', total: 3, events: 2 }]);
      expect(await db.all('SELECT name, version FROM agora_read_models ORDER BY name')).toEqual([
        { name: 'orders_v1', version: 1 },
        { name: 'orders_v2', version: 2 },
      ]);
      await second.stop();

      // Another log, shorter: the tables end at an event it does not hold.
      const otherLog = await openEmbeddedEventStore({ directory: tempDir() });
      try {
        await place(otherLog, 'z', [9]);
        const third = new SqlProjectionRunner(db, otherLog, ordersProjection(2), { logger });
        await third.start();
        expect(await orders(db, 2)).toEqual([{ id: 'order-z', total: 9, events: 1 }]);
        expect(warnings.join('\n')).toMatch(/does not hold the event its tables end at/);
        await third.stop();
      } finally {
        await otherLog.close();
      }
    });

    it('never writes part of a commit: a batch ends where a commit ends, catching up and live, whatever the batch size', async () => {
      const commit = (id: string, command: string, amounts: number[], expected: 'no_stream' | number) =>
        store.append(`order-${id}`, amounts.map((amount) => ({ type: 'Placed', data: { amount }, metadata: { commandId: command } })), expected);
      await commit('a', 'c1', [1, 2, 3], 'no_stream');
      await commit('b', 'c2', [4, 5], 'no_stream');
      await commit('a', 'c3', [6, 7, 8], 2);
      const projection = ordersProjection();
      const batches: string[][] = [];
      const apply = projection.apply.bind(projection);
      projection.apply = async (tx, events) => {
        batches.push(events.map((e) => `${e.streamId}/${String(e.metadata['commandId'])}`));
        await apply(tx, events);
      };
      const positions = new ReadModelPositions(store);
      const runner = new SqlProjectionRunner(db, store, projection, { positions, logger: { warn: () => undefined }, maxBatch: 2 });
      await runner.start();
      const live = await commit('b', 'c4', [9, 10, 11], 1);
      await positions.waitFor(live.position);
      await runner.stop();
      // Each commit's events in one batch (a batch of 2 holds a commit of 3 whole rather than split it).
      const batchOf = new Map<string, Set<number>>();
      batches.forEach((batch, i) => batch.forEach((c) => batchOf.set(c, (batchOf.get(c) ?? new Set()).add(i))));
      expect([...batchOf].map(([c, b]) => [c, b.size])).toEqual([['order-a/c1', 1], ['order-b/c2', 1], ['order-a/c3', 1], ['order-b/c4', 1]]);
      expect(await orders(db)).toEqual([
        { id: 'order-a', total: 27, events: 6 },
        { id: 'order-b', total: 39, events: 5 },
      ]);
    });

    it('verify folds the log again beside the live tables and finds a row that differs', async () => {
      await place(store, 'a', [1, 2]);
      await place(store, 'b', [5]);
      const runner = new SqlProjectionRunner(db, store, ordersProjection(), { logger: { warn: () => undefined } });
      await runner.start();
      expect(await runner.verify()).toEqual({ name: 'orders', position: await store.headPosition(), events: 3, equal: true, differences: [] });
      await db.run('UPDATE orders_v1 SET total = 999 WHERE id = $1', ['order-b']);
      const tampered = await runner.verify();
      expect(tampered.equal).toBe(false);
      expect(tampered.differences).toEqual(['orders_v1: live only: {"events":1,"id":"order-b","total":999}', 'orders_v1: rebuilt only: {"events":1,"id":"order-b","total":5}']);
      await runner.stop();
    });

    if (_engine === 'postgres') {
      it('replicas sharing the database: one writes, the other follows its position and takes over when it stops', async () => {
        await place(store, 'a', [1]);
        const quiet = { warn: () => undefined };
        const writer = new SqlProjectionRunner(db, store, ordersProjection(), { logger: quiet });
        await writer.start();
        const positions = new ReadModelPositions(store);
        const followerDb = await open();
        const follower = new SqlProjectionRunner(followerDb, store, ordersProjection(), { logger: quiet, positions, lockRetryMs: 200, pollMs: 20 });
        await follower.start();
        expect([writer.writing, follower.writing]).toEqual([true, false]);
        const { position } = await store.append('order-a', [{ type: 'Placed', data: { amount: 2 } }], 0);
        await positions.waitFor(position);
        expect(await orders(followerDb)).toEqual([{ id: 'order-a', total: 3, events: 2 }]);

        // Events of other categories move the recorded position too: a follower's read-your-writes wait on one is answered.
        const other = await store.append('other-x', [{ type: 'Noise', data: {} }], 'no_stream');
        await positions.waitFor(other.position);
        expect(follower.position).toBe(other.position);

        await writer.stop();
        await waitFor(() => follower.writing, 'the follower to take the lock over', 5_000);
        const next = await store.append('order-a', [{ type: 'Placed', data: { amount: 4 } }], 1);
        await positions.waitFor(next.position);
        expect(await orders(followerDb)).toEqual([{ id: 'order-a', total: 7, events: 3 }]);
        await follower.stop();
      });

      it('a follower hears of each commit from the writer (LISTEN/NOTIFY), with no polling', async () => {
        await place(store, 'a', [1]);
        const quiet = { warn: () => undefined };
        const writer = new SqlProjectionRunner(db, store, ordersProjection(), { logger: quiet });
        await writer.start();
        const positions = new ReadModelPositions(store, 5_000);
        const followerDb = await open();
        // Polling once a minute: only a notification can tell it in time.
        const follower = new SqlProjectionRunner(followerDb, store, ordersProjection(), { logger: quiet, positions, pollMs: 60_000, lockRetryMs: 60_000 });
        await follower.start();
        for (let i = 0; i < 3; i++) {
          const { position } = await store.append('order-a', [{ type: 'Placed', data: { amount: 1 } }], i);
          const started = Date.now();
          await positions.waitFor(position);
          expect(Date.now() - started).toBeLessThan(2_000);
        }
        expect(await orders(followerDb)).toEqual([{ id: 'order-a', total: 4, events: 4 }]);
        await follower.stop();
        await writer.stop();
      });
    }
  });
});
