import type { EventStore, RecordedEvent } from '@agora/eventstore';
import { ProjectionRunner, runProjection, type Projection } from '../src/index.js';
import { eventually, openTempStore, readAll, recordingLogger, removeTempDirs } from './helpers.js';

interface Totals {
  orders: number;
  totalByStream: Record<string, number>;
  lastTypes: string[];
}

/** Mutates its model in place (returns nothing). */
const totals: Projection<Totals> = {
  name: 'order-totals',
  categories: ['order'],
  initial: () => ({ orders: 0, totalByStream: {}, lastTypes: [] }),
  apply(model, event) {
    const { amount } = event.data as { amount: number };
    if (event.type === 'Placed') model.orders++;
    model.totalByStream[event.streamId] = (model.totalByStream[event.streamId] ?? 0) + amount;
    model.lastTypes.push(event.type);
  },
};

/** Returns a new model every time, over every category. */
const counts: Projection<Readonly<Record<string, number>>> = {
  name: 'counts',
  initial: () => ({}),
  apply: (model, event) => ({ ...model, [event.type]: (model[event.type] ?? 0) + 1 }),
};

let store: EventStore;
const runners: Array<{ stop(): Promise<void> }> = [];
beforeEach(async () => {
  ({ store } = await openTempStore());
});
afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.stop()));
  await store.close();
});
afterAll(removeTempDirs);

/** Appends `count` order events (streams order-0..2) each followed by an invoice event; returns the last position. */
async function appendSome(from: number, count: number): Promise<RecordedEvent['position']> {
  let position = '';
  for (let i = from; i < from + count; i++) {
    await store.append(`order-${i % 3}`, [{ type: i % 3 === 0 ? 'Placed' : 'Paid', data: { amount: i } }], 'any');
    position = (await store.append(`invoice-${i}`, [{ type: 'Issued', data: { amount: 1000 } }], 'any')).position;
  }
  return position;
}

describe('ProjectionRunner', () => {
  it('verifies on demand: a rebuild up to the live position equals the live model, and a model that depends on more than the events does not', async () => {
    await appendSome(0, 6);
    const runner = new ProjectionRunner(store, totals);
    runners.push(runner);
    await runner.start();
    const verified = await runner.verify();
    expect(verified).toEqual({ name: 'order-totals', position: runner.position, events: 12, equal: true });

    // Events appended after the live model's position do not count against it.
    await appendSome(6, 2);
    expect((await runner.verify()).equal).toBe(true);

    let calls = 0;
    const impure: Projection<{ seen: number[] }> = { name: 'impure', initial: () => ({ seen: [] }), apply: (model) => void model.seen.push(calls++) };
    const drifting = new ProjectionRunner(store, impure);
    runners.push(drifting);
    await drifting.start();
    expect(await drifting.verify()).toMatchObject({ name: 'impure', equal: false });
  });

  it('folds history, then live events, and equals a rebuild from scratch', async () => {
    await appendSome(0, 10);
    const runner = new ProjectionRunner(store, totals);
    runners.push(runner);
    await runner.start();
    expect(runner.model).toEqual(await ProjectionRunner.rebuild(store, totals));
    expect(runner.model.orders).toBe(4);

    const last = await appendSome(10, 15);
    await eventually(() => runner.position === last, 2_000, 'the live events');
    const rebuilt = await ProjectionRunner.rebuild(store, totals);
    expect(runner.model).toEqual(rebuilt);
    expect(rebuilt.lastTypes).toHaveLength(25);
    expect(Object.keys(rebuilt.totalByStream).sort()).toEqual(['order-0', 'order-1', 'order-2']);
  });

  it('works with an apply that returns a new model, over every category', async () => {
    await appendSome(0, 4);
    const runner = await runProjection(store, counts);
    runners.push(runner);
    expect(runner.model).toEqual({ Placed: 2, Paid: 2, Issued: 4 });
    expect(runner.model).toEqual(await ProjectionRunner.rebuild(store, counts));
  });

  it('starts again from the beginning in a new runner (an in-memory model has no checkpoint)', async () => {
    await appendSome(0, 6);
    const first = await runProjection(store, totals);
    await first.stop();
    await appendSome(6, 3);
    const second = await runProjection(store, totals);
    runners.push(second);
    expect(second.model.lastTypes).toHaveLength(9);
    expect(second.model).toEqual(await ProjectionRunner.rebuild(store, totals));
  });

  it('retries an apply that throws, logging it, without skipping or repeating the event', async () => {
    await appendSome(0, 3);
    let failures = 0;
    const flaky: Projection<string[]> = {
      name: 'flaky',
      categories: ['order'],
      initial: () => [],
      apply: (model, event) => {
        if (event.revision === 0 && event.streamId === 'order-1' && failures++ < 2) throw new Error('not yet');
        return [...model, `${event.streamId}@${event.revision}`];
      },
    };
    const logger = recordingLogger();
    const runner = new ProjectionRunner(store, flaky, { logger, retry: { initialDelayMs: 5, maxDelayMs: 10 } });
    runners.push(runner);
    await runner.start();
    expect(runner.model).toEqual(['order-0@0', 'order-1@0', 'order-2@0']);
    expect(logger.messages).toHaveLength(2);
    expect(logger.messages[0]).toMatch(/flaky.*order-1@0/);
  });

  it('resolves caughtUp on an empty store and refuses a second start', async () => {
    const runner = new ProjectionRunner(store, totals);
    runners.push(runner);
    await runner.start();
    await runner.caughtUp;
    expect(runner.model).toEqual(totals.initial());
    await expect(runner.start()).rejects.toThrow(/already started/);
    expect(await readAll(store)).toEqual([]);
  });
});
