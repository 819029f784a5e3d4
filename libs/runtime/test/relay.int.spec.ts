// The relay over the real transports: committed events reach agora.evt.<category>.<EventType> in
// order, and a relay restarted with its checkpoint neither skips an event nor sends the history again;
// catching up, it waits for the server once per batch, never past its checkpoint.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileCheckpointStore } from '@agora/eventsourcing';
import { openEmbeddedEventStore, type EventStore } from '@agora/eventstore';
import { EventPublisher, InProcessAgoraClient, InProcessBus, NatsAgoraClient, type AgoraClient, type WireConnection } from '@agora/messaging';
import { startNatsServer, waitFor, type PrivateNatsServer } from '@agora/testing';
import { runEventRelay, startEventRelay } from '../src/index.js';

interface Heard {
  subject: string;
  id: string;
  stream: string;
}

type Transport = { name: string; open(): Promise<{ client: AgoraClient; publisher: EventPublisher; close(): Promise<void> }> };

let nats: PrivateNatsServer;
beforeAll(async () => {
  nats = await startNatsServer();
});
afterAll(() => nats?.stop());

const transports: Transport[] = [
  {
    name: 'in-process bus',
    async open() {
      const bus = new InProcessBus();
      return { client: new InProcessAgoraClient(bus), publisher: EventPublisher.inProcess(bus), close: async () => bus.close() };
    },
  },
  {
    name: 'NATS',
    async open() {
      const client = await NatsAgoraClient.connect({ servers: nats.url, name: 'relay-test' });
      return { client, publisher: EventPublisher.overNats(client.connection), close: () => client.close() };
    },
  },
];

describe.each(transports)('the event relay over the $name', (transport) => {
  let dir: string;
  let store: EventStore;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agora-relay-'));
    store = await openEmbeddedEventStore({ directory: join(dir, 'events') });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('publishes every committed event in order, and after a restart only what came since', async () => {
    const { client, publisher, close } = await transport.open();
    const heard: Heard[] = [];
    const sub = client.subscribe('agora.evt.>', ({ subject, headers }) => heard.push({ subject, id: headers['Agora-Event-Id']!, stream: headers['Agora-Stream']! }));
    try {
      const appendSome = async (from: number, count: number) => {
        for (let i = from; i < from + count; i++) await store.append(`order-${i % 2}`, [{ type: i % 3 === 0 ? 'Placed' : 'Paid', data: { i } }], 'any');
      };
      const checkpoints = new FileCheckpointStore(join(dir, 'checkpoints'));
      await appendSome(0, 5);
      const first = await runEventRelay({ store, publisher, checkpoints });
      await appendSome(5, 3);
      await waitFor(() => heard.length === 8, 'the first 8 events');
      await first.close();

      await appendSome(8, 4);
      const second = await runEventRelay({ store, publisher, checkpoints });
      await waitFor(() => heard.length >= 12, 'the 4 events appended while the relay was down');
      await new Promise((resolve) => setTimeout(resolve, 100));
      await second.close();

      const all: Heard[] = [];
      for await (const e of store.readAll()) all.push({ subject: `agora.evt.order.${e.type}`, id: e.id, stream: e.streamId });
      // Exactly the log, in its order: nothing skipped, nothing sent twice after the restart.
      expect(heard).toEqual(all);
    } finally {
      sub.unsubscribe();
      await close();
    }
  });
});

describe('the event relay catching up', () => {
  let dir: string;
  let store: EventStore;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agora-relay-'));
    store = await openEmbeddedEventStore({ directory: join(dir, 'events') });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends the history without a round trip per event, and moves its checkpoint only past events that reached the server', async () => {
    const events = 2_500;
    for (let i = 0; i < events; i++) await store.append(`order-${i % 7}`, [{ type: 'Placed', data: { i } }], 'any');
    const order = new Map<string, number>();
    for await (const e of store.readAll()) order.set(e.position, order.size + 1);
    const sent: string[] = [];
    let reached = 0;
    let flushes = 0;
    const wire: WireConnection = {
      subscribe: () => {
        throw new Error('not used');
      },
      publish: (subject) => void sent.push(subject),
      request: () => Promise.reject(new Error('not used')),
      gather: () => Promise.reject(new Error('not used')),
      flush: async () => {
        flushes++;
        reached = sent.length;
      },
    };
    const saves: Array<{ events: number; reached: number }> = [];
    const checkpoints = {
      load: async () => undefined,
      save: async (_name: string, position: string) => void saves.push({ events: order.get(position)!, reached }),
    };
    const relay = await startEventRelay({ store, publisher: new EventPublisher(wire), checkpoints });
    await relay.stop();
    expect(sent).toHaveLength(events);
    expect(flushes).toBeLessThan(events / 100);
    expect(saves.at(-1)).toEqual({ events, reached: events });
    for (const save of saves) expect(save.reached).toBeGreaterThanOrEqual(save.events);
  });
});
