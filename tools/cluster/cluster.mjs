// `npm run cluster`: Agora distributed on one machine, as in production but local. Three
// nats-server nodes clustered with JetStream (the log stream at 3 replicas), every service as
// processes of its own (2 replicas each), the gateway and the projections; the operator key is
// created on first run. Prints where everything listens; Ctrl-C stops it all.
//
// Needs the build (`npm run build`, which `npm run cluster` runs first) and nats-server 2.11 or
// newer (NATS_SERVER_BIN, else the one `npm run nats-server` fetched, else PATH). State lives under AGORA_CLUSTER_DIR (default
// ./data/cluster): the NATS nodes' JetStream stores, each process's checkpoints, logs, the key.
import { join, resolve } from 'node:path';
import { takenPorts } from '@agora/testing/nats-server';
import { clusterReadDatabase, ensureKeyFile, intEnv, missingBuilds, natsServer, ProcessGroup, ROOT, SERVICES, startCluster } from './cluster-lib.mjs';

const HELP = `Usage: npm run cluster [-- --help]

Starts Agora distributed on this machine: 3 nats-server nodes clustered with JetStream (the event
log stream AGORA_EVENTS at 3 replicas) with Agora's NATS users (deploy/nats/auth.conf: no
anonymous client), registry, proposal, tribunal, voting, dialectic, chamber and debate as 2
processes each, the gateway and the projections, each process over NATS with EVENT_STORE=jetstream
as its user (services: service, the gateway: gateway). The NATS users' passwords
(<dir>/nats-passwords.json), the operator key (agent root), the services' keys (one per service,
shared by its replicas: <dir>/service-keys, with public-keys.json given to every process as
AGORA_SERVICE_PUBLIC_KEYS) and the auditor's key are created on first run. Every AGORA_* setting of
this shell (policies, margins, AGORA_LOG_LEVEL...) is passed on to every process. Prints the
commands that audit the cluster's log, once or following it. Ctrl-C stops everything.

Environment:
  AGORA_CLUSTER_DIR          state: NATS stores, checkpoints, logs, keys (default ./data/cluster)
  AGORA_CLUSTER_NATS_PORT    client port of the first NATS node; the others take the next two
                             (default 4222); cluster routes on this + 2000, monitoring on this + 4000
  AGORA_CLUSTER_REPLICAS     processes per service (default 2)
  AGORA_READ_DB              the read models' database of every process (default: a database
                             agora_cluster_<id> of this cluster's own on AGORA_CLUSTER_POSTGRES)
  AGORA_CLUSTER_POSTGRES     the PostgreSQL it is made on (default postgres://postgres@127.0.0.1:5432/
                             postgres; where none answers, Debian's postgresql runs one for the run)
  PORT                       the gateway's HTTP port (default 8080)
  METRICS_PORT               the projections' /metrics (default 9464); the other processes take
                             the ports after it (each process serves its own where it supports it),
                             the following audit printed the next one
  NATS_SERVER_BIN            the nats-server binary (default: the one \`npm run nats-server\` fetched from
                             Debian unstable into .cache/nats-server, else nats-server on PATH)
  AGORA_*                    passed on to every process (but AGORA_DATA_DIR and the keys, set per process)`;

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
// The nodes' client, route and monitoring ports: say which setting moves them when one is taken (a
// machine that runs NATS already holds 4222) rather than failing later in a node's log.
const taken = await takenPorts([0, 1, 2, 2000, 2001, 2002, 4000, 4001, 4002].map((offset) => natsPort + offset));
if (taken.length > 0) {
  console.error(`cluster: port${taken.length > 1 ? 's' : ''} ${taken.join(', ')} on 127.0.0.1 ${taken.length > 1 ? 'are' : 'is'} taken (a NATS server already running?): set AGORA_CLUSTER_NATS_PORT to move the NATS nodes (client ports from it, routes from it + 2000, monitoring from it + 4000), e.g. AGORA_CLUSTER_NATS_PORT=14222 npm run cluster`);
  process.exit(2);
}

const group = new ProcessGroup(dir, (name, code, signal, last) => {
  console.error(`cluster: ${name} exited (code ${code}, signal ${signal}); its log: ${group.logOf(name)}${last ? `, ending:\n${last}` : ''}`);
});
let stopping = false;
let readSide = { stop: async () => undefined };
async function stopAll(code) {
  if (stopping) return;
  stopping = true;
  console.log('\ncluster: stopping');
  await group.stopAll();
  await readSide.stop();
  console.log('cluster: stopped');
  process.exit(code);
}
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

try {
  const log = (line) => console.log(`cluster: ${line}`);
  readSide = await clusterReadDatabase(dir, log);
  const { auth, nodes, urls, info, keyFile, serviceKeys, auditMetricsPort } = await startCluster(group, { dir, natsPort, replicas, nats, gatewayPort, metricsPort, log, readDb: readSide.url });
  // The auditor's own key, which signs its audit state (an auditor keeps it; it signs no command).
  const { keyFile: auditorKey, created: auditorKeyCreated } = ensureKeyFile(join(dir, 'auditor.key.json'), 'auditor');
  if (auditorKeyCreated) console.log(`cluster: created the auditor's key ${auditorKey}`);

  // The CLI speaks to http://127.0.0.1:8080 unless told otherwise: a moved gateway is named on each line that reaches it.
  const gatewayArg = gatewayPort === 8080 ? '' : ` --url http://127.0.0.1:${gatewayPort}`;
  // The auditor's NATS password from the passwords file, whatever the path is relative to (require() would take it for a package).
  const auditorPassword = "node -p 'JSON.parse(fs.readFileSync(process.argv[1])).auditor'";
  const lines = [
    '',
    'Agora cluster is up:',
    `  NATS nodes        ${urls.join('  ')}  (monitoring http://127.0.0.1:${nodes[0].monitor} ...)`,
    `  event log         JetStream stream AGORA_EVENTS, ${info.config.num_replicas} replicas${nats.syncAlways ? ', sync_interval always' : ` (nats-server ${nats.major}.${nats.minor}: sync_interval always needs 2.10+)`}`,
    `  services          ${SERVICES.map((s) => `${s} x${replicas}`).join(', ')}`,
    `  read models       ${readSide.description}  (shared by every replica; one writes each read model)`,
    `  gateway           http://127.0.0.1:${gatewayPort}  (POST /v1/commands, GET /v1/events, /docs)`,
    `  projections       http://127.0.0.1:${metricsPort}/metrics`,
    `  NATS users        ${auth.file}  (deploy/nats/auth.conf; agents speaking NATS: NATS_USER=agent)`,
    `  operator key      ${keyFile}`,
    `  auditor key       ${auditorKey}  (signs a following audit's state)`,
    `  service keys      ${serviceKeys.keysDir}  (one per service, its replicas share it)`,
    `  logs              ${join(dir, 'logs')}/<process>.log`,
    '',
    'Try, in another terminal:',
    `  npm run agora -- keys new --agent alice --out ${join(dir, 'alice.key.json')}`,
    `  npm run agora -- agents register --key ${keyFile} --agent-key ${join(dir, 'alice.key.json')} --id alice --roles executive${gatewayArg}`,
    `  npm run agora -- agents list --read-key ${keyFile}${gatewayArg}      (reads are closed: a read token from a registered key)`,
    '',
    "Audit the cluster's log (every commit's signature, chain and decision), as the read-only auditor user:",
    `  EVENT_STORE=jetstream NATS_URL=${urls[0]} NATS_USER=auditor NATS_PASSWORD="$(${auditorPassword} ${auth.file})" \\`,
    `  AGORA_OPERATOR_KEY_FILE=${keyFile} AGORA_SERVICE_PUBLIC_KEYS=@${serviceKeys.publicKeys} npm run agora -- audit`,
    '',
    'Or follow it: each new commit verified as it is stored, findings printed as they happen, /metrics served, resumable',
    `(its state signed with the auditor's key ${auditorKey}):`,
    `  EVENT_STORE=jetstream NATS_URL=${urls[0]} NATS_USER=auditor NATS_PASSWORD="$(${auditorPassword} ${auth.file})" \\`,
    `  AGORA_OPERATOR_KEY_FILE=${keyFile} AGORA_SERVICE_PUBLIC_KEYS=@${serviceKeys.publicKeys} METRICS_PORT=${auditMetricsPort} \\`,
    `  npm run agora -- audit --follow --state ${join(dir, 'audit-state.json')} --key ${auditorKey}`,
    '',
    'Ctrl-C stops everything.',
  ];
  console.log(lines.join('\n'));
  console.log('cluster: ready');
} catch (error) {
  console.error(`cluster: ${error instanceof Error ? error.message : String(error)}`);
  await stopAll(1);
}
