// Leases on a private nats-server: of three replicas one holds each lease and runs its work; a
// graceful close hands it over at the next look; a holder that goes silent (its connection closed,
// as a killed process's) is replaced once its lease has not been renewed for a ttl, and finds it
// taken when it comes back.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startNatsServer, waitFor, type PrivateNatsServer } from '@agora/testing';
import { JetStreamLeaseRegister, leaseScope, Leases, ProcessMetrics, type HeldLease } from '../src/index.js';

const TTL_MS = 800;

interface Replica {
  name: string;
  connection: NatsConnection;
  leases: Leases;
  lease: HeldLease;
  /** Whether its work runs now. */
  running: boolean;
  starts: number;
}

describe('leases (JetStream register)', () => {
  let nats: PrivateNatsServer;
  const replicas: Replica[] = [];
  const lines: string[] = [];

  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterAll(async () => {
    for (const r of replicas) {
      await r.lease.close().catch(() => undefined);
      await r.connection.close().catch(() => undefined);
    }
    await nats.stop();
  });

  const startReplica = async (name: string, lease = 'reactor.work'): Promise<Replica> => {
    const connection = await connect({ servers: nats.url });
    const leases = new Leases(await JetStreamLeaseRegister.open(connection), { ttlMs: TTL_MS, holder: name, log: (line) => lines.push(line), logger: { warn: () => undefined } });
    const replica = { name, connection, leases, running: false, starts: 0 } as Replica;
    replica.lease = await leases.run(lease, {
      start: async () => {
        replica.running = true;
        replica.starts++;
      },
      stop: async () => {
        replica.running = false;
      },
    });
    replicas.push(replica);
    return replica;
  };
  const holders = () => replicas.filter((r) => r.lease.held).map((r) => r.name);

  it('one replica of three holds the lease and runs the work; the others stand by, over several renewals', async () => {
    const a = await startReplica('a');
    const b = await startReplica('b');
    const c = await startReplica('c');
    expect([a.lease.held, b.lease.held, c.lease.held]).toEqual([true, false, false]);
    expect(a.running).toBe(true);
    // Several ttls: the holder renews, nobody takes over.
    await new Promise((resolve) => setTimeout(resolve, TTL_MS * 3));
    expect(holders()).toEqual(['a']);
    expect([a.starts, b.starts, c.starts]).toEqual([1, 0, 0]);
    expect([b.running, c.running]).toEqual([false, false]);
    // agora_lease_held reports it.
    const metrics = new ProcessMetrics({ defaultMetrics: false });
    metrics.watchLeases(b.leases);
    expect(await metrics.registry.metrics()).toContain('agora_lease_held{lease="reactor.work"} 0');
    metrics.watchLeases(a.leases);
    expect(await metrics.registry.metrics()).toContain('agora_lease_held{lease="reactor.work"} 1');
  });

  it('a holder that goes silent is replaced after a ttl without renewal, by one standby only', async () => {
    const [a, b, c] = replicas as [Replica, Replica, Replica];
    const silentAt = Date.now();
    // A killed process: its connection is gone, it renews no more.
    await a.connection.close();
    await waitFor(() => b.lease.held || c.lease.held, 'a standby taking the lease over', TTL_MS * 3);
    const tookMs = Date.now() - silentAt;
    // Not before a ttl without renewal (the last renewal was about ttl/3 before at most), within a ttl and a look.
    expect(tookMs).toBeGreaterThanOrEqual(TTL_MS / 3);
    expect(tookMs).toBeLessThanOrEqual(TTL_MS + TTL_MS / 4 + 500);
    await new Promise((resolve) => setTimeout(resolve, TTL_MS * 2));
    expect([b.lease.held, c.lease.held].filter(Boolean)).toHaveLength(1);
    expect(b.starts + c.starts).toBe(1);
    expect(lines.some((line) => /lease reactor\.work: taken by [bc] \(from a, silent for 800 ms\)/.test(line))).toBe(true);
  });

  it('a graceful close releases the lease: a standby takes it at its next look', async () => {
    const [, b, c] = replicas as [Replica, Replica, Replica];
    const [holder, standby] = b.lease.held ? [b, c] : [c, b];
    const closedAt = Date.now();
    await holder.lease.close();
    expect(holder.running).toBe(false);
    await waitFor(() => standby.lease.held, 'the standby taking the released lease', TTL_MS * 2);
    expect(Date.now() - closedAt).toBeLessThan(TTL_MS / 4 + 500);
    expect(standby.running).toBe(true);
  });

  it('a holder that finds its lease taken stops its work', async () => {
    const d = await startReplica('d', 'deadlines.other');
    expect(d.lease.held).toBe(true);
    // Another replica writes over d's lease (as after a takeover d did not see): d's next renewal conflicts.
    const register = await JetStreamLeaseRegister.open(replicas[1]!.connection);
    const record = await register.read('deadlines.other');
    expect(record?.holder).toBe('d');
    expect(await register.write('deadlines.other', 'e', record!.revision)).toBeGreaterThan(record!.revision);
    expect(await register.write('deadlines.other', 'f', record!.revision)).toBe('conflict');
    await waitFor(() => !d.lease.held && !d.running, 'd stopping its work', TTL_MS * 2);
    expect(lines).toContain('lease deadlines.other: lost by d (taken by another replica); standing by');
  });
  it('systems sharing one NATS server, each with its own log, each have their own leases (the scope)', async () => {
    const work = () => ({ start: async () => undefined, stop: async () => undefined });
    const opened: Array<{ connection: NatsConnection; lease: HeldLease }> = [];
    const replicaOf = async (holder: string, store: Parameters<typeof leaseScope>[0]) => {
      const connection = await connect({ servers: nats.url });
      const leases = new Leases(await JetStreamLeaseRegister.open(connection), { ttlMs: TTL_MS, holder, scope: leaseScope(store), log: () => undefined, logger: { warn: () => undefined } });
      const lease = await leases.run('reactor.shared-name', work());
      opened.push({ connection, lease });
      return lease;
    };
    try {
      const staging = await replicaOf('staging-1', { kind: 'jetstream', streamName: 'AGORA_STAGING' });
      const production = await replicaOf('production-1', { kind: 'jetstream' });
      const production2 = await replicaOf('production-2', { kind: 'jetstream', streamName: 'AGORA_EVENTS' });
      const embedded = await replicaOf('embedded-1', { kind: 'embedded', directory: '/srv/agora/events' });
      expect([staging.held, production.held, production2.held, embedded.held]).toEqual([true, true, false, true]);
      expect(leaseScope({ kind: 'embedded', directory: '/a' })).not.toBe(leaseScope({ kind: 'embedded', directory: '/b' }));
      expect(leaseScope({ kind: 'kurrentdb', connectionString: 'kurrentdb://a:2113' })).toMatch(/^kurrentdb-[A-Za-z0-9_-]{12}$/);
    } finally {
      for (const o of opened) {
        await o.lease.close().catch(() => undefined);
        await o.connection.close().catch(() => undefined);
      }
    }
  });
});
