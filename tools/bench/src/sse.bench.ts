/**
 * SSE at scale: `npm run bench:sse -- --help`. See sse-load.ts for what one run does; this prints
 * its figures and exits 1 when a target was not met.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { describeNatsServer, resolveNatsServer, startNatsServer } from '@agora/testing';
import { formatReport, runSseLoad, targetsMet } from './sse-load.js';

/** The gateway's memory bound, in MiB, that a run is checked against (docs/benchmarks.md, "SSE at scale": what it is made of). */
const DEFAULT_BOUND = 512;

const HELP = `Usage: npm run bench:sse -- [options]

Fills a JetStream log, starts a registry and the gateway as built processes (apps/*/dist/main.js;
npm run bench:sse builds first), opens SSE clients on GET /v1/events (half replaying from the start,
half live with from=end) while signed commands go through the gateway and /health is asked every
second; checks every client's events against the log and prints the figures.
  --events N        events in the log before the clients connect (default 100000, or $SSE_BENCH_EVENTS)
  --event-bytes N   bytes of filler in each event (default 0: events of about 320 bytes as SSE)
  --clients N       SSE clients, half replaying and half live (default 1000, or $SSE_BENCH_CLIENTS)
  --commands N      signed commands sent meanwhile, 4 in flight (default 200)
  --slow N          replaying clients that stop reading for twice the gateway's slow-client limit (default 5)
  --memory MiB      the gateway's memory bound checked (default ${DEFAULT_BOUND})
  --timeout S       give up waiting for the clients after S seconds (default 600)
  --nats URL        NATS server with JetStream to use (default: a private nats-server on a free port)
  --help            this text`;

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: process.env['SSE_BENCH_EVENTS'] ?? '100000' },
    clients: { type: 'string', default: process.env['SSE_BENCH_CLIENTS'] ?? '1000' },
    'event-bytes': { type: 'string', default: '0' },
    commands: { type: 'string', default: '200' },
    slow: { type: 'string', default: '5' },
    memory: { type: 'string', default: String(DEFAULT_BOUND) },
    timeout: { type: 'string', default: '600' },
    nats: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}

function count(v: string, name: string, min = 1): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min) {
    console.error(`--${name} must be an integer of at least ${min}, got ${JSON.stringify(v)}`);
    process.exit(2);
  }
  return n;
}

const events = count(values.events, 'events');
const clients = count(values.clients, 'clients', 2);
const memoryBound = count(values.memory, 'memory');
const dist = (app: string) => [fileURLToPath(new URL(`../../../apps/${app}/dist/main.js`, import.meta.url))];

const nats = values.nats === undefined ? await startNatsServer() : undefined;
const natsUrl = values.nats ?? nats!.url;
console.log(`SSE benchmark: ${events.toLocaleString('en-US')} events, ${clients.toLocaleString('en-US')} clients; node ${process.version}, NATS at ${natsUrl}${nats ? ` (private: ${describeNatsServer(resolveNatsServer())})` : ''}\n`);
try {
  const report = await runSseLoad({
    natsUrl,
    events,
    eventBytes: count(values['event-bytes'], 'event-bytes', 0),
    clients,
    commands: count(values.commands, 'commands', 0),
    slowClients: count(values.slow, 'slow', 0),
    timeoutMs: count(values.timeout, 'timeout') * 1000,
    nodeArgs: (app) => dist(app),
    baseline: true,
    log: (line) => console.log(line),
  });
  console.log(`\n${formatReport(report, memoryBound)}\n`);
  const met = targetsMet(report, memoryBound);
  console.log(met ? 'all targets met' : 'NOT all targets met (see above)');
  if (!met) {
    if (report.gatewayWarnings.length > 0) console.log(`\nthe gateway's last warnings:\n${report.gatewayWarnings.join('\n')}`);
    process.exitCode = 1;
  }
} finally {
  await nats?.stop();
}
