// `npm run cluster`: Agora distributed on one machine, as in production but local. Three
// nats-server nodes clustered with JetStream (the log stream at 3 replicas), every service as
// processes of its own (2 replicas each), the gateway and the projections; the operator key is
// created on first run. Prints where everything listens; Ctrl-C stops it all.
//
// Needs the build (`npm run build`, which `npm run cluster` runs first) and a nats-server binary
// (Debian's package, or NATS_SERVER_BIN). State lives under AGORA_CLUSTER_DIR (default
// ./data/cluster): the NATS nodes' JetStream stores, each process's checkpoints, logs, the key.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { openJetStreamEventStore } from '@agora/eventstore';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const HELP = `Usage: npm run cluster [-- --help]

Starts Agora distributed on this machine: 3 nats-server nodes clustered with JetStream (the event
log stream AGORA_EVENTS at 3 replicas), registry, proposal, tribunal, voting and dialectic as 2
processes each, the gateway and the projections, each process over NATS with EVENT_STORE=jetstream.
The operator key (agent root) is created on first run. Ctrl-C stops everything.

Environment:
  AGORA_CLUSTER_DIR          state: NATS stores, checkpoints, logs, keys (default ./data/cluster)
  AGORA_CLUSTER_NATS_PORT    client port of the first NATS node; the others take the next two
                             (default 4222); cluster routes on this + 2000, monitoring on this + 4000
  AGORA_CLUSTER_REPLICAS     processes per service (default 2)
  PORT                       the gateway's HTTP port (default 8080)
  METRICS_PORT               the projections' /metrics (default 9464); the other processes take
                             the ports after it (each process serves its own where it supports it)
  NATS_SERVER_BIN            the nats-server binary (default: nats-server on PATH, or /usr/sbin/nats-server)`;

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(HELP);
  process.exit(0);
}

const intEnv = (name, fallback) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0 || value > 65535) {
    console.error(`cluster: ${name}=${JSON.stringify(raw)} must be a whole number (a port, a count)`);
    process.exit(2);
  }
  return value;
};

const dir = resolve(process.env['AGORA_CLUSTER_DIR'] ?? join(ROOT, 'data', 'cluster'));
const natsPort = intEnv('AGORA_CLUSTER_NATS_PORT', 4222);
const replicas = Math.max(1, intEnv('AGORA_CLUSTER_REPLICAS', 2));
const gatewayPort = intEnv('PORT', 8080);
const metricsPort = intEnv('METRICS_PORT', 9464);
const natsBin = process.env['NATS_SERVER_BIN'] ?? (spawnSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' }).stdout.trim() || '/usr/sbin/nats-server');
const SERVICES = ['registry', 'proposal', 'tribunal', 'voting', 'dialectic'];

for (const app of [...SERVICES, 'gateway', 'projections', 'cli']) {
  if (!existsSync(join(ROOT, 'apps', app, 'dist', 'main.js'))) {
    console.error(`cluster: apps/${app}/dist/main.js is missing: run npm run build first (npm run cluster does)`);
    process.exit(2);
  }
}
const version = spawnSync(natsBin, ['--version'], { encoding: 'utf8' });
if (version.status !== 0) {
  console.error(`cluster: cannot run ${natsBin} (install nats-server, or set NATS_SERVER_BIN)`);
  process.exit(2);
}
const [major = 0, minor = 0] = (/v?(\d+)\.(\d+)/.exec(version.stdout) ?? []).slice(1).map(Number);
const syncAlways = major > 2 || (major === 2 && minor >= 10);

mkdirSync(join(dir, 'logs'), { recursive: true });
const children = [];
let stopping = false;

/** Starts a child with its output in logs/<name>.log; resolves once a line matches `ready` (if given). */
function start(name, command, args, env, ready) {
  const log = createWriteStream(join(dir, 'logs', `${name}.log`), { flags: 'a' });
  const child = spawn(command, args, { cwd: ROOT, env: { PATH: process.env['PATH'], HOME: process.env['HOME'], ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const entry = { name, child, exited: new Promise((r) => child.once('exit', r)) };
  children.push(entry);
  let seen = '';
  let tail = '';
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} was not ready within 120 s; see ${join(dir, 'logs', `${name}.log`)}`)), 120_000);
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
      if (!stopping) {
        const last = tail.trimEnd().split('\n').slice(-5).map((line) => `  | ${line}`).join('\n');
        console.error(`cluster: ${name} exited (code ${code}, signal ${signal}); its log: ${join(dir, 'logs', `${name}.log`)}${last ? `, ending:\n${last}` : ''}`);
      }
      reject(new Error(`${name} exited (code ${code}, signal ${signal}) before it was ready; see ${join(dir, 'logs', `${name}.log`)}`));
    });
    if (!ready) {
      clearTimeout(timer);
      resolvePromise(entry);
    }
  });
}

async function stopAll(code) {
  if (stopping) return;
  stopping = true;
  console.log('\ncluster: stopping');
  for (const group of [children.filter((c) => !c.name.startsWith('nats-')), children.filter((c) => c.name.startsWith('nats-'))]) {
    for (const { child } of group) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => group.forEach(({ child }) => child.kill('SIGKILL')), 10_000);
    await Promise.all(group.map((c) => c.exited));
    clearTimeout(timer);
  }
  console.log('cluster: stopped');
  process.exit(code);
}
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

try {
  // 1. Three NATS nodes, clustered, JetStream on each.
  const nodes = [1, 2, 3].map((n) => ({ n, client: natsPort + n - 1, route: natsPort + 2000 + n - 1, monitor: natsPort + 4000 + n - 1 }));
  for (const node of nodes) {
    const store = join(dir, `nats-n${node.n}`);
    mkdirSync(store, { recursive: true });
    const conf = [
      `server_name: n${node.n}`,
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
  await Promise.all(nodes.map((node) => start(`nats-n${node.n}`, natsBin, ['-c', join(dir, `nats-n${node.n}`, 'node.conf')], {}, /Server is ready/)));
  const urls = nodes.map((node) => `nats://127.0.0.1:${node.client}`);

  // 2. The log stream, at 3 replicas, made by the store adapter itself (an existing one is kept).
  // JetStream needs its meta leader first: retry until the cluster has elected one.
  let info;
  for (let attempt = 0; ; attempt++) {
    try {
      const store = await openJetStreamEventStore({ servers: urls, replicas: 3, logger: { warn: () => undefined } });
      await store.close();
      const nc = await connect({ servers: urls });
      info = await (await jetstreamManager(nc)).streams.info('AGORA_EVENTS');
      await nc.close();
      break;
    } catch (error) {
      if (attempt > 60) throw error;
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  // 3. The operator key, on first run.
  const keyFile = join(dir, 'operator.key.json');
  if (!existsSync(keyFile)) {
    const made = spawnSync(process.execPath, [join(ROOT, 'apps/cli/dist/main.js'), 'keys', 'new', '--agent', 'root', '--out', keyFile], { cwd: ROOT, encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`could not create the operator key: ${made.stderr}`);
    console.log(`cluster: created the operator key ${keyFile} (agent root)`);
  }

  // 4. The processes: each on NATS, on the shared log, its own data directory and metrics port.
  let nextMetrics = metricsPort + 1;
  const common = (name, index) => ({
    NATS_URL: urls[index % urls.length],
    EVENT_STORE: 'jetstream',
    AGORA_DATA_DIR: join(dir, name),
    AGORA_OPERATOR_KEY_FILE: keyFile,
    AGORA_LOG_LEVEL: 'warn',
    METRICS_HOST: '127.0.0.1',
  });
  const processes = [];
  const run = (name, app, index, extra) => {
    mkdirSync(join(dir, name), { recursive: true });
    return start(name, process.execPath, [join(ROOT, 'apps', app, 'dist', 'main.js')], { ...common(name, index), ...extra }, new RegExp(`^agora-${app}: ready$`, 'm'));
  };
  // The registry first: every other service checks actors against it.
  for (let r = 0; r < replicas; r++) processes.push(await run(`registry-${r + 1}`, 'registry', r, { METRICS_PORT: String(nextMetrics++) }));
  const rest = [];
  for (const service of SERVICES.filter((s) => s !== 'registry')) {
    for (let r = 0; r < replicas; r++) rest.push(run(`${service}-${r + 1}`, service, r, { METRICS_PORT: String(nextMetrics++) }));
  }
  rest.push(run('projections', 'projections', 0, { METRICS_PORT: String(metricsPort) }));
  rest.push(run('gateway', 'gateway', 1, { PORT: String(gatewayPort), HOST: '127.0.0.1', METRICS_PORT: String(nextMetrics++) }));
  processes.push(...(await Promise.all(rest)));

  const lines = [
    '',
    'Agora cluster is up:',
    `  NATS nodes        ${urls.join('  ')}  (monitoring http://127.0.0.1:${nodes[0].monitor} ...)`,
    `  event log         JetStream stream AGORA_EVENTS, ${info.config.num_replicas} replicas${syncAlways ? ', sync_interval always' : ` (nats-server ${major}.${minor}: sync_interval always needs 2.10+)`}`,
    `  services          ${SERVICES.map((s) => `${s} x${replicas}`).join(', ')}`,
    `  gateway           http://127.0.0.1:${gatewayPort}  (POST /v1/commands, GET /v1/events, /docs)`,
    `  projections       http://127.0.0.1:${metricsPort}/metrics`,
    `  operator key      ${keyFile}`,
    `  logs              ${join(dir, 'logs')}/<process>.log`,
    '',
    'Try, in another terminal:',
    `  npm run agora -- keys new --agent alice --out ${join(dir, 'alice.key.json')}`,
    `  npm run agora -- agents register --key ${keyFile} --agent-key ${join(dir, 'alice.key.json')} --id alice --roles executive`,
    '  npm run agora -- agents list',
    '',
    'Ctrl-C stops everything.',
  ];
  console.log(lines.join('\n'));
  console.log('cluster: ready');
} catch (error) {
  console.error(`cluster: ${error instanceof Error ? error.message : String(error)}`);
  await stopAll(1);
}
