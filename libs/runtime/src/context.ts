import { join } from 'node:path';
import { DEFAULT_READ_MODEL_WAIT_MS, FileCheckpointStore, FileSnapshotStore, ReadModelPositions, sharingCatchUp, type CheckpointStore, type SnapshotStore } from '@agora/eventsourcing';
import { describeStore, openEventStore, type EventStore } from '@agora/eventstore';
import { openReadDatabase, SqlCheckpointStore, SqlSnapshotStore } from '@agora/read-store';
import { EventPublisher, InProcessAgoraClient, InProcessBus, NatsAgoraClient, type AgentDirectory, type AgoraClient, type ServiceTransport } from '@agora/messaging';
import { commandDirectory, RegistryDirectory } from './agent-directory.js';
import { DEFAULT_LEASE_TTL_MS, JetStreamLeaseRegister, leaseScope, Leases } from './lease.js';
import { readDatabaseOf, type RuntimeConfig } from './config.js';
import { SqlReadModels } from './read-model.js';
import { ProcessMetrics } from './metrics.js';
import { loadServiceIdentity, type ServiceIdentity } from './service-identity.js';
import type { ServiceName } from '@agora/contracts';
import type { ServiceKeyring } from '@agora/identity';

/** What a service needs from its process: the store, the transport, the agent directory. Shared by every service of a process. */
export interface ServiceContext {
  readonly config: RuntimeConfig;
  readonly store: EventStore;
  /** How a service serves its subjects (`createServiceMicroservice`). */
  readonly transport: ServiceTransport;
  /** How a process sends requests to services (the gateway, a service asking another). */
  readonly client: AgoraClient;
  /** Publishes notifications on the same transport (the event relay). */
  readonly publisher: EventPublisher;
  /** Every registered agent, live. */
  readonly registry: RegistryDirectory;
  /** What command gates check actors against: the registry, then the configured operators. */
  readonly directory: AgentDirectory;
  /** The process's metrics (one registry per process): commands, store, reactors, deadlines, NATS; parts add theirs. */
  readonly metrics: ProcessMetrics;
  /**
   * On NATS, the leases by which the replicas of a service share its reactors and deadline
   * schedulers (runReactor, runDeadlines): one replica runs each. Undefined when the process is
   * alone (in-process transport) or AGORA_LEASE_TTL_MS=0: it runs them all.
   */
  readonly leases: Leases | undefined;
  /**
   * How far consumers with effects outside the process (reactors, the relay) have got: the table
   * `agora_checkpoints` of the read side's database, shared by the replicas (SqlCheckpointStore).
   */
  readonly checkpoints: CheckpointStore;
  /**
   * The identity a service signs with when it acts on its own behalf (see ServiceIdentity): loaded
   * once per service, created on first start when missing. ConfigError when its key is not the
   * one AGORA_SERVICE_PUBLIC_KEYS has in force for it.
   */
  serviceIdentity(service: ServiceName): ServiceIdentity;
  /**
   * The services' public keys as this process can vouch for them, for verifiers (the console's
   * event log): AGORA_SERVICE_PUBLIC_KEYS when set; else the keys of the identities this process
   * has loaded (in the one-process standalone, every service's).
   */
  serviceKeys(): ServiceKeyring;
  /**
   * Where the folds kept in memory (the agent directory, the deadline schedulers' pending sets) are
   * saved, so a restart or a new replica folds only the log's new events: the table `agora_snapshots`
   * of the read side's database (SqlSnapshotStore).
   */
  readonly snapshots: SnapshotStore;
  /**
   * The process's read models, for read your writes: give it to every ProjectionRunner that
   * answers queries (`positions`); a query given `minPosition` waits for all of them (the
   * services get it through `transport`).
   */
  readonly readModels: ReadModelPositions;
  /**
   * The read models kept in the read side's database (AGORA_READ_DB: PostgreSQL shared by the
   * replicas, or SQLite in the data directory): `readSide.use(projection)` starts one, once per process.
   */
  readonly readSide: SqlReadModels;
  /** Human-readable description of the store and transport, for the start-up log. */
  describe(): string[];
  close(): Promise<void>;
}

export interface OpenServiceContextOptions {
  /**
   * Resolve once the agent directory has caught up with the log (default), or as soon as it has
   * subscribed (false): the parts the process starts next then catch up in the same pass over the
   * log as the directory, and wait for `registry.caughtUp` where they read it.
   */
  awaitDirectory?: boolean;
}

/** Opens the store and the transport a config names, and catches up the agent directory (see `awaitDirectory`). */
export async function openServiceContext(config: RuntimeConfig, options: OpenServiceContextOptions = {}): Promise<ServiceContext> {
  const metrics = new ProcessMetrics();
  const opened = await openEventStore(config.store);
  // The read models, consumers and schedulers that start together catch up in one pass over the log.
  const store = sharingCatchUp(metrics.instrumentStore(opened, config.store.kind));
  const closers: (() => Promise<void>)[] = [() => store.close()];
  const readModels = new ReadModelPositions(store, config.readModelWaitMs ?? DEFAULT_READ_MODEL_WAIT_MS);
  const closeAll = async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  };
  try {
    const readDb = await openReadDatabase(readDatabaseOf(config));
    const readSide = new SqlReadModels(readDb, store, readModels);
    closers.push(() => readDb.close(), () => readSide.close());
    let transport: ServiceTransport;
    let client: AgoraClient;
    let publisher: EventPublisher;
    let leases: Leases | undefined;
    const leasesLine: string[] = [];
    if (config.natsUrl === undefined) {
      const bus = new InProcessBus();
      transport = { transport: 'in-process', bus, observer: metrics.observer, readModels };
      client = new InProcessAgoraClient(bus);
      publisher = EventPublisher.inProcess(bus);
      closers.push(async () => bus.close());
    } else {
      const credentials = config.natsCredentials === undefined ? {} : { credentials: config.natsCredentials };
      transport = { transport: 'nats', natsUrl: config.natsUrl, observer: metrics.observer, readModels, ...credentials };
      const nats = await NatsAgoraClient.connect({ servers: config.natsUrl, name: 'agora-process', ...credentials });
      metrics.watchNats(nats.connection, 'client');
      client = nats;
      publisher = EventPublisher.overNats(nats.connection);
      closers.push(() => nats.close());
      const ttlMs = config.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
      if (ttlMs > 0) {
        // Correct without them too (command ids derived from causes), only every replica then does the work.
        leases = new Leases(() => JetStreamLeaseRegister.open(nats.connection, { timeoutMs: config.requestTimeoutMs }), { ttlMs, scope: leaseScope(config.store) });
        metrics.watchLeases(leases);
        leasesLine.push(`leases: reactors and deadline schedulers run on one replica at a time (this one ${leases.holder}, ttl ${ttlMs} ms)`);
      } else {
        leasesLine.push('leases: off (AGORA_LEASE_TTL_MS=0): every replica runs every reactor and deadline scheduler');
      }
    }
    const identities = new Map<ServiceName, ServiceIdentity>();
    const serviceIdentity = (service: ServiceName): ServiceIdentity => {
      let identity = identities.get(service);
      if (!identity) {
        const settings = { serviceKeysDir: config.serviceKeysDir ?? join(config.dataDir, 'service-keys'), serviceSecretKeys: config.serviceSecretKeys ?? {}, serviceKeyring: config.serviceKeyring };
        identity = loadServiceIdentity(settings, service, { log: (line) => process.stdout.write(`${line}\n`) });
        identities.set(service, identity);
      }
      return identity;
    };
    // In the read side's database, shared by the replicas (a new one starts where the others are); an earlier release's files are read once.
    const snapshots = new SqlSnapshotStore(readDb, { before: new FileSnapshotStore(join(config.dataDir, 'snapshots')) });
    const checkpoints = new SqlCheckpointStore(readDb, { before: new FileCheckpointStore(join(config.dataDir, 'checkpoints')) });
    const registry = new RegistryDirectory(store, { snapshots, positions: readModels });
    const directoryStarted = registry.start();
    closers.push(() => registry.stop());
    if (options.awaitDirectory ?? true) await directoryStarted;
    const serviceKeys = (): ServiceKeyring => config.serviceKeyring ?? Object.fromEntries([...identities].map(([service, identity]) => [service, [{ publicKey: identity.publicKey }]]));
    const directory = commandDirectory(registry, config.operators, serviceKeys);
    // Closed reads on NATS: every service of the process answers queries by the visibility table (the reader's read token).
    if (transport.transport === 'nats' && config.natsReads?.mode === 'closed') transport = { ...transport, reads: { directory, audience: config.natsReads.audience } };
    return {
      config,
      store,
      transport,
      client,
      publisher,
      registry,
      metrics,
      leases,
      directory,
      checkpoints,
      serviceIdentity,
      serviceKeys,
      snapshots,
      readModels,
      readSide,
      describe: () => [
        `event store: ${describeStore(config.store)}`,
        `read models: ${readDb.describe()}`,
        `transport: ${config.natsUrl === undefined ? 'in-process (set NATS_URL to use NATS)' : `NATS at ${config.natsUrl}${config.natsCredentials ? ` as ${config.natsCredentials.user}` : ''}`}`,
        ...(transport.transport === 'nats' ? [natsReadsLine(config)] : []),
        `bootstrap operators: ${config.operators.map((o) => o.agentId).join(', ') || 'none'}`,
        ...leasesLine,
      ],
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** How queries on NATS stand, for the start-up log: an open read is said loudly, and why it is open. */
function natsReadsLine(config: RuntimeConfig): string {
  if (config.natsReads?.mode === 'closed') return `reads on NATS: closed (queries need a read token for audience "${config.natsReads.audience}"; the visibility table applies)`;
  return config.natsReads?.explicit
    ? 'reads on NATS are OPEN (AGORA_NATS_READS=open): anyone who may publish on agora.qry.> reads every proposal, ledger and session; use it only where no agent has a NATS user'
    : 'reads on NATS are OPEN: this NATS has no users (NATS_USER unset), so anyone connected reads everything; with agents as NATS users (agora setup nats) the services run as NATS users and reads are closed';
}
