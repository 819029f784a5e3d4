// A process's metrics over real parts: an embedded store whose appends and reads are timed (a
// conflict counted as such), the command observations a dispatcher reports, a reactor's and a
// scheduler's lag, a NATS connection that loses its server and reconnects, and the HTTP endpoint.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { jetstream } from '@nats-io/jetstream';
import { DuplicateRevision, openEmbeddedEventStore, openJetStreamEventStore, WrongExpectedRevision, type EventStore, type RecordedEvent } from '@agora/eventstore';
import { connectNats } from '@agora/messaging';
import { deleteJetStreamLogs, NATS_SERVER_BIN, TEST_NATS_URL, uniqueJetStreamLog, waitFor } from '@agora/testing';
import { outcomeOf, ProcessMetrics, serveMetrics } from '../src/index.js';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

/** One sample's value from the registry's text, by name and labels (`{a="b",...}` as printed). */
async function sample(metrics: ProcessMetrics, line: string): Promise<number | undefined> {
  const text = await metrics.registry.metrics();
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('ProcessMetrics', () => {
  let dir: string;
  let store: EventStore;
  let metrics: ProcessMetrics;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agora-metrics-'));
    metrics = new ProcessMetrics();
    store = metrics.instrumentStore(await openEmbeddedEventStore({ directory: join(dir, 'events') }), 'embedded');
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('times appends and stream reads of the real store, and counts a conflict as one', async () => {
    await store.append('thing-1', [{ type: 'Made', data: {} }], 'no_stream');
    await expect(store.append('thing-1', [{ type: 'Made', data: {} }], 'no_stream')).rejects.toBeInstanceOf(WrongExpectedRevision);
    expect(await store.readStream('thing-1')).toHaveLength(1);
    expect(await sample(metrics, 'agora_store_appends_total{adapter="embedded",outcome="ok"}')).toBe(1);
    expect(await sample(metrics, 'agora_store_appends_total{adapter="embedded",outcome="conflict"}')).toBe(1);
    expect(await sample(metrics, 'agora_store_append_duration_seconds_count{adapter="embedded"}')).toBe(2);
    expect(await sample(metrics, 'agora_store_read_duration_seconds_count{adapter="embedded"}')).toBe(1);
    // Everything else passes through to the store itself.
    const all: RecordedEvent[] = [];
    for await (const event of store.readAll()) all.push(event);
    expect(all.map((e) => e.streamId)).toEqual(['thing-1']);
  });

  it('counts a stream read refused because two commits claim one revision (a JetStream log a faulty server let through)', async () => {
    const { streamName, subjectPrefix } = uniqueJetStreamLog('dupmetric');
    const jet = metrics.instrumentStore(await openJetStreamEventStore({ servers: TEST_NATS_URL, streamName, subjectPrefix, logger: { warn: () => undefined } }), 'jetstream');
    try {
      expect(await sample(metrics, 'agora_store_duplicate_revisions_total{adapter="jetstream"}')).toBe(0);
      await jet.append('vote-1', [{ type: 'Opened', data: {} }], 'no_stream');
      // A second commit at revision 0, published past the store (as an unfixed clustered server lets one through).
      const nc = await connectNats({ servers: TEST_NATS_URL, name: 'metrics-test' });
      try {
        await jetstream(nc).publish(`${subjectPrefix}.vote-1`, JSON.stringify({ v: 1, r: 0, e: [{ id: randomUUID(), type: 'Opened', data: {}, metadata: {} }] }));
      } finally {
        await nc.close();
      }
      await expect(jet.readStream('vote-1')).rejects.toBeInstanceOf(DuplicateRevision);
      expect(await sample(metrics, 'agora_store_duplicate_revisions_total{adapter="jetstream"}')).toBe(1);
      await jet.append('vote-2', [{ type: 'Opened', data: {} }], 'no_stream');
      expect(await jet.readStream('vote-2')).toHaveLength(1);
      expect(await sample(metrics, 'agora_store_duplicate_revisions_total{adapter="jetstream"}')).toBe(1);
    } finally {
      await jet.close();
      await deleteJetStreamLogs();
    }
  });

  it('counts commands by service, type, outcome and code: accepted, refused by the code, failed', async () => {
    expect([outcomeOf(undefined), outcomeOf('forbidden'), outcomeOf('invalid_command'), outcomeOf('internal'), outcomeOf('conflict'), outcomeOf('timeout')]).toEqual(['accepted', 'refused', 'refused', 'failed', 'failed', 'failed']);
    const observe = metrics.observer.command!;
    observe({ service: 'tribunal', type: 'SubmitReview', code: undefined, seconds: 0.004 });
    observe({ service: 'tribunal', type: 'SubmitReview', code: 'invalid_command', seconds: 0.001 });
    observe({ service: 'tribunal', type: 'SubmitReview', code: 'invalid_command', seconds: 0.001 });
    observe({ service: 'registry', type: 'UpdateAgent', code: 'unavailable', seconds: 2 });
    expect(await sample(metrics, 'agora_commands_handled_total{service="tribunal",type="SubmitReview",outcome="accepted",code="none"}')).toBe(1);
    expect(await sample(metrics, 'agora_commands_handled_total{service="tribunal",type="SubmitReview",outcome="refused",code="invalid_command"}')).toBe(2);
    expect(await sample(metrics, 'agora_commands_handled_total{service="registry",type="UpdateAgent",outcome="failed",code="unavailable"}')).toBe(1);
    expect(await sample(metrics, 'agora_commands_duration_seconds_bucket{le="0.005",service="tribunal",type="SubmitReview"}')).toBe(3);
    expect(await sample(metrics, 'agora_commands_duration_seconds_bucket{le="1",service="registry",type="UpdateAgent"}')).toBe(0);
  });

  it("reports a reactor's lag while it holds an event (0 once done) and a scheduler's overdue deadline and lateness", async () => {
    let now = Date.parse('2026-01-01T00:01:00Z');
    const clock = () => now;
    const m = new ProcessMetrics({ defaultMetrics: false, now: clock });
    const reactor = m.reactor('tribunal-rounds', clock);
    expect(await sample(m, 'agora_reactor_lag_seconds{reactor="tribunal-rounds"}')).toBe(0);
    const stuck = { recordedAt: '2026-01-01T00:00:50Z' } as RecordedEvent;
    reactor.begin(stuck);
    expect(await sample(m, 'agora_reactor_lag_seconds{reactor="tribunal-rounds"}')).toBe(10);
    now += 5_000; // still stuck on it
    expect(await sample(m, 'agora_reactor_lag_seconds{reactor="tribunal-rounds"}')).toBe(15);
    // Several streams' reactions at once: a later event taken in and done does not hide the one still stuck.
    const later = { recordedAt: '2026-01-01T00:01:04Z' } as RecordedEvent;
    reactor.begin(later);
    reactor.end(later);
    expect(await sample(m, 'agora_reactor_lag_seconds{reactor="tribunal-rounds"}')).toBe(15);
    reactor.end(stuck);
    expect(await sample(m, 'agora_reactor_lag_seconds{reactor="tribunal-rounds"}')).toBe(0);
    expect(await sample(m, 'agora_reactor_delay_seconds_count{reactor="tribunal-rounds"}')).toBe(2);
    expect(await sample(m, 'agora_reactor_delay_seconds_sum{reactor="tribunal-rounds"}')).toBe(11);
    reactor.stop();
    expect(await sample(m, 'agora_reactor_lag_seconds{reactor="tribunal-rounds"}')).toBeUndefined();

    const pending = [{ dueAt: '2026-01-01T00:00:30Z' }, { dueAt: '2026-01-01T00:10:00Z' }];
    const deadlines = m.deadlines('voting', () => pending, clock);
    expect(await sample(m, 'agora_deadline_overdue_seconds{scheduler="voting"}')).toBe(35);
    pending.shift();
    expect(await sample(m, 'agora_deadline_overdue_seconds{scheduler="voting"}')).toBe(0);
    deadlines.fired('2026-01-01T00:00:30Z');
    expect(await sample(m, 'agora_deadline_lateness_seconds_sum{scheduler="voting"}')).toBe(35);
    deadlines.stop();
    expect(await sample(m, 'agora_deadline_overdue_seconds{scheduler="voting"}')).toBeUndefined();
  });

  it('counts the disconnect and the reconnect of a NATS connection whose server restarts', async () => {
    const port = await freePort();
    const startServer = () => spawn(NATS_SERVER_BIN, ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    const stop = (child: ChildProcess) => new Promise<void>((ok) => (child.exitCode !== null ? ok() : (child.once('exit', () => ok()), child.kill('SIGKILL'))));
    let server = startServer();
    try {
      let nc: Awaited<ReturnType<typeof connectNats>> | undefined;
      await waitFor(async () => Boolean((nc = await connectNats({ servers: `127.0.0.1:${port}` }).catch(() => undefined))), 'the NATS server to accept a connection');
      metrics.watchNats(nc!, 'client');
      metrics.watchNats(nc!, 'client'); // watched once however often it is handed over
      expect(await sample(metrics, 'agora_nats_reconnects_total{connection="client"}')).toBe(0);
      expect(await sample(metrics, 'agora_nats_slow_consumer_events_total{connection="client"}')).toBe(0);
      await stop(server);
      await waitFor(async () => (await sample(metrics, 'agora_nats_disconnects_total{connection="client"}')) === 1, 'the disconnect to be counted');
      server = startServer();
      await waitFor(async () => (await sample(metrics, 'agora_nats_reconnects_total{connection="client"}')) === 1, 'the reconnect to be counted', 15_000);
      await nc!.close();
    } finally {
      await stop(server);
    }
  }, 30_000);

  it('serves the registry on /metrics, /health and the routes given; 404 and 405 otherwise', async () => {
    metrics.observer.command!({ service: 'voting', type: 'CastValidatorVote', code: undefined, seconds: 0.01 });
    const server = await serveMetrics({ registry: metrics.registry, port: 0, host: '127.0.0.1', routes: { '/verify': async () => ({ status: 500, body: { ok: false } }) } });
    try {
      const body = await (await fetch(server.url)).text();
      expect(body).toContain('agora_commands_handled_total{service="voting",type="CastValidatorVote",outcome="accepted",code="none"} 1');
      expect(body).toContain('process_cpu_user_seconds_total');
      const base = server.url.replace(/\/metrics$/, '');
      expect(await (await fetch(`${base}/health`)).json()).toEqual({ status: 'ok' });
      const verify = await fetch(`${base}/verify`);
      expect([verify.status, await verify.json()]).toEqual([500, { ok: false }]);
      expect((await fetch(`${base}/nope`)).status).toBe(404);
      expect((await fetch(server.url, { method: 'POST' })).status).toBe(405);
    } finally {
      await server.close();
    }
  });
});
