// `npm run cluster`: Agora distributed on one machine, as in production but local. Three
// nats-server nodes clustered with JetStream (the log stream at 3 replicas), every service as
// processes of its own (2 replicas each), the gateway and the projections; the operator key is
// created on first run. Prints where everything listens; Ctrl-C stops it all.
//
// Needs the build (`npm run build`, which `npm run cluster` runs first) and a nats-server binary
// (Debian's package, or NATS_SERVER_BIN). State lives under AGORA_CLUSTER_DIR (default
// ./data/cluster): the NATS nodes' JetStream stores, each process's checkpoints, logs, the key.
import { join, resolve } from 'node:path';
import {
  ensureLogStream,
  ensureNatsPasswords,
  ensureOperatorKey,
  clusterNodes,
  intEnv,
  missingBuilds,
  natsServer,
  ProcessGroup,
  ROOT,
  SERVICES,
  startAgoraApp,
  startNatsNodes,
} from './cluster-lib.mjs';

const HELP = `Usage: npm run cluster [-- --help]

Starts Agora distributed on this machine: 3 nats-server nodes clustered with JetStream (the event
log stream AGORA_EVENTS at 3 replicas) with Agora's NATS users (deploy/nats/auth.conf: no
anonymous client), registry, proposal, tribunal, voting, dialectic, chamber and debate as 2
processes each, the gateway and the projections, each process over NATS with EVENT_STORE=jetstream
as its user (services: service, the gateway: gateway). The NATS users' passwords
(<dir>/nats-passwords.json) and the operator key (agent root) are created on first run. Ctrl-C
stops everything.

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

const dir = resolve(process.env['AGORA_CLUSTER_DIR'] ?? join(ROOT, 'data', 'cluster'));
const natsPort = intEnv('AGORA_CLUSTER_NATS_PORT', 4222, 'cluster');
const replicas = Math.max(1, intEnv('AGORA_CLUSTER_REPLICAS', 2, 'cluster'));
const gatewayPort = intEnv('PORT', 8080, 'cluster');
const metricsPort = intEnv('METRICS_PORT', 9464, 'cluster');

const missing = missingBuilds([...SERVICES, 'gateway', 'projections', 'cli']);
if (missing.length > 0) {
  console.error(`cluster: apps/${missing[0]}/dist/main.js is missing: run npm run build first (npm run cluster does)`);
  process.exit(2);
}
const nats = natsServer();
if (nats.error) {
  console.error(`cluster: ${nats.error}`);
  process.exit(2);
}

const group = new ProcessGroup(dir, (name, code, signal, last) => {
  console.error(`cluster: ${name} exited (code ${code}, signal ${signal}); its log: ${group.logOf(name)}${last ? `, ending:\n${last}` : ''}`);
});
let stopping = false;
async function stopAll(code) {
  if (stopping) return;
  stopping = true;
  console.log('\ncluster: stopping');
  await group.stopAll();
  console.log('cluster: stopped');
  process.exit(code);
}
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

try {
  // 1. Three NATS nodes, clustered, JetStream on each, with Agora's users (passwords made on first run).
  const auth = ensureNatsPasswords(dir);
  if (auth.created) console.log(`cluster: created the NATS users' passwords ${auth.file} (deploy/nats/auth.conf)`);
  const { passwords } = auth;
  const nodes = clusterNodes(natsPort);
  await startNatsNodes(group, { dir, nodes, bin: nats.bin, syncAlways: nats.syncAlways, passwords });
  const urls = nodes.map((node) => node.url);

  // 2. The log stream, at 3 replicas, made by the store adapter itself (an existing one is kept).
  const info = await ensureLogStream(urls, passwords);

  // 3. The operator key, on first run.
  const { keyFile, created } = ensureOperatorKey(dir);
  if (created) console.log(`cluster: created the operator key ${keyFile} (agent root)`);

  // 4. The processes: each on NATS, on the shared log, its own data directory and metrics port.
  let nextMetrics = metricsPort + 1;
  const shared = { dir, urls, keyFile, passwords };
  const run = (name, app, index, extra) => startAgoraApp(group, shared, name, app, index, extra);
  // The registry first: every other service checks actors against it.
  for (let r = 0; r < replicas; r++) await run(`registry-${r + 1}`, 'registry', r, { METRICS_PORT: String(nextMetrics++) });
  const rest = [];
  for (const service of SERVICES.filter((s) => s !== 'registry')) {
    for (let r = 0; r < replicas; r++) rest.push(run(`${service}-${r + 1}`, service, r, { METRICS_PORT: String(nextMetrics++) }));
  }
  rest.push(run('projections', 'projections', 0, { METRICS_PORT: String(metricsPort) }));
  rest.push(run('gateway', 'gateway', 1, { PORT: String(gatewayPort), HOST: '127.0.0.1', METRICS_PORT: String(nextMetrics++) }));
  await Promise.all(rest);

  const lines = [
    '',
    'Agora cluster is up:',
    `  NATS nodes        ${urls.join('  ')}  (monitoring http://127.0.0.1:${nodes[0].monitor} ...)`,
    `  event log         JetStream stream AGORA_EVENTS, ${info.config.num_replicas} replicas${nats.syncAlways ? ', sync_interval always' : ` (nats-server ${nats.major}.${nats.minor}: sync_interval always needs 2.10+)`}`,
    `  services          ${SERVICES.map((s) => `${s} x${replicas}`).join(', ')}`,
    `  gateway           http://127.0.0.1:${gatewayPort}  (POST /v1/commands, GET /v1/events, /docs)`,
    `  projections       http://127.0.0.1:${metricsPort}/metrics`,
    `  NATS users        ${auth.file}  (deploy/nats/auth.conf; agents speaking NATS: NATS_USER=agent)`,
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
