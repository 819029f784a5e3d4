// A slow SSE client is dropped with a resumable position, instead of holding its subscription
// (and the events queued for it) for ever; a client reading at its own pace meanwhile gets every
// event. The slow client is an HTTP request whose response is never read.
import { mkdtempSync, rmSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedEventStore, type EventStore } from '@agora/eventstore';
import { InProcessAgoraClient, InProcessBus } from '@agora/messaging';
import { waitFor } from '@agora/testing';
import { startGateway, type Gateway } from '../src/index.js';
import { SseReader } from './fixtures.js';

const EVENTS = 600;
const SLOW_CLIENT_MS = 2_000;

describe('SSE: a slow client', () => {
  let dir: string;
  let store: EventStore;
  let gateway: Gateway;
  let bus: InProcessBus;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agora-sse-slow-'));
    store = await openEmbeddedEventStore({ directory: join(dir, 'events') });
    // Events of 16 KiB, so that the socket's buffers fill long before the end of the log.
    const filler = 'x'.repeat(16 * 1024);
    for (let i = 0; i < EVENTS; i++) await store.append(`thing-${i}`, [{ id: crypto.randomUUID(), type: 'ThingHappened', data: { i, filler }, metadata: {} }], 'no_stream');
    bus = new InProcessBus();
    gateway = await startGateway({ client: new InProcessAgoraClient(bus), store, port: 0, host: '127.0.0.1', logger: false, sseSlowClientMs: SLOW_CLIENT_MS });
  }, 60_000);

  afterAll(async () => {
    await gateway?.close();
    await store?.close();
    bus?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is dropped with the position to resume after, and resuming from it gets the rest in order; a reading client gets everything', async () => {
    // The slow one: headers read, body never.
    const slow = await new Promise<IncomingMessage>((resolve) => get(`${gateway.url}/v1/events`, resolve));
    slow.pause();
    const ended = new Promise<void>((resolve) => slow.socket.once('close', () => resolve()));
    // A normal reader at the same time (about 3 s on an idle machine; far longer on a loaded one, hence the waits).
    const reader = await SseReader.open(`${gateway.url}/v1/events`);
    await waitFor(() => reader.messages.length >= EVENTS, 'the reading client to get every event', 90_000);
    expect(reader.messages.slice(0, EVENTS).map((m) => (JSON.parse(m.data) as { data: { i: number } }).data.i)).toEqual(Array.from({ length: EVENTS }, (_, i) => i));
    reader.close();

    // The slow one is let go once it has read nothing for SLOW_CLIENT_MS; read what it was sent.
    await new Promise((resolve) => setTimeout(resolve, SLOW_CLIENT_MS * 1.5));
    let text = '';
    slow.setEncoding('utf8').on('data', (c: string) => (text += c));
    slow.resume();
    await Promise.race([ended, new Promise((resolve) => slow.once('end', resolve))]);
    const frames = text.split('\n\n').filter((f) => f.startsWith('id:') || f.startsWith('event: dropped'));
    const dropped = frames.at(-1)!;
    expect(dropped).toMatch(/^event: dropped\ndata: /);
    const { reason, resumeAfter } = JSON.parse(dropped.split('data: ')[1]!) as { reason: string; resumeAfter: string };
    expect(reason).toBe('slow_client');
    const delivered = frames.filter((f) => f.startsWith('id:'));
    expect(delivered.length).toBeLessThan(EVENTS);
    expect(delivered.at(-1)!.split('\n')[0]).toBe(`id: ${resumeAfter}`);

    // Resuming where it was dropped gives exactly the rest.
    const resumed = await SseReader.open(`${gateway.url}/v1/events`, { 'last-event-id': resumeAfter });
    await waitFor(() => resumed.messages.length >= EVENTS - delivered.length, 'the rest after resuming', 90_000);
    const rest = resumed.messages.map((m) => (JSON.parse(m.data) as { data: { i: number } }).data.i);
    expect(rest).toEqual(Array.from({ length: EVENTS - delivered.length }, (_, k) => delivered.length + k));
    resumed.close();
  }, 240_000);
});
