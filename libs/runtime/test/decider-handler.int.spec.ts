import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineCommand, type CommandResult } from '@agora/contracts';
import { DomainError, type Command, type Decider, type DomainEvent } from '@agora/decider';
import { AggregateCache } from '@agora/eventsourcing';
import { openEmbeddedEventStore, type EventStore, type ReadStreamOptions } from '@agora/eventstore';
import type { VerifiedCommand } from '@agora/messaging';
import { z } from 'zod';
import { deciderHandler, KeyedLock } from '../src/index.js';

type TallyCommand = Command<'Tally', { tallyId: string; refuse?: boolean }>;
type TallyEvent = DomainEvent<'Tallied', { n: number }>;

/** Appends `Tallied {n}` where n counts the earlier ones: a decision on a stale state shows. */
const tally: Decider<TallyCommand, TallyEvent, number> = {
  initialState: () => 0,
  evolve: (count) => count + 1,
  decide: (command, count) => {
    if (command.payload.refuse) throw new DomainError('illegal_state', 'refused', { count });
    return [{ type: 'Tallied', data: { n: count } }];
  },
};

const Tally = defineCommand({
  type: 'Tally',
  service: 'test',
  aggregate: 'tally',
  verb: 'tally',
  roles: ['operator'],
  summary: 'Counts one more (a test command)',
  payload: z.object({ tallyId: z.string(), refuse: z.boolean().optional() }).strict(),
});

function verified(payload: { tallyId: string; refuse?: boolean }): VerifiedCommand<{ tallyId: string; refuse?: boolean }> {
  return {
    envelope: { commandId: randomUUID(), type: 'Tally', actor: 'alice', issuedAt: new Date().toISOString(), payload, signature: 'A'.repeat(86) },
    definition: Tally,
    payload,
    actor: { agentId: 'alice', roles: ['operator'] },
  };
}

describe('deciderHandler', () => {
  let dir: string;
  let inner: EventStore;
  let store: EventStore;
  let reads: string[];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agora-decider-handler-'));
    inner = await openEmbeddedEventStore({ directory: dir });
    reads = [];
    store = {
      kind: inner.kind,
      append: (streamId, events, expected) => inner.append(streamId, events, expected),
      readStream: (streamId: string, options?: ReadStreamOptions) => {
        reads.push(streamId);
        return inner.readStream(streamId, options);
      },
      readAll: (options) => inner.readAll(options),
      headPosition: () => inner.headPosition(),
      comparePositions: (a, b) => inner.comparePositions(a, b),
      subscribe: (options) => inner.subscribe(options),
      close: () => inner.close(),
    };
  });
  afterEach(async () => {
    await inner.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const streamOf = (p: { tallyId: string }) => `tally-${p.tallyId}`;

  it('keeps the folded state of the streams it handles: after the first command on a stream, no read', async () => {
    const handle = deciderHandler({ store, decider: tally, streamOf });
    for (let i = 0; i < 5; i++) expect(await handle(verified({ tallyId: 'a' }))).toMatchObject({ events: ['Tallied'], revision: i });
    expect(reads).toEqual(['tally-a']);
  });

  it('reads the stream for every command with cache: false', async () => {
    const handle = deciderHandler({ store, decider: tally, streamOf, cache: false });
    for (let i = 0; i < 3; i++) await handle(verified({ tallyId: 'a' }));
    expect(reads).toEqual(['tally-a', 'tally-a', 'tally-a']);
  });

  it('uses a cache it is given, and sizes its own as told', async () => {
    const cache = new AggregateCache(tally, { maxStreams: 2 });
    const handle = deciderHandler({ store, decider: tally, streamOf, cache });
    for (const id of ['a', 'b', 'c']) await handle(verified({ tallyId: id }));
    expect(cache.size).toBe(2);
    expect(cache.peek('tally-c')).toMatchObject({ revision: 0, state: 1 });

    const small = deciderHandler({ store, decider: tally, streamOf, cache: { maxStreams: 1 } });
    reads.length = 0;
    await small(verified({ tallyId: 'a' }));
    await small(verified({ tallyId: 'b' }));
    await small(verified({ tallyId: 'a' }));
    expect(reads).toEqual(['tally-a', 'tally-b', 'tally-a']);
  });

  it('queues 30 concurrent commands on one stream and lands each once, each decided on the state before it', async () => {
    const handle = deciderHandler({ store, decider: tally, streamOf, locks: new KeyedLock() });
    const results = (await Promise.all(Array.from({ length: 30 }, () => handle(verified({ tallyId: 'busy' }))))) as CommandResult[];
    expect(results.map((r) => r.revision).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expect((await inner.readStream('tally-busy')).map((e) => e.data)).toEqual(Array.from({ length: 30 }, (_, n) => ({ n })));
    expect(reads).toEqual(['tally-busy']);
  });

  it('lets a refusal through after checking a kept state against the stream', async () => {
    const handle = deciderHandler({ store, decider: tally, streamOf });
    await handle(verified({ tallyId: 'a' }));
    await expect(handle(verified({ tallyId: 'a', refuse: true }))).rejects.toMatchObject({ code: 'illegal_state', details: { count: 1 } });
    expect(reads).toEqual(['tally-a', 'tally-a']);
  });
});
