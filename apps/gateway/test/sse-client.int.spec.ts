/**
 * The console's client of GET /v1/events (@agora/console openEventStream; the same code runs in
 * the browser and in Node) against
 * a real gateway over a real store: events in log order with their categories, the server-side
 * filters, and a dropped connection resumed from the last position (Last-Event-ID), nothing
 * skipped or repeated, once the gateway is back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedEventStore, type EventStore } from '@agora/eventstore';
import { categoryOf } from '@agora/contracts';
import { openEventStream, type AgoraEvent, type StreamStatus } from '@agora/console';
import { InProcessAgoraClient, InProcessBus } from '@agora/messaging';
import { waitFor } from '@agora/testing';
import { startGateway, type Gateway } from '../src/index.js';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('the console SSE client over a real gateway', () => {
  let dir: string;
  let store: EventStore;
  let bus: InProcessBus;
  let gateway: Gateway;
  let port: number;
  const start = async () => {
    gateway = await startGateway({ client: new InProcessAgoraClient(bus), store, port, host: '127.0.0.1', logger: false, console: false, sseHeartbeatMs: 500 });
  };
  const append = (stream: string, type: string, n: number) => store.append(stream, [{ id: crypto.randomUUID(), type, data: { n }, metadata: {} }], 'any');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agora-console-sse-'));
    store = await openEmbeddedEventStore({ directory: join(dir, 'events') });
    bus = new InProcessBus();
    port = await freePort();
    await start();
  });

  afterAll(async () => {
    await gateway?.close();
    await store?.close();
    bus?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers every event in order, filters by category, and resumes after a drop without gaps or repeats', async () => {
    for (let n = 0; n < 5; n++) await append(`proposal-p${n % 2}`, 'ProposalSubmitted', n);
    await append('agent-a', 'AgentRegistered', 100);

    const all: AgoraEvent[] = [];
    const proposals: AgoraEvent[] = [];
    const statuses: StreamStatus[] = [];
    const closeAll = openEventStream({ baseUrl: gateway.url, onEvent: (e) => all.push(e), onStatus: (s) => statuses.push(s) });
    const closeProposals = openEventStream({ baseUrl: gateway.url, categories: ['proposal'], onEvent: (e) => proposals.push(e) });
    try {
      await waitFor(() => all.length === 6 && proposals.length === 5, 'the history');
      expect(all.map((e) => (e.data as { n: number }).n)).toEqual([0, 1, 2, 3, 4, 100]);
      expect(all.map((e) => categoryOf(e.streamId))).toEqual(['proposal', 'proposal', 'proposal', 'proposal', 'proposal', 'agent']);
      expect(proposals.every((e) => e.type === 'ProposalSubmitted')).toBe(true);
      expect(statuses).toEqual(['connecting', 'live']);

      // The gateway goes away; events are committed meanwhile; it comes back on the same address.
      await gateway.close();
      await waitFor(() => statuses.includes('reconnecting'), 'the client to notice the drop');
      for (let n = 5; n < 8; n++) await append('proposal-p9', 'ProposalSubmitted', n);
      await start();
      await waitFor(() => all.length === 9, 'the events committed while the gateway was down', 15_000);
      expect(all.map((e) => (e.data as { n: number }).n)).toEqual([0, 1, 2, 3, 4, 100, 5, 6, 7]);
      expect(new Set(all.map((e) => e.position)).size).toBe(9);
      expect(statuses.at(-1)).toBe('live');
      await waitFor(() => proposals.length === 8, 'the filtered stream to resume too', 15_000);

      await append('proposal-p1', 'ProposalRevised', 8);
      await waitFor(() => all.length === 10, 'a live event');
    } finally {
      closeAll();
      closeProposals();
    }
  }, 60_000);
});
