/**
 * SSE at scale, as one run: a JetStream log filled with N events, a registry and the gateway as
 * processes of their own, C clients on GET /v1/events (half replaying from the start, half live
 * with from=end) while M signed commands go through the gateway and /health is asked every
 * second. Every client's events are checked against the log, in order and complete. Used by
 * `npm run bench:sse` (built processes, full size) and by its e2e test (from source, small).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { categoryOf } from '@agora/contracts';
import { COMMAND_ID_CATEGORY } from '@agora/eventsourcing';
import { openJetStreamEventStore, type EventStore, type Position } from '@agora/eventstore';
import { createSignedCommand, generateKeyPair } from '@agora/identity';
import { processEnvironment, REPO_ROOT } from '@agora/testing';
import { connect } from '@nats-io/transport-node';
import { Worker } from 'node:worker_threads';
import type { FromWorker, ToWorker, WorkerSetup } from './sse-clients.js';

export interface SseLoadOptions {
  /** NATS server with JetStream; the log is a stream of its own there, deleted at the end. */
  natsUrl: string;
  events: number;
  /** Bytes of filler in each event's data (default 0): larger events fill a slow client's socket buffers sooner. */
  eventBytes?: number;
  clients: number;
  commands: number;
  /** Commands in flight at once. */
  commandConcurrency?: number;
  /** Clients (among the replaying ones) that stop reading for a while: the gateway should drop them with a resumable position. */
  slowClients?: number;
  /** AGORA_SSE_SLOW_CLIENT_MS of the gateway. */
  slowClientMs?: number;
  /** node arguments that run an app's process (`registry`, `gateway`): its built main.js, or its source. */
  nodeArgs: (app: 'registry' | 'gateway') => string[];
  /** Give up waiting for the clients after this long. */
  timeoutMs: number;
  /** Also measure one client replaying alone afterwards. */
  baseline?: boolean;
  log?: (line: string) => void;
}

export interface Percentiles {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export interface SseLoadReport {
  events: number;
  /** Events in the log (as SSE shows them) when the live clients connected, and after the commands. */
  historyEvents: number;
  finalEvents: number;
  fillSeconds: number;
  replay: { clients: number; complete: number; ms: Percentiles };
  live: { clients: number; complete: number; headersMs: Percentiles };
  /** Clients whose events were not exactly the log's, in order (with the first difference). */
  mismatches: { client: number; kind: string; what: string }[];
  errors: string[];
  /**
   * Paused clients; how many of them the gateway let go (`dropped`: each read the `dropped` event,
   * or was cut off before reading that far, and reconnected after the last id it had); other
   * clients dropped (read too slowly by a busy client thread); drops whose resume position was not
   * the last id received; reconnections after a connection closed without a `dropped` event read.
   */
  slow: { clients: number; dropped: number; sawDropped: number; othersDropped: number; badResumes: number; reconnects: number };
  /** The gateway's warnings (slow clients dropped, failed reads), the last 20. */
  gatewayWarnings: string[];
  health: { ok: number; failed: number; failures: string[] };
  commands: { sent: number; ok: number; timeouts: number; failed: number; ms: Percentiles };
  /** Of the gateway process: before the clients, the highest sampled, and the kernel's high-water mark. */
  memory: { idleRssMiB: number; peakRssMiB: number; hwmMiB: number };
  /** The gateway's own counters at the end (NATS slow consumer and disconnect events, relay lag). */
  gatewayMetrics: Record<string, number>;
  relayed: { expected: number; received: number };
  baselineMs: number | undefined;
  elapsedSeconds: number;
}

export function percentiles(values: readonly number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? Number.NaN };
}

interface Child {
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** Starts an app's process and waits for `<name>: ready`. */
function startApp(app: 'registry' | 'gateway', args: string[], env: Record<string, string>): Promise<Child> {
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: processEnvironment(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: string) => (output = (output + chunk).slice(-50_000));
  child.stderr!.setEncoding('utf8').on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail('printed no "ready" within 120 s'), 120_000);
    function fail(why: string) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`agora-${app} ${why}:\n${output}`));
    }
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      keep(chunk);
      if (new RegExp(`^agora-${app}: ready$`, 'm').test(output)) {
        clearTimeout(timer);
        resolve({ child, output: () => output, stop });
      }
    });
    child.once('error', (error) => fail(`could not start (${error.message})`));
    child.once('exit', (code, signal) => fail(`exited (code ${code}, signal ${signal}) before it was ready`));
  });
}

/** A line of /proc/<pid>/status in MiB (VmRSS, VmHWM); 0 without /proc. */
function procStatusMiB(pid: number | undefined, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? 0 : Number(kb) / 1024;
  } catch {
    return 0;
  }
}

/** A plain HTTP request with a deadline: status and body, or the error. */
function httpCall(url: string, agent: Agent, timeoutMs: number, body?: string): Promise<{ status: number; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = request(url, { agent, method: body === undefined ? 'GET' : 'POST', headers: body === undefined ? {} : { 'content-type': 'application/json' }, timeout: timeoutMs }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', (error) => resolve({ error: error.message }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (error) => resolve({ error: error.message }));
    req.end(body);
  });
}

/** Positions of the log's events after `after`, as SSE shows them by default (command id reservations left out). */
async function positionsAfter(store: EventStore, after?: Position): Promise<string[]> {
  const out: string[] = [];
  for await (const event of store.readAll(after === undefined ? {} : { after })) {
    if (categoryOf(event.streamId) !== COMMAND_ID_CATEGORY) out.push(event.position);
  }
  return out;
}

/** Fills the log: commits of 10 events on 64 streams, 32 appends in flight. */
async function fill(store: EventStore, events: number, tag: string, eventBytes: number): Promise<void> {
  const PER_COMMIT = 10;
  const filler = 'x'.repeat(eventBytes);
  const commits = Math.ceil(events / PER_COMMIT);
  let next = 0;
  const worker = async () => {
    while (next < commits) {
      const c = next++;
      const count = Math.min(PER_COMMIT, events - c * PER_COMMIT);
      const batch = Array.from({ length: count }, (_, k) => ({ id: randomUUID(), type: 'BenchNoted', data: { n: c * PER_COMMIT + k, note: `event ${c * PER_COMMIT + k} of the SSE benchmark`, ...(eventBytes > 0 ? { filler } : {}) } }));
      await store.append(`ssebench${tag}-${c % 64}`, batch, 'any');
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

/** Sums of the gateway's Prometheus samples whose name starts with one of `names`. */
function metricSums(text: string, names: readonly string[]): Record<string, number> {
  const sums: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const name = names.find((n) => line.startsWith(`${n}{`) || line.startsWith(`${n} `));
    if (name !== undefined) sums[name]! += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sums;
}

interface ClientWorker {
  post(message: ToWorker): void;
  next<T extends FromWorker['type']>(type: T): Promise<Extract<FromWorker, { type: T }>>;
  terminate(): Promise<void>;
}

/** The clients' thread (sse-worker): from its built file, or from source through tools/ts-run when this runs from source. */
function startClientWorker(setup: WorkerSetup): ClientWorker {
  const fromSource = import.meta.url.endsWith('.ts');
  const worker = new Worker(new URL(`./sse-worker${fromSource ? '.ts' : '.js'}`, import.meta.url), {
    workerData: setup,
    ...(fromSource ? { execArgv: ['--conditions=agora-source', '--import', join(REPO_ROOT, 'tools/ts-run/register.mjs')] } : {}),
  });
  const queue: FromWorker[] = [];
  let waiting: { type: string; resolve: (m: FromWorker) => void; reject: (e: Error) => void } | undefined;
  let failure: Error | undefined;
  const deliver = () => {
    if (!waiting) return;
    if (failure) return waiting.reject(failure);
    const k = queue.findIndex((m) => m.type === waiting!.type);
    if (k < 0) return;
    const [m] = queue.splice(k, 1);
    const w = waiting;
    waiting = undefined;
    w.resolve(m!);
  };
  worker.on('message', (m: FromWorker) => {
    queue.push(m);
    deliver();
  });
  worker.on('error', (error) => {
    failure = error;
    deliver();
  });
  worker.on('exit', (code) => {
    failure ??= new Error(`the clients' thread exited (code ${code})`);
    deliver();
  });
  return {
    post: (message) => worker.postMessage(message),
    next: <T extends FromWorker['type']>(type: T) =>
      new Promise<Extract<FromWorker, { type: T }>>((resolve, reject) => {
        waiting = { type, resolve: resolve as (m: FromWorker) => void, reject };
        deliver();
      }),
    terminate: async () => {
      await worker.terminate();
    },
  };
}

const GATEWAY_METRICS = ['agora_nats_slow_consumer_events_total', 'agora_nats_disconnects_total', 'agora_nats_reconnects_total'] as const;

export async function runSseLoad(options: SseLoadOptions): Promise<SseLoadReport> {
  const log = options.log ?? (() => undefined);
  const began = performance.now();
  const tag = randomBytes(4).toString('hex');
  const streamName = `BENCH_SSE_${tag}`;
  const subjectPrefix = `bench.sse.${tag}`;
  const host = options.natsUrl.replace(/^nats:\/\//, '');
  const eventStore = `jetstream://${host}?stream=${streamName}&prefix=${subjectPrefix}`;
  const root = generateKeyPair();
  const dirs: string[] = [];
  const children: Child[] = [];
  let worker: ClientWorker | undefined;
  const sideAgent = new Agent({ keepAlive: true, maxSockets: 16 });
  // A minute per request: the bench's own reads must not fail because its machine is busy.
  const store = await openJetStreamEventStore({ servers: options.natsUrl, streamName, subjectPrefix, requestTimeoutMs: 60_000 });
  const nc = await connect({ servers: options.natsUrl, name: 'bench-sse' });
  const timers: NodeJS.Timeout[] = [];
  try {
    log(`filling the log (JetStream stream ${streamName}) with ${options.events.toLocaleString('en-US')} events ...`);
    const fillStart = performance.now();
    await fill(store, options.events, tag, options.eventBytes ?? 0);
    const fillSeconds = (performance.now() - fillStart) / 1000;

    const env = (dir: string) => ({ NATS_URL: options.natsUrl, EVENT_STORE: eventStore, AGORA_DATA_DIR: dir, AGORA_OPERATOR_PUBLIC_KEY: root.publicKey, AGORA_OPERATOR_ID: 'root' });
    const dir = (name: string) => {
      const d = mkdtempSync(join(tmpdir(), `agora-bench-sse-${name}-`));
      dirs.push(d);
      return d;
    };
    log('starting the registry and the gateway ...');
    children.push(await startApp('registry', options.nodeArgs('registry'), env(dir('registry'))));
    const gateway = await startApp('gateway', options.nodeArgs('gateway'), {
      ...env(dir('gateway')),
      PORT: '0',
      HOST: '127.0.0.1',
      AGORA_SSE_SLOW_CLIENT_MS: String(options.slowClientMs ?? 10_000),
    });
    children.push(gateway);
    const url = /listening on (http:\/\/\S+)/.exec(gateway.output())![1]!;
    const pid = gateway.child.pid;

    // The relay's announcements of the agents the commands register (one AgentRegistered each; deduped on the event id).
    const relayedIds = new Set<string>();
    const relaySub = nc.subscribe('agora.evt.agent.>', {
      callback: (_e, msg) => {
        const event = msg.json<{ id: string; data: { agentId?: string } }>();
        if (event.data.agentId?.startsWith(`sse${tag}-`)) relayedIds.add(event.id);
      },
    });

    const history = await positionsAfter(store);
    const liveFrom = await store.headPosition();
    const idleRssMiB = procStatusMiB(pid, 'VmRSS');
    let peakRssMiB = idleRssMiB;
    timers.push(setInterval(() => (peakRssMiB = Math.max(peakRssMiB, procStatusMiB(pid, 'VmRSS'))), 250));

    const health = { ok: 0, failed: 0, failures: [] as string[] };
    timers.push(
      setInterval(() => {
        void httpCall(`${url}/health`, sideAgent, 2_000).then((r) => {
          if ('status' in r && r.status === 200) health.ok++;
          else {
            health.failed++;
            if (health.failures.length < 5) health.failures.push('error' in r ? r.error : `${r.status} ${r.body.slice(0, 200)}`);
          }
        });
      }, 1_000),
    );

    const replays = Math.ceil(options.clients / 2);
    const slow = Math.min(options.slowClients ?? 0, replays);
    log(`${options.clients} clients: ${replays} replaying ${history.length.toLocaleString('en-US')} events from the start (${slow} of them stop reading for ${(2 * (options.slowClientMs ?? 10_000)) / 1000} s), ${options.clients - replays} live ...`);
    const kinds: ('replay' | 'live')[] = [];
    const pauses: number[] = [];
    for (let i = 0; i < options.clients; i++) {
      const replay = i % 2 === 0 && i / 2 < replays;
      kinds.push(replay ? 'replay' : 'live');
      pauses.push(replay && i / 2 < slow ? 2 * (options.slowClientMs ?? 10_000) : 0);
    }
    const setup: WorkerSetup = { url, history, kinds, pauses };
    worker = startClientWorker(setup);
    await worker.next('opened');

    log(`${options.commands} signed commands through the gateway while the clients read ...`);
    const commandTimes: number[] = [];
    const commands = { sent: 0, ok: 0, timeouts: 0, failed: 0 };
    let nextCommand = 0;
    const failures: string[] = [];
    const sender = async () => {
      while (nextCommand < options.commands) {
        const i = nextCommand++;
        const agent = generateKeyPair();
        const body = JSON.stringify(
          createSignedCommand({ type: 'RegisterAgent', actor: 'root', payload: { agentId: `sse${tag}-${i}`, publicKey: agent.publicKey, displayName: `agent ${i}`, roles: ['executive'] }, secretKey: root.secretKey }),
        );
        const start = performance.now();
        commands.sent++;
        const r = await httpCall(`${url}/v1/commands`, sideAgent, 30_000, body);
        commandTimes.push(performance.now() - start);
        if ('status' in r && r.status === 200) commands.ok++;
        else if ('status' in r && r.status === 504) commands.timeouts++;
        else {
          commands.failed++;
          if (failures.length < 5) failures.push('error' in r ? r.error : `${r.status} ${r.body.slice(0, 200)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: options.commandConcurrency ?? 4 }, sender));

    // What came after: the replaying clients get it after the history, the live ones from where they started.
    const replayTail = await positionsAfter(store, history.at(-1));
    const liveTail = await positionsAfter(store, liveFrom);
    const deadline = performance.now() + options.timeoutMs;
    for (;;) {
      worker.post({ type: 'poll', replayTail: replayTail.length, liveTail: liveTail.length });
      if ((await worker.next('progress')).done || performance.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    // Let the relay deliver what it still holds.
    const relayDeadline = performance.now() + 10_000;
    while (relayedIds.size < commands.ok && performance.now() < relayDeadline) await new Promise((resolve) => setTimeout(resolve, 100));
    relaySub.unsubscribe();
    for (const t of timers.splice(0)) clearInterval(t);
    worker.post({ type: 'finish' });
    const { results, tails, historyDone } = await worker.next('results');

    const metrics = await httpCall(`${url}/metrics`, sideAgent, 5_000);
    const gatewayMetrics = 'status' in metrics ? metricSums(metrics.body, GATEWAY_METRICS) : {};
    const hwmMiB = procStatusMiB(pid, 'VmHWM');

    const mismatches: SseLoadReport['mismatches'] = [];
    const errors: string[] = [];
    results.forEach((r, i) => {
      if (r.error !== undefined) errors.push(`client ${i} (${r.kind}): ${r.error}`);
      if (r.mismatch) mismatches.push({ client: i, kind: r.kind, what: `event ${r.mismatch.index}: expected ${r.mismatch.expected}, got ${r.mismatch.got}` });
      else if (!historyDone[i]) mismatches.push({ client: i, kind: r.kind, what: `history incomplete: ${r.received} events received` });
      else {
        const tail = r.kind === 'replay' ? replayTail : liveTail;
        const got = tails[i]!;
        const k = got.findIndex((p, j) => p !== tail[j]);
        if (k >= 0 || got.length !== tail.length) mismatches.push({ client: i, kind: r.kind, what: `after the history: ${got.length} events for ${tail.length}${k >= 0 ? `, first difference at ${k}: ${got[k]} for ${tail[k]}` : ''}` });
      }
    });
    const replayResults = results.filter((r) => r.kind === 'replay');
    const liveResults = results.filter((r) => r.kind === 'live');
    const bad = new Set(mismatches.map((m) => m.client));
    const complete = (kind: 'replay' | 'live') => results.filter((r, i) => r.kind === kind && !bad.has(i) && r.error === undefined).length;

    let baselineMs: number | undefined;
    if (options.baseline) {
      log('baseline: one client replaying alone ...');
      worker.post({ type: 'baseline', timeoutMs: options.timeoutMs });
      baselineMs = (await worker.next('baseline')).ms;
    }

    return {
      events: options.events,
      historyEvents: history.length,
      finalEvents: history.length + replayTail.length,
      fillSeconds,
      replay: { clients: replayResults.length, complete: complete('replay'), ms: percentiles(replayResults.flatMap((r) => (r.historyMs === undefined ? [] : [r.historyMs]))) },
      live: { clients: liveResults.length, complete: complete('live'), headersMs: percentiles(liveResults.flatMap((r) => (r.headersMs === undefined ? [] : [r.headersMs]))) },
      mismatches,
      errors: [...errors, ...failures.map((f) => `command: ${f}`)],
      slow: {
        clients: slow,
        dropped: results.filter((r, i) => r.drops + r.reconnects > 0 && pauses[i]! > 0).length,
        sawDropped: results.filter((r, i) => r.drops > 0 && pauses[i]! > 0).length,
        othersDropped: results.filter((r, i) => r.drops + r.reconnects > 0 && pauses[i] === 0).length,
        badResumes: results.filter((r) => r.badResume !== undefined).length,
        reconnects: results.reduce((n, r) => n + r.reconnects, 0),
      },
      gatewayWarnings: gateway
        .output()
        .split('\n')
        .filter((line) => /warn/i.test(line))
        .slice(-20),
      health,
      commands: { ...commands, ms: percentiles(commandTimes) },
      memory: { idleRssMiB, peakRssMiB, hwmMiB },
      gatewayMetrics,
      relayed: { expected: commands.ok, received: relayedIds.size },
      baselineMs,
      elapsedSeconds: (performance.now() - began) / 1000,
    };
  } finally {
    for (const t of timers) clearInterval(t);
    await worker?.terminate();
    sideAgent.destroy();
    await Promise.all(children.reverse().map((c) => c.stop()));
    await store.close().catch(() => undefined);
    const { jetstreamManager } = await import('@nats-io/jetstream');
    await jetstreamManager(nc)
      .then((jsm) => jsm.streams.delete(streamName))
      .catch(() => undefined);
    await nc.close().catch(() => undefined);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

const fmt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const pct = (p: Percentiles, unit = 'ms') => `p50 ${fmt(p.p50)} ${unit}, p99 ${fmt(p.p99)} ${unit}, max ${fmt(p.max)} ${unit} (${p.count})`;

/** The report as the benchmark prints it. */
export function formatReport(r: SseLoadReport, memoryBoundMiB: number): string {
  const lines = [
    `log: ${fmt(r.historyEvents)} events when the live clients connected (${fmt(r.events)} filled in ${r.fillSeconds.toFixed(1)} s), ${fmt(r.finalEvents)} after the commands`,
    `replaying clients: ${r.replay.complete}/${r.replay.clients} got every event in order; history in ${pct(r.replay.ms)}`,
    `live clients:      ${r.live.complete}/${r.live.clients} got every event in order; response headers in ${pct(r.live.headersMs)}`,
    `mismatches:        ${r.mismatches.length}${r.mismatches.length ? ` (first: client ${r.mismatches[0]!.client}, ${r.mismatches[0]!.kind}: ${r.mismatches[0]!.what})` : ''}`,
    `slow clients:      ${r.slow.dropped}/${r.slow.clients} paused clients let go (${r.slow.sawDropped} read the dropped event with its resume position, the others were cut off before reading that far), ${r.slow.othersDropped} other clients let go (read too slowly), ${r.slow.badResumes} resume positions wrong, ${r.slow.reconnects} reconnections after a cut; each resumed after its last id and was checked like the others`,
    `/health:           ${r.health.ok} ok, ${r.health.failed} failed${r.health.failures.length ? ` (${r.health.failures.join('; ')})` : ''}`,
    `commands:          ${r.commands.ok}/${r.commands.sent} ok, ${r.commands.timeouts} timed out (504), ${r.commands.failed} failed otherwise; ${pct(r.commands.ms)}`,
    `relay:             ${r.relayed.received}/${r.relayed.expected} command events relayed on agora.evt.*`,
    `gateway NATS:      ${Object.entries(r.gatewayMetrics).map(([k, v]) => `${k.replace('agora_nats_', '').replace('_total', '')} ${v}`).join(', ')}`,
    `gateway memory:    ${fmt(r.memory.idleRssMiB)} MiB before the clients, peak ${fmt(Math.max(r.memory.peakRssMiB, r.memory.hwmMiB))} MiB (VmHWM ${fmt(r.memory.hwmMiB)}); bound ${memoryBoundMiB} MiB: ${Math.max(r.memory.peakRssMiB, r.memory.hwmMiB) <= memoryBoundMiB ? 'met' : 'NOT MET'}`,
    `baseline:          one client replaying alone: ${r.baselineMs === undefined ? 'not measured' : `${fmt(r.baselineMs)} ms`}`,
    `errors:            ${r.errors.length}${r.errors.length ? ` (${r.errors.slice(0, 3).join('; ')})` : ''}`,
    `elapsed:           ${r.elapsedSeconds.toFixed(0)} s`,
  ];
  return lines.join('\n');
}

/** Whether the run met every target: all clients complete and in order, /health always 200, no command timed out, every command event relayed, no slow consumer, memory within the bound. */
export function targetsMet(r: SseLoadReport, memoryBoundMiB: number): boolean {
  return (
    r.mismatches.length === 0 &&
    r.errors.length === 0 &&
    r.replay.complete === r.replay.clients &&
    r.live.complete === r.live.clients &&
    r.health.failed === 0 &&
    r.commands.ok === r.commands.sent &&
    r.relayed.received >= r.relayed.expected &&
    r.slow.badResumes === 0 &&
    r.slow.dropped >= r.slow.clients &&
    (r.gatewayMetrics['agora_nats_slow_consumer_events_total'] ?? 0) === 0 &&
    Math.max(r.memory.peakRssMiB, r.memory.hwmMiB) <= memoryBoundMiB
  );
}
