/**
 * Health reports at fleet rates: N agents each sending ReportHealth every I ms (10,000 every 5 s
 * is 2,000 reports a second), open loop (a report is sent when it is due, whether or not earlier
 * ones were answered), against one registry replica on a JetStream log.
 *
 *   npm run bench:health -- [--agents 10000] [--interval-ms 5000] [--seconds 30] [--drifting 100] [--nats URL]
 *
 * Two runs, each on a log of its own: first the baseline, the registry recording every report
 * (AGORA_HEALTH_REPORT_MIN_CHANGE=0), then the registry's default, which records transitions and
 * periodic samples (a move of 0.05 or more, other tags, a note, once a minute per agent, every
 * report of a paused agent or one on probation, and always the report that trips the breaker).
 *
 * Each run first measures capacity, closed loop with 64 in flight: every agent's first report, then
 * the same report again (what most of a fleet's reports are). Then the open loop at the fleet rate.
 * Most agents report a steady risk with a little noise; `--drifting` of them climb by 0.04 per
 * report from 0.40, so their sixth report reaches the 0.60 threshold. The check, from the log: each
 * drifting agent was paused exactly once, by the report at 0.60 (AgentPaused beside the
 * AgentHealthReported of that report), and no steady agent was. Latency is measured from when a
 * report was due, so a replica that falls behind shows it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { RegisterAgent, ReportHealth, type CommandResult, type Reply } from '@agora/contracts';
import { openJetStreamEventStore, type EventStore } from '@agora/eventstore';
import { createSignedCommand, generateKeyPair, type KeyPair } from '@agora/identity';
import { NatsAgoraClient } from '@agora/messaging';
import { jetstreamManager } from '@nats-io/jetstream';
import { clientCpuMs, fmt, replicasCpuMs, startReplica, stopReplica, type Replica } from './replicas.js';
import { measure, percentile, type Run } from './store.bench.js';
import { positiveIntOption } from './options.js';

const HELP = `Usage: npm run bench:health -- [options]

ReportHealth at fleet rates against one registry replica (apps/registry/dist, built by the npm
script) on a JetStream log: every agent reports every --interval-ms, open loop, for --seconds.
Runs twice: the registry recording every report (baseline), then its default sampling.
  --agents N        agents reporting (default 10000)
  --interval-ms N   each agent reports this often (default 5000: 10,000 agents -> 2,000 reports/s)
  --seconds N       how long each run reports (default 30)
  --drifting N      agents whose risk climbs to the breaker's threshold (default 100)
  --nats URL        NATS server with JetStream (default $NATS_URL or nats://127.0.0.1:4222)
  --help            this text`;

const { values } = parseArgs({
  options: {
    agents: { type: 'string', default: '10000' },
    'interval-ms': { type: 'string', default: '5000' },
    seconds: { type: 'string', default: '30' },
    drifting: { type: 'string', default: '100' },
    nats: { type: 'string', default: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const positiveInt = positiveIntOption(HELP);
const AGENTS = positiveInt(values.agents, 'agents');
const INTERVAL_MS = positiveInt(values['interval-ms'], 'interval-ms');
const SECONDS = positiveInt(values.seconds, 'seconds');
const DRIFTING = Math.min(AGENTS, positiveInt(values.drifting, 'drifting'));
const NATS = values.nats.includes('://') ? values.nats : `nats://${values.nats}`;
const THRESHOLD = 0.6;
/** Reports a drifting agent needs to reach the threshold (0.40, 0.44, ... 0.60). */
const DRIFT_STEPS = 6;
if ((DRIFT_STEPS - 1) * INTERVAL_MS >= SECONDS * 1000) {
  console.error(`--seconds ${SECONDS} is too short for a drifting agent to reach the threshold: it needs more than ${((DRIFT_STEPS - 1) * INTERVAL_MS) / 1000} s at --interval-ms ${INTERVAL_MS}`);
  process.exit(2);
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
/** Agent i's k-th report: drifting agents climb 0.04 a report from 0.40; the others hold a steady risk with +-0.01 of noise. */
function riskOf(i: number, k: number): number {
  if (i < DRIFTING) return round3(0.4 + 0.04 * Math.min(k, DRIFT_STEPS - 1));
  const base = 0.05 + 0.25 * ((i * 7919) % 1000) / 1000;
  return round3(base + (Math.random() - 0.5) * 0.02);
}

interface RunResult {
  label: string;
  /** Closed loop: reports/s of every agent's first report, then of the same report repeated. */
  capacity: Record<'first' | 'repeat', Run & { cpuMs: number | undefined }>;
  sent: number;
  answered: number;
  errors: Map<string, number>;
  perSec: number;
  p50: number;
  p99: number;
  max: number;
  replicaCpuMs: number | undefined;
  clientCpuMs: number;
  events: { reported: number; paused: number };
  bytes: number;
  /** Drifting agents paused exactly once, by the report at the threshold; steady agents paused. */
  trips: { right: number; wrong: string[] };
}

async function oneRun(label: string, env: Record<string, string>): Promise<RunResult> {
  const tag = randomBytes(4).toString('hex');
  const streamName = `BENCH_HEALTH_${tag}`;
  const subjectPrefix = `bench.health.${tag}`;
  const host = NATS.replace(/^nats:\/\//, '');
  const root: KeyPair = generateKeyPair();
  const monitor: KeyPair = generateKeyPair();
  const dir = mkdtempSync(join(tmpdir(), 'agora-bench-health-'));
  const store: EventStore = await openJetStreamEventStore({ servers: NATS, streamName, subjectPrefix });
  const client = await NatsAgoraClient.connect({ servers: NATS, name: 'bench-health' });
  const jsm = await jetstreamManager(client.connection);
  let replica: Replica | undefined;
  try {
    process.stdout.write(`\n[${label}] starting a registry replica ... `);
    replica = await startReplica({ NATS_URL: NATS, EVENT_STORE: `jetstream://${host}?stream=${streamName}&prefix=${subjectPrefix}`, AGORA_DATA_DIR: dir, AGORA_OPERATOR_PUBLIC_KEY: root.publicKey, AGORA_OPERATOR_ID: 'root', ...env });
    console.log('ready');
    const sign = (actor: string, secretKey: string, type: string, payload: Record<string, unknown>) => createSignedCommand({ type, actor, payload, secretKey });
    const op: Reply<CommandResult> = await client.request(RegisterAgent.subject, sign('root', root.secretKey, 'RegisterAgent', { agentId: 'monitor', publicKey: monitor.publicKey, displayName: 'fleet monitor', roles: ['operator'] }), { timeoutMs: 30_000 });
    if (!op.ok) throw new Error(`registering the monitor failed: ${JSON.stringify(op.error)}`);

    const agentId = (i: number) => `h${tag}-${i}`;
    const agentKey = generateKeyPair().publicKey;
    process.stdout.write(`[${label}] registering ${fmt(AGENTS)} agents ... `);
    let next = 0;
    const reg = await measure(AGENTS, 64, async () => {
      const i = next++;
      const reply = await client.request(RegisterAgent.subject, sign('monitor', monitor.secretKey, 'RegisterAgent', { agentId: agentId(i), publicKey: agentKey, displayName: `agent ${i}`, roles: ['executive'] }), { timeoutMs: 30_000 });
      if (!reply.ok) throw new Error(`RegisterAgent ${agentId(i)}: ${JSON.stringify(reply.error)}`);
    });
    console.log(`${fmt(reg.opsPerSec)}/s`);

    // Capacity, closed loop (64 in flight): every agent's first report (recorded by both runs), then
    // the same report again (a repeat: recorded by the baseline only). Drifting agents start at 0.20.
    const capacity = async (round: string) => {
      let n = 0;
      const cpu0 = replicasCpuMs([replica!]);
      const run = await measure(AGENTS, 64, async () => {
        const i = n++;
        const risk = i < DRIFTING ? 0.2 : riskOf(i, 0);
        const reply = await client.request(ReportHealth.subject, sign('monitor', monitor.secretKey, 'ReportHealth', { agentId: agentId(i), health: round3(1 - risk), risk, tags: [], metrics: {} }), { timeoutMs: 30_000 });
        if (!reply.ok) throw new Error(`ReportHealth ${agentId(i)}: ${JSON.stringify(reply.error)}`);
      });
      const cpu1 = replicasCpuMs([replica!]);
      const cpuMs = cpu0 === undefined || cpu1 === undefined ? undefined : (cpu1 - cpu0) / AGENTS;
      console.log(`[${label}] ${round}, closed loop, 64 in flight: ${fmt(run.opsPerSec)}/s, p99 ${run.p99.toFixed(1)} ms`);
      return { ...run, cpuMs };
    };
    const first = await capacity('first reports');
    const repeat = await capacity('repeated reports');

    const bytesBefore = (await jsm.streams.info(streamName)).state.bytes;
    const openLoopFrom = new Date().toISOString();
    // Agent i reports at offset (i / AGENTS) * interval, then every interval: an even 2,000/s at the defaults.
    const total = Math.floor((SECONDS * 1000 * AGENTS) / INTERVAL_MS);
    const latencies = new Float64Array(total);
    const errors = new Map<string, number>();
    let answered = 0;
    let sent = 0;
    const cpu0 = replicasCpuMs([replica]);
    const client0 = clientCpuMs();
    process.stdout.write(`[${label}] ${fmt(total)} ReportHealth over ${SECONDS} s (${fmt((AGENTS * 1000) / INTERVAL_MS)}/s due) ... `);
    const start = performance.now();
    const pending: Promise<void>[] = [];
    await new Promise<void>((resolve) => {
      const tick = () => {
        const now = performance.now() - start;
        // Every report due by now: report n is agent n % AGENTS's (n / AGENTS)-th.
        while (sent < total) {
          const n = sent;
          const due = (n * INTERVAL_MS) / AGENTS;
          if (due > now) break;
          sent++;
          const i = n % AGENTS;
          const k = Math.floor(n / AGENTS);
          const risk = riskOf(i, k);
          const envelope = sign('monitor', monitor.secretKey, 'ReportHealth', { agentId: agentId(i), health: round3(1 - risk), risk, tags: [], metrics: {} });
          pending.push(
            client.request(ReportHealth.subject, envelope, { timeoutMs: 30_000 }).then(
              (reply: Reply<unknown>) => {
                latencies[n] = performance.now() - start - due;
                answered++;
                if (!reply.ok) errors.set(reply.error.code, (errors.get(reply.error.code) ?? 0) + 1);
              },
              (error: unknown) => {
                latencies[n] = performance.now() - start - due;
                const code = error instanceof Error ? error.name : 'error';
                errors.set(code, (errors.get(code) ?? 0) + 1);
              },
            ),
          );
        }
        if (sent < total) setTimeout(tick, 5);
        else resolve();
      };
      tick();
    });
    await Promise.all(pending);
    const seconds = (performance.now() - start) / 1000;
    const cpu1 = replicasCpuMs([replica]);
    const replicaCpu = cpu0 === undefined || cpu1 === undefined ? undefined : (cpu1 - cpu0) / total;
    const clientCpu = (clientCpuMs() - client0) / total;
    console.log(`${fmt(answered / seconds)}/s answered`);
    const bytes = (await jsm.streams.info(streamName)).state.bytes - bytesBefore;

    // The log's side: what was recorded, and every trip checked.
    const events = { reported: 0, paused: 0 };
    const pausedBy = new Map<string, number[]>();
    for await (const event of store.readAll()) {
      if (!event.streamId.startsWith(`agent-h${tag}-`) || event.recordedAt < openLoopFrom) continue;
      if (event.type === 'AgentHealthReported') events.reported++;
      else if (event.type === 'AgentPaused') {
        events.paused++;
        const id = event.streamId.slice('agent-'.length);
        pausedBy.set(id, [...(pausedBy.get(id) ?? []), (event.data as { risk: number }).risk]);
      }
    }
    const wrong: string[] = [];
    let right = 0;
    for (let i = 0; i < AGENTS; i++) {
      const risks = pausedBy.get(agentId(i)) ?? [];
      if (i < DRIFTING) {
        if (risks.length === 1 && risks[0] === THRESHOLD) right++;
        else wrong.push(`${agentId(i)} paused ${risks.length} times (${risks.join(', ')})`);
      } else if (risks.length > 0) wrong.push(`${agentId(i)}, a steady agent, paused at ${risks.join(', ')}`);
    }
    latencies.sort();
    return {
      label,
      capacity: { first, repeat },
      sent: total,
      answered,
      errors,
      perSec: answered / seconds,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies[latencies.length - 1] ?? 0,
      replicaCpuMs: replicaCpu,
      clientCpuMs: clientCpu,
      events,
      bytes,
      trips: { right, wrong },
    };
  } catch (error) {
    if (replica) console.error(`--- replica, last lines:\n${replica.tail()}`);
    throw error;
  } finally {
    if (replica) await stopReplica(replica);
    await store.close().catch(() => undefined);
    await jsm.streams.delete(streamName).catch((error: unknown) => console.error(`could not delete the log stream ${streamName}: ${String(error)}`));
    await client.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(`Health reports at fleet rates: ${fmt(AGENTS)} agents every ${INTERVAL_MS} ms (${fmt((AGENTS * 1000) / INTERVAL_MS)}/s), ${SECONDS} s per run, ${DRIFTING} drifting to the threshold ${THRESHOLD}.`);
  console.log(`node ${process.version}, NATS at ${NATS}, one registry replica on a JetStream log of its own per run`);
  const baseline = await oneRun('every report recorded', { AGORA_HEALTH_REPORT_MIN_CHANGE: '0' });
  const sampled = await oneRun('transitions and samples (default)', {});

  const due = (AGENTS * 1000) / INTERVAL_MS;
  const rows = [baseline, sampled].map((r) => [
    r.label,
    `${fmt(r.perSec)}`,
    `${((100 * r.perSec) / due).toFixed(0)} %`,
    r.p50.toFixed(1),
    r.p99.toFixed(1),
    r.replicaCpuMs === undefined ? 'n/a' : r.replicaCpuMs.toFixed(3),
    fmt((r.events.reported + r.events.paused) / SECONDS),
    fmt(r.bytes / SECONDS / 1024),
    `${r.trips.right}/${DRIFTING}${r.trips.wrong.length > 0 ? ` (${r.trips.wrong.length} wrong)` : ''}`,
    r.errors.size === 0 ? '0' : [...r.errors].map(([c, n]) => `${c} ${n}`).join(', '),
  ]);
  const capRows = [baseline, sampled].map((r) => [
    r.label,
    fmt(r.capacity.first.opsPerSec),
    fmt(r.capacity.repeat.opsPerSec),
    r.capacity.repeat.p99.toFixed(1),
    r.capacity.repeat.cpuMs === undefined ? 'n/a' : r.capacity.repeat.cpuMs.toFixed(3),
  ]);
  const capHeader = ['capacity, closed loop, 64 in flight', 'first reports/s', 'repeated reports/s', 'repeat p99 ms', 'replica CPU ms/repeat'];
  const capWidths = capHeader.map((h, i) => Math.max(h.length, ...capRows.map((r) => r[i]!.length)));
  const capLine = (r: string[]) => `| ${r.map((c, i) => c.padEnd(capWidths[i]!)).join(' | ')} |`;
  console.log(`\n${capLine(capHeader)}\n| ${capWidths.map((w) => '-'.repeat(w)).join(' | ')} |\n${capRows.map(capLine).join('\n')}`);
  const header = ['open loop at the fleet rate', 'answered/s', 'of due', 'p50 ms', 'p99 ms', 'replica CPU ms/report', 'events/s', 'log KiB/s', 'trips right', 'errors'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(`\n${line(header)}\n| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |\n${rows.map(line).join('\n')}\n`);
  // A run this short records every agent's first report; a fleet that runs on records one sample per agent a minute plus its transitions.
  console.log(`steady state of the default: at most ${fmt(AGENTS / 60)} samples/s (one per agent a minute) plus transitions, against ${fmt(due)} reports/s recorded by the baseline`);
  for (const r of [baseline, sampled]) for (const w of r.trips.wrong.slice(0, 5)) console.log(`WRONG [${r.label}] ${w}`);
  const sustained = sampled.perSec >= 0.97 * due && sampled.errors.size === 0;
  console.log(`${sustained ? 'met    ' : 'NOT MET'}  one replica answers ${fmt(due)} reports/s (default sampling): ${fmt(sampled.perSec)}/s, p99 ${sampled.p99.toFixed(1)} ms`);
  const tripsOk = [baseline, sampled].every((r) => r.trips.wrong.length === 0 && r.trips.right === DRIFTING);
  console.log(`${tripsOk ? 'met    ' : 'NOT MET'}  every drifting agent paused exactly once, by the report at the threshold; no steady agent paused`);
  if (!tripsOk || sampled.errors.size > 0 || baseline.errors.size > 0) process.exitCode = 1;
}

await main();
