// SSE at scale, small: the benchmark's run (npm run bench:sse) at 10k events and 100 clients, with
// the registry and the gateway as processes of their own (from source), on a private nats-server.
import { sourceArgs, startNatsServer, type PrivateNatsServer } from '@agora/testing';
import { formatReport, runSseLoad } from '../src/sse-load.js';

/** The gateway's memory bound (docs/benchmarks.md, "SSE at scale"), the same as the benchmark's at 1,000 clients; from source it starts ~100 MiB larger. */
const MEMORY_BOUND_MIB = 512;

describe('SSE at scale (small)', () => {
  let nats: PrivateNatsServer;
  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterAll(() => nats?.stop());

  it('gives 50 replaying and 50 live clients every event in order while commands are served, /health stays ok, a slow client is dropped and resumes', async () => {
    const report = await runSseLoad({
      natsUrl: nats.url,
      events: 10_000,
      // 2 KiB events: 20 MiB per replay, more than a paused client's socket buffers hold.
      eventBytes: 2_048,
      clients: 100,
      commands: 20,
      slowClients: 2,
      slowClientMs: 3_000,
      timeoutMs: 40_000,
      nodeArgs: (app) => sourceArgs(`apps/${app}/src/main.ts`),
    });
    console.log(formatReport(report, MEMORY_BOUND_MIB));
    expect(report.mismatches).toEqual([]);
    expect(report.errors).toEqual([]);
    expect(report.replay).toMatchObject({ clients: 50, complete: 50 });
    expect(report.live).toMatchObject({ clients: 50, complete: 50 });
    expect(report.slow).toMatchObject({ clients: 2, dropped: 2, badResumes: 0 });
    expect(report.health.failed).toBe(0);
    expect(report.health.ok).toBeGreaterThan(0);
    expect(report.commands).toMatchObject({ sent: 20, ok: 20, timeouts: 0 });
    expect(report.relayed.received).toBe(report.relayed.expected);
    expect(report.gatewayMetrics['agora_nats_slow_consumer_events_total']).toBe(0);
    expect(Math.max(report.memory.peakRssMiB, report.memory.hwmMiB)).toBeLessThan(MEMORY_BOUND_MIB);
  }, 120_000);
});
