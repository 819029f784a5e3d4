// Exact idempotency, property-based, on every store adapter here: one commandId is one command
// across every stream, type, actor and payload. Random sequences of commands (ids, streams, types
// and payloads drawn from small pools, so that reuse is frequent) go through two "replicas" (each
// a handler with an aggregate cache of its own) writing to one log, and are checked against a
// model: the first command that writes with an id owns it; the same command again is a duplicate
// (the first result, `duplicate: true`); any other command with that id is refused
// `command_id_reused`; a refusal or a reuse writes nothing.
import { randomUUID } from 'node:crypto';
import { AgoraError } from '@agora/contracts';
import { type Command, type Decider, type DomainEvent } from '@agora/decider';
import { openJetStreamEventStore, openKurrentDbEventStore, type EventStore } from '@agora/eventstore';
import { deleteJetStreamLogs, scaled, TEST_NATS_URL, uniqueJetStreamLog } from '@agora/testing';
import fc from 'fast-check';
import { AggregateCache, COMMAND_ID_CATEGORY, handleCommand } from '../src/index.js';
import { freshCategory, openTempStore, readAll, removeTempDirs } from './helpers.js';

const SEED = 20_261_123;

type TallyCommand = Command<'Add' | 'Mark' | 'Touch', { n: number }>;
type TallyEvent = DomainEvent<'Added', { n: number }> | DomainEvent<'Marked', { n: number }>;

/** A tally: Add and Mark always write; Touch never does (an "already satisfied" command). */
const tally: Decider<TallyCommand, TallyEvent, { total: number }> = {
  initialState: () => ({ total: 0 }),
  evolve: (state, event) => ({ total: state.total + event.data.n }),
  decide: (command) => (command.type === 'Touch' ? [] : [{ type: command.type === 'Add' ? 'Added' : 'Marked', data: { n: command.payload.n } }]),
};

interface Step {
  id: number;
  stream: number;
  type: TallyCommand['type'];
  actor: 'alice' | 'bob';
  n: number;
  replica: 0 | 1;
}

const step: fc.Arbitrary<Step> = fc.record({
  id: fc.integer({ min: 0, max: 3 }),
  stream: fc.integer({ min: 0, max: 2 }),
  type: fc.constantFrom<TallyCommand['type']>('Add', 'Add', 'Mark', 'Touch'),
  actor: fc.constantFrom<'alice' | 'bob'>('alice', 'alice', 'bob'),
  n: fc.integer({ min: 1, max: 2 }),
  replica: fc.constantFrom<0 | 1>(0, 1),
});

/** `store` without its atomic appendMany: the command path then reserves with an append of its own, as on a server without atomic batches. */
function twoAppends(store: EventStore): EventStore {
  return {
    kind: store.kind,
    append: (s, e, x) => store.append(s, e, x),
    readStream: (s, o) => store.readStream(s, o),
    readAll: (o) => store.readAll(o),
    headPosition: () => store.headPosition(),
    comparePositions: (a, b) => store.comparePositions(a, b),
    subscribe: (o) => store.subscribe(o),
    close: () => store.close(),
  };
}

const adapters: [string, () => Promise<{ stores: [EventStore, EventStore]; close(): Promise<void> }>][] = [
  [
    'embedded, reservation and events in one atomic append',
    async () => {
      const { store } = await openTempStore();
      expect(store.appendMany).toBeDefined();
      return { stores: [store, store], close: () => store.close() };
    },
  ],
  [
    'embedded, reservation and events in two appends',
    async () => {
      const { store } = await openTempStore();
      const plain = twoAppends(store);
      return { stores: [plain, plain], close: () => store.close() };
    },
  ],
  [
    'jetstream',
    async () => {
      const log = uniqueJetStreamLog('ids');
      const open = () => openJetStreamEventStore({ servers: TEST_NATS_URL, streamName: log.streamName, subjectPrefix: log.subjectPrefix, logger: { warn: () => undefined } });
      const a = await open();
      const b = await open();
      return { stores: [a, b], close: async () => void (await Promise.all([a.close(), b.close()])) };
    },
  ],
];
const kurrentUrl = process.env['KURRENTDB_URL'];
if (kurrentUrl) {
  adapters.push([
    'kurrentdb',
    async () => {
      const a = await openKurrentDbEventStore({ connectionString: kurrentUrl });
      const b = await openKurrentDbEventStore({ connectionString: kurrentUrl });
      return { stores: [a, b], close: async () => void (await Promise.all([a.close(), b.close()])) };
    },
  ]);
} else {
  it.skip('kurrentdb: set KURRENTDB_URL (e.g. kurrentdb://127.0.0.1:2113?tls=false) to run the same property there', () => undefined);
}

describe.each(adapters)('one commandId, one command (%s store)', (_name, open) => {
  let opened: Awaited<ReturnType<typeof open>>;
  beforeAll(async () => {
    opened = await open();
  }, 30_000);
  afterAll(async () => {
    await opened?.close();
    await deleteJetStreamLogs();
    removeTempDirs();
  }, 30_000);

  const written = async (store: EventStore, category: string) => (await readAll(store)).filter((e) => e.streamId.startsWith(`${category}-`));

  it('random sequences with reused ids match the model: duplicates answered with the first result, every other reuse refused, nothing written', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 14 }), async (steps) => {
        const [storeA, storeB] = opened.stores;
        const caches = [new AggregateCache(tally), new AggregateCache(tally)];
        const category = freshCategory('t');
        const ids = Array.from({ length: 4 }, () => randomUUID());
        /** By id: the command that owns it and its first result. */
        const owners = new Map<string, { key: string; result: unknown }>();
        let events = 0;
        for (const s of steps) {
          const commandId = ids[s.id]!;
          const streamId = `${category}-${s.stream}`;
          const payload = { n: s.n };
          const key = JSON.stringify([streamId, s.type, s.actor, payload]);
          const now = new Date().toISOString();
          const run = () =>
            handleCommand({
              store: s.replica === 0 ? storeA : storeB,
              decider: tally,
              streamId,
              command: { type: s.type, payload, context: { now, actor: s.actor, actorRoles: [], commandId } },
              metadata: { commandId, commandType: s.type, actor: s.actor, issuedAt: now, signature: 'sig', payload },
              cache: caches[s.replica]!,
            });
          const owner = owners.get(commandId);
          if (owner && owner.key !== key) {
            const refused = await run().then(
              () => undefined,
              (error: unknown) => error,
            );
            expect(refused).toBeInstanceOf(AgoraError);
            expect(refused).toMatchObject({ code: 'command_id_reused' });
          } else if (owner) {
            expect(await run()).toEqual({ ...(owner.result as object), duplicate: true });
          } else {
            const result = await run();
            expect(result).toMatchObject({ commandId, streamId, duplicate: false, events: s.type === 'Touch' ? [] : [s.type === 'Add' ? 'Added' : 'Marked'] });
            if (s.type !== 'Touch') {
              owners.set(commandId, { key, result });
              events++;
            }
          }
          expect(await written(storeA, category)).toHaveLength(events);
        }
        // One reservation per id that wrote, each naming its command.
        const reservations = (await readAll(storeA)).filter((e) => e.streamId.startsWith(`${COMMAND_ID_CATEGORY}-`) && owners.has(e.streamId.slice(COMMAND_ID_CATEGORY.length + 1)));
        expect(reservations).toHaveLength(owners.size);
      }),
      { seed: SEED, numRuns: scaled(25, 250), endOnFailure: true },
    );
  }, scaled(120_000, 1_200_000));

  it('the same command racing on two replicas is written once; a different command racing for its id is refused', async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.boolean(), async (sameStream, samePayload) => {
        const [storeA, storeB] = opened.stores;
        const category = freshCategory('r');
        const commandId = randomUUID();
        const now = new Date().toISOString();
        const attempt = (store: EventStore, stream: string, n: number) =>
          handleCommand({
            store,
            decider: tally,
            streamId: `${category}-${stream}`,
            command: { type: 'Add', payload: { n }, context: { now, actor: 'alice', actorRoles: [], commandId } },
            metadata: { commandId, commandType: 'Add', actor: 'alice', issuedAt: now, signature: 'sig', payload: { n } },
          }).then(
            (result) => ({ result }),
            (error: unknown) => ({ error }),
          );
        const outcomes = await Promise.all([attempt(storeA, '1', 1), attempt(storeB, sameStream ? '1' : '2', samePayload ? 1 : 2)]);
        const stored = await written(storeA, category);
        expect(stored).toHaveLength(1);
        if (sameStream && samePayload) {
          expect(outcomes.every((o) => 'result' in o)).toBe(true);
        } else {
          expect(outcomes.filter((o) => 'error' in o)).toEqual([{ error: expect.objectContaining({ code: 'command_id_reused' }) }]);
        }
      }),
      { seed: SEED, numRuns: scaled(12, 120) },
    );
  }, scaled(120_000, 1_200_000));
});
