import { join } from 'node:path';
import { FileCheckpointStore } from '@agora/eventsourcing';
import { describeStore, openEventStore, type EventStore } from '@agora/eventstore';
import { EventPublisher, InProcessAgoraClient, InProcessBus, NatsAgoraClient, type AgentDirectory, type AgoraClient, type ServiceTransport } from '@agora/messaging';
import { commandDirectory, RegistryDirectory } from './agent-directory.js';
import type { RuntimeConfig } from './config.js';

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
  /** `<dataDir>/checkpoints`, for consumers with effects outside the process. */
  readonly checkpoints: FileCheckpointStore;
  /** Human-readable description of the store and transport, for the start-up log. */
  describe(): string[];
  close(): Promise<void>;
}

/** Opens the store and the transport a config names, and catches up the agent directory. */
export async function openServiceContext(config: RuntimeConfig): Promise<ServiceContext> {
  const store = await openEventStore(config.store);
  const closers: (() => Promise<void>)[] = [() => store.close()];
  const closeAll = async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  };
  try {
    let transport: ServiceTransport;
    let client: AgoraClient;
    let publisher: EventPublisher;
    if (config.natsUrl === undefined) {
      const bus = new InProcessBus();
      transport = { transport: 'in-process', bus };
      client = new InProcessAgoraClient(bus);
      publisher = EventPublisher.inProcess(bus);
      closers.push(async () => bus.close());
    } else {
      transport = { transport: 'nats', natsUrl: config.natsUrl };
      const nats = await NatsAgoraClient.connect({ servers: config.natsUrl, name: 'agora-process' });
      client = nats;
      publisher = EventPublisher.overNats(nats.connection);
      closers.push(() => nats.close());
    }
    const registry = new RegistryDirectory(store);
    await registry.start();
    closers.push(() => registry.stop());
    return {
      config,
      store,
      transport,
      client,
      publisher,
      registry,
      directory: commandDirectory(registry, config.operators),
      checkpoints: new FileCheckpointStore(join(config.dataDir, 'checkpoints')),
      describe: () => [
        `event store: ${describeStore(config.store)}`,
        `transport: ${config.natsUrl === undefined ? 'in-process (set NATS_URL to use NATS)' : `NATS at ${config.natsUrl}`}`,
        `bootstrap operators: ${config.operators.map((o) => o.agentId).join(', ') || 'none'}`,
      ],
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
