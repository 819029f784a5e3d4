/**
 * Command benchmark, end to end: the client signs (Ed25519, node:crypto) and sends a NATS request;
 * a registry replica verifies it, loads the agent's stream, decides, appends to the JetStream log
 * and replies. Commands/s and latency with a fixed number in flight, beside raw JetStream
 * publish-with-ack measured in the same run with the same concurrency (store.bench.ts's figure).
 *
 *   npm run bench:commands -- [--count 5000] [--inflight 64] [--replicas 1] [--nats nats://127.0.0.1:4222] [--cluster on|off]
 *
 * Then the same on a 3-node NATS cluster it starts (the nats-server of libs/testing's rule), the log
 * at 3 replicas as in production: one atomic batch per command (the default there) and two appends,
 * beside raw publish-with-ack to a 3-replica stream on that cluster, in the same run.
 *
 * The registry runs as child processes started like an operator would (`node apps/registry/dist/main.js`,
 * settings in the environment): a separate event loop and NATS connections of its own, so the
 * figure includes everything production pays, and the bench client does not share its CPU time
 * slices with the service's event loop.
 *
 * Headline: UpdateAgent, each command on its own, already registered agent. That is the common
 * shape of a command (an existing aggregate: fold its stream, decide, append at the expected
 * revision), where RegisterAgent of a fresh agent only meets an empty stream. The agents are
 * registered by a first, also measured, RegisterAgent phase. A replica keeps the folded state of
 * the streams it handled (the aggregate cache of the command kit), so with one replica every
 * UpdateAgent finds its agent's stream kept from the RegisterAgent; with N replicas (a queue group
 * hands each request to any of them) about 1/N does, and the others read the stream first.
 *
 * Besides commands/s and latency, the table gives the CPU time each command cost the replicas and
 * the bench client (from /proc and process.cpuUsage): on a small machine shared with other work,
 * throughput moves with the load while the CPU per command stays put, and it shows where the
 * cores went.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { RegisterAgent, UpdateAgent, type CommandResult, type Reply } from '@agora/contracts';
import { ATOMIC_BATCH_MIN_VERSION, clusteredLogRefusal, openJetStreamEventStore, takesAtomicBatches } from '@agora/eventstore';
import { createSignedCommand, generateKeyPair, type KeyPair } from '@agora/identity';
import { NatsAgoraClient } from '@agora/messaging';
import { describeNatsServer, resolveNatsServer, startNatsCluster } from '@agora/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { clientCpuMs, fmt, REGISTRY_MAIN, replicasCpuMs, startReplica, stopReplica, type Replica } from './replicas.js';
import { measure, rawJetStream, type Run } from './store.bench.js';
import { positiveIntOption } from './options.js';

const HELP = `Usage: npm run bench:commands -- [options]

Measures signed commands end to end (client signs, NATS request, registry verifies, decides,
appends to JetStream, replies) against registry replicas started as child processes from
apps/registry/dist (npm run bench:commands builds first), beside raw JetStream publish-with-ack.
  --count N       commands per phase: N RegisterAgent, then one UpdateAgent on each of those N agents (default 5000)
  --inflight N    commands in flight (default 64)
  --replicas N    registry processes in the queue group (default 1)
  --appends WAY   how a command writes its id reservation and its events: one (one atomic append,
                  nats-server 2.12+), two (two appends, as on older servers), or both (default: each
                  in turn in this run, on a log and replicas of its own; two only before 2.12)
  --nats URL      NATS server with JetStream (default $NATS_URL or nats://127.0.0.1:4222)
  --cluster WAY   on (default): then the same on a 3-node NATS cluster this starts (NATS_SERVER_BIN,
                  else the nats-server npm run nats-server fetched), the log and the raw stream at 3
                  replicas, one atomic batch and two appends per command; off: the single server only
  --help          this text

The table also gives the CPU time per command of the replicas (all together, from /proc) and of
the bench client. The log is a JetStream stream of its own (BENCH_CMD_<random>), deleted at the end.`;

/** Issue 16's targets for UpdateAgent: vs raw publish-with-ack in the same run, p99, replica CPU per command. */
const TARGET = { ratio: 0.2, p99Ms: 20, replicaCpuMs: 0.2 };
/** Between phases: the replicas idle long enough that a profile of them shows each phase apart (cpuprofile.ts). */
const PHASE_PAUSE_MS = 1_000;

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '5000' },
    inflight: { type: 'string', default: '64' },
    replicas: { type: 'string', default: '1' },
    appends: { type: 'string', default: 'both' },
    nats: { type: 'string', default: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' },
    cluster: { type: 'string', default: 'on' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const positiveInt = positiveIntOption(HELP);
const COUNT = positiveInt(values.count, 'count');
const INFLIGHT = positiveInt(values.inflight, 'inflight');
const REPLICAS = positiveInt(values.replicas, 'replicas');
const NATS = values.nats.includes('://') ? values.nats : `nats://${values.nats}`;
if (!['one', 'two', 'both'].includes(values.appends)) {
  console.error(`bench:commands: --appends must be one, two or both, got ${JSON.stringify(values.appends)}\n\n${HELP}`);
  process.exit(2);
}
if (!['on', 'off'].includes(values.cluster)) {
  console.error(`bench:commands: --cluster must be on or off, got ${JSON.stringify(values.cluster)}\n\n${HELP}`);
  process.exit(2);
}
type Appends = 'one' | 'two';
/** Where a run's log lives: the single server of --nats, or the cluster the bench started. */
interface Target {
  label: string;
  servers: string[];
  /** Replicas of the log stream and of the raw stream. */
  replicas: number;
  version: string | undefined;
}
/** What the bench started and must stop however it ends (the cluster). */
const stopAtExit: (() => Promise<void>)[] = [];

const APPEND_LABEL: Record<Appends, string> = { one: 'one atomic batch', two: 'two appends' };


interface Phase extends Run {
  errors: Map<string, number>;
  /** CPU time (user + system) per command: of all the replicas together, and of this process. */
  cpuMs: { replicas: number | undefined; client: number };
}

/** Runs `count` commands with INFLIGHT in flight; `envelopeFor(i)` signs the i-th (signing is part of the measured time). */
async function commandPhase(client: NatsAgoraClient, replicas: readonly Replica[], subject: string, count: number, envelopeFor: (i: number) => unknown): Promise<Phase> {
  const errors = new Map<string, number>();
  let next = 0;
  const replicasBefore = replicasCpuMs(replicas);
  const clientBefore = clientCpuMs();
  const run = await measure(count, INFLIGHT, async () => {
    const reply: Reply<CommandResult> = await client.request(subject, envelopeFor(next++), { timeoutMs: 30_000 });
    if (!reply.ok) errors.set(reply.error.code, (errors.get(reply.error.code) ?? 0) + 1);
  });
  const replicasAfter = replicasCpuMs(replicas);
  const replicasMs = replicasBefore === undefined || replicasAfter === undefined ? undefined : (replicasAfter - replicasBefore) / count;
  return { ...run, errors, cpuMs: { replicas: replicasMs, client: (clientCpuMs() - clientBefore) / count } };
}

interface WayRun {
  target: Target;
  way: Appends;
  register: Phase;
  update: Phase;
  logOk: boolean;
}

async function main(): Promise<void> {
  const probe = await NatsAgoraClient.connect({ servers: NATS, name: 'bench-commands-probe' });
  const version = probe.connection.info?.version;
  await probe.close();
  const atomic = takesAtomicBatches(version);
  if (values.appends === 'one' && !atomic) throw new Error(`--appends one needs nats-server ${ATOMIC_BATCH_MIN_VERSION} or newer (atomic batches); ${NATS} is ${version ?? 'of unknown version'}`);
  const waysOn = (batches: boolean): Appends[] => (values.appends === 'both' ? (batches ? ['two', 'one'] : ['two']) : [values.appends as Appends]);
  console.log(`Command benchmark: ${fmt(COUNT)} RegisterAgent, then ${fmt(COUNT)} UpdateAgent (one per agent), ${INFLIGHT} in flight, ${REPLICAS} registry process${REPLICAS > 1 ? 'es' : ''}.`);
  console.log(`node ${process.version}, nats-server ${version ?? '(version unknown)'} at ${NATS}`);

  const raws = new Map<Target, Run>();
  const runs: WayRun[] = [];
  const single: Target = { label: 'one node', servers: [NATS], replicas: 1, version };
  if (!(await runTarget(single, waysOn(atomic), raws, runs))) return;
  if (values.cluster === 'on') {
    const server = resolveNatsServer();
    const refusal = clusteredLogRefusal(server.version, 3, 'BENCH_CMD');
    if (refusal) console.log(`\nNo cluster rows: ${describeNatsServer(server)}: ${refusal}`);
    else {
      console.log(`\nStarting a 3-node NATS cluster of ${describeNatsServer(server)} ...`);
      const cluster = await startNatsCluster({ bin: server.bin });
      stopAtExit.push(() => cluster.stop());
      try {
        const target: Target = { label: 'cluster R3', servers: cluster.urls, replicas: 3, version: cluster.version };
        // One batch first: it is the default there.
        if (!(await runTarget(target, waysOn(takesAtomicBatches(cluster.version)).reverse(), raws, runs))) return;
      } finally {
        stopAtExit.pop();
        await cluster.stop();
      }
    }
  }

  const cpu = (ms: number | undefined) => (ms === undefined ? 'n/a' : ms.toFixed(3));
  const rows = [...raws].flatMap(([target, raw]) => [
    [`${target.label}: raw JetStream publish+ack (R${target.replicas})`, fmt(raw.opsPerSec), raw.p50.toFixed(2), raw.p99.toFixed(2), '1.00x', '', '', ''],
    ...runs
      .filter((run) => run.target === target)
      .flatMap(({ way, register, update }) =>
        ([
          [`${target.label}: RegisterAgent (fresh agent), ${APPEND_LABEL[way]}`, register],
          [`${target.label}: UpdateAgent (existing agent), ${APPEND_LABEL[way]}`, update],
        ] as const).map(([name, phase]) => [
          name,
          fmt(phase.opsPerSec),
          phase.p50.toFixed(2),
          phase.p99.toFixed(2),
          `${(phase.opsPerSec / raw.opsPerSec).toFixed(2)}x`,
          cpu(phase.cpuMs.replicas),
          cpu(phase.cpuMs.client),
          errorsOf(phase),
        ]),
      ),
  ]);
  const header = ['', 'per s', 'p50 ms', 'p99 ms', 'vs raw', 'replica CPU ms/cmd', 'client CPU ms/cmd', 'errors'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(`\n${line(header)}\n| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |\n${rows.map(line).join('\n')}\n`);

  for (const { target, way, register, update, logOk } of runs) {
    const raw = raws.get(target)!;
    const ratio = update.opsPerSec / raw.opsPerSec;
    console.log(`${target.label}, ${APPEND_LABEL[way]}:`);
    const verdict = (met: boolean) => (met ? 'met    ' : 'NOT MET');
    console.log(`${verdict(ratio >= TARGET.ratio)}  UpdateAgent end to end >= ${TARGET.ratio}x raw JetStream publish+ack: ${ratio.toFixed(2)}x (${fmt(update.opsPerSec)} vs ${fmt(raw.opsPerSec)}/s)`);
    console.log(`${verdict(update.p99 <= TARGET.p99Ms)}  UpdateAgent p99 <= ${TARGET.p99Ms} ms: ${update.p99.toFixed(2)} ms`);
    const cpuPerCommand = update.cpuMs.replicas;
    if (cpuPerCommand !== undefined) console.log(`${verdict(cpuPerCommand <= TARGET.replicaCpuMs)}  UpdateAgent replica CPU (all replicas) <= ${TARGET.replicaCpuMs} ms per command: ${cpuPerCommand.toFixed(3)} ms`);
    if (!logOk || sum(register.errors) + sum(update.errors) > 0) process.exitCode = 1;
  }
  // Both ways on one log, side by side: which the store's default (atomic=auto) should take there.
  for (const target of raws.keys()) {
    const [one, two] = (['one', 'two'] as const).map((way) => runs.find((r) => r.target === target && r.way === way)?.update);
    if (!one || !two) continue;
    const raw = raws.get(target)!;
    const side = (p: Phase) => `${fmt(p.opsPerSec)}/s (${(p.opsPerSec / raw.opsPerSec).toFixed(2)}x raw, p50 ${p.p50.toFixed(1)} ms, p99 ${p.p99.toFixed(1)} ms, replica CPU ${p.cpuMs.replicas?.toFixed(3) ?? 'n/a'} ms)`;
    console.log(`${target.label}: UpdateAgent with one atomic batch ${side(one)} against two appends ${side(two)}; raw ${fmt(raw.opsPerSec)}/s; the store's default on a log of ${target.replicas} replica${target.replicas > 1 ? 's' : ''}: ${target.replicas > 1 ? 'one atomic batch' : 'two appends'}`);
  }
}

/** Raw publish-with-ack on `target`, then each way in turn there. False when interrupted. */
async function runTarget(target: Target, ways: readonly Appends[], raws: Map<Target, Run>, runs: WayRun[]): Promise<boolean> {
  console.log(`\n${target.label} (${target.servers.join(', ')}), log at ${target.replicas} replica${target.replicas > 1 ? 's' : ''}: ${ways.map((w) => APPEND_LABEL[w]).join(', then ')} per command`);
  process.stdout.write(`raw JetStream publish-with-ack to a stream of ${target.replicas} replica${target.replicas > 1 ? 's' : ''}, ${fmt(COUNT)} messages, ${INFLIGHT} in flight ... `);
  const raw = await rawJetStream(false, { nats: target.servers, total: COUNT, concurrency: INFLIGHT, replicas: target.replicas });
  console.log(`${fmt(raw.opsPerSec)}/s`);
  raws.set(target, raw);
  for (const way of ways) {
    const run = await runWay(target, way);
    if (!run) return false;
    runs.push({ target, way, ...run });
  }
  return true;
}

/**
 * Both phases with commands writing their reservation and events `way`: on a log stream of its own
 * on `target`, with replicas of their own (EVENT_STORE=...&atomic=on or off). Undefined when interrupted.
 */
async function runWay(target: Target, way: Appends): Promise<{ register: Phase; update: Phase; logOk: boolean } | undefined> {
  const tag = randomBytes(4).toString('hex');
  const streamName = `BENCH_CMD_${tag}`;
  const subjectPrefix = `bench.cmd.${tag}`;
  console.log(`\n${target.label}, ${APPEND_LABEL[way]} per command: log stream ${streamName}`);
  const root: KeyPair = generateKeyPair();
  const operator: KeyPair = generateKeyPair();
  const dirs: string[] = [];
  const replicas: Replica[] = [];
  // The bench opens the log first: the replicas find the stream made rather than race to make it.
  const store = await openJetStreamEventStore({ servers: target.servers, streamName, subjectPrefix, replicas: target.replicas, atomicAppends: way === 'one', logger: { warn: console.warn, info: () => undefined } });
  const client = await NatsAgoraClient.connect({ servers: target.servers, name: 'bench-commands' });
  let interrupted = false;
  const cleanUp = async () => {
    await Promise.all(replicas.map(stopReplica));
    await store.close().catch(() => undefined);
    const deleted = await jetstreamManager(client.connection)
      .then((jsm) => jsm.streams.delete(streamName))
      .catch((error: unknown) => console.error(`could not delete the log stream ${streamName}: ${String(error)}`));
    await client.close().catch(() => undefined);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    if (deleted) console.log(`cleaned up: replicas stopped, stream ${streamName} deleted`);
  };
  const onSignal = () => {
    if (interrupted) return;
    interrupted = true;
    console.error('\ninterrupted: stopping the replicas and deleting the log stream');
    void cleanUp()
      .then(() => Promise.all(stopAtExit.map((stop) => stop())))
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    process.stdout.write(`starting ${REPLICAS} registry process${REPLICAS > 1 ? 'es' : ''} (${REGISTRY_MAIN}) ... `);
    const started = await Promise.allSettled(
      // Each replica on a node of its own, as npm run cluster places them (a client learns the other nodes from the first).
      Array.from({ length: REPLICAS }, (_, i) => {
        const dir = mkdtempSync(join(tmpdir(), 'agora-bench-registry-'));
        dirs.push(dir);
        return startReplica({
          NATS_URL: target.servers[i % target.servers.length]!,
          EVENT_STORE: `jetstream?stream=${streamName}&prefix=${subjectPrefix}&atomic=${way === 'one' ? 'on' : 'off'}`,
          AGORA_DATA_DIR: dir,
          AGORA_OPERATOR_PUBLIC_KEY: root.publicKey,
          AGORA_OPERATOR_ID: 'root',
        });
      }),
    );
    for (const s of started) if (s.status === 'fulfilled') replicas.push(s.value);
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    console.log('ready');

    // Another registry on this NATS server would take a share of the requests and answer them from another log.
    const ours = new Set(replicas.map((r) => r.id));
    const foreign: string[] = [];
    for await (const msg of await client.connection.requestMany('$SRV.PING.registry', '', { strategy: 'timer', maxWait: 500 })) {
      const id = msg.json<{ id: string }>().id;
      if (!ours.has(id)) foreign.push(id);
    }
    if (foreign.length > 0) throw new Error(`other registry replicas (${foreign.join(', ')}) serve the "registry" queue group on ${target.servers.join(', ')}: stop them first`);

    // The bootstrap operator registers the operator that signs the benchmark's commands, as in a
    // real deployment; the replicas then know it from their live directory.
    const opReply = await client.request(
      RegisterAgent.subject,
      createSignedCommand({ type: 'RegisterAgent', actor: 'root', payload: { agentId: 'bench-op', publicKey: operator.publicKey, displayName: 'bench operator', roles: ['operator'] }, secretKey: root.secretKey }),
      { timeoutMs: 30_000 },
    );
    if (!opReply.ok) throw new Error(`registering the benchmark operator failed: ${JSON.stringify(opReply.error)}`);

    const agentKey = generateKeyPair().publicKey;
    const agentId = (i: number) => `b${tag}-${i}`;
    const sign = (type: string, payload: Record<string, unknown>) => createSignedCommand({ type, actor: 'bench-op', payload, secretKey: operator.secretKey });

    await sleep(PHASE_PAUSE_MS);
    process.stdout.write(`RegisterAgent x ${fmt(COUNT)} (fresh agents) ... `);
    const register = await commandPhase(client, replicas, RegisterAgent.subject, COUNT, (i) => sign('RegisterAgent', { agentId: agentId(i), publicKey: agentKey, displayName: `agent ${i}`, roles: ['executive'] }));
    console.log(`${fmt(register.opsPerSec)}/s`);

    await sleep(PHASE_PAUSE_MS);
    process.stdout.write(`UpdateAgent x ${fmt(COUNT)} (one per registered agent) ... `);
    const update = await commandPhase(client, replicas, UpdateAgent.subject, COUNT, (i) => sign('UpdateAgent', { agentId: agentId(i), displayName: `agent ${i} (updated)`, trustScore: 600 }));
    console.log(`${fmt(update.opsPerSec)}/s`);

    // Every accepted command left exactly one event.
    let registered = 0;
    let updated = 0;
    for await (const event of store.readAll()) {
      if (!event.streamId.startsWith(`agent-b${tag}-`)) continue;
      if (event.type === 'AgentRegistered') registered++;
      else if (event.type === 'AgentUpdated') updated++;
    }

    const logOk = registered === COUNT - sum(register.errors) && updated === COUNT - sum(update.errors);
    console.log(`log check (${APPEND_LABEL[way]}): ${registered} AgentRegistered, ${updated} AgentUpdated for ${COUNT} + ${COUNT} commands: ${logOk ? 'one event per accepted command' : 'MISMATCH'}`);
    return { register, update, logOk };
  } catch (error) {
    for (const r of replicas) console.error(`--- replica ${r.id}, last lines:\n${r.tail()}`);
    throw error;
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    if (!interrupted) await cleanUp();
  }
  return undefined;
}

function sum(errors: Map<string, number>): number {
  return [...errors.values()].reduce((a, b) => a + b, 0);
}
function errorsOf(phase: Phase): string {
  return phase.errors.size === 0 ? '0' : [...phase.errors].map(([code, n]) => `${code} ${n}`).join(', ');
}

await main();
