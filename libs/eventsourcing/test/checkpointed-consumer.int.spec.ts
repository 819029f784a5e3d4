import { join } from 'node:path';
import { InvalidPosition, openEmbeddedEventStore, type EventStore, type RecordedEvent } from '@agora/eventstore';
import { CheckpointedConsumer, FileCheckpointStore, MemoryCheckpointStore, type CheckpointStore, type CheckpointedConsumerOptions } from '../src/index.js';
import { eventually, openTempStore, recordingLogger, removeTempDirs, tempDir } from './helpers.js';

const stores: EventStore[] = [];
const consumers: CheckpointedConsumer[] = [];
afterEach(async () => {
  await Promise.all(consumers.splice(0).map((c) => c.stop()));
  await Promise.all(stores.splice(0).map((s) => s.close()));
});
afterAll(removeTempDirs);

async function freshStore(): Promise<{ store: EventStore; directory: string }> {
  const opened = await openTempStore();
  stores.push(opened.store);
  return opened;
}

/** Appends `count` relay events, each with an unrelated event in between; returns the positions of the relay events. */
async function appendRelayEvents(store: EventStore, from: number, count: number): Promise<string[]> {
  const positions: string[] = [];
  for (let n = from; n < from + count; n++) {
    positions.push((await store.append(`relay-${n % 4}`, [{ type: 'Happened', data: { n } }], 'any')).position);
    await store.append(`noise-${n}`, [{ type: 'Noise', data: {} }], 'any');
  }
  return positions;
}

/** A consumer of the `relay` category that records the `n` of each event it handles. */
function consumerOn(store: EventStore, checkpoints: CheckpointStore, overrides: Partial<CheckpointedConsumerOptions> = {}) {
  const handled: number[] = [];
  const logger = recordingLogger();
  const consumer = new CheckpointedConsumer({
    store,
    checkpoints,
    consumer: { name: 'relay.test', categories: ['relay'], handle: async (e: RecordedEvent) => void handled.push((e.data as { n: number }).n) },
    logger,
    retry: { initialDelayMs: 5, maxDelayMs: 10 },
    ...overrides,
  });
  consumers.push(consumer);
  return { consumer, handled, logger };
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

describe('CheckpointedConsumer', () => {
  it('resumes after a stop and a store restart with no gaps and no repeats', async () => {
    const { store, directory } = await freshStore();
    const checkpointDir = join(tempDir(), 'checkpoints');
    const checkpoints = new FileCheckpointStore(checkpointDir);
    await appendRelayEvents(store, 0, 5);
    const first = consumerOn(store, checkpoints);
    await first.consumer.start();
    const live = await appendRelayEvents(store, 5, 5);
    await eventually(() => first.handled.length === 10, 2_000, 'live events');
    await eventually(() => first.consumer.position === String(Number(live.at(-1)) + 1), 2_000, 'the unrelated event after the last relay event');
    await first.consumer.stop();
    expect(first.handled).toEqual(range(0, 10));
    // The unrelated event after the last relay event moved the checkpoint too.
    expect(await checkpoints.load('relay.test')).toBe(String(Number(live.at(-1)) + 1));

    await appendRelayEvents(store, 10, 5);
    await store.close();
    const reopened = await openEmbeddedEventStore({ directory });
    stores.push(reopened);
    const second = consumerOn(reopened, new FileCheckpointStore(checkpointDir));
    await second.consumer.start();
    await appendRelayEvents(reopened, 15, 3);
    await eventually(() => second.handled.length === 8, 2_000, 'events after the checkpoint');
    await second.consumer.stop();
    expect(second.handled).toEqual(range(10, 18));
  });

  it('saves the checkpoint once caught up on history, then every N live events, and on stop', async () => {
    const { store } = await freshStore();
    const checkpoints = new MemoryCheckpointStore();
    const saves: string[] = [];
    const counting = { load: (name: string) => checkpoints.load(name), save: async (name: string, position: string) => (saves.push(position), checkpoints.save(name, position)) };
    const history: string[] = [];
    for (let n = 0; n < 7; n++) history.push((await store.append(`relay-${n}`, [{ type: 'Happened', data: { n } }], 'no_stream')).position);
    const { consumer, handled } = consumerOn(store, counting, { checkpointEvery: { events: 3, ms: 60_000 } });
    await consumer.start();
    expect(handled).toEqual(range(0, 7));
    // History: one save, at its end (not one every 3 events).
    expect(saves).toEqual([history[6]]);
    const live: string[] = [];
    for (let n = 7; n < 14; n++) live.push((await store.append(`relay-${n}`, [{ type: 'Happened', data: { n } }], 'no_stream')).position);
    await eventually(() => handled.length === 14, 2_000, 'live events');
    await eventually(() => saves.length === 3, 2_000, 'two saves of 3 live events each');
    expect(saves).toEqual([history[6], live[2], live[5]]);
    await consumer.stop();
    expect(await checkpoints.load('relay.test')).toBe(live[6]);
  });

  it('counts only the events it handles towards a save: the other categories wait for the time rule or the stop', async () => {
    const { store } = await freshStore();
    const checkpoints = new MemoryCheckpointStore();
    const saves: string[] = [];
    const counting = { load: (name: string) => checkpoints.load(name), save: async (name: string, position: string) => (saves.push(position), checkpoints.save(name, position)) };
    const { consumer, handled } = consumerOn(store, counting, { checkpointEvery: { events: 3, ms: 60_000 } });
    await consumer.start();
    // relay, noise, relay, noise, relay, noise: the third relay event is the third handled.
    const relay = await appendRelayEvents(store, 0, 3);
    await eventually(() => handled.length === 3, 2_000, 'live events');
    const afterLastRelay = String(Number(relay.at(-1)) + 1);
    await eventually(() => consumer.position === afterLastRelay, 2_000, 'the unrelated event after the last relay event');
    let lastNoise = afterLastRelay;
    for (let n = 0; n < 6; n++) lastNoise = (await store.append(`noise-x${n}`, [{ type: 'Noise', data: {} }], 'no_stream')).position;
    await eventually(() => consumer.position === lastNoise, 2_000, 'the unrelated events');
    expect(saves).toEqual([relay[2]]);
    await consumer.stop();
    expect(saves).toEqual([relay[2], lastNoise]);
  });

  it('saves progress after a quiet interval without a stop', async () => {
    const { store } = await freshStore();
    const checkpoints = new MemoryCheckpointStore();
    const { consumer } = consumerOn(store, checkpoints, { checkpointEvery: { events: 1_000, ms: 30 } });
    await consumer.start();
    const positions = await appendRelayEvents(store, 0, 2);
    const last = String(Number(positions.at(-1)) + 1);
    await eventually(() => consumer.checkpoint === last, 2_000, 'the timed checkpoint');
    expect(await checkpoints.load('relay.test')).toBe(last);
  });

  it('hands a failing event again until it succeeds, in order, nothing after it first', async () => {
    const { store } = await freshStore();
    await appendRelayEvents(store, 0, 4);
    const handled: number[] = [];
    let failures = 0;
    const { consumer, logger } = consumerOn(store, new MemoryCheckpointStore(), {
      consumer: {
        name: 'relay.flaky',
        categories: ['relay'],
        handle: async (e) => {
          const { n } = e.data as { n: number };
          if (n === 2 && failures++ < 3) throw new Error('nats unreachable');
          handled.push(n);
        },
      },
    });
    await consumer.start();
    expect(handled).toEqual([0, 1, 2, 3]);
    expect(logger.messages).toHaveLength(3);
    expect(logger.messages[0]).toMatch(/relay\.flaky.*relay-2@0/);
  });

  it('redelivers from the last saved checkpoint when saving failed (at least once)', async () => {
    const { store } = await freshStore();
    await appendRelayEvents(store, 0, 3);
    const real = new MemoryCheckpointStore();
    let broken = true;
    const flakyCheckpoints: CheckpointStore = {
      load: (name) => real.load(name),
      save: async (name, position) => {
        if (broken) throw new Error('disk full');
        await real.save(name, position);
      },
    };
    const first = consumerOn(store, flakyCheckpoints);
    await first.consumer.start();
    await first.consumer.stop();
    expect(first.logger.messages.some((m) => /saving checkpoint .* failed/.test(m))).toBe(true);

    broken = false;
    const second = consumerOn(store, flakyCheckpoints);
    await second.consumer.start();
    expect(second.handled).toEqual(range(0, 3));
  });

  it('refuses to start from a checkpoint the store did not produce', async () => {
    const { store } = await freshStore();
    const checkpoints = new MemoryCheckpointStore();
    await checkpoints.save('relay.test', '999');
    const { consumer } = consumerOn(store, checkpoints);
    await expect(consumer.start()).rejects.toBeInstanceOf(InvalidPosition);
  });

  it('refuses a bad consumer name at construction', async () => {
    const { store } = await freshStore();
    expect(() => new CheckpointedConsumer({ store, checkpoints: new MemoryCheckpointStore(), consumer: { name: 'no/slash', handle: async () => undefined } })).toThrow(TypeError);
  });
});
