import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { positiveInt } from '@agora/contracts';
import { jetstream, jetstreamManager, JetStreamApiCodes, JetStreamApiError, RetentionPolicy, StorageType, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';

/** Default AGORA_LEASE_TTL_MS: how long a lease outlives its holder's last renewal. */
export const DEFAULT_LEASE_TTL_MS = 10_000;
/** The JetStream stream of leases: one message per lease (the last one kept), on `agora.lease.<name>`. */
export const LEASE_STREAM = 'AGORA_LEASES';
export const LEASE_SUBJECT_PREFIX = 'agora.lease';

/** A lease as the register holds it: who holds it (undefined: released), and the revision a write must name. */
export interface LeaseRecord {
  holder: string | undefined;
  revision: number;
}

/**
 * Where leases are kept: a register per lease name with compare-and-set writes. `write` names the
 * revision it read (0: none yet) and returns the new revision, or `conflict` when another write
 * got in first.
 */
export interface LeaseRegister {
  read(name: string): Promise<LeaseRecord | undefined>;
  write(name: string, holder: string | undefined, expectedRevision: number): Promise<number | 'conflict'>;
}

/** JetStream's answers to a publish whose expected last subject sequence is not the actual one. */
const WRONG_LAST_SEQUENCE = new Set<number>([10071, 10164]);
const STREAM_NAME_IN_USE = 10058;

/**
 * Leases in a JetStream stream that keeps one message per subject: a read is a get of the
 * subject's last message, a write a publish with the expected last subject sequence (0: the
 * subject has none). Works on nats-server 2.9.
 */
export class JetStreamLeaseRegister implements LeaseRegister {
  private constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly timeoutMs: number,
  ) {}

  /** Creates the lease stream when missing. Rejects when the server has no JetStream. */
  static async open(connection: NatsConnection, options: { timeoutMs?: number } = {}): Promise<JetStreamLeaseRegister> {
    const timeoutMs = options.timeoutMs ?? 5_000;
    const jsm = await jetstreamManager(connection, { timeout: timeoutMs });
    for (let attempt = 1; ; attempt++) {
      try {
        await jsm.streams.info(LEASE_STREAM);
        break;
      } catch (error) {
        if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)) throw error;
      }
      try {
        await addLeaseStream(jsm, 3).catch((error: unknown) => {
          // A single server (not a cluster) refuses replicas: one copy then.
          if (error instanceof JetStreamApiError && error.code !== STREAM_NAME_IN_USE) return addLeaseStream(jsm, 1);
          throw error;
        });
        break;
      } catch (error) {
        if (attempt < 3 && error instanceof JetStreamApiError && error.code === STREAM_NAME_IN_USE) continue;
        throw error;
      }
    }
    return new JetStreamLeaseRegister(jetstream(connection, { timeout: timeoutMs }), jsm, timeoutMs);
  }

  async read(name: string): Promise<LeaseRecord | undefined> {
    const msg = await this.jsm.streams.getMessage(LEASE_STREAM, { last_by_subj: leaseSubject(name) });
    if (!msg) return undefined;
    const holder = (msg.json<{ holder?: unknown }>() ?? {}).holder;
    return { holder: typeof holder === 'string' ? holder : undefined, revision: msg.seq };
  }

  async write(name: string, holder: string | undefined, expectedRevision: number): Promise<number | 'conflict'> {
    try {
      const body = JSON.stringify({ holder: holder ?? null, at: new Date().toISOString() });
      const ack = await this.js.publish(leaseSubject(name), body, { expect: { lastSubjectSequence: expectedRevision }, timeout: this.timeoutMs });
      return ack.seq;
    } catch (error) {
      if (error instanceof JetStreamApiError && WRONG_LAST_SEQUENCE.has(error.code)) return 'conflict';
      throw error;
    }
  }
}

/** The lease stream: the last message of each subject, replicated like the log (R3 in a cluster). */
function addLeaseStream(jsm: JetStreamManager, replicas: number): Promise<unknown> {
  return jsm.streams.add({
    name: LEASE_STREAM,
    description: 'Agora leases: which replica runs each reactor and deadline scheduler',
    subjects: [`${LEASE_SUBJECT_PREFIX}.>`],
    max_msgs_per_subject: 1,
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    num_replicas: replicas,
  });
}

function leaseSubject(name: string): string {
  return `${LEASE_SUBJECT_PREFIX}.${name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/**
 * The scope of a system's leases: the log its replicas share. A JetStream log is named by its
 * stream (one system per stream); another store by a short hash of where it is (an embedded log's
 * directory, a KurrentDB connection string).
 */
export function leaseScope(store: { kind: string; streamName?: string; directory?: string; connectionString?: string }): string {
  if (store.kind === 'jetstream') return store.streamName ?? 'AGORA_EVENTS';
  const where = store.kind === 'embedded' ? store.directory : store.connectionString;
  return `${store.kind}-${createHash('sha256').update(where ?? '').digest('base64url').slice(0, 12)}`;
}

/** What runs only while its lease is held: started on take, stopped on loss (each may be called again after the other). */
export interface LeasedWork {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface HeldLease {
  /** Whether this replica holds the lease (and its work runs) now. */
  readonly held: boolean;
  /** Stops the work and releases the lease, so a standby takes it at its next look. */
  close(): Promise<void>;
}

export interface LeasesOptions {
  /** How long a lease outlives its holder's last renewal (AGORA_LEASE_TTL_MS). The holder renews every third of it. */
  ttlMs: number;
  /** Names this replica in the register and the logs. Default `<host>:<pid>:<random>`. */
  holder?: string;
  /**
   * The log the leases are for (`leaseScope`): the register keeps lease `name` as `<scope>.<name>`,
   * so that systems sharing one NATS server, each with its own log, each have their own leases.
   */
  scope?: string;
  /** A line for each take and loss. */
  log?: (line: string) => void;
  logger?: { warn(message: string, ...details: unknown[]): void };
  now?: () => number;
}

/**
 * Leases of one process: for each name (a reactor's, a scheduler's), one replica at a time holds
 * the lease and runs the work; the others stand by. A holder renews every ttl/3; a standby looks
 * every ttl/4 and takes the lease once it has seen the same revision for a whole ttl (by its own
 * clock: no clocks are compared across machines), or at once when it is free or released. A
 * holder that finds the lease taken stops its work; one that cannot reach the register keeps it.
 * Two replicas may both run the work for a moment around a takeover: work under a lease must
 * tolerate that (derived command ids make a repeat append nothing).
 */
export class Leases {
  readonly holder: string;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private readonly logger: { warn(message: string, ...details: unknown[]): void };
  private readonly running = new Map<string, LeaseLoop>();
  /** Work run without a lease, the register being unavailable. */
  private readonly unleased = new Set<string>();
  private opened: Promise<LeaseRegister | undefined> | undefined;
  private readonly scope: string | undefined;

  /**
   * @param register the register, or how to open it: opened on the first `run`, so a process that
   * runs nothing under a lease (the gateway) never touches it. When it cannot be opened (no
   * JetStream on that NATS, no permission), the work runs on this replica without a lease, as it
   * would with no replicas, and a warning says so.
   */
  constructor(
    private readonly register: LeaseRegister | (() => Promise<LeaseRegister>),
    options: LeasesOptions,
  ) {
    this.ttlMs = positiveInt(options.ttlMs, 'ttlMs');
    this.holder = options.holder ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.scope = options.scope;
    this.now = options.now ?? Date.now;
    this.log = options.log ?? ((line) => process.stdout.write(`${line}\n`));
    this.logger = options.logger ?? console;
  }

  /** Each lease name and whether this replica holds it (agora_lease_held). */
  held(): Array<{ name: string; held: boolean }> {
    return [...[...this.running].map(([name, loop]) => ({ name, held: loop.held })), ...[...this.unleased].map((name) => ({ name, held: true }))];
  }

  private openRegister(): Promise<LeaseRegister | undefined> {
    const register = this.register;
    this.opened ??= (typeof register === 'function' ? register() : Promise.resolve(register)).catch((error: unknown) => {
      this.logger.warn(`leases: cannot open the lease register (${(error as Error).message}); this replica runs its reactors and deadline schedulers without a lease, as every replica would without leases`);
      return undefined;
    });
    return this.opened;
  }

  /**
   * Runs `work` while this replica holds lease `name`. Resolves after the first attempt: with the
   * work started (and its start awaited) when the lease was free, or standing by.
   */
  async run(name: string, work: LeasedWork): Promise<HeldLease> {
    if (this.running.has(name) || this.unleased.has(name)) throw new Error(`lease ${name} is already run by this process`);
    const register = await this.openRegister();
    if (!register) {
      await work.start();
      this.unleased.add(name);
      return {
        held: true,
        close: async () => {
          await work.stop();
          this.unleased.delete(name);
        },
      };
    }
    const key = this.scope === undefined ? name : `${this.scope}.${name}`;
    const loop = new LeaseLoop(name, key, work, register, { ttlMs: this.ttlMs, holder: this.holder, now: this.now, log: this.log, logger: this.logger });
    this.running.set(name, loop);
    await loop.begin();
    return {
      get held() {
        return loop.held;
      },
      close: async () => {
        await loop.close();
        this.running.delete(name);
      },
    };
  }
}

class LeaseLoop {
  held = false;
  private revision = 0;
  /** The revision a standby saw last, and since when (its clock). */
  private seen: { revision: number; sinceMs: number } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> = Promise.resolve();
  /** Starts and stops of the work, one after another. */
  private transitions: Promise<void> = Promise.resolve();
  private closed = false;
  private failing = false;

  constructor(
    private readonly name: string,
    /** The lease's key in the register (its name under the leases' scope). */
    private readonly key: string,
    private readonly work: LeasedWork,
    private readonly register: LeaseRegister,
    private readonly options: Required<Pick<LeasesOptions, 'ttlMs' | 'holder' | 'now' | 'log' | 'logger'>>,
  ) {}

  async begin(): Promise<void> {
    await this.tick();
    await this.transitions;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.ticking;
    if (!this.held) return this.transitions;
    this.held = false;
    this.transition('stop');
    await this.transitions;
    await this.register.write(this.key, undefined, this.revision).catch(() => undefined);
    this.options.log(`lease ${this.name}: released by ${this.options.holder}`);
  }

  private schedule(): void {
    if (this.closed) return;
    const every = this.held ? this.options.ttlMs / 3 : this.options.ttlMs / 4;
    this.timer = setTimeout(() => {
      this.ticking = this.tick();
    }, Math.max(1, Math.floor(every)));
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    try {
      if (this.held) await this.renew();
      else await this.look();
      if (this.failing) this.options.logger.warn(`lease ${this.name}: the lease register answers again`);
      this.failing = false;
    } catch (error) {
      // A holder that cannot reach the register keeps its work: a standby that can may take the
      // lease meanwhile, and both run it for a while, which costs repeats but loses nothing.
      if (!this.failing) this.options.logger.warn(`lease ${this.name}: the lease register failed (${(error as Error).message}); ${this.held ? 'still running its work, ' : ''}trying again`);
      this.failing = true;
    } finally {
      this.schedule();
    }
  }

  private async renew(): Promise<void> {
    const revision = await this.register.write(this.key, this.options.holder, this.revision);
    if (revision === 'conflict') return this.lose('taken by another replica');
    this.revision = revision;
  }

  private async look(): Promise<void> {
    if (this.closed) return;
    const now = this.options.now();
    const record = await this.register.read(this.key);
    if (record && record.holder !== undefined && record.holder !== this.options.holder) {
      if (this.seen?.revision !== record.revision) {
        this.seen = { revision: record.revision, sinceMs: now };
        return;
      }
      if (now - this.seen.sinceMs < this.options.ttlMs) return;
    }
    const revision = await this.register.write(this.key, this.options.holder, record?.revision ?? 0);
    if (revision === 'conflict') return;
    const previous = record?.holder;
    this.held = true;
    this.revision = revision;
    this.seen = undefined;
    this.options.log(`lease ${this.name}: taken by ${this.options.holder}${previous && previous !== this.options.holder ? ` (from ${previous}, silent for ${this.options.ttlMs} ms)` : ''}`);
    this.transition('start');
  }

  private lose(why: string): void {
    if (!this.held) return;
    this.held = false;
    this.seen = undefined;
    this.options.log(`lease ${this.name}: lost by ${this.options.holder} (${why}); standing by`);
    this.transition('stop');
  }

  private transition(to: 'start' | 'stop'): void {
    this.transitions = this.transitions.then(async () => {
      try {
        await (to === 'start' ? this.work.start() : this.work.stop());
      } catch (error) {
        this.options.logger.warn(`lease ${this.name}: ${to === 'start' ? 'starting' : 'stopping'} its work failed`, error);
        // Work that would not start gives the lease back, for this replica or another to try again.
        if (to === 'start' && this.held) {
          this.held = false;
          await this.register.write(this.key, undefined, this.revision).catch(() => undefined);
          await this.work.stop().catch(() => undefined);
        }
      }
    });
  }
}
