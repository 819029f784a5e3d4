import { resolve } from 'node:path';
import { openEmbeddedEventStore } from './embedded/embedded-store.js';
import type { EventStore } from './port.js';

export interface StoreConfig {
  kind: 'embedded' | 'jetstream' | 'kurrentdb';
  /** embedded: the data directory. */
  directory?: string;
  /** jetstream: NATS servers. */
  servers?: string;
  /** kurrentdb: the connection string. */
  connectionString?: string;
}

export const EVENT_STORE_HELP = `EVENT_STORE selects the event store:
  embedded                 in-process, append-only file under AGORA_DATA_DIR (default ./data)
  embedded:<directory>     the same, in <directory>
  jetstream                NATS JetStream at NATS_URL (default nats://127.0.0.1:4222)
  jetstream://<host:port>  NATS JetStream at that server
  kurrentdb://...          KurrentDB / EventStoreDB connection string (esdb:// also accepted)`;

/** Reads an `EVENT_STORE` value (see EVENT_STORE_HELP); throws with the help text when it makes no sense. */
export function parseStoreConfig(value: string | undefined, env: NodeJS.ProcessEnv = process.env): StoreConfig {
  const spec = (value ?? 'embedded').trim();
  const dataDir = env['AGORA_DATA_DIR'] ?? './data';
  if (spec === 'embedded') return { kind: 'embedded', directory: resolve(dataDir, 'events') };
  if (spec.startsWith('embedded:')) return { kind: 'embedded', directory: resolve(spec.slice('embedded:'.length)) };
  if (spec === 'jetstream') return { kind: 'jetstream', servers: env['NATS_URL'] ?? 'nats://127.0.0.1:4222' };
  if (spec.startsWith('jetstream://')) return { kind: 'jetstream', servers: `nats://${spec.slice('jetstream://'.length)}` };
  if (/^(kurrentdb|kurrent|esdb|eventstoredb)(\+discover)?:\/\//.test(spec)) return { kind: 'kurrentdb', connectionString: spec };
  throw new Error(`EVENT_STORE=${JSON.stringify(spec)} is not understood.\n${EVENT_STORE_HELP}`);
}

/** Opens the store a config names. Network adapters load only when chosen (the gRPC client is heavy). */
export async function openEventStore(config: StoreConfig): Promise<EventStore> {
  switch (config.kind) {
    case 'embedded':
      return openEmbeddedEventStore({ directory: config.directory ?? resolve('data', 'events') });
    case 'jetstream': {
      const { openJetStreamEventStore } = await import('./jetstream/index.js');
      return openJetStreamEventStore({ servers: config.servers ?? 'nats://127.0.0.1:4222' });
    }
    case 'kurrentdb': {
      if (!config.connectionString) throw new Error('kurrentdb needs a connection string');
      const { openKurrentDbEventStore } = await import('./kurrentdb/index.js');
      return openKurrentDbEventStore({ connectionString: config.connectionString });
    }
  }
}

/** Describes a config for logs, without credentials. */
export function describeStore(config: StoreConfig): string {
  switch (config.kind) {
    case 'embedded':
      return `embedded (${config.directory})`;
    case 'jetstream':
      return `jetstream (${config.servers})`;
    case 'kurrentdb':
      return `kurrentdb (${(config.connectionString ?? '').replace(/\/\/[^@/]*@/, '//***@')})`;
  }
}
