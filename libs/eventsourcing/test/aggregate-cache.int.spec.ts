// The aggregate cache of handleCommand, on the embedded store and on JetStream. A "replica" is a
// handler with a cache of its own (and, on JetStream, an adapter of its own, as a process has);
// the replicas of a test write to one log.
import { randomUUID } from 'node:crypto';
import { DomainError, type Command, type Decider, type DomainEvent } from '@agora/decider';
import { openJetStreamEventStore, type EventStore, type ReadStreamOptions } from '@agora/eventstore';
import { deleteJetStreamLogs, TEST_NATS_URL, uniqueJetStreamLog } from '@agora/testing';
import { AggregateCache, handleCommand, type AggregateCacheOptions, type CommandMetadata } from '../src/index.js';
import { freshCategory, openTempStore, removeTempDirs } from './helpers.js';

type DoorCommand = Command<'Open' | 'Close' | 'Knock' | 'KnockTwice', Record<string, never>>;
type DoorEvent = DomainEvent<'Opened', Record<string, never>> | DomainEvent<'Closed', Record<string, never>> | DomainEvent<'Knocked', { n: number }>;
interface DoorState {
  open: boolean;
  knocks: number;
}

/**
 * A door: Open and Close answer `[]` when the door already is so; a knock is refused on a closed
 * door and records how many knocks came before it (so a knock decided on a stale state shows).
 */
const door: Decider<DoorCommand, DoorEvent, DoorState> = {
  initialState: () => ({ open: false, knocks: 0 }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'Opened':
        return { ...state, open: true };
      case 'Closed':
        return { ...state, open: false };
      case 'Knocked':
        return { ...state, knocks: state.knocks + 1 };
    }
  },
  decide: (command, state) => {
    switch (command.type) {
      case 'Open':
        return state.open ? [] : [{ type: 'Opened', data: {} }];
      case 'Close':
        return state.open ? [{ type: 'Closed', data: {} }] : [];
      case 'Knock':
      case 'KnockTwice':
        if (!state.open) throw new DomainError('illegal_state', 'the door is closed', { knocks: state.knocks });
        return command.type === 'Knock'
          ? [{ type: 'Knocked', data: { n: state.knocks } }]
          : [
              { type: 'Knocked', data: { n: state.knocks } },
              { type: 'Knocked', data: { n: state.knocks + 1 } },
            ];
    }
  },
};

function commandOf(type: DoorCommand['type'], commandId: string = randomUUID()): { command: DoorCommand; metadata: CommandMetadata } {
  const now = new Date().toISOString();
  return {
    command: { type, payload: {}, context: { now, actor: 'alice', actorRoles: ['operator'], commandId } },
    metadata: { commandId, commandType: type, actor: 'alice', issuedAt: now },
  };
}

/** A handler with a cache of its own, over a store whose reads it records. */
class Replica {
  readonly cache: AggregateCache<DoorCommand, DoorEvent, DoorState>;
  readonly store: EventStore;
  /** Every readStream call, in order. */
  readonly reads: { streamId: string; fromRevision: number | undefined }[] = [];

  constructor(inner: EventStore, options: AggregateCacheOptions = {}) {
    this.cache = new AggregateCache(door, options);
    const reads = this.reads;
    this.store = {
      kind: inner.kind,
      append: (streamId, events, expected) => inner.append(streamId, events, expected),
      readStream: (streamId: string, options?: ReadStreamOptions) => {
        reads.push({ streamId, fromRevision: options?.fromRevision });
        return inner.readStream(streamId, options);
      },
      readAll: (options) => inner.readAll(options),
      headPosition: () => inner.headPosition(),
      comparePositions: (a, b) => inner.comparePositions(a, b),
      subscribe: (options) => inner.subscribe(options),
      close: () => inner.close(),
    };
  }

  run(type: DoorCommand['type'], streamId: string, commandId?: string, maxAttempts?: number) {
    return handleCommand({ store: this.store, decider: door, streamId, cache: this.cache, ...commandOf(type, commandId), ...(maxAttempts === undefined ? {} : { maxAttempts }) });
  }

  readsOf(streamId: string): (number | undefined)[] {
    return this.reads.filter((r) => r.streamId === streamId).map((r) => r.fromRevision);
  }
}

interface Setup {
  /** The stores replicas write through (on JetStream, one adapter per replica, as one per process). */
  stores: EventStore[];
  close(): Promise<void>;
}

const setups: [string, () => Promise<Setup>][] = [
  [
    'embedded',
    async () => {
      const { store } = await openTempStore();
      return { stores: [store, store, store], close: () => store.close() };
    },
  ],
  [
    'jetstream',
    async () => {
      const log = uniqueJetStreamLog('escache');
      const open = () => openJetStreamEventStore({ servers: TEST_NATS_URL, streamName: log.streamName, subjectPrefix: log.subjectPrefix, logger: { warn: () => undefined } });
      const first = await open();
      const stores = [first, await open(), await open()];
      return { stores, close: async () => void (await Promise.all(stores.map((s) => s.close()))) };
    },
  ],
];

afterAll(async () => {
  removeTempDirs();
  await deleteJetStreamLogs();
});

describe.each(setups)('handleCommand with an aggregate cache (%s store)', (_kind, open) => {
  let setup: Setup;
  let log: EventStore;
  const replica = (i: number, options?: AggregateCacheOptions) => new Replica(setup.stores[i]!, options);
  const stored = async (streamId: string) => (await log.readStream(streamId)).map((e) => [e.type, e.data, e.metadata['commandId']]);

  beforeAll(async () => {
    setup = await open();
    log = setup.stores[0]!;
  });
  afterAll(() => setup.close());

  it('decides a command on a kept stream without reading it, and appends at the kept revision', async () => {
    const a = replica(0);
    const s = `${freshCategory()}-1`;
    expect(await a.run('Open', s)).toMatchObject({ events: ['Opened'], revision: 0, duplicate: false });
    for (let i = 0; i < 3; i++) expect(await a.run('Knock', s)).toMatchObject({ events: ['Knocked'], revision: i + 1 });
    expect(await a.run('KnockTwice', s)).toMatchObject({ events: ['Knocked', 'Knocked'], revision: 5 });

    // One read, for the first command on a stream it had never seen.
    expect(a.readsOf(s)).toEqual([undefined]);
    expect(a.cache.peek(s)).toMatchObject({ revision: 5, state: { open: true, knocks: 5 } });
    expect((await stored(s)).map(([type, data]) => [type, data])).toEqual([['Opened', {}], ...[0, 1, 2, 3, 4].map((n) => ['Knocked', { n }])]);
  });

  it('on a conflict reads only the events appended since, folds them and appends after them', async () => {
    const [a, b] = [replica(0), replica(1)];
    const s = `${freshCategory()}-1`;
    await a.run('Open', s);
    await b.run('Knock', s);
    await b.run('Knock', s);
    // a keeps revision 0: its knock is refused by the store, then decided again on revisions 1-2.
    expect(await a.run('Knock', s)).toMatchObject({ events: ['Knocked'], revision: 3, duplicate: false });
    expect(a.readsOf(s)).toEqual([undefined, 1]);
    expect(a.cache.peek(s)).toMatchObject({ revision: 3, state: { knocks: 3 } });
    expect((await stored(s)).slice(1).map(([, data]) => data)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
    // The cache followed: the next command needs no read.
    await a.run('Knock', s);
    expect(a.readsOf(s)).toEqual([undefined, 1]);
  });

  it('answers a command another replica handled first (further on in the stream) as a duplicate, appending nothing', async () => {
    const [a, b] = [replica(0), replica(1)];
    const s = `${freshCategory()}-1`;
    await a.run('Open', s);
    await b.run('Knock', s);
    const commandId = randomUUID();
    const first = await b.run('Knock', s, commandId);
    expect(first).toMatchObject({ revision: 2, duplicate: false });

    // a still keeps revision 0: it decides again, the store refuses or absorbs the copy, and the
    // events read since show the command handled.
    const again = await a.run('Knock', s, commandId);
    expect(again).toEqual({ ...first, duplicate: true });
    expect(await stored(s)).toHaveLength(3);
    expect(a.cache.peek(s)).toMatchObject({ revision: 2, state: { knocks: 2 } });
    // and from then on from the cache alone
    const reads = a.reads.length;
    expect(await a.run('Knock', s, commandId)).toEqual({ ...first, duplicate: true });
    expect(a.reads).toHaveLength(reads);
  });

  it('appends nothing for a command another replica handled right after the kept revision, and answers with its revision and position', async () => {
    const [a, b] = [replica(0), replica(1)];
    const s = `${freshCategory()}-1`;
    await a.run('Open', s);
    const commandId = randomUUID();
    const first = await b.run('Knock', s, commandId);
    // Decided on the same state as the first copy: the store absorbs it (ids it holds), and the
    // answer cannot be told from a fresh append (documented in handleCommand).
    const again = await a.run('Knock', s, commandId);
    expect(again).toEqual({ ...first, duplicate: expect.any(Boolean) });
    expect(await stored(s)).toHaveLength(2);
    expect(a.cache.peek(s)).toMatchObject({ revision: 1, state: { knocks: 1 } });
    await a.run('Knock', s);
    expect((await stored(s)).map(([, data]) => data)).toEqual([{}, { n: 0 }, { n: 1 }]);
  });

  it('answers a repeat of a command with several events once, with all its events', async () => {
    const [a, b] = [replica(0), replica(1)];
    const s = `${freshCategory()}-1`;
    await a.run('Open', s);
    await b.run('Knock', s);
    const commandId = randomUUID();
    const first = await b.run('KnockTwice', s, commandId);
    await b.run('Knock', s);
    expect(await a.run('KnockTwice', s, commandId)).toEqual({ ...first, duplicate: true });
    expect(await b.run('KnockTwice', s, commandId)).toEqual({ ...first, duplicate: true });
    expect(await stored(s)).toHaveLength(5);
  });

  it('re-reads the stream before refusing on a kept state, and decides again when it moved', async () => {
    const [a, b] = [replica(0), replica(1)];
    const s = `${freshCategory()}-1`;
    await a.run('Close', s).catch(() => undefined);
    await b.run('Open', s);
    await a.run('Knock', s);
    await b.run('Close', s);
    // a keeps an open door (revision 1) and knocks; the store refuses the append (b closed the
    // door at revision 2), and on the stream read from revision 2 on the knock is refused.
    await expect(a.run('Knock', s)).rejects.toMatchObject({ code: 'illegal_state', details: { knocks: 1 } });
    expect(a.readsOf(s).at(-1)).toBe(2);
    // b opens again: a's kept state (closed, revision 2) would refuse; the read says otherwise.
    await b.run('Open', s);
    expect(await a.run('Knock', s)).toMatchObject({ events: ['Knocked'], revision: 4, duplicate: false });
    expect(a.readsOf(s).at(-1)).toBe(3);
  });

  it('refuses on a kept state after one read that finds nothing new', async () => {
    const a = replica(0);
    const s = `${freshCategory()}-1`;
    await a.run('Open', s);
    await a.run('Close', s);
    const before = a.readsOf(s).length;
    await expect(a.run('Knock', s)).rejects.toBeInstanceOf(DomainError);
    expect(a.readsOf(s).slice(before)).toEqual([2]);
  });

  it('re-reads the stream before answering "already satisfied" on a kept state', async () => {
    const [a, b] = [replica(0), replica(1)];
    const s = `${freshCategory()}-1`;
    await a.run('Open', s);
    await b.run('Close', s);
    // a keeps an open door: Open would be "already satisfied"; the stream says closed.
    expect(await a.run('Open', s)).toMatchObject({ events: ['Opened'], revision: 2, duplicate: false });
    // Satisfied on a state that has not moved: [] after one read from the kept revision on.
    expect(await a.run('Open', s)).toMatchObject({ events: [], revision: 2, duplicate: false });
    expect(a.readsOf(s)).toEqual([undefined, 1, 3]);
    expect((await stored(s)).map(([type]) => type)).toEqual(['Opened', 'Closed', 'Opened']);
  });

  it('lands 60 concurrent commands on one stream from three replicas exactly once each', async () => {
    const replicas = [replica(0), replica(1), replica(2)];
    const s = `${freshCategory()}-1`;
    await replicas[0]!.run('Open', s);
    await Promise.all(replicas.slice(1).map((r) => r.run('Open', s)));
    const ids = Array.from({ length: 60 }, () => randomUUID());
    const results = await Promise.all(ids.map((id, i) => replicas[i % 3]!.run('Knock', s, id, 100)));
    expect(results.map((r) => r.revision).sort((x, y) => x - y)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    const events = await stored(s);
    // Every knock was decided on the stream as it was: n counts the knocks before it.
    expect(events.slice(1).map(([, data]) => data)).toEqual(Array.from({ length: 60 }, (_, n) => ({ n })));
    expect(new Set(events.slice(1).map(([, , id]) => id))).toEqual(new Set(ids));
    for (const r of replicas) expect(r.cache.peek(s)!.revision).toBeLessThanOrEqual(60);
  }, 30_000);

  it('keeps at most maxStreams streams, dropping the least recently used, which is then read whole', async () => {
    const a = replica(0, { maxStreams: 3 });
    const cat = freshCategory();
    for (let i = 1; i <= 4; i++) await a.run('Open', `${cat}-${i}`);
    expect(a.cache.size).toBe(3);
    expect(a.cache.peek(`${cat}-1`)).toBeUndefined();
    await a.run('Knock', `${cat}-2`);
    await a.run('Open', `${cat}-5`);
    expect(a.cache.peek(`${cat}-3`)).toBeUndefined();
    expect(a.cache.size).toBe(3);

    expect(await a.run('Knock', `${cat}-1`)).toMatchObject({ revision: 1 });
    expect(a.readsOf(`${cat}-1`)).toEqual([undefined, undefined]);
    await a.run('Knock', `${cat}-2`);
    expect(a.readsOf(`${cat}-2`)).toEqual([undefined]);
  });

  it('answers a retry of a command older than the commands it lists with its first result, appending nothing', async () => {
    const a = replica(0, { recentCommands: 2 });
    const s = `${freshCategory()}-1`;
    const [openId, knockId] = [randomUUID(), randomUUID()];
    const opened = await a.run('Open', s, openId);
    const knocked = await a.run('Knock', s, knockId);
    for (let i = 0; i < 3; i++) await a.run('Knock', s);
    expect(a.cache.peek(s)!.commands.size).toBe(2);
    expect(a.cache.peek(s)!.commands.complete).toBe(false);
    // A new command on the kept stream still reads nothing: the list's bound costs the hot path nothing.
    const reads = a.readsOf(s).length;
    await a.run('Knock', s);
    expect(a.readsOf(s)).toHaveLength(reads);

    // Decided again it would append (a knock on an open door), answer [] (open an open door), or be
    // refused (a knock on a closed door): each time the first result is the answer.
    expect(await a.run('Knock', s, knockId)).toEqual({ ...knocked, duplicate: true });
    expect(await a.run('Open', s, openId)).toEqual({ ...opened, duplicate: true });
    await a.run('Close', s);
    expect(await a.run('Knock', s, knockId)).toEqual({ ...knocked, duplicate: true });
    expect((await stored(s)).map(([type]) => type)).toEqual(['Opened', 'Knocked', 'Knocked', 'Knocked', 'Knocked', 'Knocked', 'Closed']);
    // From a replica that keeps nothing of the stream, too.
    expect(await replica(1, { recentCommands: 1 }).run('Knock', s, knockId)).toEqual({ ...knocked, duplicate: true });
    // And an old id used for another command is still refused.
    await expect(a.run('Close', s, knockId)).rejects.toMatchObject({ code: 'command_id_reused' });
    expect(await stored(s)).toHaveLength(7);
  });

  it("refuses another decider's cache", async () => {
    const other = new AggregateCache({ ...door });
    const s = `${freshCategory()}-1`;
    await expect(handleCommand({ store: log, decider: door, streamId: s, cache: other, ...commandOf('Open') })).rejects.toThrow(TypeError);
  });
});
