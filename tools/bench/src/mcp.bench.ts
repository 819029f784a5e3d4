/**
 * MCP overhead benchmark: one command, UpdateAgent, sent the two ways an agent has, in one run
 * against one Agora: over HTTP through @agora/sdk (the client signs, the gateway passes it to the
 * registry), and as an MCP tool call (`update_agent`) from the official MCP client
 * (@modelcontextprotocol/sdk's Client over stdio) to `agora mcp`, which signs with the agent's key
 * file and sends it through the same SDK over HTTP. The difference is what MCP costs: JSON-RPC over
 * the stdio pipe, the tool's input checked against its schema, the result shaped as a tool result.
 * A query (GetAgent / `get_agent`) is measured the same way.
 *
 *   npm run bench:mcp -- [--count 2000] [--inflight 1]
 *
 * The standalone process (`node apps/standalone/dist/main.js`) and `agora mcp`
 * (`node apps/cli/dist/main.js mcp`) are started as an operator would (npm run bench:mcp builds
 * first). The two ways take turns call by call (which goes first alternates), so that a machine shared
 * with other work loads both alike; the table gives each way's latency and the ratio MCP / HTTP.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { generateKeyPair } from '@agora/identity';
import { Agora } from '@agora/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { positiveIntOption } from './options.js';
import { fmt, stopReplica } from './replicas.js';
import { percentile } from './store.bench.js';

const HELP = `Usage: npm run bench:mcp -- [options]

Measures one command (UpdateAgent) and one query (GetAgent) sent over HTTP through @agora/sdk and
as MCP tool calls (update_agent, get_agent) from the MCP SDK's client to \`agora mcp\` over stdio,
against the standalone process, taking turns call by call in one run; prints both and the ratio.
  --count N      calls per way and kind (default 2000)
  --inflight N   calls in flight (default 1: the latency of one call at a time)
  --help         this text`;

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '2000' },
    inflight: { type: 'string', default: '1' },
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

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const STANDALONE = join(REPO, 'apps', 'standalone', 'dist', 'main.js');
const CLI = join(REPO, 'apps', 'cli', 'dist', 'main.js');
const AGENT = 'bench-mcp-subject';

/** Starts the standalone process on a fresh data directory; resolves with its gateway URL. */
function startStandalone(dataDir: string): Promise<{ child: ChildProcess; url: string; tail: () => string }> {
  const child = spawn(process.execPath, [STANDALONE], {
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/tmp', NO_COLOR: '1', AGORA_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: string) => (output = (output + chunk).slice(-20_000));
  const tail = () => output.split('\n').slice(-20).join('\n');
  child.stderr!.setEncoding('utf8').on('data', keep);
  return new Promise((resolve, reject) => {
    let url: string | undefined;
    const timer = setTimeout(() => fail('printed no "ready" within 120 s'), 120_000);
    function fail(why: string) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`the standalone process ${why}:\n${tail()}`));
    }
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      keep(chunk);
      url ??= /gateway listening on (http:\/\/\S+) /.exec(output)?.[1];
      if (url !== undefined && /^agora: ready$/m.test(output)) {
        clearTimeout(timer);
        resolve({ child, url, tail });
      }
    });
    child.once('error', (error) => fail(`could not start (${error.message})`));
    child.once('exit', (code, signal) => fail(`exited (code ${code}, signal ${signal}) before it was ready`));
  });
}

interface Way {
  name: string;
  /** The n-th call of the worker w (each call in flight is a worker). */
  call: (w: number, n: number) => Promise<void>;
}

interface Measured {
  latencies: number[];
  errors: number;
}

async function main(): Promise<void> {
  console.log(`MCP overhead benchmark: ${fmt(COUNT)} UpdateAgent and ${fmt(COUNT)} GetAgent per way, ${INFLIGHT} in flight, the two ways taking turns.`);
  console.log(`node ${process.version}; the standalone process (embedded store, in-process transport) and \`agora mcp\` over stdio, from dist/\n`);
  const dataDir = mkdtempSync(join(tmpdir(), 'agora-bench-mcp-'));
  let standalone: Awaited<ReturnType<typeof startStandalone>> | undefined;
  let sdk: Agora | undefined;
  let mcp: Client | undefined;
  try {
    process.stdout.write('starting the standalone process ... ');
    standalone = await startStandalone(dataDir);
    console.log(standalone.url);
    const operatorKey = join(dataDir, 'operator.key.json');
    sdk = await Agora.connect({ url: standalone.url, signer: { keyFile: operatorKey } });
    // One agent per call in flight: a worker's commands change its own agent, one after another.
    for (let w = 0; w < INFLIGHT; w++) await sdk.send('RegisterAgent', { agentId: `${AGENT}-${w}`, publicKey: generateKeyPair().publicKey, displayName: 'bench subject', roles: ['executive'] });

    process.stdout.write('starting `agora mcp` and connecting the MCP client ... ');
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--key', operatorKey, '--url', standalone.url], stderr: 'ignore', env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/tmp' } });
    mcp = new Client({ name: 'bench-mcp', version: '1.0.0' });
    await mcp.connect(transport);
    const names = (await mcp.listTools()).tools.map((t) => t.name);
    for (const needed of ['update_agent', 'get_agent']) if (!names.includes(needed)) throw new Error(`agora mcp offers no ${needed} tool`);
    console.log(`${names.length} tools`);

    const agora = sdk;
    const client = mcp;
    let updates = 0;
    const update = (way: string, w: number, n: number) => {
      updates++;
      return { agentId: `${AGENT}-${w}`, displayName: `${way} ${n}` };
    };
    const toolCall = async (name: string, args: Record<string, unknown>) => {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
    };
    const kinds: { kind: string; ways: Way[] }[] = [
      {
        kind: 'UpdateAgent (command)',
        ways: [
          { name: 'HTTP, @agora/sdk', call: async (w, n) => void (await agora.send('UpdateAgent', update('http', w, n))) },
          { name: 'MCP tool call, stdio', call: (w, n) => toolCall('update_agent', update('mcp', w, n)) },
        ],
      },
      {
        kind: 'GetAgent (query)',
        ways: [
          { name: 'HTTP, @agora/sdk', call: async (w) => void (await agora.query('GetAgent', { agentId: `${AGENT}-${w}` })) },
          { name: 'MCP tool call, stdio', call: (w) => toolCall('get_agent', { agentId: `${AGENT}-${w}` }) },
        ],
      },
    ];

    // A warm-up of each way (JIT, connections), not counted.
    for (const { ways } of kinds) for (const way of ways) for (let i = 0; i < 20; i++) await way.call(0, -1 - i);

    const results = new Map<string, Measured>();
    for (const { kind, ways } of kinds) {
      const measured = ways.map(() => ({ latencies: [] as number[], errors: 0 }));
      ways.forEach((way, i) => results.set(`${kind}\u0000${way.name}`, measured[i]!));
      let next = 0;
      await Promise.all(
        Array.from({ length: INFLIGHT }, async (_, w) => {
          for (let n = next++; n < COUNT; n = next++) {
            // Each call of one way is followed by one of the other; which goes first alternates.
            for (const i of n % 2 === 0 ? [0, 1] : [1, 0]) {
              const m = measured[i]!;
              const t0 = performance.now();
              try {
                await ways[i]!.call(w, n);
              } catch (error) {
                if (m.errors++ === 0) console.error(`${kind} over ${ways[i]!.name}: ${(error as Error).message}`);
              }
              m.latencies.push(performance.now() - t0);
            }
          }
        }),
      );
      console.log(`${kind}: done`);
    }

    // Every command sent, either way, left one AgentUpdated in the log.
    const errors = [...results.values()].reduce((a, m) => a + m.errors, 0);
    const logged = await countUpdates(agora, updates - errors);
    const logOk = logged === updates - errors;

    const rows: string[][] = [];
    const verdicts: string[] = [];
    for (const { kind, ways } of kinds) {
      const [http, overMcp] = ways.map((w) => summary(results.get(`${kind}\u0000${w.name}`)!));
      for (const [way, s] of [
        [ways[0]!, http!],
        [ways[1]!, overMcp!],
      ] as const) {
        rows.push([kind, way.name, s.mean.toFixed(2), s.p50.toFixed(2), s.p99.toFixed(2), way === ways[0] ? '1.00x' : `${(s.p50 / http!.p50).toFixed(2)}x`, String(s.errors)]);
      }
      const delta = (d: number) => `${d >= 0 ? '+' : '-'}${Math.abs(d).toFixed(2)} ms`;
      verdicts.push(`${kind}: an MCP tool call takes ${(overMcp!.p50 / http!.p50).toFixed(2)}x the HTTP call at p50 (${delta(overMcp!.p50 - http!.p50)}), ${(overMcp!.mean / http!.mean).toFixed(2)}x on average (${delta(overMcp!.mean - http!.mean)})`);
    }
    const header = ['', 'way', 'mean ms', 'p50 ms', 'p99 ms', 'p50 vs HTTP', 'errors'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
    console.log(`\n${line(header)}\n| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |\n${rows.map(line).join('\n')}\n`);
    for (const v of verdicts) console.log(v);
    console.log(`log check: ${logged} AgentUpdated for ${updates} UpdateAgent sent (${errors} refused): ${logOk ? 'one event per command' : 'MISMATCH'}`);
    if (!logOk || errors > 0) process.exitCode = 1;
  } catch (error) {
    if (standalone) console.error(`--- standalone process, last lines:\n${standalone.tail()}`);
    throw error;
  } finally {
    await mcp?.close().catch(() => undefined);
    await sdk?.close().catch(() => undefined);
    if (standalone) await stopReplica({ ...standalone, id: 'standalone' });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The benchmark agents' AgentUpdated events in the log, read from its start until `expected` have come (or 60 s have passed). */
async function countUpdates(agora: Agora, expected: number): Promise<number> {
  let count = 0;
  const signal = AbortSignal.timeout(60_000);
  try {
    for await (const event of agora.events({ types: ['AgentUpdated'], from: 'start', signal })) {
      if (event.streamId.startsWith(`agent-${AGENT}-`) && ++count >= expected) break;
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
  return count;
}

/** One way's figures: mean and percentiles of its latencies. */
function summary(m: Measured): { mean: number; p50: number; p99: number; errors: number } {
  const sorted = Float64Array.from(m.latencies).sort();
  return { mean: sorted.reduce((a, b) => a + b, 0) / sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), errors: m.errors };
}

await main();
