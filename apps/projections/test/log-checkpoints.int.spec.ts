import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AUDIT_LOG_STREAM, type DataOf, type LogCheckpointRecorded } from '@agora/contracts';
import { checkpointMismatch, LogHasher } from '@agora/eventsourcing';
import { openEmbeddedEventStore, type EventStore, type RecordedEvent } from '@agora/eventstore';
import { generateKeyPair } from '@agora/identity';
import { JetStreamLeaseRegister, Leases } from '@agora/runtime';
import { startNatsServer, waitFor } from '@agora/testing';
import { connect } from '@nats-io/transport-node';
import { startLogCheckpoints } from '../src/log-checkpoints.js';

let dir: string;
let store: EventStore;
/** The projections service's identity: its key signs the checkpoints. */
const as = { service: 'projections' as const, actor: 'service:projections', roles: ['service'], ...generateKeyPair() };
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agora-checkpoints-'));
  store = await openEmbeddedEventStore({ directory: dir });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
/** One commit (the events of one command) of `events` events. */
const commit = (stream: string, events = 1) => {
  const commandId = `cmd-${n}`;
  return store.append(
    stream,
    Array.from({ length: events }, () => ({ type: 'Happened', data: { n: n++ }, metadata: { commandId } })),
    'any',
  );
};
const checkpoints = async () => (await store.readStream(AUDIT_LOG_STREAM).catch(() => [])).map((e) => e.data as DataOf<typeof LogCheckpointRecorded>);
const all = async () => {
  const out: RecordedEvent[] = [];
  for await (const e of store.readAll()) out.push(e);
  return out;
};
/** Every checkpoint in the log agrees with the log hashed again from the start. */
const verify = async () => {
  const marks = new Map((await checkpoints()).map((c) => [c.count, c]));
  const hasher = new LogHasher();
  const mismatches: string[] = [];
  for (const e of await all()) {
    const head = hasher.add(e);
    const mark = marks.get(head.count);
    if (mark) mismatches.push(checkpointMismatch(mark, head) ?? 'ok');
  }
  return mismatches;
};

describe('log checkpoints recorded by the projections service', () => {
  it('records a checkpoint every N commits (a commit of several events counting once), each matching the log hashed again', async () => {
    for (let i = 0; i < 4; i++) await commit(`thing-${i}`, i === 1 ? 3 : 1);
    const running = await startLogCheckpoints({ store, as, every: 2, intervalMs: 60_000 });
    try {
      await running.caughtUp;
      // Commits 1-2 are events 1-4 (the second holds three): recorded when the third begins.
      // Commits 3-4 (events 5, 6): recorded when the next commit (that first checkpoint) begins.
      await waitFor(async () => (await checkpoints()).length === 2, 'two checkpoints');
      expect((await checkpoints()).map((c) => c.count)).toEqual([4, 6]);
      // Nothing but its own checkpoints since: nothing to record.
      await running.checkpoint();
      expect((await checkpoints()).map((c) => c.count)).toEqual([4, 6]);
      expect(await verify()).toEqual(['ok', 'ok']);
    } finally {
      await running.close();
    }
  });

  it('records one after M ms when fewer commits came, never for its own checkpoints alone, and resumes from the last one', async () => {
    await commit('thing-a');
    let running = await startLogCheckpoints({ store, as, every: 100, intervalMs: 150 });
    await waitFor(async () => (await checkpoints()).length === 1, 'a checkpoint by time');
    await new Promise((r) => setTimeout(r, 600));
    expect(await checkpoints()).toHaveLength(1);
    await running.close();

    await commit('thing-b');
    running = await startLogCheckpoints({ store, as, every: 100, intervalMs: 150 });
    try {
      await waitFor(async () => (await checkpoints()).length === 2, 'a second checkpoint after the restart');
      // The resumed hash continues the first: both checkpoints agree with the log hashed from the start
      // (thing-a, the first checkpoint's commandId reservation and the checkpoint itself, thing-b).
      expect((await checkpoints()).map((c) => c.count)).toEqual([1, 4]);
      expect(await verify()).toEqual(['ok', 'ok']);
    } finally {
      await running.close();
    }
  });
});

describe('log checkpoints with replicas (leases)', () => {
  it('only the lease holder records them; a standby hashes the log and records once its holder is gone', async () => {
    const nats = await startNatsServer();
    const connections = await Promise.all([0, 1].map(() => connect({ servers: nats.url })));
    const quiet = { log: () => undefined, logger: { warn: () => undefined } };
    const [holderLeases, standbyLeases] = connections.map((c, i) => new Leases(() => JetStreamLeaseRegister.open(c), { ttlMs: 600, holder: `replica-${i}`, ...quiet })) as [Leases, Leases];
    const holder = await startLogCheckpoints({ store, as, every: 2, intervalMs: 60_000, leases: holderLeases });
    // What the standby asks of the store once started: recording a checkpoint reads (and appends), hashing only follows the log.
    let standbyCalls = 0;
    const counted = new Proxy(store, {
      get: (target, property, receiver) => {
        const value: unknown = Reflect.get(target, property, receiver);
        if (property !== 'readStream' && property !== 'append') return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        return (...args: unknown[]) => {
          standbyCalls++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const standby = await startLogCheckpoints({ store: counted, as, every: 2, intervalMs: 60_000, leases: standbyLeases });
    standbyCalls = 0;
    const byStandby = async () => standbyCalls;
    try {
      for (let i = 0; i < 6; i++) await commit(`thing-${i}`);
      await waitFor(async () => (await checkpoints()).length >= 2, 'the holder to record checkpoints');
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await byStandby()).toBe(0);
      expect(standbyLeases.held()).toEqual([{ name: 'log-checkpoints', held: false }]);
      const before = (await checkpoints()).length;

      // The holder goes away (released on close): the standby takes the lease and records what follows.
      await holder.close();
      await waitFor(() => standbyLeases.held()[0]?.held === true, 'the standby to take the lease', 5_000);
      for (let i = 6; i < 10; i++) await commit(`thing-${i}`);
      await waitFor(async () => (await checkpoints()).length > before, 'the standby to record a checkpoint');
      expect(await byStandby()).toBeGreaterThan(0);
      expect((await verify()).every((m) => m === 'ok')).toBe(true);
    } finally {
      await standby.close();
      await holder.close().catch(() => undefined);
      for (const c of connections) await c.close();
      await nats.stop();
    }
  }, 30_000);
});
