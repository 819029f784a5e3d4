// `npm run day`: a day in the life of Agora. The cluster `npm run cluster` starts (3 NATS nodes, each
// in a network namespace of the run's own as in cluster:partitions, every service at 2 replicas, the
// gateway, the read side on PostgreSQL), a fleet of model-backed agents playing every protocol at once
// through the SDK's role loops over NATS and HTTP (fleet.mjs, drivers.mjs) and through MCP, A2A and
// the governed tool-call proxy (ways.mjs), faults on a schedule
// (schedule.mjs), `agora audit --follow` and Debian's Prometheus with the project's rules from the start
// (observe.mjs); after --minutes it stops, tears everything down and writes a report folder
// (report.mjs) with the assertions' verdicts (verdicts.mjs). Exits 1 naming each assertion that failed.
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import { NatsAgoraClient } from '@agora/messaging';
import { StandIns } from '@agora/providers';
import { Agora } from '@agora/sdk';
import { takenPorts } from '@agora/testing/nats-server';
import { chamberStandInScript, freePort } from '@agora/demo/dist/chamber.js';
import pg from 'pg';
import { auditLog, clusterReadDatabase, intEnv, prepareClusterProgram, ROOT, runClusterProgram, SERVICES, startCluster } from '../cluster/cluster-lib.mjs';
import { logStreamSettled, positiveOption, readLog } from '../cluster/load-lib.mjs';
import { cannotMakeNamespaces, makeNetwork, removeLeftovers } from '../cluster/netns.mjs';
import { ledger as newLedger, startDrivers } from './drivers.mjs';
import { startAgents, startModels } from './fleet.mjs';
import { startWays } from './ways.mjs';
import { cannotRunPrometheus, collectSeries, startAuditFollow, startPrometheus } from './observe.mjs';
import { plots, reportHtml } from './report.mjs';
import { faultSchedule, runFault } from './schedule.mjs';
import { alertsKept, auditKept, commandsKept, decidedOnce, latencyKept, memoryKept, percentile, refusalsInWindows, waysKept } from './verdicts.mjs';

const HELP = `Usage: npm run day -- [options]        (as root: the partitions need network namespaces)

A day in the life of Agora, on this machine: the cluster of \`npm run cluster\` (3 nats-server nodes,
each in a network namespace of the run's own, the log at 3 replicas, every service at 2 replicas,
the gateway and the projections, the read models on PostgreSQL); --agents model-backed agents
playing every protocol at once (reviewers, validators, executives proposing and asking for votes, a
paused agent and the reviewers drawn for its recoveries, debaters, questions to the chamber's panel)
through the SDK's role loops, half over NATS and half through the gateway, their models stand-in
servers at the network boundary that answer as slowly as real ones (median ~2 s, a tail to 20 s,
1 % errors, 2 % rate limits); three more agents that come in the other ways: an MCP client through
\`agora mcp\` (proposals), an A2A client with the official SDK (votes as tasks) and an MCP client
through the governed tool-call proxy \`agora mcp-proxy\` (a credential stored only once the
validators approve); the operator's steady UpdateAgent commands over NATS; faults on a
schedule; \`agora audit --follow\` and Debian's Prometheus (the project's rules and alerts loaded)
from the start. After --minutes it stops, tears everything down and writes --out: report.html (one
page, opens offline: decision latency per protocol, commands per second, refusals by code, RSS and
event-loop delay per process, audit lag, faults and alerts over time), summary.json, the plots as
SVG files and every process's log. Progress is printed every 10 s.

It asserts, and exits 1 naming each that failed: no acknowledged command lost or applied twice;
every aggregate decided at most once; no 'unavailable' outside a fault window and no command refused
for more than 15 s; the audit clean at the end and never more than 5 s behind outside a fault window;
RSS of every process growing at most 20 % from minute 10 to the end, and decision latency p99 of the
last 10 minutes at most 1.2x that of minutes 10-20 (both judged on runs of 30 minutes or more); every
alert that fired begun in a fault window, and each fault that stops a process raising
AgoraProcessDown; no process exiting unasked. A fault window runs from the fault to 30 s after the
cluster has settled again (5 minutes for an alert's condition to begin).

Options:
  --minutes N     how long the agents play (default 60; fractions allowed)
  --agents N      agents in the fleet, at least 12 (default 60)
  --faults LIST   default: every 5 minutes, partitions (leader, follower, 2/1 split in turn)
                  alternating with a NATS node killed, a service replica killed, the gateway
                  restarted, scaled to --minutes; or a comma-separated list of partition, node,
                  replica, gateway, each once in that order at even spacing; or none
  --cut S         seconds a partition lasts (default 20)
  --down S        seconds a killed node or replica stays down (default 10)
  --think S       mean seconds an agent waits between the things it starts (default 10)
  --out DIR       the report folder (default ./data/day/<start time>)
  --keep          keep the cluster's directory (default: a temporary one, removed at the end)
  --help          this text

Environment:
  AGORA_CLUSTER_DIR   the cluster's state (default: a new temporary directory)
  PROMETHEUS_BIN      the prometheus binary (default /usr/bin/prometheus: Debian's prometheus)
  NATS_SERVER_BIN     the nats-server binary (default: as npm run cluster)`;

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '60' },
    agents: { type: 'string', default: '60' },
    faults: { type: 'string', default: 'default' },
    cut: { type: 'string', default: '20' },
    down: { type: 'string', default: '10' },
    think: { type: 'string', default: '10' },
    out: { type: 'string' },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const positive = (name) => positiveOption(values, name, { program: 'day', help: HELP });
const MINUTES = positive('minutes');
const AGENTS = Math.floor(positive('agents'));
if (AGENTS < 12) {
  console.error('day: --agents must be at least 12 (four reviewers, three validators, two debaters, executives and the paused agent)');
  process.exit(2);
}
let schedule;
try {
  schedule = faultSchedule(values.faults, MINUTES);
} catch (error) {
  console.error(`day: --faults: ${error.message}`);
  process.exit(2);
}
const [CUT_S, DOWN_S, THINK_S] = ['cut', 'down', 'think'].map(positive);
const needsNamespaces = schedule.some((f) => f.kind === 'partition');
const why = (needsNamespaces ? cannotMakeNamespaces() : undefined) ?? cannotRunPrometheus((line) => console.log(`day: ${line}`));
if (why) {
  console.error(`day: cannot run here: ${why}`);
  process.exit(2);
}
const startedIso = new Date().toISOString().replace(/[:.]/g, '-');
const OUT = resolve(values.out ?? join(ROOT, 'data', 'day', startedIso));
const { dir, ownDir, nats, group, unexpected } = prepareClusterProgram('day', [...SERVICES, 'gateway', 'projections', 'cli']);
const say = (line) => console.log(`day: ${line}`);
const secs = (ms) => (ms / 1000).toFixed(1);

/** A block of `size` free consecutive ports for the processes' /metrics. */
async function freeBlock(size) {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20000 + Math.floor(Math.random() * 20000);
    if ((await takenPorts(Array.from({ length: size }, (_, i) => base + i))).length === 0) return base;
  }
  throw new Error(`no ${size} free consecutive ports found`);
}

async function main() {
  const left = removeLeftovers();
  if (left.length > 0) say(`removed what an earlier run left: ${left.join(', ')}`);
  const network = needsNamespaces ? makeNetwork(3) : undefined;
  if (network) process.on('exit', network.teardown);
  const readSide = await clusterReadDatabase(dir, say);
  const panel = await StandIns.start(chamberStandInScript());
  let models;
  let agents;
  let ways;
  let clients = [];
  try {
    const nodes = network?.nodes.map((n, i) => ({ n: i + 1, name: n.name, process: `nats-${n.name}`, host: n.host, netns: n.netns, client: 4222, route: 6222, monitor: 8222, url: `nats://${n.host}:4222` }));
    const gatewayPort = await freePort();
    const metricsPort = await freeBlock(SERVICES.length * 2 + 4);
    say(`${nats.description}; state in ${dir}; report to ${OUT}`);
    const cluster = await startCluster(group, { dir, natsPort: intEnv('AGORA_CLUSTER_NATS_PORT', 24222, 'day'), replicas: 2, nats, gatewayPort, metricsPort, log: say, readDb: readSide.url, env: { ...panel.env, AGORA_CHAMBER_MIN_SAMPLE: '1' }, ...(nodes ? { nodes } : {}) });
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    const auditPort = cluster.auditMetricsPort;
    const follower = await startAuditFollow(group, cluster.shared, auditPort);
    const prometheusUrl = await startPrometheus(group, dir, { ...cluster.metricsPorts, audit: auditPort }, await freePort());
    say(`cluster up: ${cluster.urls.join(' ')}${network ? ` (namespaces on ${network.subnet})` : ''}; ${SERVICES.length} services x2, projections, gateway ${gatewayUrl}; ${cluster.info.config.num_replicas} log replicas; read models ${readSide.description}; audit --follow; Prometheus ${prometheusUrl}`);

    const book = newLedger();
    let modelCalls = 0;
    const fleetRefusals = {};
    models = await startModels(AGENTS * 7919);
    agents = await startAgents({
      dir,
      agents: AGENTS,
      layer: models.layer,
      gatewayUrl,
      natsUrls: cluster.urls,
      agentPassword: cluster.passwords.agent,
      operatorKeyFile: cluster.keyFile,
      onAction: (action) => (modelCalls += action.calls),
      onRefused: (agent, role, error) => {
        const code = error.code ?? 'error';
        fleetRefusals[code] = (fleetRefusals[code] ?? 0) + 1;
        book.refusals.push({ at: Date.now(), code, type: `${role} loop` });
      },
    });
    ways = await startWays({ dir, gatewayUrl, operatorKeyFile: cluster.keyFile, layer: models.layer, logDir: join(dir, 'logs') });
    say(`${agents.roster.length} agents, ${agents.loops} role loops (${agents.overNats.length} agents over NATS, the rest through the gateway); ${ways.agents.join(', ')} through agora mcp, A2A and agora mcp-proxy`);
    const operator = await Agora.connect({ url: gatewayUrl, signer: { keyFile: cluster.keyFile } });
    const operatorNats = await Agora.connect({ nats: { servers: cluster.urls, credentials: { user: 'agent', pass: cluster.passwords.agent }, catchUpUrl: gatewayUrl }, signer: { keyFile: cluster.keyFile } });
    const watch = await NatsAgoraClient.connect({ servers: cluster.urls, name: 'agora-day-watch', credentials: { user: 'service', pass: cluster.passwords.service } });
    clients = [operator, operatorNats, watch];
    const jsm = await jetstreamManager(watch.connection, { timeout: 2000 });

    // The run: the drivers, the faults at their times, progress every 10 s.
    const t0 = Date.now();
    const end = t0 + MINUTES * 60_000;
    const drivers = startDrivers({ roster: agents.roster, clients: agents.clients, operator, operatorNats, ledger: book, seed: AGENTS, thinkMs: THINK_S * 1000, ways });
    const windows = [];
    let current;
    const faulting = (async () => {
      for (const fault of schedule) {
        await sleep(Math.max(0, t0 + fault.atSeconds * 1000 - Date.now()));
        if (Date.now() >= end) break;
        current = fault.kind === 'partition' ? `partition (${fault.variant})` : fault.kind === 'replica' ? `${fault.variant} killed` : fault.kind;
        try {
          windows.push(await runFault(fault, { group, network, nodes: cluster.nodes, jsm, cutSeconds: CUT_S, downSeconds: DOWN_S, say }));
        } catch (error) {
          windows.push({ kind: fault.kind, variant: fault.variant, what: `${fault.kind} (failed: ${error.message})`, startedAt: t0 + fault.atSeconds * 1000, endedAt: Date.now(), settledAt: Date.now(), failed: true });
          say(`fault ${fault.kind} failed: ${error.message}`);
        }
        current = undefined;
      }
    })();
    while (Date.now() < end) {
      await sleep(Math.min(10_000, end - Date.now()));
      const acked = book.commands.filter((c) => c.ackedAt !== undefined).length;
      say(`${secs(Date.now() - t0)} s of ${MINUTES * 60} | commands ${book.commands.length} sent, ${acked} acknowledged | decisions ${book.decisions.length} | refusals ${book.refusals.length} | model calls ${modelCalls} | fault: ${current ?? 'none'}`);
    }
    // What the agents started before the end may finish: a sixth of the run, a minute at most.
    const graceMs = Math.min(60_000, (MINUTES * 60_000) / 6);
    say(`time is up: the agents finish what they started (${secs(graceMs)} s at most)`);
    await drivers.stop(graceMs);
    await faulting;
    const t1 = Date.now();

    // The end: the cluster settled, the audit caught up, the whole log audited once more and read back.
    await logStreamSettled(jsm, 'at the end', { timeoutMs: 120_000 }).catch((error) => say(error.message));
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(1000)) {
      const lag = await globalThis.fetch(`http://127.0.0.1:${auditPort}/metrics`).then((r) => r.text()).catch(() => '');
      if (/^agora_audit_lag_events 0$/m.test(lag)) break;
    }
    const series = await collectSeries(prometheusUrl, t0, Date.now());
    const final = await auditLog(cluster.shared);
    const events = await readLog(cluster.urls, { user: 'auditor', pass: cluster.passwords.auditor });
    await agents.close();
    await ways.close();

    const unasked = unexpected.filter((name) => name !== 'audit');
    const checks = [
      ...commandsKept(book.commands, events),
      decidedOnce(events),
      ...refusalsInWindows(book.commands, book.refusals, windows),
      ...auditKept(final, series.auditLag, windows, { findings: follower.findings(), stops: follower.stops }),
      memoryKept(series.rss, t0, t1),
      latencyKept(book.decisions, t0, t1),
      ...alertsKept(series.alerts, windows),
      waysKept(book.decisions, ['sdk', 'mcp', 'a2a', 'proxy']),
      { name: 'no role loop stopped', ok: agents.stopped.length === 0, detail: agents.stopped.length ? agents.stopped.join('; ') : `${agents.loops} loops ran to the end` },
      { name: 'no process exited unasked', ok: unasked.length === 0, detail: unasked.length ? unasked.join(', ') : 'none (the following audit aside: its own check)' },
      { name: 'every scheduled fault ran', ok: !windows.some((w) => w.failed), detail: `${windows.length} of ${schedule.length} ran${windows.some((w) => w.failed) ? `; failed: ${windows.filter((w) => w.failed).map((w) => w.what).join('; ')}` : ''}` },
    ];
    const failed = checks.filter((c) => !c.ok);
    const byProtocol = {};
    for (const protocol of [...new Set(book.decisions.map((d) => d.protocol))].sort()) {
      const all = book.decisions.filter((d) => d.protocol === protocol);
      const ms = all.filter((d) => d.outcome !== 'none').map((d) => d.decidedAt - d.askedAt);
      byProtocol[protocol] = { count: ms.length, undecided: all.length - ms.length, p50: Number(((percentile(ms, 50) ?? 0) / 1000).toFixed(1)), p99: Number(((percentile(ms, 99) ?? 0) / 1000).toFixed(1)), outcomes: Object.fromEntries([...new Set(all.map((d) => d.outcome))].map((o) => [o, all.filter((d) => d.outcome === o).length])) };
    }
    const byWay = {};
    for (const via of [...new Set([...book.commands, ...book.decisions].map((x) => x.via))].sort()) {
      const sent = book.commands.filter((c) => c.via === via);
      const decided = book.decisions.filter((d) => d.via === via);
      byWay[via] = { commands: sent.length, acknowledged: sent.filter((c) => c.ackedAt !== undefined).length, decisions: Object.fromEntries([...new Set(decided.map((d) => d.outcome))].map((o) => [o, decided.filter((d) => d.outcome === o).length])) };
    }
    const refusedBy = {};
    for (const r of book.refusals) refusedBy[r.code] = (refusedBy[r.code] ?? 0) + 1;
    const summary = {
      verdict: failed.length === 0 ? 'passed' : `FAILED: ${failed.map((c) => c.name).join('; ')}`,
      startedAt: t0,
      endedAt: t1,
      minutes: MINUTES,
      agents: AGENTS,
      cluster: `3 NATS nodes (${nats.description}), the log at ${cluster.info.config.num_replicas} replicas, ${SERVICES.length} services at 2 replicas, the gateway, the projections, read models on PostgreSQL`,
      fleet: { loops: agents.loops, overNats: agents.overNats.length, modelCalls, modelRequests: models.stands.requests.length, refusedBy: fleetRefusals },
      commands: { sent: book.commands.length, acknowledged: book.commands.filter((c) => c.ackedAt !== undefined).length, unacknowledged: book.commands.filter((c) => c.ackedAt === undefined).map((c) => `${c.type}: ${c.code}`).slice(0, 20), byType: Object.fromEntries([...new Set(book.commands.map((c) => c.type))].map((t) => [t, book.commands.filter((c) => c.type === t).length])), refusedBy },
      decisions: { count: book.decisions.filter((d) => d.outcome !== 'none').length, byProtocol },
      ways: byWay,
      log: { events: events.length },
      audit: { code: final.code, findings: final.report?.findings?.length, follower: { findings: follower.findings(), stops: follower.stops } },
      faults: windows,
      alerts: series.alerts.map((s) => ({ alert: s.alert, state: s.state, process: s.labels.process, from: s.from, to: s.to })),
      checks,
    };
    mkdirSync(OUT, { recursive: true });
    const svgs = plots({ series, decisions: book.decisions, refusals: book.refusals, faults: windows, t0, t1 });
    mkdirSync(join(OUT, 'plots'), { recursive: true });
    for (const [name, svg] of Object.entries(svgs)) writeFileSync(join(OUT, 'plots', `${name}.svg`), svg);
    writeFileSync(join(OUT, 'report.html'), reportHtml({ summary, svgs }));
    writeFileSync(join(OUT, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
    writeFileSync(join(OUT, 'ledger.json'), `${JSON.stringify({ commands: book.commands, decisions: book.decisions, refusals: book.refusals })}\n`);

    console.log('');
    for (const c of checks) console.log(`day: ${c.ok ? (c.skipped ? 'not judged' : 'passed') : 'FAILED'}: ${c.name}: ${c.detail}`);
    say(`result ${JSON.stringify({ verdict: summary.verdict, commands: { sent: summary.commands.sent, acknowledged: summary.commands.acknowledged }, decisions: byProtocol, faults: windows.map((w) => w.what), alerts: summary.alerts.length, checks: checks.map((c) => ({ name: c.name, ok: c.ok, skipped: c.skipped })) })}`);
    say(`report: ${join(OUT, 'report.html')}`);
    return failed.length === 0 ? 0 : 1;
  } finally {
    await agents?.close();
    await ways?.close();
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await models?.stands.close();
    await panel.close();
    await group.stopAll();
    mkdirSync(OUT, { recursive: true });
    cpSync(join(dir, 'logs'), join(OUT, 'logs'), { recursive: true });
    await readSide.stop();
    if (readSide.url && ownDir && !values.keep) {
      const name = new URL(readSide.url).pathname.slice(1);
      const server = new URL(readSide.url);
      server.pathname = '/postgres';
      const client = new pg.Client({ connectionString: server.toString() });
      await client.connect().then(() => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch((error) => say(`could not drop ${name}: ${error.message}`)).finally(() => client.end());
    }
    network?.teardown();
  }
}

await runClusterProgram('day', group, main, { dir, remove: ownDir && !values.keep });
