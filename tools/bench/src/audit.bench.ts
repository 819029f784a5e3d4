/**
 * Audit benchmark: events/s that `agora audit` verifies (envelope, Ed25519 signature under the key
 * the signer had then, authorization, per-stream chain, log checkpoints, every command decided
 * again), beside the raw replay rate of the same log (reading every event, nothing else): for each,
 * seconds, events/s, CPU seconds of the process (all threads), events per CPU second and CPU
 * milliseconds per event, the speed-up over the audit with no worker thread (events/s of the same
 * run), and the peak resident set and heap while it runs; then, for each audit, the time per event
 * of each stage (read, parse, signatures, decisions, hashing, handing batches to workers) on the
 * thread that ran it, beside the raw log file read and parsed in the same run.
 *
 *   npm run bench:audit -- [--events 50000] [--agents 500] [--workers 0,1,2]
 *
 * The log is written first, into an embedded store in a temporary directory, by the services
 * themselves (protocol-log.ts): every protocol but the chamber played by a signed fleet through the
 * command gates, with the services' own commands and the projections' signed checkpoints.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { auditLog, noStageTimes, STAGES, type StageTimes } from '@agora/cli';
import { decodeRecords, openEmbeddedEventStore, type EventStore } from '@agora/eventstore';
import { writeProtocolLog, type ProtocolLog } from './protocol-log.js';

const HELP = `Usage: npm run bench:audit -- [--events N] [--agents N] [--workers list] [--repeat N] [--keep DIR]

  --events N      events in the log at least (default 50000)
  --agents N      agents reporting their health, besides the protocols' cast (default 500)
  --workers list  worker-thread counts to measure the audit with (default 0 and ${Math.max(1, Math.min(4, availableParallelism() - 1))})
  --repeat N      audit N times with each worker count, alternately, and show each count's fastest run (default 1):
                  on a machine others load, the run they disturbed least
  --keep DIR      write the log into DIR and keep it; a later run with the same DIR audits that log again
                  (--events and --agents are then ignored)
  -h, --help      this help`;

const { values } = parseArgs({ options: { events: { type: 'string' }, agents: { type: 'string' }, workers: { type: 'string' }, repeat: { type: 'string' }, keep: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const EVENTS = Number(values.events ?? 50_000);
const AGENTS = Number(values.agents ?? 500);
const WORKERS = (values.workers ?? `0,${Math.max(1, Math.min(4, availableParallelism() - 1))}`).split(',').map(Number);
const REPEAT = Number(values.repeat ?? 1);
if (!Number.isSafeInteger(EVENTS) || !Number.isSafeInteger(AGENTS) || !Number.isSafeInteger(REPEAT) || EVENTS <= 0 || AGENTS <= 0 || REPEAT <= 0 || WORKERS.some((w) => !Number.isSafeInteger(w) || w < 0)) {
  console.error(`bench:audit: bad arguments\n\n${HELP}`);
  process.exit(2);
}

/** CPU milliseconds this process (every thread) has used: on a machine others load too, the steadier figure. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Peak resident set and heap (this thread's) while `run` runs, sampled every 50 ms and at its end. */
async function peakMemory<T>(run: () => Promise<T>): Promise<{ result: T; rssMb: number; heapMb: number }> {
  let rss = 0;
  let heap = 0;
  const sample = () => {
    const usage = process.memoryUsage();
    rss = Math.max(rss, usage.rss);
    heap = Math.max(heap, usage.heapUsed);
  };
  const timer = setInterval(sample, 50);
  try {
    const result = await run();
    sample();
    return { result, rssMb: rss / 2 ** 20, heapMb: heap / 2 ** 20 };
  } finally {
    clearInterval(timer);
  }
}

interface Row {
  what: string;
  events: number;
  ms: number;
  cpu: number;
  rssMb: number;
  heapMb: number;
  stages?: StageTimes;
}

/** The log file itself, outside the store: CPU milliseconds to read its bytes, then to check and parse its records (decodeRecords). */
function rawFile(file: string): { readMs: number; parseMs: number } {
  const started = cpuMs();
  const bytes = readFileSync(file);
  const read = cpuMs();
  decodeRecords(bytes);
  return { readMs: read - started, parseMs: cpuMs() - read };
}

async function replay(store: EventStore): Promise<Row> {
  const started = performance.now();
  const cpu = cpuMs();
  const { result: events, rssMb, heapMb } = await peakMemory(async () => {
    let n = 0;
    for await (const _ of store.readAll()) n++;
    return n;
  });
  return { what: 'raw replay (readAll, nothing checked)', events, ms: performance.now() - started, cpu: cpuMs() - cpu, rssMb, heapMb };
}

if (values.keep) mkdirSync(values.keep, { recursive: true });
const dir = values.keep ?? mkdtempSync(join(tmpdir(), 'agora-bench-audit-'));
const written = join(dir, 'log.json');
try {
  let log: ProtocolLog;
  if (values.keep && existsSync(written)) {
    log = JSON.parse(readFileSync(written, 'utf8')) as ProtocolLog;
    console.log(`bench:audit: the log kept in ${dir}: ${log.events} events from ${log.commands} commands of the fleet\n`);
  } else {
    console.log(`bench:audit: writing a log of ${EVENTS} events (every protocol but the chamber, ${AGENTS} agents reporting health) ...`);
    const writeStarted = performance.now();
    let shown = 0;
    log = await writeProtocolLog({
      directory: join(dir, 'events'),
      dataDir: dir,
      events: EVENTS,
      agents: AGENTS,
      onProgress: (events) => {
        if (events - shown >= EVENTS / 10) console.log(`  ${(shown = events)} events`);
      },
    });
    console.log(`  ${log.events} events from ${log.commands} commands of the fleet, written in ${((performance.now() - writeStarted) / 1000).toFixed(1)} s\n`);
    if (values.keep) writeFileSync(written, JSON.stringify(log));
  }

  // Reopened as the audit finds it: the store reads its file at open, then serves from memory.
  const store = await openEmbeddedEventStore({ directory: join(dir, 'events') });
  const raw = rawFile(join(dir, 'events', 'events.log'));
  const rows: Row[] = [await replay(store)];
  const fastest = new Map<number, Row>();
  for (let round = 0; round < REPEAT; round++) {
    for (const workers of WORKERS) {
      const cpu = cpuMs();
      const stages = noStageTimes();
      const { result: report, rssMb, heapMb } = await peakMemory(() => auditLog(store, { trusted: [{ ...log.operator, roles: ['operator'] }], serviceKeys: log.serviceKeys, workers, stages }));
      if (report.findings.length > 0) throw new Error(`the benchmark log has findings: ${JSON.stringify(report.findings.slice(0, 3))}`);
      if (round === 0 && workers === WORKERS[0]) console.log(`protocols: ${Object.entries(report.protocols).map(([name, p]) => `${name} ${p.commands} commands, ${p.events} events`).join('; ')}\n`);
      const row = { what: `agora audit, ${workers} worker thread${workers === 1 ? '' : 's'} for signatures`, events: report.events, ms: report.elapsedMs, cpu: cpuMs() - cpu, rssMb, heapMb, stages };
      if (!fastest.has(workers) || fastest.get(workers)!.ms > row.ms) fastest.set(workers, row);
    }
  }
  rows.push(...WORKERS.map((workers) => fastest.get(workers)!));
  await store.close();
  const perS = (events: number, ms: number) => `${Math.round((events * 1000) / ms)}`;
  console.log(`machine: ${availableParallelism()} cores, node ${process.version}`);
  console.log(`load average: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  // The speed-up of each worker count: its events/s over those of the audit with no worker, measured in this run.
  const alone = rows.find((r, i) => i > 0 && WORKERS[i - 1] === 0);
  const speedUp = (r: Row, i: number) => (i === 0 || !alone ? '-' : `${((r.events / r.ms) / (alone.events / alone.ms)).toFixed(2)}x`);
  console.log('| what | events | seconds | events/s | CPU seconds (all threads) | events per CPU second | CPU ms per event | speed-up over no worker | peak RSS MB | peak heap MB (main thread) |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  rows.forEach((r, i) => console.log(`| ${r.what} | ${r.events} | ${(r.ms / 1000).toFixed(1)} | ${perS(r.events, r.ms)} | ${(r.cpu / 1000).toFixed(1)} | ${perS(r.events, r.cpu)} | ${(r.cpu / r.events).toFixed(3)} | ${speedUp(r, i)} | ${Math.round(r.rssMb)} | ${Math.round(r.heapMb)} |`));

  // The process's CPU of each audit shared out between the stages in proportion to their time on
  // the thread that ran them (stages.ts); "other" is the rest of the main thread's time but its
  // wait for the workers' last answers (its bookkeeping: envelopes, signers, chain links).
  const events = rows[0]!.events;
  const perEvent = (ms: number) => (ms / events).toFixed(3);
  console.log(`\nthe log file alone (${events} events), CPU ms an event: read ${perEvent(raw.readMs)}, records checked and parsed ${perEvent(raw.parseMs)}`);
  console.log(`\n| CPU ms per event, by stage | ${STAGES.join(' | ')} | other | in all | main thread | worker threads | bound with a core per thread: events/s, speed-up |`);
  console.log(`| --- | ${STAGES.map(() => '---:').join(' | ')} | ---: | ---: | ---: | ---: | ---: |`);
  const alone0 = fastest.get(0);
  rows.forEach((r, i) => {
    if (!r.stages) return;
    const times = r.stages;
    const staged = STAGES.reduce((sum, stage) => sum + times[stage], 0);
    const other = Math.max(0, r.ms - (staged - times.onWorkers) - times.waiting);
    const cpuPerMs = r.cpu / (staged + other);
    const share = (ms: number) => perEvent(ms * cpuPerMs);
    // With a core for each thread, the busier of the main thread and the workers (their work shared out) sets the pace.
    const workers = WORKERS[i - 1]!;
    const mainMs = (staged - times.onWorkers + other) * cpuPerMs;
    const boundMs = Math.max(mainMs, workers === 0 ? 0 : (times.onWorkers * cpuPerMs) / workers);
    const bound = alone0 ? `${perS(events, boundMs)}, ${(alone0.cpu / boundMs).toFixed(2)}x` : perS(events, boundMs);
    console.log(`| ${r.what} | ${STAGES.map((stage) => share(times[stage])).join(' | ')} | ${share(other)} | ${perEvent(r.cpu)} | ${perEvent(mainMs)} | ${share(times.onWorkers)} | ${bound} |`);
  });
} finally {
  if (!values.keep) rmSync(dir, { recursive: true, force: true });
}
