/**
 * Where the A2A push configurations are kept, so that every gateway replica, and a restarted
 * gateway, knows them: on NATS a JetStream key-value bucket the replicas share (its entries expire
 * with the bucket's max age), standalone a file in the data directory, and with neither (a gateway
 * started by a test) the gateway's memory. PushConfigs (push.ts) keeps what it needs in these
 * records: the keys, the bounds and the expiry are its own.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeFileAtomically } from '@agora/eventsourcing';
import { a2aPushBucket } from '@agora/messaging';
import { leaseScope } from '@agora/runtime';
import { JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';

/** The file of a standalone gateway's push configurations, in its data directory. */
export const PUSH_CONFIGS_FILE = 'a2a-push-configs.json';

/** Records by key (letters, digits, `-`, `_`, dots between the parts), each a JSON text. */
export interface SharedRecords {
  /** The records whose key starts with `prefix` (which ends with a dot). */
  list(prefix: string): Promise<Map<string, string>>;
  get(key: string): Promise<string | undefined>;
  put(key: string, value: string): Promise<void>;
  /** Puts a record where there is none (or only a deleted one): false when one is there. */
  create(key: string, value: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** Where they are, for the start-up log. */
  readonly where: string;
  /** Whether other gateways share them (a bucket), or they are this process's alone (a file, memory). */
  readonly shared: boolean;
}

/** Records in a JetStream key-value bucket, which every gateway on the same NATS shares. */
export class KvRecords implements SharedRecords {
  readonly shared = true;

  private constructor(
    private readonly kv: KV,
    readonly where: string,
  ) {}

  /**
   * Opens the bucket, made when missing with its entries' max age (replicated as the log is, one
   * copy on a single server); an existing bucket is given the max age asked. Rejects when the
   * server has no JetStream.
   */
  static async open(connection: NatsConnection, bucket: string, maxAgeMs: number, timeoutMs = 5_000): Promise<KvRecords> {
    const kvm = new Kvm(jetstream(connection, { timeout: timeoutMs }));
    const jsm = await jetstreamManager(connection, { timeout: timeoutMs });
    const stream = `KV_${bucket}`;
    const existing = await jsm.streams.info(stream).catch((error: unknown) => {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) return undefined;
      throw error;
    });
    const maxAgeNs = maxAgeMs * 1_000_000;
    if (existing !== undefined && existing.config.max_age !== maxAgeNs) await jsm.streams.update(stream, { ...existing.config, max_age: maxAgeNs });
    const options = { history: 1, ttl: maxAgeMs, description: 'Agora: A2A push notification configurations' };
    const kv = existing !== undefined ? await kvm.open(bucket) : await kvm.create(bucket, { ...options, replicas: 3 }).catch(() => kvm.create(bucket, { ...options, replicas: 1 }));
    return new KvRecords(kv, `JetStream key-value bucket ${bucket}`);
  }

  async list(prefix: string): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    const keys: string[] = [];
    for await (const key of await this.kv.keys(`${prefix}>`)) keys.push(key);
    for (const key of keys) {
      const value = await this.get(key);
      if (value !== undefined) found.set(key, value);
    }
    return found;
  }

  async get(key: string): Promise<string | undefined> {
    const entry = await this.kv.get(key);
    return entry !== null && entry.operation === 'PUT' ? entry.string() : undefined;
  }

  async put(key: string, value: string): Promise<void> {
    await this.kv.put(key, value);
  }

  async create(key: string, value: string): Promise<boolean> {
    try {
      await this.kv.create(key, value);
      return true;
    } catch (error) {
      if (error instanceof JetStreamApiError && (await this.get(key)) !== undefined) return false;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.kv.delete(key);
  }
}

/**
 * Records in one JSON file (replaced atomically at every change), or in memory only when no file
 * is given. One process holds a data directory, so the file is this gateway's alone.
 */
export class FileRecords implements SharedRecords {
  readonly shared = false;
  private writes = Promise.resolve();

  private constructor(
    private readonly records: Map<string, string>,
    private readonly file: string | undefined,
  ) {}

  get where(): string {
    return this.file ?? 'memory';
  }

  /** Records in memory alone. */
  static inMemory(): FileRecords {
    return new FileRecords(new Map(), undefined);
  }

  /** The records of a data directory's file (none when it is missing), or of memory alone (no directory). */
  static async open(dataDir: string | undefined): Promise<FileRecords> {
    if (dataDir === undefined) return FileRecords.inMemory();
    const file = join(dataDir, PUSH_CONFIGS_FILE);
    const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return '{}';
      throw error;
    });
    const parsed = JSON.parse(text) as Record<string, unknown>;
    return new FileRecords(new Map(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string')), file);
  }

  async list(prefix: string): Promise<Map<string, string>> {
    return new Map([...this.records].filter(([key]) => key.startsWith(prefix)));
  }

  async get(key: string): Promise<string | undefined> {
    return this.records.get(key);
  }

  async put(key: string, value: string): Promise<void> {
    this.records.set(key, value);
    await this.save();
  }

  async create(key: string, value: string): Promise<boolean> {
    if (this.records.has(key)) return false;
    await this.put(key, value);
    return true;
  }

  async delete(key: string): Promise<void> {
    if (this.records.delete(key)) await this.save();
  }

  /** Writes the file as the records now stand, one write after another. */
  private save(): Promise<void> {
    const file = this.file;
    if (file === undefined) return Promise.resolve();
    this.writes = this.writes.catch(() => undefined).then(() => writeFileAtomically(dirname(file), file, `${JSON.stringify(Object.fromEntries(this.records))}\n`));
    return this.writes;
  }
}

/**
 * Where a gateway process keeps its records (`shared` of the gateway's options): an embedded log has
 * one process, which writes it, so its records are a file of the data directory beside it, NATS or
 * not; the replicas of a shared log (JetStream, KurrentDB) share the bucket named after it, as their
 * leases are.
 */
export function sharedRecordsWhere(config: { dataDir: string; store: Parameters<typeof leaseScope>[0] }): { dataDir: string; scope?: string } {
  return config.store.kind === 'embedded' ? { dataDir: config.dataDir } : { dataDir: config.dataDir, scope: leaseScope(config.store) };
}

/**
 * The records of a gateway: the bucket `A2A_PUSH_<scope>` on NATS (a2aPushBucket: `scope` names the
 * log the replicas share, as their leases are scoped), else the data directory's file, else memory.
 */
export async function openSharedRecords(where: { connection?: NatsConnection | undefined; scope?: string | undefined; dataDir?: string | undefined }, maxAgeMs: number): Promise<SharedRecords> {
  if (where.connection !== undefined && where.scope !== undefined) {
    const bucket = a2aPushBucket(where.scope);
    return KvRecords.open(where.connection, bucket, maxAgeMs).catch((error: unknown) => {
      throw new Error(`A2A push configurations: the JetStream key-value bucket ${bucket} could not be opened (${error instanceof Error ? error.message : String(error)}): the gateway needs JetStream on its NATS server, and its NATS user the bucket's subjects (deploy/nats/roles.conf), or AGORA_A2A_URL=off`, { cause: error });
    });
  }
  return FileRecords.open(where.dataDir);
}
