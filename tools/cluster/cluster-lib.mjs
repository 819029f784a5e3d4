// The pieces of `npm run cluster`, importable: three nats-server nodes clustered with JetStream,
// the log stream AGORA_EVENTS at 3 replicas, the operator key, and Agora's processes, each with its
// output in <dir>/logs/<name>.log. Used by cluster.mjs (the command) and faults.mjs (the fault runs),
// which also kills and restarts single processes and nodes.
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { clusteredLogRefusal, openJetStreamEventStore } from '@agora/eventstore';
import { describeNatsServer, resolveNatsServer } from '@agora/testing/nats-server';
import pg from 'pg';
import { sharedPostgres } from '../test/setup.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const SERVICES = ['registry', 'proposal', 'tribunal', 'voting', 'dialectic', 'chamber', 'debate'];
/** The users of deploy/nats/auth.conf, each with its password variable AGORA_NATS_<USER>_PASSWORD. */
export const NATS_USERS = ['service', 'gateway', 'agent', 'observer', 'auditor'];
const AUTH_CONF = join(ROOT, 'deploy', 'nats', 'auth.conf');
export const LOG_STREAM = 'AGORA_EVENTS';

/** A whole number from the environment (a port, a count); exits with code 2 naming the setting otherwise. */
export function intEnv(name, fallback, program) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0 || value > 65535) {
    console.error(`${program}: ${name}=${JSON.stringify(raw)} must be a whole number (a port, a count)`);
    process.exit(2);
  }
  return value;
}

/**
 * The nats-server binary (NATS_SERVER_BIN, else the one `npm run nats-server` fetched, else PATH: libs/testing's
 * one rule), its version and a line naming both; whether it supports `sync_interval: always` (2.10+).
 * Without NATS_SERVER_BIN, when that rule finds none that can hold a clustered log (a fresh clone on
 * Debian 12, whose PATH has 2.9.10), it fetches Debian's newest first, as `npm test` does.
 */
export function natsServer() {
  let server = resolveNatsServer();
  if (!process.env['NATS_SERVER_BIN']?.trim() && (server.version === undefined || clusteredLogRefusal(server.version, 3, LOG_STREAM) !== undefined)) {
    console.log(`${describeNatsServer(server)} cannot hold a clustered log: fetching Debian's newest (npm run nats-server)`);
    const fetched = spawnSync(process.execPath, [join(ROOT, 'tools', 'nats-server', 'install.mjs'), 'unstable', '--quiet'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    if (fetched.status !== 0) return { bin: server.bin, error: `npm run nats-server could not fetch Debian's newest nats-server (see above); set NATS_SERVER_BIN to a nats-server 2.11 or newer` };
    server = resolveNatsServer();
  }
  if (server.version === undefined) return { bin: server.bin, error: `cannot run ${server.bin} (found through ${server.from}; run npm run nats-server to fetch Debian's newest, or set NATS_SERVER_BIN)` };
  const [major, minor] = server.version.split('.').map(Number);
  return { ...server, major, minor, syncAlways: major > 2 || (major === 2 && minor >= 10), description: describeNatsServer(server) };
}

/**
 * The user's Agora settings (every AGORA_* variable of this process but the cluster script's own
 * AGORA_CLUSTER_*), passed on to every process: policies, margins, log level, as for the
 * standalone system. What the cluster sets per process (data directory, keys) overrides them.
 */
export function agoraSettings(env = process.env) {
  return Object.fromEntries(Object.entries(env).filter(([name, value]) => name.startsWith('AGORA_') && !name.startsWith('AGORA_CLUSTER_') && value !== undefined));
}

/**
 * The services' keys, provisioned once for the whole cluster (`agora keys services`): one key per
 * service, shared by its replicas, in <dir>/service-keys, and <dir>/service-keys/public-keys.json,
 * the AGORA_SERVICE_PUBLIC_KEYS every process and the audit are given. Returns the directory, the
 * public keys file, the environment for a process, and whether they were made now.
 */
export function ensureServiceKeys(dir) {
  const keysDir = join(dir, 'service-keys');
  const publicKeys = join(keysDir, 'public-keys.json');
  const created = !existsSync(publicKeys);
  if (created) {
    const made = spawnSync(process.execPath, [join(ROOT, 'apps/cli/dist/main.js'), 'keys', 'services', '--dir', keysDir], { cwd: ROOT, encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`could not create the service keys: ${made.stderr || made.stdout}`);
  }
  return { keysDir, publicKeys, created, env: { AGORA_SERVICE_KEYS_DIR: keysDir, AGORA_SERVICE_PUBLIC_KEYS: `@${publicKeys}` } };
}

/** The environment `agora audit` reads the cluster's log with (as the read-only auditor user when the cluster has NATS users). */
export function auditEnvironment({ urls, keyFile, serviceKeys, passwords }) {
  return {
    ...agoraSettings(),
    EVENT_STORE: 'jetstream',
    NATS_URL: urls[0],
    AGORA_OPERATOR_KEY_FILE: keyFile,
    AGORA_SERVICE_PUBLIC_KEYS: `@${serviceKeys.publicKeys}`,
    ...(passwords ? { NATS_USER: 'auditor', NATS_PASSWORD: passwords.auditor } : {}),
  };
}

/**
 * Runs `agora audit --json` on the cluster's log; resolves to its exit code, the report's summary
 * (undefined when it printed none) and its output's last lines.
 */
export function auditLog(shared) {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [join(ROOT, 'apps/cli/dist/main.js'), 'audit', '--json'], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'], HOME: process.env['HOME'], ...auditEnvironment(shared) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr = (stderr + c).slice(-4000)));
    child.once('exit', (code) => {
      let report;
      try {
        report = JSON.parse(stdout);
      } catch {
        report = undefined;
      }
      resolvePromise({ code, report, tail: `${stdout.slice(-2000)}${stderr}`.trim().split('\n').slice(-8).join('\n') });
    });
  });
}

/** The apps whose dist/main.js is missing (the build makes them). */
export function missingBuilds(apps) {
  return apps.filter((app) => !existsSync(join(ROOT, 'apps', app, 'dist', 'main.js')));
}

/**
 * The processes of one cluster run: each started from a spec it can be started again from (same
 * command, same environment, same data), its output appended to logs/<name>.log.
 * `onUnexpectedExit(name, code, signal, lastLines)` hears of a process that exits unasked.
 */
export class ProcessGroup {
  constructor(dir, onUnexpectedExit) {
    this.dir = dir;
    this.onUnexpectedExit = onUnexpectedExit;
    /** name -> { spec, child, exited, expectExit } */
    this.entries = new Map();
    this.stopping = false;
    mkdirSync(join(dir, 'logs'), { recursive: true });
  }

  logOf(name) {
    return join(this.dir, 'logs', `${name}.log`);
  }

  /** Starts a process; resolves once a line of its output matches `ready` (if given), within 120 s. */
  start(name, command, args, env, ready) {
    const spec = { name, command, args, env, ready };
    const log = createWriteStream(this.logOf(name), { flags: 'a' });
    const child = spawn(command, args, { cwd: ROOT, env: { PATH: process.env['PATH'], HOME: process.env['HOME'], ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const entry = { spec, child, exited: new Promise((r) => child.once('exit', r)), expectExit: false };
    this.entries.set(name, entry);
    let seen = '';
    let tail = '';
    return new Promise((resolvePromise, reject) => {
      const timer = setTimeout(() => reject(new Error(`${name} was not ready within 120 s; see ${this.logOf(name)}`)), 120_000);
      const onData = (chunk) => {
        log.write(chunk);
        tail = (tail + chunk.toString()).slice(-4000);
        if (ready && seen !== null) {
          seen += chunk.toString();
          if (ready.test(seen)) {
            seen = null;
            clearTimeout(timer);
            resolvePromise(entry);
          }
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        log.end();
        if (!this.stopping && !entry.expectExit) {
          const last = tail.trimEnd().split('\n').slice(-5).map((line) => `  | ${line}`).join('\n');
          this.onUnexpectedExit?.(name, code, signal, last);
        }
        reject(new Error(`${name} exited (code ${code}, signal ${signal}) before it was ready; see ${this.logOf(name)}`));
      });
      if (!ready) {
        clearTimeout(timer);
        resolvePromise(entry);
      }
    });
  }

  /** SIGKILLs a process (a crash, for the fault runs), or sends it `signal` (SIGTERM: a restart); resolves once it is gone. */
  async kill(name, signal = 'SIGKILL') {
    const entry = this.entries.get(name);
    if (!entry) throw new Error(`no process named ${name}`);
    entry.expectExit = true;
    if (entry.child.exitCode === null && entry.child.signalCode === null) entry.child.kill(signal);
    await entry.exited;
  }

  /** Starts a process again as it was first started, once it has exited. */
  async restart(name) {
    const entry = this.entries.get(name);
    if (!entry) throw new Error(`no process named ${name}`);
    await entry.exited;
    const { command, args, env, ready } = entry.spec;
    return this.start(name, command, args, env, ready);
  }

  /** SIGTERM to Agora's processes, then to the NATS nodes (each group given 10 s before SIGKILL). */
  async stopAll() {
    this.stopping = true;
    const all = [...this.entries.values()];
    for (const group of [all.filter((e) => !e.spec.name.startsWith('nats-')), all.filter((e) => e.spec.name.startsWith('nats-'))]) {
      for (const { child } of group) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => group.forEach(({ child }) => child.kill('SIGKILL')), 10_000);
      await Promise.all(group.map((e) => e.exited));
      clearTimeout(timer);
    }
  }
}

/**
 * The passwords of deploy/nats/auth.conf's users, created on first run in <dir>/nats-passwords.json
 * (mode 0600), read again on later runs. Each starts with a letter and holds hex digits (what the
 * server reads as a value from its environment).
 */
export function ensureNatsPasswords(dir) {
  const file = join(dir, 'nats-passwords.json');
  if (existsSync(file)) return { file, created: false, passwords: JSON.parse(readFileSync(file, 'utf8')) };
  mkdirSync(dir, { recursive: true });
  const passwords = Object.fromEntries(NATS_USERS.map((user) => [user, `pw${randomBytes(16).toString('hex')}`]));
  writeFileSync(file, `${JSON.stringify(passwords, null, 2)}\n`, { mode: 0o600 });
  return { file, created: true, passwords };
}

/** The server's environment for auth.conf: AGORA_NATS_<USER>_PASSWORD for each user. */
function passwordEnv(passwords) {
  return Object.fromEntries(NATS_USERS.map((user) => [`AGORA_NATS_${user.toUpperCase()}_PASSWORD`, passwords[user]]));
}

/** The NATS user an Agora app connects as: the gateway as `gateway`, every service as `service`. */
function natsUserOf(app, passwords) {
  const user = app === 'gateway' ? 'gateway' : 'service';
  return { NATS_USER: user, NATS_PASSWORD: passwords[user] };
}

/** The three nodes' ports: client n, n+1, n+2; routes from n+2000; monitoring from n+4000. */
export function clusterNodes(natsPort) {
  return [1, 2, 3].map((n) => ({ n, name: `n${n}`, process: `nats-n${n}`, client: natsPort + n - 1, route: natsPort + 2000 + n - 1, monitor: natsPort + 4000 + n - 1, url: `nats://127.0.0.1:${natsPort + n - 1}` }));
}

/**
 * Writes each node's configuration and starts the three; resolves when each says it is ready.
 * With `passwords` (ensureNatsPasswords), each node includes deploy/nats/auth.conf: no anonymous
 * client, each user only what its role needs. A node may name its `host` (default 127.0.0.1), the
 * network namespace it runs in (`netns`, started through `ip netns exec`), and `conf`, more lines
 * of its configuration.
 */
export async function startNatsNodes(group, { dir, nodes, bin, syncAlways, passwords }) {
  const hostOf = (node) => node.host ?? '127.0.0.1';
  for (const node of nodes) {
    const store = join(dir, `nats-${node.name}`);
    mkdirSync(store, { recursive: true });
    const conf = [
      ...(passwords ? [`include ${JSON.stringify(relative(store, AUTH_CONF))}`] : []),
      `server_name: ${node.name}`,
      `listen: ${hostOf(node)}:${node.client}`,
      `http: ${hostOf(node)}:${node.monitor}`,
      ...(node.conf ?? []),
      'jetstream {',
      `  store_dir: ${JSON.stringify(store)}`,
      // Flush every write before acknowledging it (nats-server 2.10+); see deploy/README.md.
      ...(syncAlways ? ['  sync_interval: always'] : []),
      '}',
      'cluster {',
      '  name: agora-local',
      `  listen: ${hostOf(node)}:${node.route}`,
      `  routes: [${nodes.map((o) => `nats-route://${hostOf(o)}:${o.route}`).join(', ')}]`,
      '}',
      '',
    ].join('\n');
    writeFileSync(join(store, 'node.conf'), conf);
  }
  const env = passwords ? passwordEnv(passwords) : {};
  await Promise.all(
    nodes.map((node) => {
      const args = ['-c', join(dir, `nats-${node.name}`, 'node.conf')];
      return node.netns ? group.start(node.process, 'ip', ['netns', 'exec', node.netns, bin, ...args], env, /Server is ready/) : group.start(node.process, bin, args, env, /Server is ready/);
    }),
  );
}

/**
 * The log stream at 3 replicas, made by the store adapter itself (an existing one is kept).
 * JetStream needs its meta leader first: retries until the cluster has elected one. Returns the
 * stream's info.
 */
export async function ensureLogStream(urls, passwords) {
  const credentials = passwords ? { user: 'service', pass: passwords.service } : undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      const store = await openJetStreamEventStore({ servers: urls, replicas: 3, logger: { warn: () => undefined }, ...(credentials ? { credentials } : {}) });
      await store.close();
      const nc = await connect({ servers: urls, ...(credentials ?? {}) });
      try {
        return await (await jetstreamManager(nc)).streams.info(LOG_STREAM);
      } finally {
        await nc.close();
      }
    } catch (error) {
      // A refusal (a clustered log on a server that cannot keep it) is final; the rest waits for the meta leader.
      if (attempt > 60 || error?.code === 'store_refused') throw error;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** A key file made by `agora keys new --agent <agent>` at `keyFile` on first run; returns its path and whether it was made now. */
export function ensureKeyFile(keyFile, agent) {
  if (existsSync(keyFile)) return { keyFile, created: false };
  const made = spawnSync(process.execPath, [join(ROOT, 'apps/cli/dist/main.js'), 'keys', 'new', '--agent', agent, '--out', keyFile], { cwd: ROOT, encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`could not create the key ${keyFile}: ${made.stderr}`);
  return { keyFile, created: true };
}

/** The operator key (agent root) in <dir>/operator.key.json, created on first run; returns its path and whether it was made now. */
export function ensureOperatorKey(dir) {
  return ensureKeyFile(join(dir, 'operator.key.json'), 'root');
}

/**
 * Starts one Agora process (apps/<app>/dist/main.js) as `name`, on NATS node `index` (mod 3), the
 * shared log, a data directory of its own, the user's AGORA_* settings and the cluster's service
 * keys (ensureServiceKeys); resolves once it prints `agora-<app>: ready`.
 */
export function startAgoraApp(group, { dir, urls, keyFile, passwords, serviceKeys, readDb }, name, app, index, extra) {
  mkdirSync(join(dir, name), { recursive: true });
  const env = {
    AGORA_LOG_LEVEL: 'warn',
    // Queries on NATS need the reader's read token (docs/security-reads.md, "On NATS"); AGORA_NATS_READS=open in the environment overrides it, logged.
    AGORA_NATS_READS: 'closed',
    ...agoraSettings(),
    NATS_URL: urls[index % urls.length],
    EVENT_STORE: 'jetstream',
    AGORA_DATA_DIR: join(dir, name),
    AGORA_OPERATOR_KEY_FILE: keyFile,
    ...(serviceKeys ? serviceKeys.env : {}),
    METRICS_HOST: '127.0.0.1',
    ...(passwords ? natsUserOf(app, passwords) : {}),
    // Every replica's read models in one PostgreSQL database (else each process keeps its own SQLite file).
    ...(readDb ? { AGORA_READ_DB: readDb } : {}),
    ...extra,
  };
  return group.start(name, process.execPath, [join(ROOT, 'apps', app, 'dist', 'main.js')], env, new RegExp(`^agora-${app}: ready$`, 'm'));
}

/** The server name (n1, n2, n3) leading the log stream now, or undefined while it has none. */
export async function logStreamLeader(jsm) {
  const info = await jsm.streams.info(LOG_STREAM);
  return info.cluster?.leader;
}

/**
 * Starts the whole cluster in `group`: three NATS nodes with Agora's users, the log stream at 3
 * replicas, the operator key and the services' keys (made on first run), `replicas` processes of
 * every service (the registry's first), the projections and the gateway. `metricsPort` 0 gives
 * every process a free metrics port; otherwise the projections take it and the others the ports
 * after it. `log` hears what was created. `nodes` replaces the three local nodes of clusterNodes
 * (startNatsNodes says what a node may name), `services` the services started (default all), `env`
 * more environment for every Agora process (where a service's model providers are). Returns what a
 * caller prints or drives, with each process's metrics port (`metricsPorts`, by process name).
 */
export async function startCluster(group, { dir, natsPort, replicas, nats, gatewayPort, metricsPort, log, nodes = clusterNodes(natsPort), services = SERVICES, readDb, env = {} }) {
  // 1. Three NATS nodes, clustered, JetStream on each, with Agora's users (passwords made on first run).
  const auth = ensureNatsPasswords(dir);
  if (auth.created) log(`created the NATS users' passwords ${auth.file} (deploy/nats/auth.conf)`);
  const { passwords } = auth;
  log(nats.description);
  const passed = Object.keys(agoraSettings());
  if (passed.length > 0) log(`passing on ${passed.join(', ')}`);
  await startNatsNodes(group, { dir, nodes, bin: nats.bin, syncAlways: nats.syncAlways, passwords });
  const urls = nodes.map((node) => node.url);

  // 2. The log stream, at 3 replicas, made by the store adapter itself (an existing one is kept).
  const info = await ensureLogStream(urls, passwords);

  // 3. The operator key, on first run.
  const { keyFile, created } = ensureOperatorKey(dir);
  if (created) log(`created the operator key ${keyFile} (agent root)`);

  // 4. The services' keys, one per service shared by its replicas, on first run.
  const serviceKeys = ensureServiceKeys(dir);
  if (serviceKeys.created) log(`created the services' keys in ${serviceKeys.keysDir} (public keys: ${serviceKeys.publicKeys})`);

  // 5. The processes: each on NATS, on the shared log, its own data directory and metrics port.
  let nextMetrics = metricsPort + 1;
  const metrics = (port) => String(metricsPort === 0 ? 0 : port);
  const shared = { dir, urls, keyFile, passwords, serviceKeys, readDb };
  const metricsPorts = {};
  const run = (name, app, index, extra) => {
    metricsPorts[name] = Number(extra.METRICS_PORT);
    return startAgoraApp(group, shared, name, app, index, { ...env, ...extra });
  };
  // The registry first: every other service checks actors against it.
  for (let r = 0; r < replicas; r++) await run(`registry-${r + 1}`, 'registry', r, { METRICS_PORT: metrics(nextMetrics++) });
  const rest = [];
  for (const service of services.filter((s) => s !== 'registry')) {
    for (let r = 0; r < replicas; r++) rest.push(run(`${service}-${r + 1}`, service, r, { METRICS_PORT: metrics(nextMetrics++) }));
  }
  rest.push(run('projections', 'projections', 0, { METRICS_PORT: metrics(metricsPort) }));
  rest.push(run('gateway', 'gateway', 1, { PORT: String(gatewayPort), HOST: '127.0.0.1', METRICS_PORT: metrics(nextMetrics++) }));
  await Promise.all(rest);
  // The next port of the block: where a following audit serves its /metrics.
  return { auth, passwords, nodes, urls, info, keyFile, serviceKeys, shared, metricsPorts, auditMetricsPort: Number(metrics(nextMetrics)) };
}

/**
 * The cluster's read side, as a deployment's: AGORA_READ_DB when set (passed on as every AGORA_*
 * setting); else a database of the cluster's own, `agora_cluster_<id of its directory>`, on the
 * machine's PostgreSQL (AGORA_CLUSTER_POSTGRES, default postgres@127.0.0.1:5432), created when
 * missing; where none answers, Debian's postgresql runs a cluster of this run's own (stop() ends it).
 */
export async function clusterReadDatabase(dir, log) {
  if (process.env['AGORA_READ_DB']) return { url: undefined, description: `AGORA_READ_DB (as set)`, stop: async () => undefined };
  const server = process.env['AGORA_CLUSTER_POSTGRES'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const postgres = await sharedPostgres(ROOT, server, log);
  const name = `agora_cluster_${createHash('sha256').update(resolve(dir)).digest('hex').slice(0, 12)}`;
  const client = new pg.Client({ connectionString: server });
  try {
    await client.connect();
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) {
      await client.query(`CREATE DATABASE ${name}`);
      log(`created the read models' database ${name}`);
    }
  } finally {
    await client.end();
  }
  const url = new URL(server);
  url.pathname = `/${name}`;
  return { url: url.toString(), description: `PostgreSQL ${url.toString().replace(/:[^:@/]*@/, ':***@')}`, stop: postgres.stop };
}

/**
 * Runs a cluster program's `main` (it resolves to the exit code) and exits with it: Ctrl-C stops
 * the cluster, and at the end every process is stopped and `dir` removed when `remove`.
 */
export async function runClusterProgram(name, group, main, { dir, remove }) {
  let code = 1;
  const onSignal = () => {
    console.error(`\n${name}: interrupted, stopping the cluster`);
    void group.stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    code = await main();
  } catch (error) {
    console.error(`${name}: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    await group.stopAll();
    if (remove) rmSync(dir, { recursive: true, force: true });
    else console.log(`${name}: state and logs kept in ${dir}`);
  }
  process.exit(code);
}

/**
 * What a cluster program (`cluster:<name>`) needs before it starts anything: its directory
 * (AGORA_CLUSTER_DIR, else a new temporary one, `ownDir`), the built `apps` and a nats-server that
 * runs (else it exits with code 2, saying which), and the process group, whose processes that exit
 * unasked are named in `unexpected`.
 */
export function prepareClusterProgram(name, apps) {
  const ownDir = !process.env['AGORA_CLUSTER_DIR'];
  const dir = ownDir ? mkdtempSync(join(tmpdir(), `agora-${name}-`)) : resolve(process.env['AGORA_CLUSTER_DIR']);
  const missing = missingBuilds(apps);
  if (missing.length > 0) {
    console.error(`${name}: apps/${missing[0]}/dist/main.js is missing: run npm run build first (npm run cluster:${name} does)`);
    process.exit(2);
  }
  const nats = natsServer();
  if (nats.error) {
    console.error(`${name}: ${nats.error}`);
    process.exit(2);
  }
  const unexpected = [];
  const group = new ProcessGroup(dir, (child, code, signal, last) => {
    unexpected.push(child);
    console.error(`${name}: ${child} exited unasked (code ${code}, signal ${signal}); its log: ${group.logOf(child)}${last ? `, ending:\n${last}` : ''}`);
  });
  return { dir, ownDir, nats, group, unexpected };
}
