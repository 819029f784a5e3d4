/**
 * Event store benchmark: appends/s and latency (1 event per commit, 64 in flight) and replay
 * reads/s over 100k events, for the embedded and jetstream adapters, beside raw JetStream
 * publish-with-ack measured in the same run with the same concurrency; and what a command writes
 * (its id reservation and its event) as two appends and, where the store has appendMany, as one.
 *
 *   npm run bench:store -- [--appends 20000] [--replay 100000] [--concurrency 64] [--nats nats://127.0.0.1:4222]
 *
 * `measure` and `rawJetStream` are exported for the other benchmarks (commands.bench.ts), so that
 * every "vs raw" figure is measured the same way.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { openEmbeddedEventStore, openJetStreamEventStore, type AppendResult, type EventStore, type ExpectedRevision } from '@agora/eventstore';
import { positiveIntOption } from './options.js';

const HELP = `Usage: npm run bench:store -- [options]

Measures the event store adapters on this machine and prints a table.
  --appends N       appends per throughput run (default 20000)
  --replay N        events to replay (default 100000)
  --concurrency N   appends in flight (default 64)
  --nats URL        NATS server with JetStream (default $NATS_URL or nats://127.0.0.1:4222)
  --help            this text`;

/** True when this file is the program (not imported by another benchmark for its helpers). */
const isMain = process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);

const { values } = parseArgs({
  args: isMain ? process.argv.slice(2) : [],
  options: {
    appends: { type: 'string', default: '20000' },
    replay: { type: 'string', default: '100000' },
    concurrency: { type: 'string', default: '64' },
    nats: { type: 'string', default: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' },
    help: { type: 'boolean', default: false },
  },
});
if (isMain && values.help) {
  console.log(HELP);
  process.exit(0);
}
const positiveInt = positiveIntOption(HELP);
const APPENDS = positiveInt(values.appends, 'appends');
const REPLAY = positiveInt(values.replay, 'replay');
const CONCURRENCY = positiveInt(values.concurrency, 'concurrency');
const NATS = values.nats;


/** A realistic small event: what a command handler appends. */
function payload(i: number) {
  return { proposalId: randomUUID(), reviewer: `agent-${i % 50}`, verdict: i % 3 === 0 ? 'object' : 'approve', reasoning: 'x'.repeat(120) };
}

export interface Run {
  opsPerSec: number;
  p50: number;
  p99: number;
}

export function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Runs `total` operations with `concurrency` in flight; `op(worker, n)` does one. */
export async function measure(total: number, concurrency: number, op: (worker: number, n: number) => Promise<void>): Promise<Run> {
  const latencies = new Float64Array(total);
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      let n = 0;
      for (let i = next++; i < total; i = next++) {
        const t0 = performance.now();
        await op(worker, n++);
        latencies[i] = performance.now() - t0;
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  latencies.sort();
  return { opsPerSec: total / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

/** Appends with each in-flight worker owning one stream, at its expected revision, as command handlers do. */
function appendRun(store: EventStore, total: number, tag: string): Promise<Run> {
  const revisions = new Map<number, number>();
  return measure(total, CONCURRENCY, async (worker, n) => {
    const expected: ExpectedRevision = revisions.get(worker) ?? 'no_stream';
    const r = await store.append(`bench${tag}-${worker}`, [{ type: 'ReviewSubmitted', data: payload(n) }], expected);
    revisions.set(worker, r.nextExpectedRevision);
  });
}

/**
 * What a command writes: its id reservation (a new stream, `no_stream`) and its event (each in-flight
 * worker owning one stream, at its expected revision), as two appends or, with `atomic`, one appendMany.
 * Figures are commands per second.
 */
function commandRun(store: EventStore, total: number, tag: string, atomic: boolean): Promise<Run> {
  const revisions = new Map<number, number>();
  let reservations = 0;
  return measure(total, CONCURRENCY, async (worker, n) => {
    const reservation = { streamId: `benchres${tag}-${reservations++}`, events: [{ type: 'CommandIdReserved', data: { n } }], expectedRevision: 'no_stream' as const };
    const commit = { streamId: `benchcmd${tag}-${worker}`, events: [{ type: 'ReviewSubmitted', data: payload(n) }], expectedRevision: revisions.get(worker) ?? ('no_stream' as const) };
    let result: AppendResult;
    if (atomic) result = (await store.appendMany!([reservation, commit]))[1]!;
    else {
      await store.append(reservation.streamId, reservation.events, reservation.expectedRevision);
      result = await store.append(commit.streamId, commit.events, commit.expectedRevision);
    }
    revisions.set(worker, result.nextExpectedRevision);
  });
}

/** Rows for a command's two writes as two appends and, where the store has appendMany, as one. */
async function commandRows(name: string, store: EventStore, tag: string, raw: Run): Promise<string[][]> {
  const rows: string[][] = [];
  for (const atomic of store.appendMany ? [false, true] : [false]) {
    const way = atomic ? 'one atomic append' : 'two appends';
    process.stdout.write(`${name}, reservation + event as ${way} ... `);
    const run = await commandRun(store, APPENDS, `${tag}${atomic ? 'a' : 't'}`, atomic);
    console.log(`${fmt(run.opsPerSec)} commands/s`);
    rows.push([`  ${name}, reservation + event, ${way}`, fmt(run.opsPerSec), run.p50.toFixed(2), run.p99.toFixed(2), '', `${(run.opsPerSec / raw.opsPerSec).toFixed(2)}x raw`]);
  }
  if (!store.appendMany) rows.push([`  ${name}, reservation + event, one atomic append`, 'n/a', '', '', '', 'needs nats-server 2.12+']);
  return rows;
}

/** Tops the store up to `count` events (fast: many streams, no expected revision). */
async function fill(store: EventStore, count: number, already: number, tag: string): Promise<void> {
  const missing = Math.max(0, count - already);
  if (missing === 0) return;
  await measure(missing, 256, async (worker, n) => {
    await store.append(`fill${tag}-${worker}`, [{ type: 'ReviewSubmitted', data: payload(n) }], 'any');
  });
}

async function replay(store: EventStore): Promise<{ events: number; perSec: number }> {
  const start = performance.now();
  let events = 0;
  for await (const _ of store.readAll()) events++;
  return { events, perSec: events / ((performance.now() - start) / 1000) };
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/**
 * Raw JetStream publish-with-ack. With `headers`, each publish also carries what the adapter's
 * does (a message id for dedup and the expected last subject sequence): that row shows what the
 * server-side checks cost, apart from the adapter's own work.
 */
export async function rawJetStream(
  headers: boolean,
  { nats = NATS, total = APPENDS, concurrency = CONCURRENCY, replicas = 1 }: { nats?: string | string[]; total?: number; concurrency?: number; replicas?: number } = {},
): Promise<Run> {
  // The same client settings as the adapter's connection, so only the adapter's own work differs.
  const nc = await connect({ servers: nats, noAsyncTraces: true });
  const jsm = await jetstreamManager(nc);
  const name = `BENCH_RAW_${randomUUID().slice(0, 8)}`;
  const subject = `bench.raw.${name}`;
  await jsm.streams.add({ name, subjects: [`${subject}.>`], storage: 'file' as never, num_replicas: replicas });
  const js = jetstream(nc);
  try {
    // Same size as a commit of one event, so the comparison is fair.
    const body = new TextEncoder().encode(JSON.stringify({ r: 0, e: [{ i: randomUUID(), y: 'ReviewSubmitted', d: payload(0), m: {} }] }));
    const lastSeq = new Map<number, number>();
    return await measure(total, concurrency, async (worker) => {
      if (!headers) {
        await js.publish(`${subject}.${worker}`, body);
        return;
      }
      const ack = await js.publish(`${subject}.${worker}`, body, { msgID: randomUUID(), expect: { lastSubjectSequence: lastSeq.get(worker) ?? 0 } });
      lastSeq.set(worker, ack.seq);
    });
  } finally {
    await jsm.streams.delete(name).catch(() => undefined);
    await nc.close();
  }
}

async function main(): Promise<void> {
  console.log(`Event store benchmark: ${fmt(APPENDS)} appends of 1 event per commit, ${CONCURRENCY} in flight; replay of ${fmt(REPLAY)} events.`);
  console.log(`node ${process.version}, NATS at ${NATS}; "reservation + event" rows: commands/s, each writing a command-id reservation and one event, as two appends and as one atomic append\n`);
  const rows: string[][] = [];
  const tag = randomUUID().replace(/-/g, '').slice(0, 8);

  process.stdout.write('raw JetStream publish-with-ack ... ');
  const raw = await rawJetStream(false);
  console.log(`${fmt(raw.opsPerSec)}/s`);
  rows.push(['raw JetStream publish+ack', fmt(raw.opsPerSec), raw.p50.toFixed(2), raw.p99.toFixed(2), '', '1.00x raw']);
  process.stdout.write('raw JetStream publish+ack with msg id and expected sequence ... ');
  const rawChecked = await rawJetStream(true);
  console.log(`${fmt(rawChecked.opsPerSec)}/s`);
  rows.push(['  same, with msg id + expected seq', fmt(rawChecked.opsPerSec), rawChecked.p50.toFixed(2), rawChecked.p99.toFixed(2), '', `${(rawChecked.opsPerSec / raw.opsPerSec).toFixed(2)}x raw`]);

  // jetstream adapter, in a stream of its own so replay counts only its events
  const streamName = `BENCH_AGORA_${tag}`;
  const js = await openJetStreamEventStore({ servers: NATS, streamName, subjectPrefix: `bench.agora.${tag}`, atomicAppends: true });
  let jsRun: Run;
  let jsReplay: { events: number; perSec: number };
  let jsCommands: string[][];
  try {
    process.stdout.write('jetstream adapter appends ... ');
    jsRun = await appendRun(js, APPENDS, tag);
    console.log(`${fmt(jsRun.opsPerSec)}/s`);
    process.stdout.write(`jetstream fill to ${fmt(REPLAY)} events ... `);
    await fill(js, REPLAY, APPENDS, tag);
    console.log('done');
    process.stdout.write('jetstream replay ... ');
    jsReplay = await replay(js);
    console.log(`${fmt(jsReplay.perSec)}/s`);
    jsCommands = await commandRows('jetstream', js, tag, raw);
  } finally {
    await js.close();
    const nc = await connect({ servers: NATS });
    await (await jetstreamManager(nc)).streams.delete(streamName).catch(() => undefined);
    await nc.close();
  }
  rows.push(['jetstream adapter', fmt(jsRun.opsPerSec), jsRun.p50.toFixed(2), jsRun.p99.toFixed(2), fmt(jsReplay.perSec), `${(jsRun.opsPerSec / raw.opsPerSec).toFixed(2)}x raw`], ...jsCommands);

  const dir = mkdtempSync(join(tmpdir(), 'agora-bench-'));
  let emRun: Run;
  let emReplay: { events: number; perSec: number };
  let emCold: { events: number; perSec: number };
  let emCommands: string[][];
  try {
    const embedded = await openEmbeddedEventStore({ directory: dir });
    process.stdout.write('embedded appends ... ');
    emRun = await appendRun(embedded, APPENDS, tag);
    console.log(`${fmt(emRun.opsPerSec)}/s`);
    await fill(embedded, REPLAY, APPENDS, tag);
    emReplay = await replay(embedded);
    await embedded.close();
    // Cold replay: reopen the file (read, verify checksums, index) and read everything.
    const t0 = performance.now();
    const reopened = await openEmbeddedEventStore({ directory: dir });
    const r = await replay(reopened);
    emCold = { events: r.events, perSec: r.events / ((performance.now() - t0) / 1000) };
    emCommands = await commandRows('embedded', reopened, tag, raw);
    await reopened.close();
    console.log(`embedded replay ... ${fmt(emReplay.perSec)}/s in memory, ${fmt(emCold.perSec)}/s from the file`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  rows.push(['embedded adapter', fmt(emRun.opsPerSec), emRun.p50.toFixed(2), emRun.p99.toFixed(2), `${fmt(emCold.perSec)} (cold)`, `${(emRun.opsPerSec / raw.opsPerSec).toFixed(2)}x raw`], ...emCommands);

  const header = ['', 'appends/s', 'p50 ms', 'p99 ms', 'replay events/s', 'vs raw'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(`\n${line(header)}\n| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |\n${rows.map(line).join('\n')}\n`);

  const targets: Array<[string, boolean, string]> = [
    ['jetstream adapter >= 0.6x raw', jsRun.opsPerSec >= 0.6 * raw.opsPerSec, `${(jsRun.opsPerSec / raw.opsPerSec).toFixed(2)}x`],
    ['embedded appends >= raw JetStream', emRun.opsPerSec >= raw.opsPerSec, `${(emRun.opsPerSec / raw.opsPerSec).toFixed(2)}x`],
    ['jetstream replay >= 100k events/s', jsReplay.perSec >= 100_000, `${fmt(jsReplay.perSec)}/s over ${fmt(jsReplay.events)}`],
    ['embedded replay >= 100k events/s (cold, from the file)', emCold.perSec >= 100_000, `${fmt(emCold.perSec)}/s over ${fmt(emCold.events)}`],
  ];
  for (const [what, met, figure] of targets) console.log(`${met ? 'met    ' : 'NOT MET'}  ${what}: ${figure}`);
}

if (isMain) await main();
