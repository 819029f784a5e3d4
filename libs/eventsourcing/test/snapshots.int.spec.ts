import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openEmbeddedEventStore, type EventStore, type RecordedEvent } from '@agora/eventstore';
import { FileSnapshotStore, mapSnapshotCodec, ProjectionRunner, type Projection } from '../src/index.js';
import { recordingLogger, removeTempDirs, tempDir } from './helpers.js';

interface Order {
  placed: number;
  total: number;
  last: string;
}

/** A Map read model of order streams, counting every event it folds: a restart from a snapshot must fold only the new ones. */
function ordersProjection(version = 1): Projection<Map<string, Order>> & { folded: number } {
  const projection = {
    name: 'orders',
    categories: ['order'],
    folded: 0,
    initial: () => new Map<string, Order>(),
    snapshot: mapSnapshotCodec<Order>(version),
    apply(model: Map<string, Order>, event: RecordedEvent) {
      projection.folded++;
      const current = model.get(event.streamId) ?? { placed: 0, total: 0, last: '' };
      const { amount } = event.data as { amount: number };
      model.set(event.streamId, { placed: current.placed + (event.type === 'Placed' ? 1 : 0), total: current.total + amount, last: event.type });
    },
  };
  return projection;
}

async function appendOrders(store: EventStore, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) {
    await store.append(`order-${i % 7}`, [{ id: randomUUID(), type: i % 3 === 0 ? 'Placed' : 'Paid', data: { amount: i } }], 'any');
    if (i % 5 === 0) await store.append(`other-${i}`, [{ id: randomUUID(), type: 'Noise', data: {} }], 'any');
  }
}

afterAll(removeTempDirs);

describe('read-model snapshots', () => {
  it('a restart restores the saved model and folds only the events after it: the same model as a rebuild from scratch, nothing skipped or counted twice', async () => {
    const dir = tempDir();
    const snapshots = new FileSnapshotStore(join(dir, 'snapshots'));
    let store = await openEmbeddedEventStore({ directory: join(dir, 'events') });
    await appendOrders(store, 0, 200);
    const first = ordersProjection();
    const runner = new ProjectionRunner(store, first, { snapshots, snapshotEvery: { events: 50 } });
    await runner.start();
    // Live events after catch-up, then a stop (which saves).
    await appendOrders(store, 200, 30);
    await runner.stop();
    const stoppedAt = runner.position;
    await store.close();

    store = await openEmbeddedEventStore({ directory: join(dir, 'events') });
    await appendOrders(store, 230, 40);
    const second = ordersProjection();
    const restarted = new ProjectionRunner(store, second, { snapshots });
    await restarted.start();
    // Only the order events after the saved position (the 40 new ones and any live one the stop cut off): the others came from the snapshot.
    const after: RecordedEvent[] = [];
    for await (const e of store.readAll({ after: stoppedAt! })) after.push(e);
    expect(second.folded).toBe(countOrders(after));
    expect(second.folded).toBeGreaterThanOrEqual(40);
    expect(second.folded).toBeLessThan(80);
    expect(restarted.model).toEqual(await ProjectionRunner.rebuild(store, ordersProjection()));
    expect(Number(restarted.position)).toBeGreaterThan(Number(stoppedAt));
    expect((await restarted.verify()).equal).toBe(true);
    await restarted.stop();
    await store.close();
  });

  it('discards, with a log line, a snapshot of another version, one at a position the log never produced and one of another log, and rebuilds', async () => {
    const dir = tempDir();
    const snapshotDir = join(dir, 'snapshots');
    const snapshots = new FileSnapshotStore(snapshotDir);
    const store = await openEmbeddedEventStore({ directory: join(dir, 'events') });
    await appendOrders(store, 0, 60);
    const expected = await ProjectionRunner.rebuild(store, ordersProjection());
    const saved = new ProjectionRunner(store, ordersProjection(), { snapshots });
    await saved.start();
    await saved.stop();

    const cases: Array<{ what: string; prepare(): Promise<void> | void; version?: number; message: RegExp }> = [
      { what: 'another version', prepare: () => undefined, version: 2, message: /version 1 does not match the code's version 2/ },
      {
        what: 'a position never produced',
        prepare: () => writeSnapshot(snapshotDir, { version: 1, position: '999999', previous: '999998', eventId: randomUUID(), state: [['order-1', { placed: 99, total: 99, last: 'X' }]] }),
        message: /position 999999 .* is not in this log/,
      },
      {
        what: 'another log (the position exists, another event is there)',
        prepare: () => writeSnapshot(snapshotDir, { version: 1, position: '3', previous: '2', eventId: randomUUID(), state: [['order-1', { placed: 99, total: 99, last: 'X' }]] }),
        message: /position 3 .* is not in this log/,
      },
    ];
    for (const c of cases) {
      await c.prepare();
      const logger = recordingLogger();
      const projection = ordersProjection(c.version ?? 1);
      const runner = new ProjectionRunner(store, projection, { snapshots, logger });
      await runner.start();
      expect(runner.model).toEqual(expected);
      expect(projection.folded).toBe(countOrders(await allEvents(store)));
      expect(logger.messages.join('\n')).toMatch(c.message);
      await runner.stop();
    }
    await store.close();
  });
});

function writeSnapshot(directory: string, snapshot: { version: number; position: string; previous: string | null; eventId: string; state: unknown }): void {
  writeFileSync(join(directory, 'orders.snapshot.json'), JSON.stringify({ format: 1, name: 'orders', savedAt: new Date().toISOString(), ...snapshot }));
}

async function allEvents(store: EventStore): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  for await (const e of store.readAll()) out.push(e);
  return out;
}

function countOrders(events: RecordedEvent[]): number {
  return events.filter((e) => e.streamId.startsWith('order-')).length;
}
