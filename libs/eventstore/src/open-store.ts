import { resolve } from 'node:path';
import { openEmbeddedEventStore } from './embedded/embedded-store.js';
import { natsCredentials, type NatsCredentials } from './nats-credentials.js';
import type { EventStore } from './port.js';
import { upcastingStore } from './upcasting.js';

export interface StoreConfig {
  kind: 'embedded' | 'jetstream' | 'kurrentdb';
  /** embedded: the data directory. */
  directory?: string;
  /**
   * embedded: read the log only, beside the process that writes it (no lock taken, nothing
   * written, its new commits read as they land). The other stores serve many processes anyway.
   */
  readOnly?: boolean;
  /** jetstream: NATS servers. */
  servers?: string;
  /** jetstream: the NATS user (NATS_USER / NATS_PASSWORD). */
  credentials?: NatsCredentials;
  /** jetstream: the JetStream stream holding the log (default AGORA_EVENTS) and its subject prefix (default agora.es). */
  streamName?: string;
  subjectPrefix?: string;
  /** jetstream: `verify` only checks the log's stream (`agora setup nats --stream` manages it); default `ensure` creates or updates it. */
  streamSetup?: 'ensure' | 'verify';
  /** jetstream: a command's commits in one atomic batch on nats-server 2.12+ (`atomic=on|off|auto`; default auto: on replicated streams, see JetStreamEventStoreOptions.atomicAppends). */
  atomicAppends?: boolean | 'auto';
  /** kurrentdb: the connection string. */
  connectionString?: string;
}

export const EVENT_STORE_HELP = `EVENT_STORE selects the event store:
  embedded                 in-process, append-only file under AGORA_DATA_DIR (default ./data)
  embedded:<directory>     the same, in <directory>
  jetstream                NATS JetStream at NATS_URL (default nats://127.0.0.1:4222), as
                           NATS_USER if set
  jetstream://<host:port>  NATS JetStream at that server
  jetstream[://<host:port>]?stream=<NAME>&prefix=<subject.prefix>
                           another log stream than AGORA_EVENTS / agora.es (one system per stream)
  jetstream[...]?setup=verify
                           only check the log's stream, never create or update it (a deployment
                           whose stream \`agora setup nats --stream\` manages); default setup=ensure
  jetstream[...]?atomic=auto|on|off
                           a command's id reservation and events in one atomic batch (nats-server
                           2.12+): auto (default) on a replicated log stream, two appends on a
                           single-replica one, where batches are slow (docs/cluster.md); on: always
                           where the server takes them; off: never
  kurrentdb://...          KurrentDB / EventStoreDB connection string (esdb:// also accepted)`;

/** Reads an `EVENT_STORE` value (see EVENT_STORE_HELP); throws with the help text when it makes no sense. */
export function parseStoreConfig(value: string | undefined, env: NodeJS.ProcessEnv = process.env): StoreConfig {
  const spec = (value ?? 'embedded').trim();
  const dataDir = env['AGORA_DATA_DIR'] ?? './data';
  if (spec === 'embedded') return { kind: 'embedded', directory: resolve(dataDir, 'events') };
  if (spec.startsWith('embedded:')) return { kind: 'embedded', directory: resolve(spec.slice('embedded:'.length)) };
  if (spec === 'jetstream' || spec.startsWith('jetstream?') || spec.startsWith('jetstream://')) return jetstreamConfig(spec, env);
  if (/^(kurrentdb|kurrent|esdb|eventstoredb)(\+discover)?:\/\//.test(spec)) return { kind: 'kurrentdb', connectionString: spec };
  throw new Error(`EVENT_STORE=${JSON.stringify(spec)} is not understood.\n${EVENT_STORE_HELP}`);
}

function jetstreamConfig(spec: string, env: NodeJS.ProcessEnv): StoreConfig {
  const [base = '', query = ''] = spec.split('?', 2) as [string, string?];
  const host = base.slice('jetstream://'.length);
  const config: StoreConfig = { kind: 'jetstream', servers: host ? `nats://${host}` : (env['NATS_URL'] ?? 'nats://127.0.0.1:4222') };
  const credentials = natsCredentials(env);
  if (credentials) config.credentials = credentials;
  for (const [key, value] of new URLSearchParams(query)) {
    if (key === 'stream') config.streamName = value;
    else if (key === 'prefix') config.subjectPrefix = value;
    else if (key === 'setup' && (value === 'ensure' || value === 'verify')) config.streamSetup = value;
    else if (key === 'atomic' && (value === 'on' || value === 'off' || value === 'auto')) config.atomicAppends = value === 'auto' ? 'auto' : value === 'on';
    else throw new Error(`EVENT_STORE=${JSON.stringify(spec)}: unknown option "${key}" (jetstream takes stream, prefix, setup=ensure|verify and atomic=auto|on|off).\n${EVENT_STORE_HELP}`);
  }
  return config;
}

/**
 * Opens the store a config names, its events read in today's shape (upcastingStore: every older
 * schema version upcast by its contract). Network adapters load only when chosen (the gRPC client is heavy).
 */
export async function openEventStore(config: StoreConfig): Promise<EventStore> {
  return upcastingStore(await openAdapter(config));
}

async function openAdapter(config: StoreConfig): Promise<EventStore> {
  switch (config.kind) {
    case 'embedded':
      return openEmbeddedEventStore({ directory: config.directory ?? resolve('data', 'events'), ...(config.readOnly ? { readOnly: true } : {}) });
    case 'jetstream': {
      const { openJetStreamEventStore } = await import('./jetstream/index.js');
      return openJetStreamEventStore({
        servers: config.servers ?? 'nats://127.0.0.1:4222',
        ...(config.credentials === undefined ? {} : { credentials: config.credentials }),
        ...(config.streamName === undefined ? {} : { streamName: config.streamName }),
        ...(config.subjectPrefix === undefined ? {} : { subjectPrefix: config.subjectPrefix }),
        ...(config.streamSetup === undefined ? {} : { streamSetup: config.streamSetup }),
        ...(config.atomicAppends === undefined ? {} : { atomicAppends: config.atomicAppends }),
      });
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
      return `jetstream (${config.servers}${config.credentials ? ` as ${config.credentials.user}` : ''}, stream ${config.streamName ?? 'AGORA_EVENTS'})`;
    case 'kurrentdb':
      return `kurrentdb (${(config.connectionString ?? '').replace(/\/\/[^@/]*@/, '//***@')})`;
  }
}
