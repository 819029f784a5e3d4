// `npm run cluster:faults`: NATS cluster faults under load, on the cluster `npm run cluster` starts
// (three clustered nats-server nodes, the log stream at 3 replicas, registry replicas on the shared
// log). Each scenario sends signed UpdateAgent commands, a fixed number in flight, each retried with
// the same commandId until acknowledged; a third of the way in it SIGKILLs (a) a NATS node that does
// not lead the log stream, (b) the node leading it, (c) a node together with the registry replica
// connected to it; it starts them again after a few seconds and finishes the load. Half the commands
// go to a few hot agents, so that commands on the same aggregates race on both replicas during the
// kills. Then it reads the log: every acknowledged command's event must be there exactly once; and
// at the end `agora audit` must pass on the whole log.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import { RegisterAgent, UpdateAgent } from '@agora/contracts';
import { createSignedCommand, generateKeyPair, parseKeyFile } from '@agora/identity';
import { NatsAgoraClient } from '@agora/messaging';
import {
  auditLog,
  clusterNodes,
  ensureLogStream,
  ensureOperatorKey,
  ensureServiceKeys,
  intEnv,
  LOG_STREAM,
  logStreamLeader,
  prepareClusterProgram,
  runClusterProgram,
  startAgoraApp,
  startNatsNodes,
} from './cluster-lib.mjs';
import { drive as driveCommands, logStreamSettled, positiveOption, readLog, scenarioList, untilAcknowledged } from './load-lib.mjs';

const HELP = `Usage: npm run cluster:faults -- [options]

Starts a local Agora cluster (3 clustered nats-server nodes, the log stream AGORA_EVENTS at 3
replicas, registry replicas on EVENT_STORE=jetstream), then runs each fault scenario under load:
  follower         SIGKILL of a NATS node that does not lead the log stream
  leader           SIGKILL of the NATS node leading the log stream
  node+replica     SIGKILL of a NATS node together with the registry replica connected to it
Each scenario sends --count signed UpdateAgent commands, --inflight at a time, each retried with the
same commandId (per attempt --timeout ms) until acknowledged; the kill comes once a quarter are
acknowledged, the restart --down seconds later, and the last third of the commands waits for it.
Every other command updates one of --hot agents, so that commands on the same aggregates race on
the replicas while the processes die. Then the log is read: lost = acknowledged but no event;
duplicated = more than one event for one commandId. At the end \`agora audit\` reads the whole log
(signatures under the services' shared keys, chains, every decision made again). Exits 1 if any
scenario lost, duplicated, or left a command unacknowledged, a process exited unasked, or the audit
found anything.

Options:
  --count N          commands per scenario (default 2000)
  --inflight N       commands in flight (default 32)
  --down S           seconds the killed processes stay down (default 3)
  --timeout MS       per-attempt request timeout (default 3000)
  --give-up S        a command still unacknowledged after this many seconds is counted so (default 120)
  --agents N         agents the commands update, round robin (default 64)
  --hot N            agents every other command updates, racing on the same aggregates (default 4)
  --scenarios LIST   comma-separated, from follower, leader, node+replica (default all three)
  --keep             keep the cluster's directory (default: a temporary one, removed at the end)
  --help             this text

Environment:
  AGORA_CLUSTER_DIR          the cluster's state and logs (default: a new temporary directory)
  AGORA_CLUSTER_NATS_PORT    client port of the first NATS node (default 14222); routes on this + 2000,
                             monitoring on this + 4000
  AGORA_CLUSTER_REPLICAS     registry processes (default 2)
  NATS_SERVER_BIN            the nats-server binary (default: the one \`npm run nats-server\` fetched from
                             Debian unstable into .cache/nats-server, else nats-server on PATH)`;

const SCENARIOS = ['follower', 'leader', 'node+replica'];

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '2000' },
    inflight: { type: 'string', default: '32' },
    down: { type: 'string', default: '3' },
    timeout: { type: 'string', default: '3000' },
    'give-up': { type: 'string', default: '120' },
    agents: { type: 'string', default: '64' },
    hot: { type: 'string', default: '4' },
    scenarios: { type: 'string', default: SCENARIOS.join(',') },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const positive = (name) => positiveOption(values, name, { program: 'faults', help: HELP });
const COUNT = Math.floor(positive('count'));
if (COUNT < 8) {
  console.error('faults: --count must be at least 8 (the kill comes once a quarter are acknowledged)');
  process.exit(2);
}
const INFLIGHT = Math.floor(positive('inflight'));
const DOWN_MS = positive('down') * 1000;
const ATTEMPT_MS = positive('timeout');
const GIVE_UP_MS = positive('give-up') * 1000;
const AGENTS = Math.floor(positive('agents'));
const HOT = Math.min(AGENTS, Math.floor(positive('hot')));
const scenarios = scenarioList(values.scenarios, SCENARIOS, 'faults');
const natsPort = intEnv('AGORA_CLUSTER_NATS_PORT', 14222, 'faults');
const replicas = Math.max(1, intEnv('AGORA_CLUSTER_REPLICAS', 2, 'faults'));
const { dir, ownDir, nats, group, unexpected } = prepareClusterProgram('faults', ['registry', 'cli']);
const fmt = (n) => Math.round(n).toLocaleString('en-US');
const secs = (ms) => (ms / 1000).toFixed(1);

/** Acknowledgements in each second from t0, a k before the second of the kill and an r before that of the restart. */
function timeline(acks, t0, t1, killedAt, restartedAt) {
  const seconds = Math.ceil((t1 - t0) / 1000) || 1;
  const buckets = new Array(seconds).fill(0);
  for (const t of acks) buckets[Math.min(seconds - 1, Math.floor((t - t0) / 1000))]++;
  const mark = (i) => (i === Math.floor((killedAt - t0) / 1000) ? 'k' : '') + (i === Math.floor((restartedAt - t0) / 1000) ? 'r' : '');
  return buckets.map((n, i) => `${mark(i)}${n}`).join(' ');
}

/** Waits until the log stream has a leader and every replica is current, and `replicas` registry replicas answer. */
function settled(client, jsm, what) {
  return logStreamSettled(jsm, what, {
    timeoutMs: 90_000,
    also: async () => {
      const registries = [];
      for await (const msg of await client.connection.requestMany('$SRV.PING.registry', '', { strategy: 'timer', maxWait: 500 })) registries.push(msg);
      return { ok: registries.length === replicas, state: `${registries.length} registry replicas answer` };
    },
  });
}

/** A command to `subject` through `client`, for driveCommands: sent again with the same envelope until acknowledged. */
const request = (client, subject, envelope) => ({ commandId: envelope.commandId, send: () => client.request(subject, envelope, { timeoutMs: ATTEMPT_MS }) });
const drive = (client, count, make, options = {}) =>
  driveCommands(
    count,
    (i) => {
      const { subject, envelope } = make(i);
      return request(client, subject, envelope);
    },
    { inflight: INFLIGHT, giveUpMs: GIVE_UP_MS, ...options },
  );

async function runScenario(name, ctx) {
  const { client, jsm, nodes, operator, agentIds } = ctx;
  await settled(client, jsm, `before ${name}`);
  const leader = await logStreamLeader(jsm);
  // The victims: which node (and, for node+replica, which registry replica) goes down.
  let node;
  let replica;
  if (name === 'leader') node = nodes.find((n) => n.name === leader);
  else if (name === 'follower') node = nodes.find((n) => n.name !== leader);
  else {
    replica = 'registry-1';
    node = nodes[0]; // registry-1 connects to the first node (startAgoraApp: urls[index % 3])
  }
  const victims = [node.process, ...(replica ? [replica] : [])];
  console.log(`\n== ${name}: SIGKILL ${victims.join(' + ')} (log stream leader: ${leader}) once ${fmt(COUNT / 4)} of ${fmt(COUNT)} commands are acknowledged; back after ${secs(DOWN_MS)} s`);

  const t0 = Date.now();
  let killedAt;
  let restartedAt;
  let releaseHold;
  const hold = new Promise((r) => (releaseHold = r));
  let faultDone;
  const acks = [];
  let faultError;
  const fault = async () => {
    killedAt = Date.now();
    try {
      await Promise.all(victims.map((v) => group.kill(v)));
      console.log(`   ${secs(killedAt - t0)} s: killed ${victims.join(' + ')}`);
      await sleep(DOWN_MS);
      const back = Date.now();
      await group.restart(node.process);
      if (replica) await group.restart(replica);
      restartedAt = Date.now();
      console.log(`   ${secs(restartedAt - t0)} s: ${victims.join(' + ')} ready again (restart took ${secs(restartedAt - back)} s)`);
    } catch (error) {
      // The load still finishes on what is left; the scenario fails with the reason.
      faultError = error;
      restartedAt = Date.now();
    } finally {
      releaseHold();
    }
  };
  const results = await drive(
    client,
    COUNT,
    (i) => ({
      subject: UpdateAgent.subject,
      // Odd commands race on the HOT first agents; even ones spread over all of them.
      envelope: createSignedCommand({ type: 'UpdateAgent', actor: 'faults-op', payload: { agentId: agentIds[i % 2 === 1 ? ((i - 1) / 2) % HOT : i % agentIds.length], displayName: `${name} ${i}` }, secretKey: operator.secretKey, commandId: randomUUID() }),
    }),
    {
      holdFrom: Math.floor((COUNT * 2) / 3),
      hold,
      onAck: (acked, at) => {
        acks.push(at);
        if (acked === Math.floor(COUNT / 4) && faultDone === undefined) faultDone = fault();
      },
    },
  );
  const t1 = Date.now();
  await faultDone;
  if (faultDone === undefined) throw new Error(`${name}: the load ended before ${fmt(COUNT / 4)} acknowledgements, so nothing was killed`);
  if (faultError) throw new Error(`${name}: ${faultError instanceof Error ? faultError.message : String(faultError)}`);
  await settled(client, jsm, `after ${name}`);

  // The log, read back: how many events each commandId left.
  const sent = new Map(results.map((r) => [r.commandId, r]));
  const counts = new Map();
  for (const event of await readLog(ctx.urls)) {
    const id = event.metadata['commandId'];
    if (event.streamId.startsWith('agent-') && sent.has(id)) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  const acknowledged = results.filter((r) => r.ok);
  const lost = acknowledged.filter((r) => !counts.has(r.commandId)).length;
  const duplicated = [...counts.values()].filter((c) => c > 1).length;
  const unacknowledged = results.filter((r) => !r.ok);
  const refused = unacknowledged.filter((r) => r.refused).length;
  const landedUnacked = unacknowledged.filter((r) => counts.has(r.commandId)).length;
  const retries = results.reduce((sum, r) => sum + r.attempts - 1, 0);
  const duplicateReplies = acknowledged.filter((r) => r.reply.result.duplicate).length;

  // Throughput: acknowledgements per second before the kill, from the kill until the restarted
  // processes were ready, and after.
  acks.sort((a, b) => a - b);
  const rate = (from, to) => {
    const n = acks.filter((t) => t >= from && t < to).length;
    return to > from ? (n * 1000) / (to - from) : 0;
  };
  let longestGap = 0;
  for (let i = 1; i < acks.length; i++) longestGap = Math.max(longestGap, acks[i] - acks[i - 1]);
  const figures = {
    scenario: name,
    killed: victims.join(' + '),
    leaderBefore: leader,
    leaderAfter: await logStreamLeader(jsm),
    sent: COUNT,
    acknowledged: acknowledged.length,
    retries,
    duplicateReplies,
    unacknowledged: unacknowledged.length,
    refused,
    landedUnacknowledged: landedUnacked,
    lost,
    duplicated,
    longestGapMs: longestGap,
    perSecond: { before: Math.round(rate(t0, killedAt)), during: Math.round(rate(killedAt, restartedAt)), after: Math.round(rate(restartedAt, t1 + 1)) },
    seconds: Number(secs(t1 - t0)),
    // Acknowledgements in each second from the start (k = the kill, r = ready again).
    timeline: timeline(acks, t0, t1, killedAt, restartedAt),
  };
  const refusals = unacknowledged.filter((r) => r.refused).slice(0, 3).map((r) => `${r.refused.code}: ${r.refused.message}`);
  console.log(
    [
      `   sent ${fmt(COUNT)}, acknowledged ${fmt(acknowledged.length)} (${fmt(duplicateReplies)} answered duplicate: true), retries ${fmt(retries)}, unacknowledged ${fmt(unacknowledged.length)}${refused ? ` (${refused} refused: ${refusals.join('; ')})` : ''}`,
      `   log: lost ${lost}, duplicated ${duplicated}${landedUnacked ? `, ${landedUnacked} unacknowledged commands landed once each` : ''}`,
      `   acknowledged per second: ${figures.timeline}`,
      `   longest gap between acknowledgements ${secs(longestGap)} s; per second before ${fmt(figures.perSecond.before)}, during ${fmt(figures.perSecond.during)}, after ${fmt(figures.perSecond.after)}; ${figures.seconds} s in all; leader now ${figures.leaderAfter}`,
    ].join('\n'),
  );
  return figures;
}

async function main() {
  const nodes = clusterNodes(natsPort);
  const urls = nodes.map((n) => n.url);
  console.log(`Cluster faults: ${fmt(COUNT)} signed UpdateAgent commands per scenario, ${INFLIGHT} in flight, per-attempt timeout ${ATTEMPT_MS} ms, down ${secs(DOWN_MS)} s`);
  console.log(`${nats.description}${nats.syncAlways ? ', sync_interval always' : ': sync_interval always needs 2.10+, not set'}; ${replicas} registry replicas; ${HOT} hot agents; state in ${dir}`);
  await startNatsNodes(group, { dir, nodes, bin: nats.bin, syncAlways: nats.syncAlways });
  const info = await ensureLogStream(urls);
  const { keyFile } = ensureOperatorKey(dir);
  const serviceKeys = ensureServiceKeys(dir);
  const shared = { dir, urls, keyFile, serviceKeys };
  for (let r = 0; r < replicas; r++) await startAgoraApp(group, shared, `registry-${r + 1}`, 'registry', r, { METRICS_PORT: '0' });
  console.log(`cluster up: ${urls.join(' ')}; ${LOG_STREAM} at ${info.config.num_replicas} replicas, leader ${info.cluster?.leader}`);

  const client = await NatsAgoraClient.connect({ servers: urls, name: 'agora-faults' });
  const jsm = await jetstreamManager(client.connection);
  try {
    // The root operator registers the operator that signs the load, which registers the agents.
    const root = parseKeyFile(readFileSync(keyFile, 'utf8'));
    const operator = generateKeyPair();
    const op = await untilAcknowledged(request(client, RegisterAgent.subject, createSignedCommand({ type: 'RegisterAgent', actor: 'root', payload: { agentId: 'faults-op', publicKey: operator.publicKey, displayName: 'fault-run operator', roles: ['operator'] }, secretKey: root.secretKey })).send, { giveUpMs: GIVE_UP_MS });
    if (!op.ok) throw new Error(`registering the fault-run operator failed: ${JSON.stringify(op.refused ?? op.last)}`);
    const agentKey = generateKeyPair().publicKey;
    const agentIds = Array.from({ length: AGENTS }, (_, i) => `fault-agent-${i}`);
    const registered = await drive(client, AGENTS, (i) => ({
      subject: RegisterAgent.subject,
      envelope: createSignedCommand({ type: 'RegisterAgent', actor: 'faults-op', payload: { agentId: agentIds[i], publicKey: agentKey, displayName: `agent ${i}`, roles: ['executive'] }, secretKey: operator.secretKey }),
    }));
    const failed = registered.find((r) => !r.ok);
    if (failed) throw new Error(`registering the agents failed: ${JSON.stringify(failed.refused ?? failed.last)}`);
    console.log(`registered ${AGENTS} agents`);

    const all = [];
    for (const name of scenarios) all.push(await runScenario(name, { client, jsm, nodes, urls, operator, agentIds }));

    const header = ['scenario', 'killed', 'sent', 'acked', 'retries', 'lost', 'duplicated', 'longest gap s', 'per s before/during/after'];
    const rows = all.map((f) => [f.scenario, f.killed, fmt(f.sent), fmt(f.acknowledged), fmt(f.retries), String(f.lost), String(f.duplicated), secs(f.longestGapMs), `${f.perSecond.before} / ${f.perSecond.during} / ${f.perSecond.after}`]);
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const line = (r) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
    console.log(`\n${line(header)}\n| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |\n${rows.map(line).join('\n')}\n`);
    console.log(`faults: result ${JSON.stringify(all)}`);
    const bad = all.filter((f) => f.lost > 0 || f.duplicated > 0 || f.unacknowledged > 0);
    if (bad.length > 0) console.log(`faults: FAILED in ${bad.map((f) => f.scenario).join(', ')}`);
    if (unexpected.length > 0) console.log(`faults: FAILED: processes exited unasked: ${unexpected.join(', ')}`);

    // The whole log, audited as an operator would after the faults.
    const audit = await auditLog(shared);
    const findings = audit.report?.findings?.length;
    console.log(`faults: audit exit ${audit.code}${audit.report ? `, ${findings} findings` : ''}${audit.code === 0 ? '' : `\n${audit.tail}`}`);
    if (bad.length > 0 || unexpected.length > 0 || audit.code !== 0) return 1;
    console.log('faults: every scenario: 0 lost, 0 duplicated, every command acknowledged; the audit found nothing');
    return 0;
  } finally {
    await client.close();
  }
}

await runClusterProgram('faults', group, main, { dir, remove: ownDir && !values.keep });
