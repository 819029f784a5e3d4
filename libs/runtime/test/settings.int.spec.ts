// recordSettings when replicas of a service start at the same moment: neither answers the other's
// ping yet, and both read the settings stream before either records. The store is made to hold
// every reader until both have read, so the race happens each time; on the embedded log and on a
// JetStream log of the test's own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { settingsStreamId, type ServiceName } from '@agora/contracts';
import { settingsDigest } from '@agora/eventsourcing';
import { openEmbeddedEventStore, openJetStreamEventStore, type EventStore } from '@agora/eventstore';
import { generateKeyPair } from '@agora/identity';
import { InProcessAgoraClient, InProcessBus } from '@agora/messaging';
import { TEST_NATS_URL, uniqueJetStreamLog } from '@agora/testing';
import { recordSettings, StartupFailure, type ServiceContext, type ServiceIdentity } from '../src/index.js';

type Context = Pick<ServiceContext, 'store' | 'serviceIdentity' | 'client' | 'transport'>;

/** A starting replica's view: `store` whose reads of the settings stream wait until `readers` of them have read. */
function replicaOf(store: EventStore, barrier: { readers: number; arrived: number; open: Promise<void>; release: () => void }): Context {
  const key = generateKeyPair();
  const identity = (service: ServiceName): ServiceIdentity => ({ service, actor: `service:${service}`, roles: ['service'], publicKey: key.publicKey, secretKey: key.secretKey });
  const readStream: EventStore['readStream'] = async (streamId, options) => {
    const read = await store.readStream(streamId, options).catch((error: unknown) => error);
    if (streamId === settingsStreamId('tribunal') && barrier.arrived < barrier.readers) {
      if (++barrier.arrived === barrier.readers) barrier.release();
      await barrier.open;
    }
    if (read instanceof Error) throw read;
    return read as Awaited<ReturnType<EventStore['readStream']>>;
  };
  const held = new Proxy(store, {
    get: (target, property) => {
      if (property === 'readStream') return readStream;
      const value = Reflect.get(target, property) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  // A process of its own, whose ping reaches no replica yet: neither has started serving.
  const bus = new InProcessBus();
  return { store: held, serviceIdentity: identity, client: new InProcessAgoraClient(bus), transport: { transport: 'in-process', bus } as Context['transport'] };
}

function barrierOf(readers: number) {
  let release!: () => void;
  const open = new Promise<void>((resolve) => (release = resolve));
  return { readers, arrived: 0, open, release };
}

const stores: { name: string; open: (dir: string) => Promise<EventStore> }[] = [
  { name: 'embedded log', open: (dir) => openEmbeddedEventStore({ directory: dir }) },
  { name: 'JetStream log', open: () => openJetStreamEventStore({ ...uniqueJetStreamLog('settings-race'), servers: TEST_NATS_URL }) },
];

describe.each(stores)('recordSettings, two replicas started at the same moment ($name)', ({ open }) => {
  let dir: string;
  let store: EventStore;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agora-settings-race-'));
    store = await open(dir);
  });

  afterEach(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const settingsInLog = async () => (await store.readStream(settingsStreamId('tribunal'))).map((e) => (e.data as { settings: unknown }).settings);

  it('with different settings: one records, the other fails naming both, having recorded nothing', async () => {
    const barrier = barrierOf(2);
    const one = { minRoundDeadlineMs: 1000 };
    const two = { minRoundDeadlineMs: 2000 };
    const results = await Promise.allSettled([recordSettings(replicaOf(store, barrier), 'tribunal', one), recordSettings(replicaOf(store, barrier), 'tribunal', two)]);
    const recorded = results.flatMap((r, i) => (r.status === 'fulfilled' ? [{ i, value: r.value }] : []));
    const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [{ i, reason: r.reason as unknown }] : []));
    expect(recorded).toHaveLength(1);
    expect(failed).toHaveLength(1);
    const winner = recorded[0]!.i === 0 ? one : two;
    const loser = recorded[0]!.i === 0 ? two : one;
    expect(recorded[0]!.value).toMatchObject({ recorded: true, digest: settingsDigest(winner) });
    expect(failed[0]!.reason).toBeInstanceOf(StartupFailure);
    expect((failed[0]!.reason as Error).message).toBe(
      `another proposal replica started at the same moment recorded the tribunal settings ${settingsDigest(winner)}, this one was started with ${settingsDigest(loser)}: every replica of a service must decide under the same settings. Start it with the same value, or change the value by stopping every proposal replica, then starting them with the new one`,
    );
    expect(await settingsInLog()).toEqual([winner]);
  });

  it('with the same settings: both start, and the value is recorded once', async () => {
    const barrier = barrierOf(2);
    const same = { minRoundDeadlineMs: 1000 };
    const [a, b] = await Promise.all([recordSettings(replicaOf(store, barrier), 'tribunal', same), recordSettings(replicaOf(store, barrier), 'tribunal', same)]);
    expect([a.digest, b.digest]).toEqual([settingsDigest(same), settingsDigest(same)]);
    expect(await settingsInLog()).toEqual([same]);
  });
});
