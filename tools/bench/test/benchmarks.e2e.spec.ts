// Every benchmark in a small version, run as `npm run bench:*` runs it (the benchmark's own entry
// point; the services it starts from their built dist/, which `npm test` builds first), so that a
// benchmark that crashes or checks the log wrong fails here instead of the next time someone
// measures. What is asserted is that it finishes, exits 0 (each exits non-zero when what it checks
// is wrong: events missing, errors, a trip missed) and prints its table; never a speed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { takesAtomicBatches } from '@agora/eventstore';
import { NATS_SERVER_BIN, natsServerVersion, runToCompletion, startNatsServer, type PrivateNatsServer } from '@agora/testing';

/** Whether the server the benchmarks run takes atomic batches: then both ways of writing a command are measured. */
const atomic = takesAtomicBatches(natsServerVersion(NATS_SERVER_BIN));

let nats: PrivateNatsServer;
let dir: string;
beforeAll(async () => {
  nats = await startNatsServer();
  dir = await mkdtemp(join(tmpdir(), 'agora-bench-smoke-'));
});
afterAll(async () => {
  await nats?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Runs `tools/bench/src/<name>.bench.ts` with `args`; expects exit code 0 and every line of `expected` in its output. */
async function bench(name: string, args: string[], expected: RegExp[], timeoutMs = 90_000): Promise<string> {
  const run = await runToCompletion(`tools/bench/src/${name}.bench.ts`, args, { NATS_SERVER_BIN }, timeoutMs);
  const output = `${run.stdout}${run.stderr}`;
  if (run.code !== 0) throw new Error(`bench:${name} ${args.join(' ')} exited with ${run.code ?? run.signal}:\n${output}`);
  for (const line of expected) expect(output).toMatch(line);
  return output;
}

describe('the benchmarks, small', () => {
  it('bench:store', async () => {
    await bench('store', ['--appends', '300', '--replay', '500', '--nats', nats.url], [
      /^\| raw JetStream publish\+ack /m,
      /^\| jetstream adapter .*\d/m,
      /^\| {3}jetstream, reservation \+ event, two appends .*\d/m,
      atomic ? /^\| {3}jetstream, reservation \+ event, one atomic append .*\d/m : /^\| {3}jetstream, reservation \+ event, one atomic append +\| n\/a /m,
      /^\| embedded adapter .*\d/m,
      /^\| {3}embedded, reservation \+ event, one atomic append .*\d/m,
    ]);
  }, 100_000);

  it('bench:commands', async () => {
    await bench('commands', ['--count', '100', '--nats', nats.url], [
      /^\| one node: UpdateAgent \(existing agent\), two appends /m,
      /log check \(two appends\): 100 AgentRegistered, 100 AgentUpdated/,
      // A server that takes atomic batches: one batch on one node, and the cluster rows (a 3-node cluster of the same server, the log at 3 replicas) beside raw publish-ack to a 3-replica stream.
      ...(atomic
        ? [
            /^\| one node: UpdateAgent \(existing agent\), one atomic batch /m,
            /log check \(one atomic batch\): 100 AgentRegistered, 100 AgentUpdated/,
            /^\| cluster R3: raw JetStream publish\+ack \(R3\) +\| [\d,]+ /m,
            /^\| cluster R3: UpdateAgent \(existing agent\), one atomic batch +\| [\d,]+ /m,
            /^\| cluster R3: UpdateAgent \(existing agent\), two appends +\| [\d,]+ /m,
          ]
        : []),
    ]);
  }, 100_000);

  it('bench:health', async () => {
    await bench('health', ['--agents', '40', '--interval-ms', '200', '--seconds', '2', '--drifting', '2', '--nats', nats.url], [/^\| transitions and samples \(default\) /m, /every drifting agent paused exactly once/]);
  }, 100_000);

  it('bench:sse', async () => {
    await bench('sse', ['--events', '300', '--clients', '6', '--commands', '3', '--slow', '0', '--timeout', '60', '--nats', nats.url], [/mismatches: +0/, /all targets met/]);
  }, 100_000);

  it('bench:startup', async () => {
    await bench('startup', ['--sizes', '500', '--agents', '50', '--timeout', '60', '--cache', join(dir, 'startup')], [/^\| embedded +\| 500 +\| rebuild/m, /^\| jetstream +\| 500 +\| restart/m], 120_000);
  }, 130_000);

  it('bench:mcp', async () => {
    await bench('mcp', ['--count', '40'], [/^\| UpdateAgent \(command\) \| MCP tool call, stdio /m, /^UpdateAgent \(command\): an MCP tool call takes \d/m, /log check: 120 AgentUpdated for 120 UpdateAgent sent \(0 refused\): one event per command/]);
  }, 100_000);

  it('bench:growth', async () => {
    // Tiny logs (written by the services into the run's own cache), SQLite only: the shape of the report, not its figures.
    const cells = (cell: string) => `${cell} +\\| ${cell} +\\|`;
    await bench('growth', ['--events', '2000,4000', '--engine', 'sqlite', '--commands', '100', '--queries', '50', '--cache', join(dir, 'growth')], [
      /^\| measure +\| [\d,]+ events +\| [\d,]+ events +\| target +\| met +\|$/m,
      new RegExp(`^\\| RSS now / peak: new replica +\\| ${cells('\\d+ / \\d+ MB')}`, 'm'),
      new RegExp(`^\\| peak RSS, the largest of the three processes +\\| ${cells('\\d+ MB')} < 400 MB; largest size <= 1\\.2x smallest +\\| (met|NOT met) +\\|$`, 'm'),
      new RegExp(`^\\| event loop p99 / max \\(while commands and queries run\\) +\\| ${cells('[\\d.]+ ms / [\\d.]+ ms')} p99 < 50 ms +\\| (met|NOT met) +\\|$`, 'm'),
      new RegExp(`^\\| commands/s \\(100 signed, SDK over HTTP, 32 in flight\\) +\\| ${cells('[\\d,]+')} largest size >= 0\\.9x smallest`, 'm'),
      // Every command is answered: a failure is a fault of the process, not a figure, at these sizes.
      /^\| commands failed +\| 0 +\| 0 +\| 0 +\| met +\|$/m,
      new RegExp(`^\\| restart: a first answered query +\\| ${cells('[\\d.]+ s')} < 3 s +\\| (met|NOT met) +\\|$`, 'm'),
      new RegExp(`^\\| new replica: a first answered query +\\| ${cells('[\\d.]+ s')} < 5 s +\\| (met|NOT met) +\\|$`, 'm'),
      new RegExp(`^\\| a page of the proposals list \\(20\\) p50 / p99 +\\| ${cells('[\\d.]+ ms / [\\d.]+ ms')} p99 < 20 ms`, 'm'),
      new RegExp(`^\\| one proposal p50 / p99 +\\| ${cells('[\\d.]+ ms / [\\d.]+ ms')} p99 < 20 ms`, 'm'),
      new RegExp(`^\\| rebuild / raw replay +\\| ${cells('[\\d.]+x')} >= 0\\.3x +\\| (met|NOT met) +\\|$`, 'm'),
      new RegExp(`^\\| first start: the reactors and the relay through the whole log +\\| ${cells('[\\d.]+ s')}`, 'm'),
      /^targets met: \d of 9/m,
    ], 180_000);
  }, 190_000);

  it('bench:audit', async () => {
    await bench('audit', ['--events', '600', '--agents', '10', '--workers', '0,1'], [/^\| raw replay .*\d/m, /^\| agora audit, 0 worker threads .*\d/m, /^\| agora audit, 1 worker thread .*\d/m]);
  }, 100_000);
});
