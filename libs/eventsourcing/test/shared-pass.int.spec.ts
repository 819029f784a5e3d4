import { randomUUID } from 'node:crypto';
import type { EventStore, RecordedEvent } from '@agora/eventstore';
import { CheckpointedConsumer, MemoryCheckpointStore, ProjectionRunner, sharingCatchUp, type Projection } from '../src/index.js';
import { eventually, openTempStore, readAll, recordingLogger, removeTempDirs } from './helpers.js';

/** Counts every event type, a new model each time. */
const counts: Projection<Record<string, number>> = {
  name: 'counts',
  initial: () => ({}),
  apply: (model, event) => ({ ...model, [event.type]: (model[event.type] ?? 0) + 1 }),
};

/** The ids of the events of category `order`, in the order applied. */
const orderIds: Projection<string[]> = {
  name: 'order-ids',
  categories: ['order'],
  initial: () => [],
  apply: (model, event) => [...model, event.id],
};

let inner: EventStore;
let store: EventStore;
/** How many times the underlying store was asked to read the log (readAll and subscribe). */
let reads: { readAll: number; subscribe: number };
const stoppers: Array<{ stop(): Promise<void> }> = [];

beforeEach(async () => {
  ({ store: inner } = await openTempStore());
  reads = { readAll: 0, subscribe: 0 };
  const counted: EventStore = {
    get kind() {
      return inner.kind;
    },
    append: (s, e, x) => inner.append(s, e, x),
    readStream: (s, o) => inner.readStream(s, o),
    readAll: (o) => (reads.readAll++, inner.readAll(o)),
    headPosition: () => inner.headPosition(),
    comparePositions: (a, b) => inner.comparePositions(a, b),
    subscribe: (o) => (reads.subscribe++, inner.subscribe(o)),
    close: () => inner.close(),
  };
  store = sharingCatchUp(counted);
});
afterEach(async () => {
  await Promise.all(stoppers.splice(0).map((s) => s.stop()));
  await store.close();
});
afterAll(removeTempDirs);

async function appendMany(n: number, category = 'order'): Promise<void> {
  for (let i = 0; i < n; i++) await inner.append(`${category}-${i % 7}`, [{ id: randomUUID(), type: i % 3 === 0 ? 'Placed' : 'Paid', data: { i }, metadata: {} }], 'any');
}

function started<T extends { stop(): Promise<void> }>(part: T): T {
  stoppers.push(part);
  return part;
}

describe('sharingCatchUp', () => {
  it('catches up runners started together in one read of the log, each model equal to a rebuild, then each goes on live', async () => {
    await appendMany(300);
    await appendMany(40, 'other');
    const a = started(new ProjectionRunner(store, counts));
    const b = started(new ProjectionRunner(store, orderIds));
    const handled: string[] = [];
    const consumer = started(new CheckpointedConsumer({ store, checkpoints: new MemoryCheckpointStore(), consumer: { name: 'c', categories: ['order'], handle: async (e) => void handled.push(e.id) } }));
    await Promise.all([a.start(), b.start(), consumer.start()]);

    expect(reads.readAll).toBe(1);
    expect(a.model).toEqual(await ProjectionRunner.rebuild(inner, counts));
    expect(b.model).toEqual(await ProjectionRunner.rebuild(inner, orderIds));
    expect(handled).toEqual(b.model);
    const head = await inner.headPosition();
    expect([a.position, b.position, consumer.position]).toEqual([head, head, head]);

    await appendMany(5);
    await eventually(() => b.model.length === 305, 30_000);
    await eventually(() => handled.length === 305, 30_000);
    expect((await a.verify()).equal).toBe(true);
    expect((await b.verify()).equal).toBe(true);
  });

  it('hands each subscription only the events after its own position, in order', async () => {
    await appendMany(100);
    const all = await readAll(inner);
    const checkpoints = new MemoryCheckpointStore();
    await checkpoints.save('late', all[59]!.position);
    const early: RecordedEvent[] = [];
    const late: RecordedEvent[] = [];
    const first = started(new CheckpointedConsumer({ store, checkpoints, consumer: { name: 'early', handle: async (e) => void early.push(e) } }));
    const second = started(new CheckpointedConsumer({ store, checkpoints, consumer: { name: 'late', handle: async (e) => void late.push(e) } }));
    await Promise.all([first.start(), second.start()]);

    expect(reads.readAll).toBe(1);
    expect(early.map((e) => e.id)).toEqual(all.map((e) => e.id));
    expect(late.map((e) => e.id)).toEqual(all.slice(60).map((e) => e.id));
  });

  it('does not hold a subscription near the log\'s end back behind one far behind: past `lead` events of the pass it goes on alone', async () => {
    await appendMany(300);
    const all = await readAll(inner);
    const shared = sharingCatchUp(inner, { lead: 50 });
    const checkpoints = new MemoryCheckpointStore();
    await checkpoints.save('near', all[289]!.position);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const far: RecordedEvent[] = [];
    const near: RecordedEvent[] = [];
    // The one far behind is slow (a reactor issuing commands): it stops at its 60th event until released.
    const slow = started(new CheckpointedConsumer({ store: shared, checkpoints, consumer: { name: 'far', handle: async (e) => void (far.push(e) === 60 && (await gate)) } }));
    const quick = started(new CheckpointedConsumer({ store: shared, checkpoints, consumer: { name: 'near', handle: async (e) => void near.push(e) } }));
    const starting = Promise.all([slow.start(), quick.start()]);
    await eventually(() => near.length === 10, 3_000, 'the subscription near the end to catch up');
    expect(near.map((e) => e.id)).toEqual(all.slice(290).map((e) => e.id));
    expect(far).toHaveLength(60);
    release();
    await starting;
    expect(far.map((e) => e.id)).toEqual(all.map((e) => e.id));
  });

  it('sends a handler that throws on alone: it gets the same event again until it succeeds, the others are not held back', async () => {
    await appendMany(50);
    const all = await readAll(inner);
    const failOn = all[20]!.id;
    let failures = 0;
    const seen: string[] = [];
    const steadyLog = recordingLogger();
    const flakyLog = recordingLogger();
    const flaky = started(
      new CheckpointedConsumer({
        store,
        checkpoints: new MemoryCheckpointStore(),
        retry: { initialDelayMs: 5, maxDelayMs: 20 },
        logger: flakyLog,
        consumer: {
          name: 'flaky',
          handle: async (e) => {
            if (e.id === failOn && failures < 3) {
              failures++;
              throw new Error('not yet');
            }
            seen.push(e.id);
          },
        },
      }),
    );
    const steady = started(new ProjectionRunner(store, orderIds, { logger: steadyLog }));
    await Promise.all([flaky.start(), steady.start()]);

    expect(failures).toBe(3);
    expect(seen).toEqual(all.map((e) => e.id));
    expect(steady.model).toEqual(all.map((e) => e.id));
    expect(steadyLog.messages).toEqual([]);
    expect(flakyLog.messages).toHaveLength(3);
    expect(flakyLog.messages[0]).toMatch(/handle failed .*attempt 1/);
  });

  it('sends a projection whose apply throws (synchronously) on alone: applied once it succeeds, equal to a rebuild', async () => {
    await appendMany(60);
    const all = await readAll(inner);
    let throws = 1;
    const once: Projection<string[]> = {
      name: 'once',
      initial: () => [],
      apply: (model, event) => {
        if (event.id === all[10]!.id && throws-- > 0) throw new Error('once');
        return [...model, event.id];
      },
    };
    const log = recordingLogger();
    const runner = started(new ProjectionRunner(store, once, { logger: log, retry: { initialDelayMs: 5 } }));
    const other = started(new ProjectionRunner(store, counts));
    await Promise.all([runner.start(), other.start()]);
    expect(runner.model).toEqual(all.map((e) => e.id));
    expect(other.model).toEqual(await ProjectionRunner.rebuild(inner, counts));
    expect(log.messages).toHaveLength(1);
  });

  it('lets a subscription that comes after the pass went past its start read on its own, with the same result', async () => {
    await appendMany(200);
    const first = started(new ProjectionRunner(store, counts));
    await first.start();
    const second = started(new ProjectionRunner(store, counts));
    await second.start();
    expect(second.model).toEqual(first.model);
    expect(second.position).toBe(first.position);
  });

  it('stops a subscription riding the pass: caughtUp resolves, nothing more is handled, a restart resumes after its checkpoint', async () => {
    await appendMany(200);
    const checkpoints = new MemoryCheckpointStore();
    const handled: string[] = [];
    let stopAt: (() => void) | undefined;
    const stopping = new Promise<void>((resolve) => (stopAt = resolve));
    const consumer = new CheckpointedConsumer({
      store,
      checkpoints,
      consumer: {
        name: 'stopper',
        handle: async (e) => {
          handled.push(e.id);
          if (handled.length === 80) stopAt!();
        },
      },
    });
    const other = started(new ProjectionRunner(store, counts));
    const starting = Promise.all([consumer.start(), other.start()]);
    await stopping;
    await consumer.stop();
    await starting;
    const stoppedAt = handled.length;
    expect(stoppedAt).toBeGreaterThanOrEqual(80);
    expect(stoppedAt).toBeLessThan(200);
    expect(await checkpoints.load('stopper')).toBe(consumer.position);

    const again: string[] = [];
    const restarted = started(new CheckpointedConsumer({ store, checkpoints, consumer: { name: 'stopper', handle: async (e) => void again.push(e.id) } }));
    await restarted.start();
    expect([...handled, ...again]).toEqual((await readAll(inner)).map((e) => e.id));
  });

  it('refuses a malformed position at subscribe, like the store', () => {
    expect(() => store.subscribe({ after: 'not-a-position', handler: () => undefined })).toThrow();
  });
});
