// The feed every SSE client reads from, with tiny limits so that every path is taken: history in
// many pages (read once, shared, some evicted from the cache and read again), the live events
// kept in memory, and a client resuming from a position the live events no longer hold.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { categoryOf } from '@agora/contracts';
import { COMMAND_ID_CATEGORY } from '@agora/eventsourcing';
import { openEmbeddedEventStore, type EventStore } from '@agora/eventstore';
import { InProcessAgoraClient, InProcessBus } from '@agora/messaging';
import { startGateway, type Gateway } from '../src/index.js';
import { SseReader } from './fixtures.js';

describe('SSE feed shared by every client', () => {
  let dir: string;
  let store: EventStore;
  let gateway: Gateway;
  let bus: InProcessBus;
  const readers: SseReader[] = [];

  /** Appends `count` events, every third one a command id reservation (which SSE leaves out unless asked). */
  async function append(count: number, label: string): Promise<void> {
    for (let i = 0; i < count; i++) {
      const stream = i % 3 === 2 ? `${COMMAND_ID_CATEGORY}-${randomUUID()}` : `thing-${label}${i % 4}`;
      await store.append(stream, [{ id: randomUUID(), type: 'ThingHappened', data: { label, i }, metadata: {} }], 'any');
    }
  }

  /** Positions of the events after `after` that SSE shows by default. */
  async function shown(after?: string): Promise<string[]> {
    const out: string[] = [];
    for await (const e of store.readAll(after === undefined ? {} : { after })) if (categoryOf(e.streamId) !== COMMAND_ID_CATEGORY) out.push(e.position);
    return out;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agora-sse-feed-'));
    store = await openEmbeddedEventStore({ directory: join(dir, 'events') });
    await append(60, 'old');
    bus = new InProcessBus();
    gateway = await startGateway({ client: new InProcessAgoraClient(bus), store, port: 0, host: '127.0.0.1', logger: false, sseFeed: { liveEvents: 8, pageEvents: 4, cachedPages: 2 } });
  });

  afterAll(async () => {
    for (const r of readers) r.close();
    await gateway?.close();
    await store?.close();
    bus?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const open = async (path: string, headers: Record<string, string> = {}) => {
    const reader = await SseReader.open(`${gateway.url}${path}`, headers);
    readers.push(reader);
    return reader;
  };

  it('gives replaying, live and filtered clients exactly their events in order, and a client behind the live events continues from history', async () => {
    const history = await shown();
    const replays = await Promise.all([open('/v1/events'), open('/v1/events'), open('/v1/events')]);
    const live = await open('/v1/events?from=end');
    const reservations = await open(`/v1/events?category=${COMMAND_ID_CATEGORY}`);
    await append(45, 'new');
    const everything = await shown();
    const newOnes = everything.slice(history.length);
    for (const reader of replays) expect((await reader.waitFor(everything.length, 10_000)).map((m) => m.id)).toEqual(everything);
    expect((await live.waitFor(newOnes.length, 10_000)).map((m) => m.id)).toEqual(newOnes);
    expect((await reservations.waitFor(35, 10_000)).every((m) => JSON.parse(m.data).streamId.startsWith(`${COMMAND_ID_CATEGORY}-`))).toBe(true);

    // From a position long gone from the 8 live events kept: history pages, then live.
    const resumeAfter = history[10]!;
    const resumed = await open('/v1/events', { 'last-event-id': resumeAfter });
    await append(3, 'later');
    const after = await shown(resumeAfter);
    expect((await resumed.waitFor(after.length, 10_000)).map((m) => m.id)).toEqual(after);
    for (const reader of [...replays, live, resumed]) expect(reader.messages.length).toBe(reader === live ? newOnes.length + 2 : reader === resumed ? after.length : everything.length + 2);
    expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
  }, 30_000);
});
