/**
 * A reactor's reactions run on several streams at once (ReactorSpec.concurrency) under a real
 * checkpointed consumer on an embedded store: each stream's events in order, never more at once than
 * asked, a failure retried in place, and the checkpoint saved only once every event before it is done.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointedConsumer, type CheckpointStore } from '@agora/eventsourcing';
import { openEmbeddedEventStore, type EventStore, type Position, type RecordedEvent } from '@agora/eventstore';
import { pipelined } from '../src/index.js';

describe('pipelined reactions', () => {
  let dir: string;
  let store: EventStore;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agora-pipelined-'));
    store = await openEmbeddedEventStore({ directory: dir });
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs streams at once, each in order, retries a failure, and saves a checkpoint only past events whose reactions are done', async () => {
    for (let i = 0; i < 60; i++) await store.append(`order-${i % 6}`, [{ type: 'Placed', data: { i } }], 'any');
    const done: RecordedEvent[] = [];
    const running = new Set<string>();
    let most = 0;
    let failures = 0;
    const react = async (event: RecordedEvent) => {
      running.add(event.id);
      most = Math.max(most, running.size);
      // Stream 0 is slow; event 7 fails twice before it succeeds.
      await new Promise((r) => setTimeout(r, event.streamId === 'order-0' ? 15 : 2));
      running.delete(event.id);
      if ((event.data as { i: number }).i === 7 && failures < 2) {
        failures++;
        throw new Error('the log is unavailable for a moment');
      }
      done.push(event);
    };
    const warnings: string[] = [];
    const pipeline = pipelined('orders', react, 4, { warn: (line) => void warnings.push(line) });
    // Each save checks that every event up to the saved position is done.
    const saves: { position: Position; allDone: boolean }[] = [];
    const all: RecordedEvent[] = [];
    for await (const event of store.readAll()) all.push(event);
    const checkpoints: CheckpointStore = {
      load: async () => undefined,
      save: async (_name, position) => {
        const upTo = all.slice(0, all.findIndex((e) => e.position === position) + 1);
        saves.push({ position, allDone: upTo.every((e) => done.some((d) => d.id === e.id)) });
      },
    };
    const consumer = new CheckpointedConsumer({ store, checkpoints, consumer: { name: 'orders', handle: pipeline.handle, beforeCheckpoint: pipeline.beforeCheckpoint }, checkpointEvery: { events: 10, ms: 50 } });
    await consumer.start();
    while (done.length < 60) await new Promise((r) => setTimeout(r, 10));
    pipeline.stop();
    await consumer.stop();

    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(4);
    expect(failures).toBe(2);
    expect(warnings.filter((w) => w.includes('failed (attempt'))).toHaveLength(2);
    // Every event once, and each stream's in the log's order.
    expect(new Set(done.map((e) => e.id)).size).toBe(60);
    for (let s = 0; s < 6; s++) expect(done.filter((e) => e.streamId === `order-${s}`).map((e) => e.id)).toEqual(all.filter((e) => e.streamId === `order-${s}`).map((e) => e.id));
    // Not in the log's order across streams (the slow stream's events finish later), yet no save passed an unfinished one.
    expect(done.map((e) => e.id)).not.toEqual(all.map((e) => e.id));
    expect(saves.length).toBeGreaterThan(1);
    expect(saves.every((s) => s.allDone)).toBe(true);
    expect(saves.at(-1)!.position).toBe(all.at(-1)!.position);
  });

  it('gives up a reaction waiting out its backoff as soon as it is stopped, and holds the checkpoint before it', async () => {
    let attempts = 0;
    // What the reactor's lag is measured on: the events whose reactions are not done.
    const inHand = new Set<RecordedEvent>();
    const lag = { begin: (e: RecordedEvent) => void inHand.add(e), end: (e: RecordedEvent) => void inHand.delete(e), stop: () => undefined };
    const pipeline = pipelined('stuck', async () => {
      attempts++;
      throw new Error('the other service does not answer');
    }, 2, { warn: () => undefined }, lag);
    const [event] = await (async () => {
      const got: RecordedEvent[] = [];
      for await (const e of store.readAll()) if (got.push(e) >= 1) break;
      return got;
    })();
    await pipeline.handle(event!);
    // Let it fail into a backoff long enough (the sixth attempt waits 3.2 s) that only a stop ends it quickly.
    while (attempts < 6) await new Promise((r) => setTimeout(r, 20));
    // Taken in long ago, not done: still in hand for the lag.
    expect([...inHand]).toEqual([event]);
    const stoppedAt = Date.now();
    pipeline.stop();
    await expect(pipeline.beforeCheckpoint()).rejects.toThrow(/stopped with a reaction not done/);
    expect(Date.now() - stoppedAt).toBeLessThan(1000);
    expect(attempts).toBe(6);
    expect(inHand.size).toBe(0);
  });
});
