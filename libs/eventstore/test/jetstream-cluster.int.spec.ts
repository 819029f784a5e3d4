// The log's integrity on JetStream: the store refuses a clustered log on a nats-server that does
// not answer concurrent appends as it relies on (older than CLUSTERED_LOG_MIN_VERSION, e.g.
// Debian 13's 2.10.27 or Debian 12's 2.9.10: NATS_SERVER_BIN_CLUSTER_REFUSED, else Debian 13's that
// `npm run nats-server -- trixie` fetched, as npm test does), runs the
// whole contract on a 3-node cluster of the server the tests run (natsServerBin()), writers on
// separate connections to separate nodes among it, and refuses to fold a stream in which two
// commits claim one revision.
import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { existsSync } from 'node:fs';
import { cachedNatsServerBin, describeNatsServer, natsServerVersion, resolveNatsServer, startNatsCluster, type PrivateNatsCluster } from '@agora/testing';
import { DuplicateRevision, StoreRefused } from '../src/errors.js';
import { openJetStreamEventStore } from '../src/jetstream/index.js';
import { CLUSTERED_LOG_MIN_VERSION, clusteredLogRefusal, parseServerVersion, takesAtomicBatches } from '../src/jetstream/server-version.js';
import type { EventStore } from '../src/port.js';
import { describeEventStoreContract, ev, freshCategory } from './contract.js';

const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const quiet = { warn: () => undefined };
const server = resolveNatsServer();
const clusterable = clusteredLogRefusal(server.version, 3, 'AGORA_EVENTS') === undefined;
console.log(`clustered log tests on ${describeNatsServer(server)}`);

/** A fresh stream name and subject prefix. */
function names(): { streamName: string; subjectPrefix: string } {
  const run = randomUUID().replace(/-/g, '').slice(0, 10);
  return { streamName: `AGORA_INTEGRITY_${run}`, subjectPrefix: `integrity.${run}` };
}

describe('a stream in which two commits claim one revision (a log a faulty server let through)', () => {
  const log = names();
  let store: EventStore;
  let nc: Awaited<ReturnType<typeof connect>>;
  /** Publishes a commit as the store writes it, bypassing the store's own concurrency check. */
  const raw = async (streamId: string, revision: number, types: string[]) => {
    const events = types.map((type) => ({ id: randomUUID(), type, data: {}, metadata: {} }));
    await jetstream(nc).publish(`${log.subjectPrefix}.${streamId}`, JSON.stringify({ v: 1, r: revision, e: events }), { msgID: randomUUID() });
  };
  beforeAll(async () => {
    store = await openJetStreamEventStore({ servers: NATS_URL, ...log, logger: quiet });
    nc = await connect({ servers: NATS_URL });
  });
  afterAll(async () => {
    await store?.close();
    await (await jetstreamManager(nc)).streams.delete(log.streamName).catch(() => undefined);
    await nc?.close();
  });

  it('refuses two creations of one stream (both at revision 0), naming the stream and where the commits are', async () => {
    const s = `${freshCategory()}-1`;
    await raw(s, 0, ['Created']);
    await raw(s, 0, ['Created']);
    const error = await store.readStream(s).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicateRevision);
    expect(error).toMatchObject({ streamId: s, revision: 0, code: 'duplicate_revision' });
    expect((error as Error).message).toContain(`stream ${s}: two commits claim revision 0`);
    expect((error as Error).message).toContain('nats-io/nats-server#4320');
    // A stream with one creation reads as before.
    const fine = `${freshCategory()}-1`;
    await raw(fine, 0, ['Created']);
    expect((await store.readStream(fine)).map((e) => e.revision)).toEqual([0]);
  });

  it('refuses a second commit at the last revision, and one in the middle of a short stream', async () => {
    const atEnd = `${freshCategory()}-1`;
    await raw(atEnd, 0, ['Created']);
    await raw(atEnd, 1, ['Voted']);
    await raw(atEnd, 1, ['Voted']);
    await expect(store.readStream(atEnd)).rejects.toMatchObject({ name: 'DuplicateRevision', revision: 1 });
    const inMiddle = `${freshCategory()}-1`;
    await raw(inMiddle, 0, ['Created', 'Opened']);
    await raw(inMiddle, 2, ['Voted']);
    await raw(inMiddle, 1, ['Voted']);
    await raw(inMiddle, 3, ['Closed']);
    await expect(store.readStream(inMiddle)).rejects.toMatchObject({ name: 'DuplicateRevision', revision: 1 });
  });

  it('refuses it in a long stream too (read through a consumer)', async () => {
    const s = `${freshCategory()}-1`;
    for (let r = 0; r < 12; r++) await raw(s, r, ['Step']);
    await raw(s, 5, ['Step']);
    await raw(s, 12, ['Step']);
    await expect(store.readStream(s)).rejects.toMatchObject({ name: 'DuplicateRevision', streamId: s, revision: 5 });
  });

  it('refuses a commit that claims a revision this process appended itself, also when only the tail is asked for', async () => {
    const s = `${freshCategory()}-1`;
    await store.append(s, [ev('Created')], 'no_stream');
    await store.append(s, [ev('Voted')], 0);
    await raw(s, 1, ['Voted']);
    await expect(store.readStream(s, { fromRevision: 2 })).rejects.toMatchObject({ name: 'DuplicateRevision', revision: 1 });
  });
});

(clusterable ? describe : describe.skip)(`on a 3-node cluster of ${describeNatsServer(server)}`, () => {
  let cluster: PrivateNatsCluster;
  const log = names();
  beforeAll(async () => {
    cluster = await startNatsCluster();
  }, 90_000);
  afterAll(() => cluster?.stop());

  describeEventStoreContract('jetstream, 3-node cluster, 3 replicas', () => openJetStreamEventStore({ servers: cluster.urls, ...log, replicas: 3, pollIntervalMs: 200, logger: quiet, atomicAppends: true }), {
    neverProduced: ['0000099999999999:000000'],
    atomicAppendMany: takesAtomicBatches(server.version),
    // A child process on the same log (3 replicas): categories keep its streams apart.
    processConfig: () => ({ kind: 'jetstream', servers: cluster.urls.join(','), ...log, atomicAppends: true }),
    // Each writer on a node of its own, as the replicas of a service are.
    openWriter: (i) => openJetStreamEventStore({ servers: cluster.urls[i % cluster.urls.length], ...log, logger: quiet, atomicAppends: true }),
  });

  /** Opens a store as a service does (no atomicAppends), and what it said at start. */
  async function openByDefault(servers: string | string[], replicas: number): Promise<{ store: EventStore; said: string[]; allowAtomic: boolean | undefined; streamName: string }> {
    const said: string[] = [];
    const own = names();
    const store = await openJetStreamEventStore({ servers, ...own, replicas, logger: { warn: () => undefined, info: (m: string) => said.push(m) } });
    const nc = await connect({ servers });
    try {
      const info = await (await jetstreamManager(nc)).streams.info(own.streamName);
      return { store, said, allowAtomic: info.config.allow_atomic, streamName: own.streamName };
    } finally {
      await nc.close();
    }
  }

  (takesAtomicBatches(server.version) ? it : it.skip)('by default writes a command in one atomic batch on a 3-replica log, and says so at start', async () => {
    const { store, said, allowAtomic, streamName } = await openByDefault(cluster.urls, 3);
    try {
      expect(said).toEqual([expect.stringMatching(new RegExp(`^jetstream event store: log stream ${streamName}: one atomic batch per command .*3 replicas, file storage, where the server stages batches in memory \\(atomic=auto\\)`))]);
      expect(allowAtomic).toBe(true);
      expect(typeof store.appendMany).toBe('function');
      const [a, b] = [`${freshCategory()}-1`, `${freshCategory()}-1`];
      await store.appendMany!([
        { streamId: a, events: [ev('Reserved')], expectedRevision: 'no_stream' },
        { streamId: b, events: [ev('Created')], expectedRevision: 'no_stream' },
      ]);
      expect((await store.readStream(b)).map((e) => e.type)).toEqual(['Created']);
    } finally {
      await store.close();
    }
  });

  (takesAtomicBatches(server.version) ? it : it.skip)('by default keeps two appends on a 1-replica log (batches staged on disk), and says so at start', async () => {
    const { store, said, allowAtomic } = await openByDefault(cluster.urls[0]!, 1);
    try {
      expect(said).toEqual([expect.stringMatching(/: two appends per command .*1 replica, file storage, where the server stages each batch on disk/)]);
      expect(allowAtomic).toBeFalsy();
      expect(store.appendMany).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});

/**
 * A server the store must refuse to cluster on (older than CLUSTERED_LOG_MIN_VERSION: Debian 13's
 * 2.10.27, or Debian 12's 2.9.10), named by NATS_SERVER_BIN_CLUSTER_REFUSED, else Debian 13's
 * fetched by `npm run nats-server -- trixie` (npm test's set-up does); skipped without either.
 */
const REFUSED_BIN = process.env['NATS_SERVER_BIN_CLUSTER_REFUSED']?.trim() || (existsSync(cachedNatsServerBin('trixie')) ? cachedNatsServerBin('trixie') : undefined);
const refusedVersion = REFUSED_BIN === undefined ? undefined : natsServerVersion(REFUSED_BIN);
const refused = refusedVersion !== undefined && clusteredLogRefusal(refusedVersion, 3, 'x') !== undefined;
if (!refused) {
  console.warn(
    REFUSED_BIN === undefined
      ? `SKIPPED the refusal of a clustered log on an older server: run npm run nats-server -- trixie, or set NATS_SERVER_BIN_CLUSTER_REFUSED to a nats-server older than ${CLUSTERED_LOG_MIN_VERSION} (Debian 13's 2.10.27, Debian 12's 2.9.10)`
      : `SKIPPED the refusal of a clustered log on an older server: NATS_SERVER_BIN_CLUSTER_REFUSED (${REFUSED_BIN}) is ${refusedVersion ?? 'not a runnable nats-server'}, which the store does not refuse`,
  );
}
/** The defect the refusal names for the refused server's version. */
const [, minor = 0, patch = 0] = parseServerVersion(refusedVersion) ?? [];
const defect = minor > 9 || (minor === 9 && patch >= 21) ? /keeps the message id of a publish it refused .*nats-io\/nats-server#6415/ : /does not serialize the expected-last-subject-sequence check .*nats-io\/nats-server#4320/;

(refused ? describe : describe.skip)(`on a 3-node cluster of nats-server ${refusedVersion ?? '(NATS_SERVER_BIN_CLUSTER_REFUSED unset)'} (before ${CLUSTERED_LOG_MIN_VERSION})`, () => {
  let cluster: PrivateNatsCluster;
  beforeAll(async () => {
    cluster = await startNatsCluster({ bin: REFUSED_BIN! });
  }, 90_000);
  afterAll(() => cluster?.stop());

  it('refuses to create a log of 3 replicas, naming the defect and the fix, and creates nothing', async () => {
    const log = names();
    const error = await openJetStreamEventStore({ servers: cluster.urls, ...log, replicas: 3, logger: quiet }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreRefused);
    expect(error).toMatchObject({ reason: 'unsupported_server' });
    const message = (error as Error).message;
    expect(message).toContain(`jetstream: JetStream stream ${log.streamName} has 3 replicas, and nats-server ${refusedVersion} `);
    expect(message).toMatch(defect);
    expect(message).toContain(`Run nats-server ${CLUSTERED_LOG_MIN_VERSION} or newer on every node of the cluster (or keep the log at 1 replica on a single server)`);
    const nc = await connect({ servers: cluster.urls });
    try {
      await expect((await jetstreamManager(nc)).streams.info(log.streamName)).rejects.toThrow(/stream not found/);
    } finally {
      await nc.close();
    }
  });

  it('refuses a log someone else created at 3 replicas, whatever replicas it is opened with; a single replica is served', async () => {
    const log = names();
    const nc = await connect({ servers: cluster.urls });
    try {
      await (await jetstreamManager(nc)).streams.add({ name: log.streamName, subjects: [`${log.subjectPrefix}.>`], num_replicas: 3 });
    } finally {
      await nc.close();
    }
    await expect(openJetStreamEventStore({ servers: cluster.urls, ...log, logger: quiet })).rejects.toThrow(new RegExp(`has 3 replicas, and nats-server ${refusedVersion!.replace(/\./g, '\\.')} `));
    const single = await openJetStreamEventStore({ servers: cluster.urls, ...names(), replicas: 1, logger: quiet });
    try {
      await single.append(`${freshCategory()}-1`, [ev('Created')], 'no_stream');
    } finally {
      await single.close();
    }
  });
});
