/**
 * Start-up benchmark: how long the standalone process takes to answer `/health` and an agent
 * query on logs of 10k, 100k and 1M events, and how much memory it holds, on the embedded and
 * JetStream stores. Each size is started twice in the same run:
 *   - "rebuild": no saved state (no snapshots, no checkpoints): every read model, consumer and
 *     scheduler folds the whole log. This is the baseline.
 *   - "restart": the same process started again on the state the first run saved at its stop.
 * Flat means the restart figures do not grow with the log. Beside the rebuild, the same run reads
 * the same log through the adapter and nothing else (raw replay): the rebuild's events/s against it.
 *
 * The logs (realistic agent streams: registrations, then updates; one event per commit, as
 * commands write them) are generated once through the store adapter in large concurrent batches
 * and cached under `.bench-cache/startup/` (gitignored); delete it to regenerate.
 *
 *   npm run bench:startup -- [--sizes 10000,100000,1000000] [--stores embedded,jetstream] [--quick]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { eventByType, SCHEMA_VERSION_FIELD } from '@agora/contracts';
import { openEmbeddedEventStore, openJetStreamEventStore, type EventStore } from '@agora/eventstore';
import { generateKeyPair } from '@agora/identity';
import { describeNatsServer, freePort, resolveNatsServer } from '@agora/testing';
import { memoryOf, stopChild } from './child.js';
import { positiveIntOption } from './options.js';

const HELP = `Usage: npm run bench:startup -- [options]

Starts the standalone process on cached logs of each size and store, first with no saved state
(the full rebuild, the baseline) then again on the state it saved, and prints the time to a
healthy /health and an answered agent query, and the resident memory (now and peak).
  --sizes LIST      event counts (default 10000,100000,1000000)
  --stores LIST     embedded, jetstream or both (default embedded,jetstream)
  --quick           small sizes for a smoke run: 2000,20000 (overrides --sizes)
  --agents N        agents in each log at most (default 10000; a tenth of the events when fewer)
  --timeout S       give up on one start after S seconds (default 600)
  --cache DIR       where generated logs are kept (default .bench-cache/startup in the repository)
  --help            this text

Needs npm run build first (npm run bench:startup does it) and, for jetstream, a nats-server
(NATS_SERVER_BIN, else the one \`npm run nats-server\` fetched, else nats-server on the PATH).`;

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000,1000000' },
    stores: { type: 'string', default: 'embedded,jetstream' },
    quick: { type: 'boolean', default: false },
    agents: { type: 'string', default: '10000' },
    timeout: { type: 'string', default: '600' },
    cache: { type: 'string', default: join(repoRoot, '.bench-cache', 'startup') },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const positiveInt = positiveIntOption(HELP);
const SIZES = (values.quick ? '2000,20000' : values.sizes).split(',').map((s) => positiveInt(s.trim(), 'sizes'));
const STORES = values.stores.split(',').map((s) => s.trim());
for (const s of STORES) if (s !== 'embedded' && s !== 'jetstream') usage(`--stores takes embedded and/or jetstream, got ${JSON.stringify(s)}`);
const MAX_AGENTS = positiveInt(values.agents, 'agents');
const TIMEOUT_MS = positiveInt(values.timeout, 'timeout') * 1000;
const CACHE = resolve(values.cache);
const NATS_SERVER = resolveNatsServer();
const NATS_SERVER_BIN = NATS_SERVER.bin;
// BENCH_STANDALONE=<path of main.js> starts another build's standalone process (a baseline build) on the same logs.
const STANDALONE = process.env['BENCH_STANDALONE'] ?? join(repoRoot, 'apps', 'standalone', 'dist', 'main.js');

function usage(message: string): never {
  console.error(`${message}\n\n${HELP}`);
  process.exit(2);
}

/** A private nats-server with JetStream storing under `storeDir` (kept between runs). */
async function startNats(storeDir: string): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  mkdirSync(storeDir, { recursive: true });
  const child = spawn(NATS_SERVER_BIN, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`nats-server not ready in 60 s:\n${log}`)), 60_000);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      log += chunk;
      if (log.includes('Server is ready')) {
        clearTimeout(timer);
        ready();
      }
    });
    child.once('error', (error) => fail(new Error(`cannot start ${NATS_SERVER_BIN} (set NATS_SERVER_BIN): ${error.message}`)));
    child.once('exit', (code) => fail(new Error(`nats-server exited with code ${code}:\n${log}`)));
  });
  return { url: `nats://127.0.0.1:${port}`, stop: () => stopChild(child, 'SIGTERM', 30_000) };
}

/**
 * Writes `size` events: `agents` registrations, then updates of those agents round-robin, one
 * event per commit, 4,096 appends in flight (the embedded store shares one fdatasync among them).
 */
async function generate(store: EventStore, size: number): Promise<void> {
  const agents = Math.max(1, Math.min(MAX_AGENTS, Math.floor(size / 10)));
  const now = new Date('2026-01-01T00:00:00.000Z').getTime();
  const revisions = new Array<number>(agents).fill(-1);
  const started = Date.now();
  const inFlight = 4096;
  let next = 0;
  let lastReport = started;
  const one = async (n: number): Promise<void> => {
    const a = n % agents;
    const agentId = `agent${String(a).padStart(6, '0')}`;
    const at = new Date(now + n * 1000).toISOString();
    const type = n < agents ? 'AgentRegistered' : 'AgentUpdated';
    // The metadata fields commands write (toEventData), with the type's schema version: read as written, not upcast.
    const metadata = { actor: n < agents ? 'root' : agentId, commandId: randomUUID(), commandType: n < agents ? 'RegisterAgent' : 'UpdateAgent', issuedAt: at, correlationId: randomUUID(), [SCHEMA_VERSION_FIELD]: eventByType(type)!.version };
    const event =
      n < agents
        ? { type, data: { agentId, publicKey: generateKeyPair().publicKey, displayName: `Agent ${a}`, roles: ['worker'], constitutions: ['default'], specializations: ['general'], trustScore: 0.5, health: 1, risk: 0, registeredAt: at }, metadata }
        : { type, data: { agentId, displayName: `Agent ${a} v${Math.floor(n / agents)}`, specializations: ['general', `topic-${n % 97}`] }, metadata };
    // Appends of one agent run one after another (waves hold distinct agents when agents >= inFlight; else 'any').
    const expected = agents >= inFlight ? (revisions[a] === -1 ? 'no_stream' : revisions[a]!) : 'any';
    const result = await store.append(`agent-${agentId}`, [{ id: randomUUID(), ...event }], expected);
    revisions[a] = result.nextExpectedRevision;
  };
  while (next < size) {
    const wave: Promise<void>[] = [];
    for (let i = 0; i < inFlight && next < size; i++) wave.push(one(next++));
    await Promise.all(wave);
    if (Date.now() - lastReport > 5_000) {
      lastReport = Date.now();
      process.stdout.write(`  ... ${next.toLocaleString('en-US')} of ${size.toLocaleString('en-US')} events (${Math.round(next / ((Date.now() - started) / 1000)).toLocaleString('en-US')}/s)\n`);
    }
  }
}

interface Log {
  /** EVENT_STORE for the standalone process. */
  eventStore: string;
  env: Record<string, string>;
  /** The same log through the adapter, in this process (for the raw replay). */
  open(): Promise<EventStore>;
  close(): Promise<void>;
}

/** Events per second of reading the whole log through the adapter, nothing else (a store opened cold). */
async function rawReplay(log: Log): Promise<number> {
  const started = performance.now();
  const store = await log.open();
  let events = 0;
  try {
    for await (const _ of store.readAll()) events++;
  } finally {
    await store.close();
  }
  return (events * 1000) / (performance.now() - started);
}

/** The cached log of `size` events on `kind`, generated first if missing. */
async function prepareLog(kind: string, size: number): Promise<Log> {
  // v2: events carry the metadata commands write (schemaVersion among it); logs cached before are generated again.
  const dir = join(CACHE, `${kind}-${size}-v2`);
  const done = join(dir, 'complete');
  if (kind === 'embedded') {
    const events = join(dir, 'events');
    if (!existsSync(done)) {
      rmSync(dir, { recursive: true, force: true });
      console.log(`generating ${size.toLocaleString('en-US')} events (embedded) in ${dir}`);
      const started = Date.now();
      const store = await openEmbeddedEventStore({ directory: events });
      await generate(store, size);
      await store.close();
      writeFileSync(done, `${size}\n`);
      console.log(`  generated in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
    return { eventStore: `embedded:${events}`, env: {}, open: () => openEmbeddedEventStore({ directory: events }), close: async () => undefined };
  }
  const nats = await startNats(join(dir, 'nats'));
  try {
    if (!existsSync(done)) {
      console.log(`generating ${size.toLocaleString('en-US')} events (jetstream, ${describeNatsServer(NATS_SERVER)}) in ${dir}`);
      const started = Date.now();
      const store = await openJetStreamEventStore({ servers: nats.url });
      await generate(store, size);
      await store.close();
      writeFileSync(done, `${size}\n`);
      console.log(`  generated in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
  } catch (error) {
    await nats.stop();
    throw error;
  }
  return { eventStore: `jetstream://${nats.url.slice('nats://'.length)}`, env: { NATS_URL: nats.url }, open: () => openJetStreamEventStore({ servers: nats.url }), close: () => nats.stop() };
}

interface StartResult {
  healthyMs: number;
  /** CPU time (user + system) the process had used when /health first answered. */
  cpuMs: number;
  queryMs: number;
  rssMb: number;
  peakMb: number;
}

/** CPU time (user + system, ms) process `pid` has used so far (/proc/<pid>/stat, in clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Starts the standalone process on `log` with `dataDir`, waits for /health and an agent query, samples memory, stops it (it saves its state). */
async function startOnce(log: Log, dataDir: string, agentId: string): Promise<StartResult> {
  const port = await freePort();
  const metricsPort = await freePort();
  const started = Date.now();
  // BENCH_STANDALONE_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' profiles the standalone process.
  const nodeArgs = (process.env['BENCH_STANDALONE_NODE_ARGS'] ?? '').split(/\s+/).filter(Boolean);
  // Reads open (loopback only): the agent query measures the read model, not read tokens (the processes close reads by default).
  const child = spawn(process.execPath, [...nodeArgs, STANDALONE], {
    env: { ...process.env, ...log.env, EVENT_STORE: log.eventStore, AGORA_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', METRICS_PORT: String(metricsPort), AGORA_LOG_LEVEL: 'warn', AGORA_READS: 'open' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  try {
    const base = `http://127.0.0.1:${port}`;
    const healthyMs = await pollUntil(started, async () => (await fetch(`${base}/health`)).ok, child, () => stderr);
    const cpuMs = cpuMsOf(child.pid!);
    const queryMs = await pollUntil(started, async () => (await fetch(`${base}/v1/registry/agents/${agentId}`)).ok, child, () => stderr);
    const { rssMb, peakMb } = memoryOf(child.pid!);
    return { healthyMs, cpuMs, queryMs, rssMb, peakMb };
  } finally {
    await stopChild(child, 'SIGTERM', 120_000);
  }
}

async function pollUntil(started: number, check: () => Promise<boolean>, child: ChildProcess, stderr: () => string): Promise<number> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the standalone process exited with code ${child.exitCode}:\n${stderr()}`);
    if (Date.now() - started > TIMEOUT_MS) throw new Error(`not answering within ${TIMEOUT_MS / 1000} s:\n${stderr()}`);
    try {
      if (await check()) return Date.now() - started;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

const fmtS = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const fmtMb = (mb: number) => `${Math.round(mb)} MB`;
const fmtRate = (perS: number) => `${Math.round(perS).toLocaleString('en-US')}/s`;

const rows: string[][] = [];
for (const kind of STORES) {
  for (const size of SIZES) {
    const log = await prepareLog(kind, size);
    const dataDir = mkdtempSync(join(tmpdir(), 'agora-bench-startup-'));
    try {
      const agentId = `agent${String(0).padStart(6, '0')}`;
      console.log(`${kind} ${size.toLocaleString('en-US')} events: starting with no saved state (rebuild)`);
      const rebuild = await startOnce(log, dataDir, agentId);
      console.log(`${kind} ${size.toLocaleString('en-US')} events: starting again on the saved state (restart)`);
      const restart = await startOnce(log, dataDir, agentId);
      const replay = await rawReplay(log);
      console.log(`${kind} ${size.toLocaleString('en-US')} events: raw replay (readAll, nothing else) ${fmtRate(replay)}`);
      for (const [mode, r] of [['rebuild (baseline)', rebuild], ['restart', restart]] as const) {
        const rates = mode === 'restart' ? ['', ''] : [fmtRate((size * 1000) / r.healthyMs), fmtRate(replay)];
        rows.push([kind, size.toLocaleString('en-US'), mode, fmtS(r.healthyMs), fmtS(r.cpuMs), fmtS(r.queryMs), ...rates, fmtMb(r.rssMb), fmtMb(r.peakMb)]);
        console.log(`  ${mode}: /health after ${fmtS(r.healthyMs)} (CPU ${fmtS(r.cpuMs)}), agent query after ${fmtS(r.queryMs)}, RSS ${fmtMb(r.rssMb)} (peak ${fmtMb(r.peakMb)})`);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      await log.close();
    }
  }
}

// Rebuild events/s: the log's events over the time from spawn to /health (process start included);
// raw replay: the same log read through the adapter in this process, in the same run.
const header = ['store', 'events', 'start', '/health', 'CPU to /health', 'agent query', 'rebuild events/s', 'raw replay events/s', 'RSS', 'peak RSS'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
console.log(`\nstandalone start-up (${new Date().toISOString()}, this machine; figures are wall time from spawn)`);
console.log(line(header));
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const r of rows) console.log(line(r));
