// The pieces of `npm run cluster`, importable: three nats-server nodes clustered with JetStream,
// the log stream AGORA_EVENTS at 3 replicas, the operator key, and Agora's processes, each with its
// output in <dir>/logs/<name>.log. Used by cluster.mjs (the command) and faults.mjs (the fault runs),
// which also kills and restarts single processes and nodes.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { openJetStreamEventStore } from '@agora/eventstore';

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

/** The nats-server binary and its version; whether it supports `sync_interval: always` (2.10+). */
export function natsServer() {
  const bin = process.env['NATS_SERVER_BIN'] ?? (spawnSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' }).stdout.trim() || '/usr/sbin/nats-server');
  const version = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  if (version.status !== 0) return { bin, error: `cannot run ${bin} (install nats-server, or set NATS_SERVER_BIN)` };
  const [major = 0, minor = 0] = (/v?(\d+)\.(\d+)/.exec(version.stdout) ?? []).slice(1).map(Number);
  return { bin, major, minor, syncAlways: major > 2 || (major === 2 && minor >= 10) };
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

  /** SIGKILLs a process (a crash, for the fault runs); resolves once it is gone. */
  async kill(name) {
    const entry = this.entries.get(name);
    if (!entry) throw new Error(`no process named ${name}`);
    entry.expectExit = true;
    if (entry.child.exitCode === null && entry.child.signalCode === null) entry.child.kill('SIGKILL');
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
 * client, each user only what its role needs.
 */
export async function startNatsNodes(group, { dir, nodes, bin, syncAlways, passwords }) {
  for (const node of nodes) {
    const store = join(dir, `nats-${node.name}`);
    mkdirSync(store, { recursive: true });
    const conf = [
      ...(passwords ? [`include ${JSON.stringify(relative(store, AUTH_CONF))}`] : []),
      `server_name: ${node.name}`,
      `listen: 127.0.0.1:${node.client}`,
      `http: 127.0.0.1:${node.monitor}`,
      'jetstream {',
      `  store_dir: ${JSON.stringify(store)}`,
      // Flush every write before acknowledging it (nats-server 2.10+); see deploy/README.md.
      ...(syncAlways ? ['  sync_interval: always'] : []),
      '}',
      'cluster {',
      '  name: agora-local',
      `  listen: 127.0.0.1:${node.route}`,
      `  routes: [${nodes.map((o) => `nats-route://127.0.0.1:${o.route}`).join(', ')}]`,
      '}',
      '',
    ].join('\n');
    writeFileSync(join(store, 'node.conf'), conf);
  }
  const env = passwords ? passwordEnv(passwords) : {};
  await Promise.all(nodes.map((node) => group.start(node.process, bin, ['-c', join(dir, `nats-${node.name}`, 'node.conf')], env, /Server is ready/)));
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
      if (attempt > 60) throw error;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** The operator key (agent root) in <dir>/operator.key.json, created on first run; returns its path and whether it was made now. */
export function ensureOperatorKey(dir) {
  const keyFile = join(dir, 'operator.key.json');
  if (existsSync(keyFile)) return { keyFile, created: false };
  const made = spawnSync(process.execPath, [join(ROOT, 'apps/cli/dist/main.js'), 'keys', 'new', '--agent', 'root', '--out', keyFile], { cwd: ROOT, encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`could not create the operator key: ${made.stderr}`);
  return { keyFile, created: true };
}

/**
 * Starts one Agora process (apps/<app>/dist/main.js) as `name`, on NATS node `index` (mod 3), the
 * shared log, a data directory of its own; resolves once it prints `agora-<app>: ready`.
 */
export function startAgoraApp(group, { dir, urls, keyFile, passwords }, name, app, index, extra) {
  mkdirSync(join(dir, name), { recursive: true });
  const env = {
    NATS_URL: urls[index % urls.length],
    EVENT_STORE: 'jetstream',
    AGORA_DATA_DIR: join(dir, name),
    AGORA_OPERATOR_KEY_FILE: keyFile,
    AGORA_LOG_LEVEL: 'warn',
    METRICS_HOST: '127.0.0.1',
    ...(passwords ? natsUserOf(app, passwords) : {}),
    ...extra,
  };
  return group.start(name, process.execPath, [join(ROOT, 'apps', app, 'dist', 'main.js')], env, new RegExp(`^agora-${app}: ready$`, 'm'));
}

/** The server name (n1, n2, n3) leading the log stream now, or undefined while it has none. */
export async function logStreamLeader(jsm) {
  const info = await jsm.streams.info(LOG_STREAM);
  return info.cluster?.leader;
}
