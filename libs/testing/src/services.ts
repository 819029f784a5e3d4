// The harness of service and process tests: agents that sign and send commands and read with
// their own keys (over any client: a service context's in-process client, or NATS), waiting for a
// state, a fleet of Agora's service processes on a NATS server and a JetStream log of the test's
// own, started, restarted and cleaned up in one place, and the services in the test's own process.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandByType, READ_TOKEN, type CommandDefinition, type CommandResult, type Reply } from '@agora/contracts';
import { createSignedCommand, generateKeyPair, mintReadToken, type KeyPair } from '@agora/identity';
import { NatsAgoraClient, type AgoraClient } from '@agora/messaging';
import { agoraOn, uniqueJetStreamLog, waitFor, type TestAgora, type TestOperator } from './basics.js';
import { freshPostgresDatabase } from './postgres.js';
import { startNatsServer, type PrivateNatsServer, type StartNatsOptions } from './nats-server.js';
import { expectOnlyReplicas, startAgoraProcess, startServiceProcess, type AgoraProcess, type ServiceProcess } from './processes.js';

/** A command by its type (`'SubmitProposal'`) or its definition (`SubmitProposal` from @agora/contracts). */
export type CommandRef = string | Pick<CommandDefinition, 'type' | 'subject'>;

export interface Agents {
  /** Every agent's key pair by id; `key(id)` makes one on first use. */
  readonly keys: Record<string, KeyPair>;
  key(agentId: string): KeyPair;
  /** Signs `command` as `agentId` (with its key, or `options.key`) and sends it; the reply as it comes. */
  send<T = CommandResult>(agentId: string, command: CommandRef, payload: Record<string, unknown>, options?: { key?: KeyPair; timeoutMs?: number }): Promise<Reply<T>>;
  /** `send`, failing with the error's code and message unless the reply is ok; the result. */
  ok<T = CommandResult>(agentId: string, command: CommandRef, payload: Record<string, unknown>): Promise<T>;
  /** A query's result (failing on an error reply), read as `as` with a read token of its own when given. */
  query<T>(subject: string, params: unknown, options?: { as?: string; timeoutMs?: number }): Promise<T>;
  /** Reads with `read` until `check` holds (an error reply counts as not yet); the last value read. */
  until<T>(read: () => Promise<T>, check: (value: T) => boolean, what: string, timeoutMs?: number): Promise<T>;
}

export const definitionOf = (command: CommandRef): Pick<CommandDefinition, 'type' | 'subject'> => {
  if (typeof command !== 'string') return command;
  const definition = commandByType(command);
  if (!definition) throw new Error(`no command of type ${command} in the contracts`);
  return definition;
};

type RequestClient = Pick<AgoraClient, 'request'>;

type Send = <T = CommandResult>(agentId: string, command: CommandRef, payload: Record<string, unknown>) => Promise<Reply<T>>;

/** An agents' `ok` over their `send` (NATS or HTTP): the result, or an error naming the agent, the command and the reply's code and message. */
export function okOver(send: Send) {
  return async <T = CommandResult>(agentId: string, command: CommandRef, payload: Record<string, unknown>): Promise<T> => {
    const reply = await send<T>(agentId, command, payload);
    if (!reply.ok) throw new Error(`${agentId} ${definitionOf(command).type}: ${reply.error.code} ${reply.error.message}`);
    return reply.result;
  };
}

/**
 * Agents speaking through `client` (anything with `request`, e.g. a ServiceContext's client or a
 * NatsAgoraClient), or through the one `client()` returns at each request (a context a test opens later).
 */
export function agentsOn(client: RequestClient | (() => RequestClient), keys: Record<string, KeyPair> = {}): Agents {
  const current = typeof client === 'function' ? client : () => client;
  const key = (agentId: string) => (keys[agentId] ??= generateKeyPair());
  const send = <T = CommandResult>(agentId: string, command: CommandRef, payload: Record<string, unknown>, options: { key?: KeyPair; timeoutMs?: number } = {}) => {
    const { type, subject } = definitionOf(command);
    const envelope = createSignedCommand({ type, actor: agentId, payload, secretKey: (options.key ?? key(agentId)).secretKey });
    return current().request<T>(subject, envelope, { timeoutMs: options.timeoutMs ?? 10_000 });
  };
  return {
    keys,
    key,
    send,
    ok: okOver(send),
    async query<T>(subject: string, params: unknown, options: { as?: string; timeoutMs?: number } = {}) {
      const headers = options.as === undefined ? undefined : { [READ_TOKEN.natsHeader]: mintReadToken({ agentId: options.as, secretKey: key(options.as).secretKey, lifetimeSeconds: 60 }) };
      const reply = await current().request<T>(subject, params, { timeoutMs: options.timeoutMs ?? 10_000, ...(headers ? { headers } : {}) });
      if (!reply.ok) throw new Error(`${subject}: ${reply.error.code} ${reply.error.message}`);
      return reply.result;
    },
    async until<T>(read: () => Promise<T>, check: (value: T) => boolean, what: string, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      let last: { value: T } | { error: unknown } | undefined;
      for (;;) {
        try {
          const value = await read();
          last = { value };
          if (check(value)) return value;
        } catch (error) {
          last = { error };
        }
        if (Date.now() > deadline) {
          const seen = last === undefined ? 'nothing' : 'value' in last ? JSON.stringify(last.value) : String(last.error);
          throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last read: ${seen}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}

export interface ServiceFleetOptions {
  /** Names the log, the data directory and the NATS client (`'tribunal'`). */
  label: string;
  /** Settings of one service's process beyond the fleet's own (policies, METRICS_HOST ...). */
  env?: (service: string) => Record<string, string>;
  /** The private NATS server's options (a configuration file with users ...). */
  nats?: StartNatsOptions;
  /** The NATS user the test's own client connects as (a server whose configuration has users). */
  credentials?: { user: string; pass: string };
  /** Key pairs the agents (and the operator `root`) sign with, where the test made them already; the others are made on first use. */
  keys?: Record<string, KeyPair>;
}

export interface ServiceFleet extends Agents {
  readonly nats: PrivateNatsServer;
  /** The JetStream log every process shares (EVENT_STORE and its parts). */
  readonly log: ReturnType<typeof uniqueJetStreamLog>;
  /** A directory of the fleet's own (each process's data directory is `<dir>/<service>`). */
  readonly dir: string;
  /** The test's connection to the fleet's NATS server. */
  readonly client: NatsAgoraClient;
  /** The running processes by service name. */
  readonly processes: Map<string, AgoraProcess>;
  /** The environment `start(service)` gives the process: NATS, the log, its data directory, the operator `root`, then `options.env` (which may replace any of them). */
  env(service: string): Record<string, string>;
  /** Starts `apps/<service>/src/main.ts` (again, after a stop or a kill) and resolves once it is ready (within `readyTimeoutMs`, default 60 s). */
  start(service: string, env?: Record<string, string>, readyTimeoutMs?: number): Promise<AgoraProcess>;
  /**
   * Starts `count` replicas of `service` at once (processes `<service>-1` ..., each with a data
   * directory of its own, again after a stop or a kill) and resolves once each is ready and named
   * its replica id, and no other replica serves the service's queue group; when one fails to
   * start, the others are killed and the error thrown.
   */
  startReplicas(service: string, count: number, env?: Record<string, string>): Promise<ServiceProcess[]>;
  /** Registers agents as the operator `root`, with keys of their own (`key(agentId)`). */
  register(agents: Record<string, { roles: readonly string[]; [field: string]: unknown }>): Promise<void>;
  /** Stops every process (SIGTERM), the client and the NATS server, and removes the directory. */
  stop(): Promise<void>;
}

/**
 * Agora's services as separate processes, the way an operator runs them, on a NATS server of the
 * test's own (no other run's replicas join their queue groups) with a JetStream log of their own.
 * Nothing is started but the server: `start(service)` starts each process.
 */
export async function startServiceFleet(options: ServiceFleetOptions): Promise<ServiceFleet> {
  const dir = await mkdtemp(join(tmpdir(), `agora-${options.label}-`));
  const nats = await startNatsServer(options.nats);
  const log = uniqueJetStreamLog(options.label, nats.url);
  const client = await NatsAgoraClient.connect({ servers: nats.url, name: `${options.label}-test`, ...(options.credentials ? { credentials: options.credentials } : {}) });
  const agents = agentsOn(client, options.keys);
  const root = agents.key('root');
  const processes = new Map<string, AgoraProcess>();
  const env = (service: string): Record<string, string> => ({
    NATS_URL: nats.url,
    EVENT_STORE: log.eventStore,
    AGORA_DATA_DIR: join(dir, service),
    AGORA_OPERATOR_PUBLIC_KEY: root.publicKey,
    ...options.env?.(service),
  });
  return {
    ...agents,
    nats,
    log,
    dir,
    client,
    processes,
    env,
    async start(service, extra = {}, readyTimeoutMs) {
      const started = await startAgoraProcess(`apps/${service}/src/main.ts`, `agora-${service}`, { ...env(service), ...extra }, readyTimeoutMs);
      processes.set(service, started);
      return started;
    },
    async startReplicas(service, count, extra = {}) {
      const names = Array.from({ length: count }, (_, i) => `${service}-${i + 1}`);
      const started = await Promise.allSettled(names.map((name) => startServiceProcess(service, { ...env(service), AGORA_DATA_DIR: join(dir, name), ...extra })));
      const replicas = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) {
        await Promise.all(replicas.map((r) => r.kill()));
        throw failed.reason;
      }
      replicas.forEach((replica, i) => processes.set(names[i]!, replica));
      await expectOnlyReplicas(client.connection, service, replicas.map((r) => r.id));
      return replicas;
    },
    async register(fleet) {
      for (const [agentId, profile] of Object.entries(fleet)) {
        await agents.ok('root', 'RegisterAgent', { agentId, publicKey: agents.key(agentId).publicKey, displayName: agentId, constitutions: [], ...profile, roles: [...profile.roles] });
      }
    },
    async stop() {
      await Promise.all([...processes.values()].map((p) => p.stop()));
      await client.close();
      await nats.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One way a service test runs Agora's services in its own process (for openServiceContext). */
export interface ServiceTransport {
  name: 'in-process transport, embedded store, SQLite read models' | 'NATS transport, JetStream store, PostgreSQL read models';
  /** True over NATS. */
  nats: boolean;
  /** The store and transport settings of one service context; an embedded store is kept in `dir`. */
  config(dir: string): { store: { kind: 'embedded'; directory: string } | { kind: 'jetstream'; servers: string; streamName: string; subjectPrefix: string }; natsUrl: string | undefined; readDb?: { engine: 'postgres'; url: string } };
  /** The settings of a test's own Agora on this transport (for openServiceContext, see agoraOn): a log of its own, `operator` as the bootstrap operator. */
  agora(dir: string, operator: TestOperator): TestAgora<ReturnType<ServiceTransport['config']>>;
}

/**
 * The two ways a service test runs the services, for `describe.each`: in one process (in-process
 * transport, embedded store, the read models in SQLite in the data directory), and as a deployment
 * does: over NATS with a JetStream log of its own (`label` names it) on a NATS server of the test
 * file's own, started before its tests and stopped after them (on a shared server, other runs'
 * replicas would join the services' queue groups), the read models in a PostgreSQL database of the
 * log's own (of a few the file makes on TEST_POSTGRES_URL's server and drops after it; the processes
 * sharing one log share it). Call it at the top of the file.
 */
export function serviceTransports(label: string): ServiceTransport[] {
  let server: PrivateNatsServer | undefined;
  const databases: { url: string; drop(): Promise<void> }[] = [];
  let next = 0;
  beforeAll(async () => {
    server = await startNatsServer();
    for (let i = 0; i < READ_DATABASES_PER_FILE; i++) databases.push(await freshPostgresDatabase(label));
  });
  afterAll(async () => {
    await server?.stop();
    for (const database of databases.splice(0)) await database.drop();
  });
  const inProcess = (dir: string) => ({ store: { kind: 'embedded' as const, directory: join(dir, 'events') }, natsUrl: undefined });
  const overNats = () => {
    if (!server) throw new Error('the NATS server of serviceTransports() is not running: use its config in a test or a hook');
    const { streamName, subjectPrefix } = uniqueJetStreamLog(label, server.url);
    // A log of its own, and a database for it (taken in turn: one that served another log finds itself at a position this log does not hold, and is filled again).
    const readDb = { engine: 'postgres' as const, url: databases[next++ % databases.length]!.url };
    return { store: { kind: 'jetstream' as const, servers: server.url, streamName, subjectPrefix }, natsUrl: server.url, readDb };
  };
  return [
    { name: 'in-process transport, embedded store, SQLite read models', nats: false, config: inProcess, agora: (dir, operator) => agoraOn(inProcess(dir), dir, operator) },
    { name: 'NATS transport, JetStream store, PostgreSQL read models', nats: true, config: overNats, agora: (dir, operator) => agoraOn(overNats(), dir, operator) },
  ];
}

/** Databases serviceTransports() makes per test file: a file's logs take them in turn. */
const READ_DATABASES_PER_FILE = 4;

/** Something started that closes (a service, the services together: `Running` of @agora/runtime). */
export interface Closable {
  close(): Promise<void>;
}

/** A service's start function as standalone mode composes them (`startRegistryService` ...), called on a service context with its logs off. */
export type QuietStart<C> = (context: C, options: { logger: false }) => Promise<Closable>;

/**
 * The parts (for `startAll` of @agora/runtime) that start `services` on `context` in that order, as
 * standalone mode composes them, with their logs off.
 */
export function quietServices<C>(context: C, services: readonly QuietStart<C>[]): (() => Promise<Closable>)[] {
  return services.map((start) => () => start(context, { logger: false }));
}

/** The projections service's options in one process of tests or tools: logs off, its /metrics on a free port of 127.0.0.1. */
export const QUIET_PROJECTIONS = { metricsPort: 0, metricsHost: '127.0.0.1', logger: false } as const;

/** A service context of @agora/runtime (`openServiceContext`), as far as the harness uses it. */
export interface ContextLike {
  readonly client: RequestClient;
  readonly registry: { list(): readonly { agentId: string }[] };
  close(): Promise<void>;
}

export interface InProcessOptions<C extends ContextLike> {
  /** Names the test's directory (`agora-<label>-...`). */
  label: string;
  /** Key pairs the agents (and the operator `root`) sign with, where the test made them already; the others are made on first use. */
  keys?: Record<string, KeyPair>;
  /** Opens the service context on the test's directory with `operator` as the bootstrap operator: `openServiceContext(embeddedAgora(dir, operator))`, or a ServiceTransport's `agora(dir, operator)`. */
  open(dir: string, operator: TestOperator): Promise<C>;
  /** Starts the services on it: `startAll` of @agora/runtime, over `quietServices(context, [...])` and the parts of the test's own. */
  start(context: C): Promise<Closable>;
}

export interface InProcessServices<C extends ContextLike> extends Agents {
  /** A directory of the test's own (the embedded store's, the services' keys and snapshots), removed by stop(). */
  readonly dir: string;
  readonly context: C;
  /**
   * Registers agents as the operator `root`, with keys of their own (`key(agentId)`) and the fields
   * of `common` their profiles do not give (`{ trustScore: 700 }`), and waits until the context's
   * agent directory knows them all.
   */
  register(agents: Record<string, { roles: readonly string[]; [field: string]: unknown }>, common?: Record<string, unknown>): Promise<void>;
  /** Closes the services, then the context, and removes the directory. */
  stop(): Promise<void>;
}

/**
 * Agora's services in the test's own process, as the one-process standalone composes them, on a
 * directory of the test's own: `open` opens the service context there with `root` as the bootstrap
 * operator, `start` starts the services on it; the agents speak through the context's client. When
 * either fails, what was opened is closed and the directory removed.
 */
export async function startServicesInProcess<C extends ContextLike>(options: InProcessOptions<C>): Promise<InProcessServices<C>> {
  const dir = await mkdtemp(join(tmpdir(), `agora-${options.label}-`));
  const keys = options.keys ?? {};
  let context: C | undefined;
  let running: Closable;
  try {
    context = await options.open(dir, { agentId: 'root', publicKey: (keys['root'] ??= generateKeyPair()).publicKey });
    running = await options.start(context);
  } catch (error) {
    await context?.close();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const opened = context;
  const agents = agentsOn(opened.client, keys);
  return {
    ...agents,
    dir,
    context: opened,
    async register(fleet, common = {}) {
      for (const [agentId, profile] of Object.entries(fleet)) {
        await agents.ok('root', 'RegisterAgent', { agentId, publicKey: agents.key(agentId).publicKey, displayName: agentId, constitutions: [], ...common, ...profile, roles: [...profile.roles] });
      }
      await waitFor(() => {
        const known = new Set(opened.registry.list().map((agent) => agent.agentId));
        return Object.keys(fleet).every((agentId) => known.has(agentId));
      }, 'the agent directory to know the fleet');
    },
    async stop() {
      await running.close();
      await opened.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
