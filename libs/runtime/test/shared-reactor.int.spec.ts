// A reactor shared by three replicas through leases (a private nats-server, one embedded store):
// each event's reaction is issued once, by the lease holder. When the holder dies (its NATS
// connection gone, nothing released), a standby takes the lease over after a ttl and resumes from
// its own checkpoint: what the old holder did is issued again and appends nothing, what it had
// not done yet is done, once.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command, Decider, DomainEvent } from '@agora/decider';
import { FileCheckpointStore } from '@agora/eventsourcing';
import { openEmbeddedEventStore, type EventStore, type RecordedEvent } from '@agora/eventstore';
import { generateKeyPair } from '@agora/identity';
import { startNatsServer, waitFor, type PrivateNatsServer } from '@agora/testing';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { JetStreamLeaseRegister, Leases, ProcessMetrics, runReactor, type Running } from '../src/index.js';

const TTL_MS = 1_000;
const BATCH = 20;

// The reaction borrows a real service command (the voting service may issue it on its own behalf).
type AnswerCommand = Command<'ExpireVotingSession', { sessionId: string }>;
type AnswerEvent = DomainEvent<'Answered', { sessionId: string }>;
const answers: Decider<AnswerCommand, AnswerEvent, { answered: boolean }> = {
  initialState: () => ({ answered: false }),
  evolve: () => ({ answered: true }),
  decide: (c, s) => (s.answered ? [] : [{ type: 'Answered', data: { sessionId: c.payload.sessionId } }]),
};

interface Replica {
  connection: NatsConnection;
  metrics: ProcessMetrics;
  running: Running;
}

describe('a reactor shared by replicas (leases)', () => {
  let nats: PrivateNatsServer;
  let dir: string;
  let store: EventStore;
  const replicas: Replica[] = [];
  const as = { service: 'voting' as const, actor: 'service:voting', roles: ['service'], ...generateKeyPair() };

  beforeAll(async () => {
    nats = await startNatsServer();
    dir = await mkdtemp(join(tmpdir(), 'agora-shared-reactor-'));
    store = await openEmbeddedEventStore({ directory: join(dir, 'events') });
  });
  afterAll(async () => {
    for (const r of replicas) await r.running.close().catch(() => undefined);
    for (const r of replicas) await r.connection.close().catch(() => undefined);
    await store?.close();
    await nats?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const startReplica = async (index: number): Promise<Replica> => {
    const connection = await connect({ servers: nats.url });
    const metrics = new ProcessMetrics({ defaultMetrics: false });
    const leases = new Leases(await JetStreamLeaseRegister.open(connection), { ttlMs: TTL_MS, holder: `replica-${index}`, log: () => undefined, logger: { warn: () => undefined } });
    metrics.watchLeases(leases);
    const running = await runReactor(
      { store, checkpoints: new FileCheckpointStore(join(dir, `checkpoints-${index}`)), metrics, leases },
      {
        name: 'answers',
        as,
        categories: ['ping'],
        react: (event: RecordedEvent) => [{ streamId: `answer-${event.streamId.slice('ping-'.length)}`, decider: answers, type: 'ExpireVotingSession', payload: { sessionId: event.streamId } }],
        logger: { warn: () => undefined },
      },
    );
    const replica = { connection, metrics, running };
    replicas.push(replica);
    return replica;
  };
  const issued = async (r: Replica) => {
    const values = (await r.metrics.registry.getSingleMetric('agora_commands_issued_total')!.get()).values;
    const of = (outcome: string) => values.find((v) => v.labels['outcome'] === outcome && v.labels['source'] === 'reactor.answers')?.value ?? 0;
    return { appended: of('appended'), duplicate: of('duplicate'), unchanged: of('unchanged'), refused: of('refused') };
  };
  const holds = async (r: Replica) => (await r.metrics.registry.getSingleMetric('agora_lease_held')!.get()).values.find((v) => v.labels['lease'] === 'reactor.answers')?.value === 1;
  const ping = async (from: number, count: number) => {
    for (let i = from; i < from + count; i++) await store.append(`ping-${i}`, [{ type: 'Ping', data: {} }], 'no_stream');
  };
  const answeredOnce = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const events = await store.readStream(`answer-${i}`).catch(() => []);
      if (events.length !== 1) return false;
    }
    return true;
  };

  it('one command per event with three replicas; a killed holder is replaced and nothing is skipped or doubled', async () => {
    const three = [await startReplica(0), await startReplica(1), await startReplica(2)];
    await ping(0, BATCH);
    await waitFor(() => answeredOnce(BATCH), 'every ping answered', 10_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const counts = await Promise.all(three.map(issued));
    expect(counts.map((c) => c.appended + c.duplicate + c.unchanged + c.refused)).toEqual([BATCH, 0, 0]);
    expect(await Promise.all(three.map(holds))).toEqual([true, false, false]);

    // The holder dies: its lease is not released, its reactor stops mid-stream.
    const [holder, ...standbys] = three as [Replica, Replica, Replica];
    await holder.connection.close();
    await holder.running.close();
    const diedAt = Date.now();
    await ping(BATCH, BATCH);
    await waitFor(async () => (await Promise.all(standbys.map(holds))).some(Boolean), 'a standby taking the lease over', TTL_MS * 3);
    expect(Date.now() - diedAt).toBeLessThanOrEqual(TTL_MS + TTL_MS / 4 + 500);
    await waitFor(() => answeredOnce(2 * BATCH), 'every ping answered, before and after the takeover', 10_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = await Promise.all(standbys.map(issued));
    const taker = after.findIndex((c) => c.appended > 0);
    // It started from its own (empty) checkpoint: the first batch again, as repeats; the second, once.
    expect(after[taker]).toEqual({ appended: BATCH, duplicate: BATCH, unchanged: 0, refused: 0 });
    expect(after[1 - taker]).toEqual({ appended: 0, duplicate: 0, unchanged: 0, refused: 0 });
    for (let i = 0; i < 2 * BATCH; i++) expect((await store.readStream(`answer-${i}`)).map((e) => e.type)).toEqual(['Answered']);
  });
});
