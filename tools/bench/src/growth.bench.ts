/**
 * Growth benchmark: whether a process's cost grows with the log it serves. For each log size (a
 * realistic log: every protocol but the chamber, with many aggregates, written by the services
 * themselves: protocol-log.ts) and each read-side engine (SQLite in the data directory, or a
 * PostgreSQL database of the run's own), it starts the standalone process as an operator does and
 * measures, from outside (HTTP, /health, /metrics, /proc):
 *   - the first start on an empty read-side database (AGORA_READ_DB), timed until every read model
 *     answers at the log's head (queries with `minPosition`); the reactors and the relay, whose
 *     checkpoints are in the read side too, go over the whole log again meanwhile;
 *   - the rebuild of every read model (`agora projections rebuild`, one pass over the log) beside the
 *     running process, against the raw replay of the same log (reading every event through the
 *     adapter, nothing else) in this process;
 *   - signed commands through the SDK over HTTP (new proposals and health reports, a fixed number in
 *     flight) while the log grows: commands/s, p50 and p99, failures;
 *   - the event loop's delay while commands and queries run: prom-client's monitorEventLoopDelay
 *     figures on the process's /metrics, read before and after (each scrape resets them);
 *   - a page of the proposals list and one proposal (p50, p99), one request at a time, once the
 *     read models have taken in the commands' events;
 *   - a restart on the same data directory and database: time to /health, to a first answered query
 *     and to every read model at the head;
 *   - a new query replica: another process on a copy of the log that reads the same PostgreSQL
 *     database (with SQLite, the embedded engine, a copy of the database file): time to /health and
 *     to a first answered query;
 *   - the resident memory of each of those processes, now and peak.
 * The sizes are printed side by side, with the issue's targets, marked met or not. It is a
 * measurement, not a test: it exits 0 whatever the figures, non-zero only when something fails.
 *
 * Logs are written once and kept under `.bench-cache/growth/<size>/` (gitignored; delete it to write
 * them again); every run measures a copy, so the commands it sends never change the cached log.
 *
 *   npm run bench:growth -- [--events 100000,1000000] [--engine sqlite|postgres|both]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openEmbeddedEventStore } from '@agora/eventstore';
import { generateKeyPair, type KeyPair } from '@agora/identity';
import { Agora } from '@agora/sdk';
import { freePort, freshPostgresDatabase, TEST_POSTGRES_URL } from '@agora/testing';
import { memoryOf, stopChild, type Memory } from './child.js';
import { positiveIntOption } from './options.js';
import { writeProtocolLog } from './protocol-log.js';

const HELP = `Usage: npm run bench:growth -- [options]

Writes a realistic log (every protocol but the chamber, many aggregates) of each size, starts the
standalone process on it with its read models in SQLite and in PostgreSQL, and prints, size beside
size with the targets: RSS (now, peak) of each process, the event loop's p99 delay, commands/s and
p99 while the log grows, restart time to /health and to a first query, a new query replica's time
to answer, a page of the proposals list and one proposal (p50, p99), the first start on an empty
read side, and the rebuild of every read model (agora projections rebuild, beside the running
process) against the raw replay of the same log.
  --events LIST        log sizes in events, smallest first (default 100000,1000000)
  --engine E           sqlite, postgres or both (default both)
  --postgres-url URL   the PostgreSQL server the run makes its databases on (one per size, dropped at
                       the end; default TEST_POSTGRES_URL, else ${TEST_POSTGRES_URL})
  --commands N         signed commands sent at each size (default 2000)
  --in-flight N        commands in flight at once (default 32)
  --queries N          requests of each query at each size (default 500)
  --agents N           agents reporting their health in the log, besides the protocols' cast (default 500)
  --timeout S          give up on one start after S seconds (default 900)
  --cache DIR          where written logs are kept (default .bench-cache/growth in the repository)
  --help               this text

Needs npm run build first (npm run bench:growth does it): it starts apps/standalone/dist/main.js
(BENCH_STANDALONE names another build's). Writing a log takes a while (the services write it
through their command gates; progress is printed); a later run reuses it.`;

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '100000,1000000' },
    engine: { type: 'string', default: 'both' },
    'postgres-url': { type: 'string', default: TEST_POSTGRES_URL },
    commands: { type: 'string', default: '2000' },
    'in-flight': { type: 'string', default: '32' },
    queries: { type: 'string', default: '500' },
    agents: { type: 'string', default: '500' },
    timeout: { type: 'string', default: '900' },
    cache: { type: 'string', default: join(repoRoot, '.bench-cache', 'growth') },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const positiveInt = positiveIntOption(HELP);
function usage(message: string): never {
  console.error(`${message}\n\n${HELP}`);
  process.exit(2);
}
const SIZES = values.events.split(',').map((s) => positiveInt(s.trim(), 'events'));
if (SIZES.some((size, i) => i > 0 && size <= SIZES[i - 1]!)) usage(`--events lists sizes smallest first, got ${values.events}`);
if (!['sqlite', 'postgres', 'both'].includes(values.engine)) usage(`--engine takes sqlite, postgres or both, got ${JSON.stringify(values.engine)}`);
const ENGINES = (values.engine === 'both' ? ['sqlite', 'postgres'] : [values.engine]) as Engine[];
const POSTGRES_URL = values['postgres-url'];
const COMMANDS = positiveInt(values.commands, 'commands');
const IN_FLIGHT = positiveInt(values['in-flight'], 'in-flight');
const QUERIES = positiveInt(values.queries, 'queries');
const AGENTS = positiveInt(values.agents, 'agents');
const TIMEOUT_MS = positiveInt(values.timeout, 'timeout') * 1000;
const CACHE = resolve(values.cache);
const STANDALONE = process.env['BENCH_STANDALONE'] ?? join(repoRoot, 'apps', 'standalone', 'dist', 'main.js');
const CLI = join(repoRoot, 'apps', 'cli', 'dist', 'main.js');
/** The heap limit `npm start` gives the process (package.json's start script, unless NODE_OPTIONS says otherwise): the standalone is measured as it runs there. */
const START_NODE_OPTIONS = /NODE_OPTIONS:-(--max-old-space-size=\d+)/.exec((JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['start'] ?? '')?.[1] ?? '';
if (!existsSync(STANDALONE)) usage(`${STANDALONE} is missing: npm run build first`);

type Engine = 'sqlite' | 'postgres';

// ---------------------------------------------------------------------------------------------
// The logs
// ---------------------------------------------------------------------------------------------

/** The shape of the logs this version writes: a cached log of another shape is written again. */
const LOG_SHAPE = 1;
/** Health reports per round of each lane (protocol-log.ts; 20 there by default): fewer, for more aggregates in the same events. */
const HEALTH_REPORTS = 5;

/** What a cached log's `log.json` keeps: the operator who may sign more commands on it. */
interface CachedLog {
  shape: number;
  events: number;
  commands: number;
  operator: KeyPair;
  writtenSeconds: number;
}

interface Log extends CachedLog {
  /** The embedded store's directory and the writer's data directory (its services' keys). */
  eventsDir: string;
  serviceKeysDir: string;
}

/** The cached log of `size` events, written first when missing. */
async function prepareLog(size: number): Promise<Log> {
  const dir = join(CACHE, String(size));
  const meta = join(dir, 'log.json');
  const eventsDir = join(dir, 'events');
  const serviceKeysDir = join(dir, 'data', 'service-keys');
  const cached = existsSync(meta) ? (JSON.parse(readFileSync(meta, 'utf8')) as CachedLog) : undefined;
  if (cached?.shape !== LOG_SHAPE) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    console.log(`writing a log of ${fmt(size)} events in ${dir} (every protocol but the chamber, ${fmt(AGENTS)} agents reporting health)`);
    const operator = generateKeyPair();
    const started = performance.now();
    let reported = started;
    const written = await writeProtocolLog({
      directory: eventsDir,
      dataDir: join(dir, 'data'),
      events: size,
      agents: AGENTS,
      healthReports: HEALTH_REPORTS,
      operator,
      onProgress: (events) => {
        const now = performance.now();
        if (now - reported < 5_000) return;
        reported = now;
        const perS = (events * 1000) / (now - started);
        console.log(`  ... ${fmt(events)} of ${fmt(size)} events (${fmt(perS)}/s, about ${fmt(Math.max(0, size - events) / perS)} s left)`);
      },
    });
    const kept: CachedLog = { shape: LOG_SHAPE, events: written.events, commands: written.commands, operator, writtenSeconds: (performance.now() - started) / 1000 };
    writeFileSync(meta, `${JSON.stringify(kept, null, 2)}\n`, { mode: 0o600 });
    console.log(`  ${fmt(written.events)} events from ${fmt(written.commands)} commands of the fleet, written in ${kept.writtenSeconds.toFixed(1)} s`);
  } else {
    console.log(`the log of ${fmt(size)} events kept in ${dir}`);
  }
  return { ...(JSON.parse(readFileSync(meta, 'utf8')) as CachedLog), eventsDir, serviceKeysDir };
}

interface Replay {
  events: number;
  ms: number;
  /** The log's last position: read models at it have taken in the whole log. */
  head: string;
  /** Every proposal of the log, for the queries of one proposal. */
  proposalIds: string[];
}

/** Reads the whole log through the adapter (the store opened cold, as a process opens it), nothing else. */
async function rawReplay(eventsDir: string): Promise<Replay> {
  const started = performance.now();
  const store = await openEmbeddedEventStore({ directory: eventsDir });
  let events = 0;
  let head = '';
  const proposalIds: string[] = [];
  try {
    for await (const event of store.readAll()) {
      events++;
      head = String(event.position);
      if (event.type === 'ProposalSubmitted') proposalIds.push((event.data as { proposalId: string }).proposalId);
    }
  } finally {
    await store.close();
  }
  return { events, ms: performance.now() - started, head, proposalIds };
}

// ---------------------------------------------------------------------------------------------
// The processes
// ---------------------------------------------------------------------------------------------

interface Running {
  child: ChildProcess;
  base: string;
  /** performance.now() at spawn. */
  spawned: number;
  output(): string;
}

function startStandalone(env: Record<string, string>): Promise<Running> {
  return Promise.all([freePort(), freePort()]).then(([port, metricsPort]) => {
    const spawned = performance.now();
    // BENCH_STANDALONE_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' profiles the processes.
    const nodeArgs = (process.env['BENCH_STANDALONE_NODE_ARGS'] ?? '').split(/\s+/).filter(Boolean);
    // Reads open (loopback only): the queries measure the read side, not read tokens.
    const child = spawn(process.execPath, [...nodeArgs, STANDALONE], {
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: process.env['HOME'] ?? '/tmp',
        NO_COLOR: '1',
        HOST: '127.0.0.1',
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        AGORA_LOG_LEVEL: 'warn',
        AGORA_READS: 'open',
        // A query given minPosition answers at once or says read_model_behind: the catch-up is polled.
        AGORA_READ_MODEL_WAIT_MS: '0',
        NODE_OPTIONS: process.env['NODE_OPTIONS'] ?? START_NODE_OPTIONS,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: string) => (output = (output + chunk).slice(-8000));
    child.stdout!.setEncoding('utf8').on('data', keep);
    child.stderr!.setEncoding('utf8').on('data', keep);
    return { child, base: `http://127.0.0.1:${port}`, spawned, output: () => output };
  });
}

/** Milliseconds from the process's spawn until `check` first holds (polled every 50 ms); a line every 30 s while it waits. */
async function sinceSpawn(proc: Running, what: string, check: () => Promise<boolean>): Promise<number> {
  let said = performance.now();
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`the standalone process exited with code ${proc.child.exitCode} waiting for ${what}:\n${proc.output()}`);
    if (performance.now() - proc.spawned > TIMEOUT_MS) throw new Error(`no ${what} within ${TIMEOUT_MS / 1000} s (--timeout):\n${proc.output()}`);
    if (performance.now() - said >= 30_000) {
      said = performance.now();
      console.log(`  ... waiting for ${what}: ${fmtS(said - proc.spawned)} since spawn, RSS now / peak ${fmtMb(memoryOf(proc.child.pid!))}`);
    }
    try {
      if (await check()) return performance.now() - proc.spawned;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

const answers = async (url: string) => (await fetch(url)).ok;
const healthy = (proc: Running) => sinceSpawn(proc, '/health', () => answers(`${proc.base}/health`));
const proposalAnswered = (proc: Running, proposalId: string) => sinceSpawn(proc, 'a first answered query', () => answers(`${proc.base}/v1/proposal/proposals/${encodeURIComponent(proposalId)}`));

/** The queries that say every read model of the process has taken in the log up to `head` (read your writes). */
const CAUGHT_UP = ['proposal/proposals?limit=1', 'tribunal/stats', 'registry/agents?limit=1', 'voting/sessions?limit=1', 'voting/stats', 'dialectic/sessions?limit=1', 'dialectic/stats', 'debate/debates?limit=1'];
const caughtUp = (proc: Running, head: string) =>
  sinceSpawn(proc, `every read model at position ${head}`, async () => {
    for (const query of CAUGHT_UP) if (!(await answers(`${proc.base}/v1/${query}${query.includes('?') ? '&' : '?'}minPosition=${encodeURIComponent(head)}`))) return false;
    return true;
  });

/**
 * The event loop's delay while `run` runs, as the process's /metrics says it: prom-client's
 * monitorEventLoopDelay (default 10 ms resolution), whose histogram every scrape reads and resets,
 * so a scrape before and one after give the p99 and the max of exactly that span. Nothing else
 * scrapes the process meanwhile.
 */
async function eventLoopWhile<T>(proc: Running, run: () => Promise<T>): Promise<{ result: T; p99Ms: number; maxMs: number }> {
  const scrape = async () => {
    const text = await (await fetch(`${proc.base}/metrics`)).text();
    const gauge = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) * 1000;
    return { p99Ms: gauge('nodejs_eventloop_lag_p99_seconds'), maxMs: gauge('nodejs_eventloop_lag_max_seconds') };
  };
  await scrape();
  const result = await run();
  return { result, ...(await scrape()) };
}

/**
 * Milliseconds from spawn until the reactors have gone over the log the process started on: their
 * checkpoints are in the read side, so on an empty one they go over the whole log again, each
 * reaction sent again and answered as a duplicate (`agora_commands_issued_total{outcome="duplicate"}`).
 * Done once that count has not moved for 3 s and every `agora_reactor_lag_seconds` is under 2 s.
 * Polled once a second (a scrape costs the process some CPU).
 */
async function reactorsCaughtUp(proc: Running): Promise<number> {
  let last = -1;
  let steadySince = performance.now();
  let at = 0;
  await sinceSpawn(proc, 'the reactors through the log', async () => {
    await new Promise((r) => setTimeout(r, 950));
    const text = await (await fetch(`${proc.base}/metrics`)).text();
    const duplicates = [...text.matchAll(/^agora_commands_issued_total\{[^}]*outcome="duplicate"[^}]*\} (\S+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    const lags = [...text.matchAll(/^agora_reactor_lag_seconds\{[^}]*\} (\S+)$/gm)].map((m) => Number(m[1]));
    const now = performance.now();
    if (duplicates !== last || !lags.every((lag) => lag < 2)) {
      last = duplicates;
      steadySince = now;
      at = now - proc.spawned;
    }
    return now - steadySince >= 3_000;
  });
  return at;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
const latencies = (ms: number[]) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
};

interface Commands {
  sent: number;
  failed: number;
  firstFailure?: string;
  perS: number;
  p50: number;
  p99: number;
  /** The highest position the commands' replies named. */
  head: string;
}

/** COMMANDS signed commands through the SDK over HTTP, IN_FLIGHT at once: new proposals of fresh executives and their health reports. */
async function sendCommands(proc: Running, operator: KeyPair, runId: string): Promise<Commands> {
  const root = await Agora.connect({ url: proc.base, signer: { agentId: 'root', secretKey: operator.secretKey } });
  const executives = await Promise.all(
    Array.from({ length: 8 }, async (_, i) => {
      const agentId = `growth${runId}e${i}`;
      const key = generateKeyPair();
      await root.send('RegisterAgent', { agentId, publicKey: key.publicKey, displayName: agentId, roles: ['executive'], constitutions: [], trustScore: 700 });
      return Agora.connect({ url: proc.base, signer: { agentId, secretKey: key.secretKey } });
    }),
  );
  // About the size of a real proposal (the issue's probe sent ~900-byte bodies).
  const body = 'Week 1: open bounties for the flaky suites; week 2: pair the owners; week 3: measure again. '.repeat(10);
  const ms: number[] = [];
  let failed = 0;
  let firstFailure: string | undefined;
  let head = 0n;
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    for (let i = next++; i < COMMANDS; i = next++) {
      const agora = executives[i % executives.length]!;
      const sent = performance.now();
      try {
        const reply =
          i % 2 === 0
            ? await agora.trySend('SubmitProposal', { proposalId: `g${runId}-${i}`, title: `Plan ${i}`, body, problem: 'flaky suites', evidence: [{ ref: `thread/${i}`, summary: 'context' }] })
            : await agora.trySend('ReportHealth', { agentId: agora.agentId!, health: 0.9, risk: 0.1 + (i % 7) / 100, tags: [], metrics: { tokens: 1000 + i } });
        ms.push(performance.now() - sent);
        if (!reply.ok) {
          failed++;
          firstFailure ??= `${reply.error.code}: ${reply.error.message}`;
        } else if (reply.result.position !== undefined && /^\d+$/.test(reply.result.position) && BigInt(reply.result.position) > head) head = BigInt(reply.result.position);
      } catch (error) {
        ms.push(performance.now() - sent);
        failed++;
        firstFailure ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const seconds = (performance.now() - started) / 1000;
  for (const client of [root, ...executives]) await client.close();
  return { sent: COMMANDS, failed, ...(firstFailure === undefined ? {} : { firstFailure }), perS: COMMANDS / seconds, ...latencies(ms), head: head.toString() };
}

/** QUERIES requests, one at a time, of `path(i)`: p50 and p99 as the client sees them (HTTP included). */
async function timeQueries(proc: Running, path: (i: number) => string): Promise<{ p50: number; p99: number }> {
  const ms: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const started = performance.now();
    const response = await fetch(`${proc.base}${path(i)}`);
    const text = await response.text();
    ms.push(performance.now() - started);
    if (!response.ok) throw new Error(`GET ${path(i)}: ${response.status} ${text.slice(0, 300)}`);
  }
  return latencies(ms);
}

// ---------------------------------------------------------------------------------------------
// One size on one engine
// ---------------------------------------------------------------------------------------------

interface Figures {
  events: number;
  replay: { perS: number; seconds: number };
  rebuild: { healthMs: number; caughtUpMs: number; perS: number; netPerS: number; reactorsMs: number };
  /** `agora projections rebuild` of every read model beside the running process: from its fold's start to its last switch. */
  rebuildAll: { ms: number; events: number; perS: number };
  commands: Commands;
  eventLoop: { p99Ms: number; maxMs: number; idleP99Ms: number };
  list: { p50: number; p99: number };
  one: { p50: number; p99: number };
  restart: { healthMs: number; queryMs: number; caughtUpMs: number };
  replica: { healthMs: number; queryMs: number };
  memory: { first: Memory; restarted: Memory; replica: Memory };
}

/** The read side's database of one run, and how to be rid of it. */
async function readDatabase(engine: Engine, dataDir: string): Promise<{ url: string; describe: string; drop(): Promise<void> }> {
  if (engine === 'sqlite') return { url: `sqlite:${join(dataDir, 'read-models.sqlite')}`, describe: 'SQLite in the data directory', drop: async () => undefined };
  const database = await freshPostgresDatabase('benchgrowth', POSTGRES_URL);
  return { url: database.url, describe: `PostgreSQL database ${new URL(database.url).pathname.slice(1)}`, drop: () => database.drop() };
}

/** A new replica's directory: the log as it is now and the services' keys (with SQLite, a copy of the read side's file too). */
function copyForReplica(engine: Engine, from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  cpSync(join(from, 'events'), join(to, 'events'), { recursive: true });
  cpSync(join(from, 'service-keys'), join(to, 'service-keys'), { recursive: true });
  if (engine === 'sqlite') for (const file of readdirSync(from).filter((f) => f.startsWith('read-models.sqlite'))) cpSync(join(from, file), join(to, file));
}

interface EmptyStart {
  healthMs: number;
  queryMs: number;
  memory: Memory;
}

/** The baseline of the starts: the process on an empty log and an empty read side, until it answers the proposals list. */
async function emptyStart(engine: Engine): Promise<EmptyStart> {
  const work = mkdtempSync(join(tmpdir(), 'agora-bench-growth-empty-'));
  const db = await readDatabase(engine, work);
  const operator = generateKeyPair();
  let proc: Running | undefined;
  try {
    proc = await startStandalone({ EVENT_STORE: `embedded:${join(work, 'events')}`, AGORA_DATA_DIR: work, AGORA_READ_DB: db.url, AGORA_OPERATOR_ID: 'root', AGORA_OPERATOR_PUBLIC_KEY: operator.publicKey });
    const started = proc;
    const healthMs = await healthy(started);
    const queryMs = await sinceSpawn(started, 'a first answered query', () => answers(`${started.base}/v1/proposal/proposals?limit=1`));
    const result = { healthMs, queryMs, memory: memoryOf(started.child.pid!) };
    console.log(`${engine}, an empty log (the baseline of the starts): /health after ${fmtS(healthMs)}, a first query after ${fmtS(queryMs)}, RSS ${fmtMb(result.memory)}`);
    return result;
  } finally {
    if (proc) await stopChild(proc.child, 'SIGTERM', 120_000);
    await db.drop();
    rmSync(work, { recursive: true, force: true });
  }
}

async function measure(engine: Engine, log: Log, replay: Replay, empty: EmptyStart): Promise<Figures> {
  const work = mkdtempSync(join(tmpdir(), 'agora-bench-growth-'));
  const first = join(work, 'first');
  const second = join(work, 'replica');
  mkdirSync(first);
  cpSync(log.eventsDir, join(first, 'events'), { recursive: true });
  cpSync(log.serviceKeysDir, join(first, 'service-keys'), { recursive: true });
  const db = await readDatabase(engine, first);
  const running: Running[] = [];
  const label = `${engine} ${fmt(log.events)} events`;
  const envOf = (dir: string, readDb: string) => ({
    EVENT_STORE: `embedded:${join(dir, 'events')}`,
    AGORA_DATA_DIR: dir,
    AGORA_READ_DB: readDb,
    AGORA_OPERATOR_ID: 'root',
    AGORA_OPERATOR_PUBLIC_KEY: log.operator.publicKey,
  });
  const start = async (dir: string, readDb: string) => {
    const proc = await startStandalone(envOf(dir, readDb));
    running.push(proc);
    return proc;
  };
  try {
    // The rebuild: the first start, on an empty read side.
    console.log(`${label}: first start on an empty read side (${db.describe}): the rebuild`);
    const a = await start(first, db.url);
    const rebuildHealthMs = await healthy(a);
    const rebuildMs = await caughtUp(a, replay.head);
    console.log(`  /health after ${fmtS(rebuildHealthMs)}, every read model at the log's head after ${fmtS(rebuildMs)} (${fmt((replay.events * 1000) / rebuildMs)} events/s)`);
    // The commands are measured on the process as it runs for good, not while it sends the log's reactions again.
    const reactorsMs = await reactorsCaughtUp(a);
    console.log(`  the reactors and the relay through the whole log after ${fmtS(reactorsMs)}`);

    const idle = await eventLoopWhile(a, () => new Promise((r) => setTimeout(r, 2_000)));
    // Commands while the log grows, then the queries; the event loop watched throughout.
    const runId = Math.random().toString(36).slice(2, 8);
    const { result, p99Ms, maxMs } = await eventLoopWhile(a, async () => {
      const commands = await sendCommands(a, log.operator, runId);
      console.log(`  ${fmt(commands.sent)} commands (${IN_FLIGHT} in flight): ${fmt(commands.perS)}/s, p50 ${fmtMs(commands.p50)}, p99 ${fmtMs(commands.p99)}, ${commands.failed} failed${commands.firstFailure ? ` (first: ${commands.firstFailure})` : ''}`);
      // The queries once the read models have taken in the commands' events (the services' reactions may still run).
      await caughtUp(a, commands.head || replay.head);
      const ids = replay.proposalIds;
      const list = await timeQueries(a, () => '/v1/proposal/proposals?limit=20');
      const one = await timeQueries(a, (i) => `/v1/proposal/proposals/${encodeURIComponent(ids[(i * 7919) % ids.length]!)}`);
      console.log(`  queries, one at a time: a page of 20 proposals p50 ${fmtMs(list.p50)} p99 ${fmtMs(list.p99)}; one proposal p50 ${fmtMs(one.p50)} p99 ${fmtMs(one.p99)}`);
      return { commands, list, one };
    });
    console.log(`  event loop p99 ${fmtMs(p99Ms)} (max ${fmtMs(maxMs)}) while commands and queries ran; p99 ${fmtMs(idle.p99Ms)} idle`);
    const rebuildAll = await rebuildEveryReadModel(envOf(first, db.url));
    console.log(`  agora projections rebuild (every read model, the process running): ${fmt(rebuildAll.events)} events in ${fmtS(rebuildAll.ms)} (${fmt(rebuildAll.perS)}/s)`);
    const firstMemory = memoryOf(a.child.pid!);
    await stopChild(a.child, 'SIGTERM', 120_000);

    // A new replica's copy of the log, as it is now; the restart on the same directory and database.
    copyForReplica(engine, first, second);
    console.log(`${label}: restart on the same data directory and read side`);
    const b = await start(first, db.url);
    const restartHealthMs = await healthy(b);
    const restartQueryMs = await proposalAnswered(b, replay.proposalIds[0]!);
    const restartCaughtUpMs = await caughtUp(b, result.commands.head || replay.head);
    console.log(`  /health after ${fmtS(restartHealthMs)}, a first proposal after ${fmtS(restartQueryMs)}, every read model at the head after ${fmtS(restartCaughtUpMs)}`);

    console.log(`${label}: a new query replica (${engine === 'postgres' ? 'a copy of the log, the same PostgreSQL database' : 'a copy of the log and of the SQLite file'})`);
    const replicaDb = engine === 'postgres' ? db.url : `sqlite:${join(second, 'read-models.sqlite')}`;
    const c = await start(second, replicaDb);
    const replicaHealthMs = await healthy(c);
    const replicaQueryMs = await proposalAnswered(c, replay.proposalIds[replay.proposalIds.length - 1]!);
    console.log(`  /health after ${fmtS(replicaHealthMs)}, a first proposal after ${fmtS(replicaQueryMs)}`);
    const replicaMemory = memoryOf(c.child.pid!);
    const restartedMemory = memoryOf(b.child.pid!);
    return {
      events: replay.events,
      replay: { perS: (replay.events * 1000) / replay.ms, seconds: replay.ms / 1000 },
      rebuild: { healthMs: rebuildHealthMs, caughtUpMs: rebuildMs, perS: (replay.events * 1000) / rebuildMs, netPerS: (replay.events * 1000) / Math.max(1, rebuildMs - empty.queryMs), reactorsMs },
      rebuildAll,
      commands: result.commands,
      eventLoop: { p99Ms, maxMs, idleP99Ms: idle.p99Ms },
      list: result.list,
      one: result.one,
      restart: { healthMs: restartHealthMs, queryMs: restartQueryMs, caughtUpMs: restartCaughtUpMs },
      replica: { healthMs: replicaHealthMs, queryMs: replicaQueryMs },
      memory: { first: firstMemory, restarted: restartedMemory, replica: replicaMemory },
    };
  } finally {
    for (const proc of running.reverse()) await stopChild(proc.child, 'SIGTERM', 120_000);
    await db.drop();
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * `agora projections rebuild` (every read model) as an operator runs it beside the running process,
 * on its log and read side: the time from its fold's start to its last switch, as it reports them.
 */
async function rebuildEveryReadModel(env: Record<string, string>): Promise<Figures['rebuildAll']> {
  const child = spawn(process.execPath, [CLI, 'projections', 'rebuild', '--json'], { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/tmp', NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`agora projections rebuild exited with ${code}: ${stderr}`);
  const results = stdout.trim().split('\n').map((line) => JSON.parse(line) as { events: number; foldMs: number; switchMs: number });
  const last = results.at(-1)!;
  const ms = last.foldMs + last.switchMs;
  return { ms, events: results[0]!.events, perS: (results[0]!.events * 1000) / ms };
}

// ---------------------------------------------------------------------------------------------
// The report
// ---------------------------------------------------------------------------------------------

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const fmtS = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const fmtMs = (ms: number) => `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
const fmtMb = (m: Memory) => `${Math.round(m.rssMb)} / ${Math.round(m.peakMb)} MB`;

interface Row {
  measure: string;
  cells: (f: Figures) => string;
  target?: string;
  /** Whether the target is met, given every size's figures (smallest first); undefined for a target between sizes when there is one. */
  met?: (all: Figures[]) => boolean | undefined;
}

const peakOfAll = (f: Figures) => Math.max(f.memory.first.peakMb, f.memory.restarted.peakMb, f.memory.replica.peakMb);
const largest = (all: Figures[]) => all[all.length - 1]!;
const smallest = (all: Figures[]) => all[0]!;

const ROWS: Row[] = [
  { measure: 'events in the log', cells: (f) => fmt(f.events) },
  { measure: 'RSS now / peak: first start (rebuild, commands, queries)', cells: (f) => fmtMb(f.memory.first) },
  { measure: 'RSS now / peak: restarted', cells: (f) => fmtMb(f.memory.restarted) },
  { measure: 'RSS now / peak: new replica', cells: (f) => fmtMb(f.memory.replica) },
  {
    measure: 'peak RSS, the largest of the three processes',
    cells: (f) => `${Math.round(peakOfAll(f))} MB`,
    target: '< 400 MB; largest size <= 1.2x smallest',
    met: (all) => all.every((f) => peakOfAll(f) < 400) && (all.length < 2 || peakOfAll(largest(all)) <= 1.2 * peakOfAll(smallest(all))),
  },
  { measure: 'event loop p99 / max (while commands and queries run)', cells: (f) => `${fmtMs(f.eventLoop.p99Ms)} / ${fmtMs(f.eventLoop.maxMs)}`, target: 'p99 < 50 ms', met: (all) => all.every((f) => f.eventLoop.p99Ms < 50) },
  { measure: 'event loop p99, idle (2 s after the rebuild)', cells: (f) => fmtMs(f.eventLoop.idleP99Ms) },
  {
    measure: `commands/s (${fmt(COMMANDS)} signed, SDK over HTTP, ${IN_FLIGHT} in flight)`,
    cells: (f) => fmt(f.commands.perS),
    target: 'largest size >= 0.9x smallest',
    met: (all) => (all.length < 2 ? undefined : largest(all).commands.perS >= 0.9 * smallest(all).commands.perS),
  },
  { measure: 'command latency p50 / p99', cells: (f) => `${fmtMs(f.commands.p50)} / ${fmtMs(f.commands.p99)}` },
  { measure: 'commands failed', cells: (f) => String(f.commands.failed), target: '0', met: (all) => all.every((f) => f.commands.failed === 0) },
  { measure: 'restart: /health', cells: (f) => fmtS(f.restart.healthMs) },
  { measure: 'restart: a first answered query', cells: (f) => fmtS(f.restart.queryMs), target: '< 3 s', met: (all) => all.every((f) => f.restart.queryMs < 3_000) },
  { measure: 'restart: every read model at the head', cells: (f) => fmtS(f.restart.caughtUpMs) },
  { measure: 'new replica: /health', cells: (f) => fmtS(f.replica.healthMs) },
  { measure: 'new replica: a first answered query', cells: (f) => fmtS(f.replica.queryMs), target: '< 5 s', met: (all) => all.every((f) => f.replica.queryMs < 5_000) },
  { measure: 'a page of the proposals list (20) p50 / p99', cells: (f) => `${fmtMs(f.list.p50)} / ${fmtMs(f.list.p99)}`, target: 'p99 < 20 ms', met: (all) => all.every((f) => f.list.p99 < 20) },
  { measure: 'one proposal p50 / p99', cells: (f) => `${fmtMs(f.one.p50)} / ${fmtMs(f.one.p99)}`, target: 'p99 < 20 ms', met: (all) => all.every((f) => f.one.p99 < 20) },
  { measure: 'raw replay of the log (readAll, nothing else)', cells: (f) => `${fmt(f.replay.perS)} events/s` },
  { measure: 'rebuild: agora projections rebuild, every read model (one pass), beside the running process', cells: (f) => `${fmtS(f.rebuildAll.ms)}, ${fmt(f.rebuildAll.perS)} events/s` },
  { measure: 'rebuild / raw replay', cells: (f) => `${(f.rebuildAll.perS / f.replay.perS).toFixed(2)}x`, target: '>= 0.3x', met: (all) => all.every((f) => f.rebuildAll.perS >= 0.3 * f.replay.perS) },
  // The first start on an empty read side does more than fold the read models: the reactors and the relay keep their checkpoints there too, so they go over the whole log again (each reaction sent again, answered as a duplicate).
  { measure: 'first start on an empty read side: every read model at the head', cells: (f) => `${fmtS(f.rebuild.caughtUpMs)}, ${fmt(f.rebuild.perS)} events/s` },
  { measure: 'first start, less the start on an empty log / raw replay', cells: (f) => `${fmt(f.rebuild.netPerS)} events/s, ${(f.rebuild.netPerS / f.replay.perS).toFixed(2)}x` },
  { measure: 'first start: the reactors and the relay through the whole log', cells: (f) => fmtS(f.rebuild.reactorsMs) },
];

function report(engine: Engine, all: Figures[], empty: EmptyStart): { met: number; targets: number; missed: string[] } {
  const header = ['measure', ...all.map((f) => `${fmt(f.events)} events`), 'target', 'met'];
  const rows = ROWS.map((r) => {
    const met = r.met?.(all);
    return [r.measure, ...all.map(r.cells), r.target ?? '', r.met === undefined ? '' : met === undefined ? 'n/a (one size)' : met ? 'met' : 'NOT met'];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(`\ngrowth, ${engine === 'sqlite' ? 'SQLite (embedded)' : `PostgreSQL (${new URL(POSTGRES_URL).host})`} read side, standalone process, embedded event store`);
  console.log(`an empty log (the baseline of the starts): /health after ${fmtS(empty.healthMs)}, a first query after ${fmtS(empty.queryMs)}, RSS now / peak ${fmtMb(empty.memory)}`);
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(r));
  const judged = ROWS.filter((r) => r.met?.(all) !== undefined);
  const missed = judged.filter((r) => r.met!(all) === false).map((r) => `${engine}: ${r.measure} (${r.target})`);
  return { met: judged.length - missed.length, targets: judged.length, missed };
}

const started = Date.now();
const loadAtStart = loadavg();
const logs: { log: Log; replay: Replay }[] = [];
for (const size of SIZES) {
  const log = await prepareLog(size);
  // The faster of two (the first may find the file out of the page cache, as the rebuild may not).
  const [one, two] = [await rawReplay(log.eventsDir), await rawReplay(log.eventsDir)];
  const replay = two!.ms < one!.ms ? two! : one!;
  console.log(`  raw replay: ${fmt(replay.events)} events in ${fmtS(replay.ms)} (${fmt((replay.events * 1000) / replay.ms)}/s, the faster of two), ${fmt(replay.proposalIds.length)} proposals`);
  logs.push({ log, replay });
}
const figures = new Map<Engine, Figures[]>();
const empties = new Map<Engine, EmptyStart>();
for (const engine of ENGINES) {
  const empty = await emptyStart(engine);
  empties.set(engine, empty);
  for (const { log, replay } of logs) {
    const f = await measure(engine, log, replay, empty);
    figures.set(engine, [...(figures.get(engine) ?? []), f]);
  }
}
console.log(`\nbench:growth (${new Date().toISOString()}, ${availableParallelism()} cores, node ${process.version}, load average ${loadAtStart.map((l) => l.toFixed(1)).join(' ')} at the start, ${loadavg().map((l) => l.toFixed(1)).join(' ')} at the end; ${((Date.now() - started) / 1000).toFixed(0)} s)`);
console.log('RSS of the standalone process (the PostgreSQL server is not counted); times are wall time from spawn; queries and commands as the HTTP client sees them.');
let met = 0;
let targets = 0;
const missed: string[] = [];
for (const [engine, all] of figures) {
  const result = report(engine, all, empties.get(engine)!);
  met += result.met;
  targets += result.targets;
  missed.push(...result.missed);
}
console.log(`\ntargets met: ${met} of ${targets}${missed.length > 0 ? `; not met:\n${missed.map((m) => `  - ${m}`).join('\n')}` : ''}`);
