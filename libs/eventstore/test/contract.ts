/**
 * The event store contract: what every adapter must do, run unchanged against each of them
 * (Eventuous' StoreAppendTests and emmett's features.ts are the models).
 *
 * Usage, in an adapter's spec:
 *   describeEventStoreContract('embedded', async () => openEmbedded(...), { neverProduced: [...], processConfig: ... });
 * `open` opens the same store (the same data) every time it is called: once per `describe` block,
 * and again after a test closed the store to see what survives a restart. Every test works on
 * streams of its own (a fresh category), so the suite also runs against a long-lived shared
 * server such as KurrentDB.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  InvalidEventData,
  InvalidEventType,
  InvalidExpectedRevision,
  InvalidPosition,
  InvalidStreamName,
  StoreUnavailable,
  StreamNotFound,
  WrongExpectedRevision,
} from '../src/errors.js';
import { openEventStore, type StoreConfig } from '../src/open-store.js';
import type { AppendResult, EventData, EventStore, ExpectedRevision, Position, RecordedEvent, Subscription } from '../src/port.js';

export type OpenStore = () => Promise<EventStore>;

export interface ContractOptions {
  /** Positions in this adapter's own format that it never produced (past the end, say): each must be an InvalidPosition. */
  neverProduced?: Position[];
  /** A store of this kind for a child process (not sharing the suite's files): for the "close lets the process exit" case. */
  processConfig?: () => StoreConfig;
  /**
   * Opens another store on the same data through a connection of its own, the `i`-th of several
   * writers (as replicas of a service are): for the "writers on separate connections" case. Without
   * it (an adapter whose data one process holds), the writers share the suite's store.
   */
  openWriter?: (i: number) => Promise<EventStore>;
  /** Whether this store (on this server) has `appendMany`, the atomic append to several streams. */
  atomicAppendMany?: boolean;
}

/** A category no other test uses: `ctr<8 hex>` (letters and digits only). */
export function freshCategory(): string {
  return `ctr${randomUUID().replace(/-/g, '').slice(0, 12)}`;
}

export function ev(type: string, data: unknown = {}, extra: Partial<EventData> = {}): EventData {
  return { id: randomUUID(), type, data, ...extra };
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** Events of `readAll` after `after` that belong to streams of `category`. */
export async function readAllOf(store: EventStore, category: string, after?: Position): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  for await (const e of store.readAll(after === undefined ? {} : { after })) {
    if (e.streamId.startsWith(`${category}-`)) out.push(e);
  }
  return out;
}

async function expectError<E extends Error>(p: Promise<unknown>, type: new (...args: never[]) => E): Promise<E> {
  try {
    await p;
  } catch (error) {
    expect(error).toBeInstanceOf(type);
    return error as E;
  }
  throw new Error(`expected ${type.name}, but the call succeeded`);
}

async function expectNoStream(store: EventStore, streamId: string): Promise<void> {
  await expectError(store.readStream(streamId), StreamNotFound);
}

/** Subscribes from `after`, collecting events of `category` until `count` of them arrived. */
function collectFromSubscription(store: EventStore, category: string, count: number, after?: Position, onEvent?: (e: RecordedEvent) => void | Promise<void>) {
  const seen: RecordedEvent[] = [];
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const subscription = store.subscribe({
    name: `contract-${category}`,
    ...(after === undefined ? {} : { after }),
    retry: { initialDelayMs: 5, maxDelayMs: 20 },
    handler: async (e) => {
      if (!e.streamId.startsWith(`${category}-`)) return;
      await onEvent?.(e);
      seen.push(e);
      if (seen.length === count) done();
    },
  });
  return { seen, finished, subscription };
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms))),
  ]);
}

/** Appends a marker to a fresh stream and returns its position: a checkpoint "now". */
async function checkpointNow(store: EventStore): Promise<Position> {
  const r = await store.append(`${freshCategory()}-marker`, [ev('Marker')], 'no_stream');
  return r.position;
}

export function describeEventStoreContract(adapter: string, open: OpenStore, options: ContractOptions = {}): void {
  describe(`event store contract: ${adapter}`, () => {
    let store: EventStore;

    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store?.close();
    });

    describe('append and read', () => {
      it('reads back what was appended, in order, with revisions from 0', async () => {
        const s = `${freshCategory()}-1`;
        const first = [ev('Opened', { n: 1 }, { metadata: { actor: 'a1', commandId: 'c1' } }), ev('Noted', { n: 2, nested: { list: [1, 'two', null, true] } })];
        const r1 = await store.append(s, first, 'no_stream');
        expect(r1.nextExpectedRevision).toBe(1);
        const r2 = await store.append(s, [ev('Closed', { n: 3 })], 1);
        expect(r2.nextExpectedRevision).toBe(2);

        const read = await store.readStream(s);
        expect(read.map((e) => [e.type, e.revision, e.data])).toEqual([
          ['Opened', 0, { n: 1 }],
          ['Noted', 1, { n: 2, nested: { list: [1, 'two', null, true] } }],
          ['Closed', 2, { n: 3 }],
        ]);
        expect(read.map((e) => e.id)).toEqual([first[0]!.id, first[1]!.id, read[2]!.id]);
        expect(read[0]!.metadata).toMatchObject({ actor: 'a1', commandId: 'c1' });
        expect(read.every((e) => e.streamId === s)).toBe(true);
        expect(read.every((e) => !Number.isNaN(Date.parse(e.recordedAt)))).toBe(true);
        expect(read[1]!.position).toBe(r1.position);
        expect(read[2]!.position).toBe(r2.position);
      });

      it('assigns an id to an event that has none', async () => {
        const s = `${freshCategory()}-1`;
        await store.append(s, [{ type: 'NoId', data: { x: 1 } }], 'no_stream');
        const [e] = await store.readStream(s);
        expect(e!.id).toMatch(/^[0-9a-f-]{36}$/);
      });

      it('reads a stream from a revision, at most maxCount events', async () => {
        const s = `${freshCategory()}-1`;
        await store.append(s, Array.from({ length: 10 }, (_, i) => ev('Counted', { i })), 'no_stream');
        const part = await store.readStream(s, { fromRevision: 3, maxCount: 4 });
        expect(part.map((e) => e.revision)).toEqual([3, 4, 5, 6]);
        expect(part.map((e) => (e.data as { i: number }).i)).toEqual([3, 4, 5, 6]);
        expect(await store.readStream(s, { fromRevision: 10 })).toEqual([]);
      });

      it('throws StreamNotFound for a stream with no events, naming it', async () => {
        const s = `${freshCategory()}-missing`;
        const error = await expectError(store.readStream(s), StreamNotFound);
        expect(error.streamId).toBe(s);
      });

      it('keeps streams apart', async () => {
        const cat = freshCategory();
        await store.append(`${cat}-a`, [ev('A')], 'no_stream');
        await store.append(`${cat}-b`, [ev('B'), ev('B')], 'no_stream');
        await store.append(`${cat}-a`, [ev('A')], 0);
        expect((await store.readStream(`${cat}-a`)).map((e) => [e.type, e.revision])).toEqual([
          ['A', 0],
          ['A', 1],
        ]);
        expect((await store.readStream(`${cat}-b`)).map((e) => [e.type, e.revision])).toEqual([
          ['B', 0],
          ['B', 1],
        ]);
      });

      it('stores a commit of many events as one unit with consecutive revisions', async () => {
        const s = `${freshCategory()}-1`;
        await store.append(s, [ev('Zero')], 'no_stream');
        const r = await store.append(s, Array.from({ length: 50 }, (_, i) => ev('Many', { i })), 0);
        expect(r.nextExpectedRevision).toBe(50);
        const read = await store.readStream(s);
        expect(read.map((e) => e.revision)).toEqual(Array.from({ length: 51 }, (_, i) => i));
      });
    });

    describe('expected revision', () => {
      const cases: Array<{ name: string; existing: number; expected: ExpectedRevision; ok: boolean; actual?: number | 'no_stream' }> = [
        { name: 'no_stream on a new stream', existing: 0, expected: 'no_stream', ok: true },
        { name: 'no_stream on an existing stream', existing: 2, expected: 'no_stream', ok: false, actual: 1 },
        { name: 'stream_exists on a new stream', existing: 0, expected: 'stream_exists', ok: false, actual: 'no_stream' },
        { name: 'stream_exists on an existing stream', existing: 2, expected: 'stream_exists', ok: true },
        { name: 'any on a new stream', existing: 0, expected: 'any', ok: true },
        { name: 'any on an existing stream', existing: 3, expected: 'any', ok: true },
        { name: 'the right revision', existing: 3, expected: 2, ok: true },
        { name: 'a revision too low', existing: 3, expected: 1, ok: false, actual: 2 },
        { name: 'a revision too high', existing: 3, expected: 5, ok: false, actual: 2 },
        { name: 'revision 0 on a new stream', existing: 0, expected: 0, ok: false, actual: 'no_stream' },
      ];
      for (const c of cases) {
        it(`${c.ok ? 'accepts' : 'refuses'} ${c.name}`, async () => {
          const s = `${freshCategory()}-1`;
          if (c.existing > 0) await store.append(s, Array.from({ length: c.existing }, () => ev('Before')), 'no_stream');
          const attempt = store.append(s, [ev('Attempt')], c.expected);
          if (c.ok) {
            const r = await attempt;
            expect(r.nextExpectedRevision).toBe(c.existing);
            expect((await store.readStream(s)).map((e) => e.type).at(-1)).toBe('Attempt');
          } else {
            const error = await expectError(attempt, WrongExpectedRevision);
            expect(error).toMatchObject({ streamId: s, expected: c.expected, actual: c.actual, code: 'wrong_expected_revision' });
            if (c.existing === 0) await expectNoStream(store, s);
            else expect((await store.readStream(s)).map((e) => e.type)).toEqual(Array(c.existing).fill('Before'));
          }
        });
      }

      it('20 concurrent appends at the same revision: exactly one winner, 19 typed conflicts', async () => {
        const s = `${freshCategory()}-1`;
        await store.append(s, [ev('Start')], 'no_stream');
        const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => store.append(s, [ev('Racer', { i }), ev('Racer2', { i })], 0)));
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(19);
        for (const l of lost) {
          expect(l.reason).toBeInstanceOf(WrongExpectedRevision);
          expect(l.reason).toMatchObject({ streamId: s, expected: 0 });
        }
        const read = await store.readStream(s);
        expect(read.map((e) => e.type)).toEqual(['Start', 'Racer', 'Racer2']);
        expect((read[1]!.data as { i: number }).i).toBe((read[2]!.data as { i: number }).i);
      });

      it('writers on separate connections at one expected revision, round after round: exactly one wins each round', async () => {
        const writers = options.openWriter ? await Promise.all(Array.from({ length: 5 }, (_, i) => options.openWriter!(i))) : Array.from({ length: 5 }, () => store);
        try {
          const s = `${freshCategory()}-1`;
          const rounds = 10;
          for (let round = 0; round < rounds; round++) {
            const expected: ExpectedRevision = round === 0 ? 'no_stream' : round - 1;
            const results = await Promise.allSettled(writers.map((w, i) => w.append(s, [ev('Raced', { round, i })], expected)));
            const won = results.filter((r) => r.status === 'fulfilled');
            expect({ round, won: won.length }).toEqual({ round, won: 1 });
            for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(WrongExpectedRevision);
          }
          // Read through every writer: one event per revision, from each connection alike.
          for (const w of writers) {
            const read = await w.readStream(s);
            expect(read.map((e) => [e.revision, (e.data as { round: number }).round])).toEqual(Array.from({ length: rounds }, (_, r) => [r, r]));
          }
        } finally {
          if (options.openWriter) await Promise.all(writers.map((w) => w.close()));
        }
      });

      it('20 concurrent creations of one stream: exactly one winner', async () => {
        const s = `${freshCategory()}-1`;
        const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => store.append(s, [ev('Created', { i })], 'no_stream')));
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof WrongExpectedRevision)).toHaveLength(19);
        expect(await store.readStream(s)).toHaveLength(1);
      });
    });

    describe('idempotence', () => {
      it('stores an append retried with the same event ids once and returns the first result', async () => {
        const s = `${freshCategory()}-1`;
        await store.append(s, [ev('First')], 'no_stream');
        const events = [ev('Retried', { k: 1 }), ev('Retried', { k: 2 })];
        const r1 = await store.append(s, events, 0);
        const r2 = await store.append(s, events, 0);
        expect(r1.alreadyStored).toBeUndefined();
        expect(r2).toEqual({ ...r1, alreadyStored: true });
        const read = await store.readStream(s);
        expect(read.map((e) => e.type)).toEqual(['First', 'Retried', 'Retried']);
        const all = await readAllOf(store, s.split('-')[0]!);
        expect(all).toHaveLength(3);
      });

      it('stores a retried first append of a stream once', async () => {
        const s = `${freshCategory()}-1`;
        const events = [ev('Only')];
        const r1 = await store.append(s, events, 'no_stream');
        const r2 = await store.append(s, events, 'no_stream');
        expect(r1.alreadyStored).toBeUndefined();
        expect(r2).toEqual({ ...r1, alreadyStored: true });
        expect(await store.readStream(s)).toHaveLength(1);
      });

      it('two identical appends racing store the commit once, both get its result, and exactly one says it stored it', async () => {
        const s = `${freshCategory()}-1`;
        await store.append(s, [ev('First')], 'no_stream');
        for (const expected of ['revision', 'any', 'stream_exists'] as const) {
          const events = [ev('Raced', { expected }), ev('Raced', { expected })];
          const before = (await store.readStream(s)).length;
          const at: ExpectedRevision = expected === 'revision' ? before - 1 : expected;
          const [a, b] = await Promise.all([store.append(s, events, at), store.append(s, events, at)]);
          expect([a, b].filter((r) => r.alreadyStored === undefined)).toHaveLength(1);
          expect([a, b].filter((r) => r.alreadyStored === true)).toHaveLength(1);
          const { alreadyStored: _a, ...resultA } = a;
          const { alreadyStored: _b, ...resultB } = b;
          expect(resultB).toEqual(resultA);
          expect(a.nextExpectedRevision).toBe(before + 1);
          const read = await store.readStream(s);
          expect(read.map((e) => e.id).slice(before)).toEqual(events.map((e) => e.id));
          expect(read).toHaveLength(before + 2);
        }
      }, 60_000);

      it('ten copies of one commit at once, then one more: stored once, exactly one append says it stored it', async () => {
        const s = `${freshCategory()}-1`;
        await store.append(s, [ev('First')], 'no_stream');
        const events = [ev('Copied', { n: 1 }), ev('Copied', { n: 2 })];
        const racing = await Promise.all(Array.from({ length: 10 }, () => store.append(s, events, 0)));
        const later = await store.append(s, events, 0);
        const all = [...racing, later];
        expect(all.filter((r) => r.alreadyStored === undefined)).toHaveLength(1);
        expect(later.alreadyStored).toBe(true);
        for (const r of all) expect(r).toMatchObject({ nextExpectedRevision: 2, position: racing[0]!.position });
        expect((await store.readStream(s)).map((e) => e.type)).toEqual(['First', 'Copied', 'Copied']);
      }, 60_000);

      it('ten copies of one commit at once from writers on separate connections, round after round: stored once each round, every copy answered', async () => {
        const writers = options.openWriter ? await Promise.all(Array.from({ length: 10 }, (_, i) => options.openWriter!(i))) : Array.from({ length: 10 }, () => store);
        try {
          const s = `${freshCategory()}-1`;
          const rounds = 10;
          for (let round = 0; round < rounds; round++) {
            // A command-id reservation (no_stream) first, then commits at a revision, as replicas handling copies of one envelope do.
            const expected: ExpectedRevision = round === 0 ? 'no_stream' : round - 1;
            const events = [ev('Copied', { round })];
            const results = await Promise.allSettled(writers.map((w) => w.append(s, events, expected)));
            const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => String(r.reason));
            expect({ round, failed }).toEqual({ round, failed: [] });
            const answers = results.map((r) => (r as PromiseFulfilledResult<AppendResult>).value);
            expect({ round, storedBy: answers.filter((a) => a.alreadyStored === undefined).length }).toEqual({ round, storedBy: 1 });
            for (const a of answers) expect(a).toMatchObject({ nextExpectedRevision: round, position: answers[0]!.position });
          }
          expect((await store.readStream(s)).map((e) => (e.data as { round: number }).round)).toEqual(Array.from({ length: rounds }, (_, r) => r));
        } finally {
          if (options.openWriter) await Promise.all(writers.map((w) => w.close()));
        }
      }, 60_000);

      it('refuses a retry of part of a commit, writing nothing, rather than answer with a revision inside the commit', async () => {
        const s = `${freshCategory()}-1`;
        const zero = ev('First');
        await store.append(s, [zero], 'no_stream');
        const [a, b, c] = [ev('Part', { n: 1 }), ev('Part', { n: 2 }), ev('Part', { n: 3 })];
        await store.append(s, [a, b, c], 0);
        // The first event alone, the first two, the last alone: each at the revision it was stored after.
        const parts: Array<[EventData[], ExpectedRevision]> = [
          [[a], 0],
          [[a, b], 0],
          [[c], 2],
          [[zero, a], 'no_stream'],
        ];
        for (const [part, expected] of parts) {
          const error = await expectError(store.append(s, part, expected), Error);
          if (!(error instanceof WrongExpectedRevision || error instanceof InvalidEventData)) throw error;
        }
        expect((await store.readStream(s)).map((e) => e.id)).toEqual([zero.id, a.id, b.id, c.id]);
      }, 60_000);
    });

    describe('after the store restarted', () => {
      it('recognises a retry of a whole commit, whatever the expected revision, and writes nothing', async () => {
        const cat = freshCategory();
        const cases: Array<{ stream: string; before: number; expected: ExpectedRevision; events: EventData[] }> = [
          { stream: `${cat}-num`, before: 1, expected: 0, events: [ev('Retried'), ev('Retried')] },
          { stream: `${cat}-new`, before: 0, expected: 'no_stream', events: [ev('Retried'), ev('Retried')] },
          { stream: `${cat}-any`, before: 2, expected: 'any', events: [ev('Retried'), ev('Retried')] },
          { stream: `${cat}-exists`, before: 1, expected: 'stream_exists', events: [ev('Retried')] },
        ];
        const first = [];
        for (const c of cases) {
          if (c.before > 0) await store.append(c.stream, Array.from({ length: c.before }, () => ev('Before')), 'no_stream');
          first.push(await store.append(c.stream, c.events, c.expected));
        }
        await store.close();
        store = await open();
        for (const [i, c] of cases.entries()) {
          expect(await store.append(c.stream, c.events, c.expected)).toEqual({ ...first[i], alreadyStored: true });
          const read = await store.readStream(c.stream);
          expect(read.map((e) => e.id).slice(c.before)).toEqual(c.events.map((e) => e.id));
          expect(read).toHaveLength(c.before + c.events.length);
        }
      }, 60_000);
    });

    describe('errors no retry will fix are not reported as unavailable', () => {
      it('refuses the nil UUID as an event id', async () => {
        const s = `${freshCategory()}-1`;
        const error = await expectError(store.append(s, [ev('Nil', {}, { id: '00000000-0000-0000-0000-000000000000' })], 'any'), InvalidEventData);
        expect(error.path).toBe('events[0].id');
        await expectNoStream(store, s);
      });

      it('stores a commit of 2 MiB whole, or refuses it as InvalidEventData, never as StoreUnavailable', async () => {
        const s = `${freshCategory()}-1`;
        const big = 'x'.repeat(512 * 1024);
        const events = Array.from({ length: 4 }, (_, i) => ev('Big', { i, big }));
        let outcome: unknown;
        try {
          outcome = await store.append(s, events, 'no_stream');
        } catch (error) {
          outcome = error;
        }
        expect(outcome).not.toBeInstanceOf(StoreUnavailable);
        if (outcome instanceof Error) {
          expect(outcome).toBeInstanceOf(InvalidEventData);
          await expectNoStream(store, s);
        } else {
          expect((await store.readStream(s)).map((e) => e.id)).toEqual(events.map((e) => e.id));
        }
        // The store still works.
        await store.append(s, [ev('Small')], 'any');
      }, 30_000);
    });

    describe('atomic append to several streams (appendMany)', () => {
      const many = (): NonNullable<EventStore['appendMany']> => store.appendMany!.bind(store);
      /** Events of $all on streams whose name starts with `prefix` (a fresh category: its `res`, `agg` and `other` streams). */
      const startingWith = async (s: EventStore, prefix: string) => (await collect(s.readAll())).filter((e) => e.streamId.startsWith(prefix));
      const pair = (category: string, n: number, expected: [ExpectedRevision, ExpectedRevision] = ['no_stream', 'no_stream']) => [
        { streamId: `${category}res-${n}`, events: [ev('Reserved', { n })], expectedRevision: expected[0] },
        { streamId: `${category}agg-${n}`, events: [ev('Decided', { n }), ev('Decided2', { n })], expectedRevision: expected[1] },
      ];

      it(`is ${options.atomicAppendMany ? 'offered' : 'not offered'} by this store`, () => {
        expect(typeof store.appendMany).toBe(options.atomicAppendMany ? 'function' : 'undefined');
      });

      (options.atomicAppendMany ? it : it.skip)('stores a commit on each stream, together and in order, and answers each', async () => {
        const c = freshCategory();
        await store.append(`${c}agg-1`, [ev('Before')], 'no_stream');
        const [res, agg] = await many()(pair(c, 1, ['no_stream', 0]));
        expect(res).toMatchObject({ nextExpectedRevision: 0 });
        expect(agg).toMatchObject({ nextExpectedRevision: 2 });
        expect(res!.alreadyStored ?? agg!.alreadyStored).toBeUndefined();
        expect((await store.readStream(`${c}agg-1`)).map((e) => e.type)).toEqual(['Before', 'Decided', 'Decided2']);
        const all = await readAllOf(store, `${c}res`);
        expect(all.map((e) => e.type)).toEqual(['Reserved']);
        // One after the other in $all: the reservation, then the aggregate's commit.
        const order = (await collect(store.readAll({ after: all[0]!.position, maxCount: 2 }))).map((e) => [e.streamId, e.type]);
        expect(order).toEqual([
          [`${c}agg-1`, 'Decided'],
          [`${c}agg-1`, 'Decided2'],
        ]);
        expect(agg!.position).toBe((await store.readStream(`${c}agg-1`)).at(-1)!.position);
      });

      (options.atomicAppendMany ? it : it.skip)('a conflict on either stream writes neither', async () => {
        const c = freshCategory();
        await store.append(`${c}res-1`, [ev('Taken')], 'no_stream');
        await store.append(`${c}agg-2`, [ev('Moved')], 'no_stream');
        const first = await expectError(many()(pair(c, 1)), WrongExpectedRevision);
        expect(first).toMatchObject({ streamId: `${c}res-1`, expected: 'no_stream', actual: 0 });
        await expectNoStream(store, `${c}agg-1`);
        const second = await expectError(many()(pair(c, 2)), WrongExpectedRevision);
        expect(second).toMatchObject({ streamId: `${c}agg-2`, expected: 'no_stream', actual: 0 });
        await expectNoStream(store, `${c}res-2`);
        expect((await startingWith(store, c)).map((e) => e.type)).toEqual(['Taken', 'Moved']);
      });

      (options.atomicAppendMany ? it : it.skip)('a retry of the whole is answered as stored, writing nothing; one stream of it again is a conflict', async () => {
        const c = freshCategory();
        const appends = pair(c, 1);
        const first = await many()(appends);
        const again = await many()(appends);
        expect(again).toEqual(first.map((r) => ({ ...r, alreadyStored: true })));
        // The aggregate's commit alone with other events beside it: its stream has moved.
        await expectError(many()([appends[1]!, { streamId: `${c}other-1`, events: [ev('Other')], expectedRevision: 'no_stream' }]), WrongExpectedRevision);
        await expectNoStream(store, `${c}other-1`);
        expect(await startingWith(store, c)).toHaveLength(3);
      });

      (options.atomicAppendMany ? it : it.skip)('ten copies at once from writers on separate connections: stored once, every copy answered', async () => {
        const writers = options.openWriter ? await Promise.all(Array.from({ length: 10 }, (_, i) => options.openWriter!(i))) : Array.from({ length: 10 }, () => store);
        try {
          const c = freshCategory();
          for (let round = 0; round < 5; round++) {
            const appends = pair(c, round);
            const results = await Promise.allSettled(writers.map((w) => w.appendMany!(appends)));
            const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => String(r.reason));
            expect({ round, failed }).toEqual({ round, failed: [] });
            const answers = results.map((r) => (r as PromiseFulfilledResult<AppendResult[]>).value);
            expect({ round, storedBy: answers.filter((a) => a.every((r) => r.alreadyStored === undefined)).length }).toEqual({ round, storedBy: 1 });
            for (const a of answers) expect(a.every((r) => r.alreadyStored === undefined) || a.every((r) => r.alreadyStored === true)).toBe(true);
          }
          expect(await startingWith(store, c)).toHaveLength(15);
        } finally {
          if (options.openWriter) await Promise.all(writers.map((w) => w.close()));
        }
      }, 60_000);

      (options.atomicAppendMany && options.processConfig ? it : it.skip)('a SIGKILL in the middle of appends never leaves one stream of an append without the other', async () => {
        const config = options.processConfig!();
        const c = freshCategory();
        const child = spawn(process.execPath, ['--conditions=agora-source', '--import', './tools/ts-run/register.mjs', 'libs/eventstore/test/fixtures/append-pairs.ts', JSON.stringify(config), c], { stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
        let acknowledged = 0;
        const exited = new Promise<number | string | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
        await withTimeout(
          new Promise<void>((resolve, reject) => {
            child.stdout!.on('data', (chunk: Buffer) => {
              acknowledged += chunk.toString().split('\n').filter((l) => l.startsWith('pair ')).length;
              // Killed with appends in flight (8 at a time), well after the first.
              if (acknowledged >= 200) resolve();
            });
            void exited.then((outcome) => reject(new Error(`the child exited (${String(outcome)}) before it was killed: ${output}`)));
          }),
          45_000,
          'the child to acknowledge 200 appends',
        );
        child.kill('SIGKILL');
        expect(await exited).toBe('SIGKILL');
        const reopened = await openEventStore(config);
        try {
          const seen = new Map<number, string[]>();
          for (const e of await startingWith(reopened, c)) {
            const n = Number(e.streamId.split('-')[1]);
            seen.set(n, [...(seen.get(n) ?? []), e.type]);
          }
          expect(seen.size).toBeGreaterThanOrEqual(acknowledged);
          const split = [...seen].filter(([, types]) => types.join() !== 'Reserved,Decided,Decided2');
          expect(split).toEqual([]);
        } finally {
          await reopened.close();
        }
      }, 90_000);
    });

    describe('bad input is refused before anything is written', () => {
      const badStreams = ['', 'nodash', '-leading', 'has.dot-1', 'star*-1', 'cat-with space', 'cat-gt>', 'cat-a.b', 'cat-', 'x'.repeat(300) + '-1'];
      for (const bad of badStreams) {
        it(`refuses stream name ${JSON.stringify(bad.length > 40 ? `${bad.slice(0, 20)}...` : bad)}`, async () => {
          await expectError(store.append(bad, [ev('E')], 'any'), InvalidStreamName);
        });
      }

      it('refuses bad event types', async () => {
        const s = `${freshCategory()}-1`;
        for (const type of ['', 'has space', 'wild.*', 'gt>', 'dash-ed', '.leading', 'trailing.']) {
          const error = await expectError(store.append(s, [ev('Good'), ev(type)], 'any'), InvalidEventType);
          expect(error.eventType).toBe(type);
        }
        await expectNoStream(store, s);
      });

      it('refuses a commit whole when one payload is not JSON', async () => {
        const s = `${freshCategory()}-1`;
        class Money {
          constructor(readonly amount: number) {}
        }
        const circular: Record<string, unknown> = {};
        circular['self'] = circular;
        const bad: unknown[] = [10n, () => 1, undefined, Number.NaN, Infinity, new Date(), new Money(1), circular, { deep: [{ x: Symbol('s') }] }, { u: undefined }];
        for (const data of bad) {
          await expectError(store.append(s, [ev('Good', { ok: true }), { id: randomUUID(), type: 'Bad', data }, ev('Good')], 'any'), InvalidEventData);
        }
        await expectError(store.append(s, [ev('Good', {}, { metadata: { when: new Date() } })], 'any'), InvalidEventData);
        await expectNoStream(store, s);
      });

      it('names the offending path', async () => {
        const s = `${freshCategory()}-1`;
        const error = await expectError(store.append(s, [ev('Good'), ev('Bad', { items: [1, { when: 5n }] })], 'any'), InvalidEventData);
        expect(error.path).toBe('events[1].data.items[1].when');
      });

      it('refuses an empty commit, repeated ids and bad ids', async () => {
        const s = `${freshCategory()}-1`;
        await expectError(store.append(s, [], 'any'), InvalidEventData);
        const id = randomUUID();
        await expectError(store.append(s, [ev('A', {}, { id }), ev('B', {}, { id })], 'any'), InvalidEventData);
        await expectError(store.append(s, [ev('A', {}, { id: 'not-a-uuid' })], 'any'), InvalidEventData);
        await expectNoStream(store, s);
      });

      it('refuses a bad expected revision', async () => {
        const s = `${freshCategory()}-1`;
        for (const bad of [-1, 1.5, 'latest', null]) {
          await expectError(store.append(s, [ev('A')], bad as unknown as ExpectedRevision), InvalidExpectedRevision);
        }
        await expectNoStream(store, s);
      });

      it('refuses a position it did not produce', async () => {
        await expectError(collect(store.readAll({ after: 'not a position' })), InvalidPosition);
      });

      for (const position of options.neverProduced ?? []) {
        it(`refuses ${JSON.stringify(position)}, a position it never produced, in readAll and subscribe`, async () => {
          await checkpointNow(store);
          await expectError(collect(store.readAll({ after: position })), InvalidPosition);
          const handled: RecordedEvent[] = [];
          let subscription: Subscription;
          try {
            subscription = store.subscribe({ after: position, retry: { initialDelayMs: 5, maxDelayMs: 20 }, onError: () => undefined, handler: (e) => void handled.push(e) });
          } catch (error) {
            // Told at once, when the position alone says so.
            expect(error).toBeInstanceOf(InvalidPosition);
            return;
          }
          // Or as soon as the store finds out: caughtUp rejects, and nothing is delivered.
          try {
            await expectError(withTimeout(subscription.caughtUp, 15_000, 'caughtUp to reject'), InvalidPosition);
            expect(handled).toEqual([]);
          } finally {
            await subscription.stop();
          }
        }, 30_000);
      }
    });

    describe('read all', () => {
      it('sees every event of many streams exactly once, in the order appended', async () => {
        const cat = freshCategory();
        const appended: string[] = [];
        for (let round = 0; round < 5; round++) {
          for (let s = 0; s < 8; s++) {
            const batch = round % 2 === 0 ? [ev('One')] : [ev('Two'), ev('Two')];
            await store.append(`${cat}-${s}`, batch, round === 0 ? 'no_stream' : 'stream_exists');
            appended.push(...batch.map((e) => e.id!));
          }
        }
        const all = await readAllOf(store, cat);
        expect(all.map((e) => e.id)).toEqual(appended);
        expect(new Set(all.map((e) => e.position)).size).toBe(all.length);
      });

      it('names its head: reading after it gives only what was appended since, down to the last event of a commit', async () => {
        const cat = freshCategory();
        await store.append(`${cat}-a`, [ev('First'), ev('Second'), ev('Third')], 'no_stream');
        const head = await store.headPosition();
        expect(head).toBeDefined();
        expect(await readAllOf(store, cat, head)).toEqual([]);
        const later = [ev('Later'), ev('Later')];
        await store.append(`${cat}-b`, [later[0]!], 'no_stream');
        await store.append(`${cat}-a`, [later[1]!], 2);
        expect((await readAllOf(store, cat, head)).map((e) => e.id)).toEqual(later.map((e) => e.id));
        const newHead = await store.headPosition();
        expect(newHead).not.toEqual(head);
        expect(await readAllOf(store, cat, newHead)).toEqual([]);
      });

      it('orders its positions as the events were appended, and refuses a string that is not one of its positions', async () => {
        const cat = freshCategory();
        const a = await store.append(`${cat}-a`, [ev('One'), ev('Two')], 'no_stream');
        const b = await store.append(`${cat}-b`, [ev('Three')], 'no_stream');
        const read = await readAllOf(store, cat);
        const positions = read.map((e) => e.position);
        expect(positions.at(-1)).toBe(b.position);
        expect(positions[1]).toBe(a.position);
        for (let i = 0; i < positions.length; i++) {
          for (let j = 0; j < positions.length; j++) expect(Math.sign(store.comparePositions(positions[i]!, positions[j]!))).toBe(Math.sign(i - j));
        }
        for (const bad of ['', 'not a position', '-1']) expect(() => store.comparePositions(bad, a.position)).toThrow(InvalidPosition);
      });

      it('continues strictly after a position, and stops at maxCount', async () => {
        const cat = freshCategory();
        const start = await checkpointNow(store);
        for (let i = 0; i < 6; i++) await store.append(`${cat}-${i % 2}`, [ev('E', { i })], 'any');
        const mine = (await collect(store.readAll({ after: start }))).filter((e) => e.streamId.startsWith(cat));
        expect(mine.map((e) => (e.data as { i: number }).i)).toEqual([0, 1, 2, 3, 4, 5]);
        const afterThird = (await collect(store.readAll({ after: mine[2]!.position }))).filter((e) => e.streamId.startsWith(cat));
        expect(afterThird.map((e) => (e.data as { i: number }).i)).toEqual([3, 4, 5]);
        const two = await collect(store.readAll({ after: mine[1]!.position, maxCount: 2 }));
        expect(two.map((e) => e.id)).toEqual([mine[2]!.id, mine[3]!.id]);
      });

      it('gives concurrent appends one global order that keeps each stream in revision order', async () => {
        const cat = freshCategory();
        const start = await checkpointNow(store);
        await Promise.all(
          Array.from({ length: 10 }, async (_, s) => {
            for (let i = 0; i < 10; i++) await store.append(`${cat}-${s}`, [ev('E', { s, i })], i === 0 ? 'no_stream' : i - 1);
          }),
        );
        const all = await readAllOf(store, cat, start);
        expect(all).toHaveLength(100);
        const lastSeen = new Map<string, number>();
        for (const e of all) {
          expect(e.revision).toBe((lastSeen.get(e.streamId) ?? -1) + 1);
          lastSeen.set(e.streamId, e.revision);
        }
      });
    });

    describe('subscriptions', () => {
      it('deliver history then live events, each exactly once, in the read-all order', async () => {
        const cat = freshCategory();
        const start = await checkpointNow(store);
        for (let i = 0; i < 30; i++) await store.append(`${cat}-${i % 3}`, [ev('Past', { i })], 'any');
        const { seen, finished, subscription } = collectFromSubscription(store, cat, 60, start);
        await withTimeout(subscription.caughtUp, 10_000, 'catch-up');
        await Promise.all(
          Array.from({ length: 3 }, async (_, s) => {
            for (let i = 0; i < 10; i++) await store.append(`${cat}-${s}`, [ev('Live', { s, i })], 'any');
          }),
        );
        await withTimeout(finished, 10_000, '60 events');
        await subscription.stop();
        const all = await readAllOf(store, cat, start);
        expect(seen.map((e) => e.id)).toEqual(all.map((e) => e.id));
        expect(new Set(seen.map((e) => e.id)).size).toBe(60);
      });

      it('resume from a saved checkpoint without gaps or repeats', async () => {
        const cat = freshCategory();
        const start = await checkpointNow(store);
        for (let i = 0; i < 20; i++) await store.append(`${cat}-${i % 4}`, [ev('E', { i })], 'any');
        const first = collectFromSubscription(store, cat, 8, start);
        await withTimeout(first.finished, 10_000, 'first 8');
        await first.subscription.stop();
        // It may have handled a few more before stopping; its position is the last one it handled.
        const checkpoint = first.subscription.position!;
        expect(checkpoint).toBe(first.seen.at(-1)!.position);
        expect(first.seen.length).toBeGreaterThanOrEqual(8);
        for (let i = 20; i < 30; i++) await store.append(`${cat}-${i % 4}`, [ev('E', { i })], 'any');
        const second = collectFromSubscription(store, cat, 30 - first.seen.length, checkpoint);
        await withTimeout(second.finished, 10_000, 'the remaining events');
        await second.subscription.stop();
        const ids = [...first.seen, ...second.seen].map((e) => (e.data as { i: number }).i);
        expect(ids).toEqual(Array.from({ length: 30 }, (_, i) => i));
      });

      it('retry a handler that throws, delivering nothing after it first', async () => {
        const cat = freshCategory();
        const start = await checkpointNow(store);
        for (let i = 0; i < 5; i++) await store.append(`${cat}-1`, [ev('E', { i })], 'any');
        const calls: number[] = [];
        let failures = 0;
        const errors: unknown[] = [];
        let done!: () => void;
        const finished = new Promise<void>((r) => (done = r));
        const subscription = store.subscribe({
          after: start,
          retry: { initialDelayMs: 5, maxDelayMs: 10 },
          // Only handler failures: a dropped connection is reported too, without an event.
          onError: (error, context) => {
            if (context.event) errors.push(error);
          },
          handler: (e) => {
            if (!e.streamId.startsWith(cat)) return;
            const i = (e.data as { i: number }).i;
            calls.push(i);
            if (i === 2 && failures < 3) {
              failures++;
              throw new Error('projection failed');
            }
            if (i === 4) done();
          },
        });
        await withTimeout(finished, 10_000, 'all 5 events');
        await subscription.stop();
        expect(calls).toEqual([0, 1, 2, 2, 2, 2, 3, 4]);
        expect(errors).toHaveLength(3);
      });

      it('deliver one event at a time', async () => {
        const cat = freshCategory();
        const start = await checkpointNow(store);
        for (let i = 0; i < 10; i++) await store.append(`${cat}-1`, [ev('E', { i })], 'any');
        let inFlight = 0;
        let maxInFlight = 0;
        const { finished, subscription } = collectFromSubscription(store, cat, 10, start, async () => {
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await new Promise((r) => setTimeout(r, 2));
          inFlight--;
        });
        await withTimeout(finished, 10_000, '10 events');
        await subscription.stop();
        expect(maxInFlight).toBe(1);
      });

      it('stop() ends delivery', async () => {
        const cat = freshCategory();
        const start = await checkpointNow(store);
        const { seen, subscription } = collectFromSubscription(store, cat, 1_000, start);
        await withTimeout(subscription.caughtUp, 10_000, 'catch-up');
        await subscription.stop();
        await store.append(`${cat}-1`, [ev('AfterStop')], 'any');
        await new Promise((r) => setTimeout(r, 200));
        expect(seen).toHaveLength(0);
      });
    });

    const processConfig = options.processConfig;
    (processConfig ? describe : describe.skip)('close()', () => {
      it('releases everything: a process that opened, used and closed the store exits on its own', async () => {
        const config = processConfig!();
        const child = spawn(process.execPath, ['--conditions=agora-source', '--import', './tools/ts-run/register.mjs', 'libs/eventstore/test/fixtures/use-and-close.ts', JSON.stringify(config)], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
        const exited = new Promise<number | string | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
        let timer: NodeJS.Timeout | undefined;
        const outcome = await Promise.race([exited, new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), 30_000)))]);
        clearTimeout(timer);
        if (outcome === 'still running') child.kill('SIGKILL');
        expect({ outcome, output }).toEqual({ outcome: 0, output: expect.stringMatching(/closed\n$/) });
      }, 60_000);
    });
  });
}
