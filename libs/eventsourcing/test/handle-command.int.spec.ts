import { randomUUID } from 'node:crypto';
import { AgoraError } from '@agora/contracts';
import { DomainError, RULES_VERSION, type Command, type Decider, type DomainEvent } from '@agora/decider';
import { StreamNotFound, type EventStore } from '@agora/eventstore';
import { commitHash, commitsOf, genesisCommitHash, verifyStreamChain } from '@agora/identity';
import { AggregateCache, eventIdFor, handleCommand, type CommandMetadata } from '../src/index.js';
import { freshCategory, openTempStore, removeTempDirs } from './helpers.js';

type CounterCommand = Command<'Increment' | 'IncrementTwice' | 'Refuse' | 'Nothing', Record<string, never>>;
type CounterEvent = DomainEvent<'Incremented', { n: number }> | DomainEvent<'Noted', { n: number }>;
interface CounterState {
  count: number;
}

/** Appends `Incremented {n: count}`: the n of every event is its revision when nothing else writes to the stream. */
const counter: Decider<CounterCommand, CounterEvent, CounterState> = {
  initialState: () => ({ count: 0 }),
  evolve: (state) => ({ count: state.count + 1 }),
  decide: (command, state) => {
    switch (command.type) {
      case 'Increment':
        return [{ type: 'Incremented', data: { n: state.count } }];
      case 'IncrementTwice':
        return [
          { type: 'Incremented', data: { n: state.count } },
          { type: 'Incremented', data: { n: state.count + 1 } },
        ];
      case 'Nothing':
        return [];
      case 'Refuse':
        throw new DomainError('illegal_state', 'counter refuses', { count: state.count });
    }
  },
};

function commandOf(type: CounterCommand['type'], commandId: string = randomUUID()): { command: CounterCommand; metadata: CommandMetadata } {
  const now = new Date().toISOString();
  return {
    command: { type, payload: {}, context: { now, actor: 'alice', actorRoles: ['operator'], commandId } },
    metadata: { commandId, commandType: type, actor: 'alice', issuedAt: now, signature: 'sig'.padEnd(86, 'A') },
  };
}

let store: EventStore;
beforeAll(async () => {
  ({ store } = await openTempStore());
});
afterAll(async () => {
  await store.close();
  removeTempDirs();
});

describe('handleCommand', () => {
  it('appends the decided events with deterministic ids and the command metadata', async () => {
    const streamId = `${freshCategory()}-1`;
    const { command, metadata } = commandOf('Increment');
    const result = await handleCommand({ store, decider: counter, streamId, command, metadata });

    expect(result).toEqual({ commandId: metadata.commandId, streamId, events: ['Incremented'], revision: 0, position: expect.any(String), duplicate: false });
    const [stored] = await store.readStream(streamId);
    expect(stored).toMatchObject({ id: eventIdFor(metadata.commandId, 0), type: 'Incremented', data: { n: 0 }, position: result.position });
    expect(stored!.metadata).toEqual({
      actor: 'alice',
      commandId: metadata.commandId,
      commandType: 'Increment',
      issuedAt: metadata.issuedAt,
      signature: metadata.signature,
      prevCommitHash: genesisCommitHash(streamId),
      // The context the decider saw and, as no payload was signed, the payload it decided on: an audit decides it again from these.
      decision: { now: command.context.now, actorRoles: [...command.context.actorRoles], payload: command.payload, rules: RULES_VERSION },
    });
  });

  it('links every commit to the previous commit of its stream (per-commit hash chain), with a cache, without, and across writers', async () => {
    const streamId = `${freshCategory()}-1`;
    const cache = new AggregateCache(counter);
    // Two "replicas": one keeps the folded stream (and its next link) in a cache, the other reads every time.
    for (let i = 0; i < 6; i++) {
      const { command, metadata } = commandOf(i % 3 === 0 ? 'IncrementTwice' : 'Increment');
      await handleCommand({ store, decider: counter, streamId, command, metadata, ...(i % 2 === 0 ? { cache } : {}) });
    }
    const stored = await store.readStream(streamId);
    expect(commitsOf(stored).map((c) => c.length)).toEqual([2, 1, 1, 2, 1, 1]);
    expect(verifyStreamChain(streamId, stored)).toEqual([]);
    expect(stored[0]!.metadata['prevCommitHash']).toBe(genesisCommitHash(streamId));
    expect(stored[2]!.metadata['prevCommitHash']).toBe(commitHash(stored.slice(0, 2)));
    expect(stored[3]!.metadata['prevCommitHash']).toBe(commitHash(stored.slice(2, 3)));
  });

  it('keeps the signed payload on the first event of the commit, for an audit', async () => {
    const streamId = `${freshCategory()}-1`;
    const { command, metadata } = commandOf('IncrementTwice');
    await handleCommand({ store, decider: counter, streamId, command, metadata: { ...metadata, payload: { by: 2 } } });
    const stored = await store.readStream(streamId);
    expect(stored.map((e) => e.metadata['commandPayload'])).toEqual([{ by: 2 }, undefined]);
    // The decided payload ({}) differs from the signed one, so it is recorded beside it.
    expect(stored.map((e) => e.metadata['decision'])).toEqual([{ now: command.context.now, actorRoles: ['operator'], payload: {}, rules: RULES_VERSION }, undefined]);
  });

  it('keeps a given correlation and causation', async () => {
    const streamId = `${freshCategory()}-1`;
    const { command, metadata } = commandOf('Increment');
    await handleCommand({ store, decider: counter, streamId, command, metadata: { ...metadata, correlationId: 'chain-1', causationId: 'evt-9' } });
    const [stored] = await store.readStream(streamId);
    expect(stored!.metadata).toMatchObject({ correlationId: 'chain-1', causationId: 'evt-9' });
  });

  it('answers a repeated commandId with the first result and appends nothing', async () => {
    const streamId = `${freshCategory()}-1`;
    const first = commandOf('Increment');
    const original = await handleCommand({ store, decider: counter, streamId, ...first });
    await handleCommand({ store, decider: counter, streamId, ...commandOf('Increment') });

    const repeat = await handleCommand({ store, decider: counter, streamId, ...first });
    expect(repeat).toEqual({ ...original, duplicate: true });
    expect((await store.readStream(streamId)).map((e) => e.data)).toEqual([{ n: 0 }, { n: 1 }]);
  });

  it('lets a DomainError through and writes nothing', async () => {
    const streamId = `${freshCategory()}-1`;
    const refused = handleCommand({ store, decider: counter, streamId, ...commandOf('Refuse') });
    await expect(refused).rejects.toBeInstanceOf(DomainError);
    await expect(refused).rejects.toMatchObject({ code: 'illegal_state', details: { count: 0 } });
    await expect(store.readStream(streamId)).rejects.toBeInstanceOf(StreamNotFound);
  });

  it('answers a satisfied command with no events and the current revision', async () => {
    const streamId = `${freshCategory()}-1`;
    expect(await handleCommand({ store, decider: counter, streamId, ...commandOf('Nothing') })).toMatchObject({ events: [], revision: -1, duplicate: false });
    await handleCommand({ store, decider: counter, streamId, ...commandOf('Increment') });
    const result = await handleCommand({ store, decider: counter, streamId, ...commandOf('Nothing') });
    expect(result).toMatchObject({ events: [], revision: 0, duplicate: false });
    expect(result.position).toBeUndefined();
  });

  it('lands 20 different commands racing on one stream exactly once each, revisions 0..19', async () => {
    const streamId = `${freshCategory()}-1`;
    const results = await Promise.all(Array.from({ length: 20 }, () => handleCommand({ store, decider: counter, streamId, ...commandOf('Increment'), maxAttempts: 25 })));

    expect(results.map((r) => r.revision).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(results.every((r) => !r.duplicate)).toBe(true);
    const stored = await store.readStream(streamId);
    expect(stored.map((e) => e.data)).toEqual(Array.from({ length: 20 }, (_, n) => ({ n })));
    expect(new Set(stored.map((e) => e.metadata['commandId'])).size).toBe(20);
  });

  it('gives up with conflict only after maxAttempts, having written nothing for the losers', async () => {
    const streamId = `${freshCategory()}-1`;
    const settled = await Promise.allSettled(Array.from({ length: 20 }, () => handleCommand({ store, decider: counter, streamId, ...commandOf('Increment'), maxAttempts: 1 })));

    const won = settled.filter((s) => s.status === 'fulfilled');
    const lost = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []));
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(19);
    for (const error of lost) {
      expect(error).toBeInstanceOf(AgoraError);
      expect(error).toMatchObject({ code: 'conflict', details: { streamId, attempts: 1 } });
    }
    expect(await store.readStream(streamId)).toHaveLength(1);
  });

  it('lands the same command racing with itself from 10 calls once', async () => {
    const streamId = `${freshCategory()}-1`;
    const same = commandOf('Increment');
    const results = await Promise.all(Array.from({ length: 10 }, () => handleCommand({ store, decider: counter, streamId, ...same })));

    expect(await store.readStream(streamId)).toHaveLength(1);
    for (const r of results) expect(r).toMatchObject({ commandId: same.metadata.commandId, events: ['Incremented'], revision: 0 });
  });

  it('answers as a duplicate when another replica stored the same command with other events first', async () => {
    const streamId = `${freshCategory()}-1`;
    const { command, metadata } = commandOf('Increment');
    await handleCommand({ store, decider: counter, streamId, ...commandOf('Increment') });
    // This replica decides two events; while it does, "another replica" (which saw an older state)
    // stores one event for the same command, under the same deterministic id.
    const slowReplica: Decider<CounterCommand, CounterEvent, CounterState> = {
      ...counter,
      decide: (cmd, state) => {
        void store.append(streamId, [{ id: eventIdFor(metadata.commandId, 0), type: 'Noted', data: { n: -1 }, metadata: { commandId: metadata.commandId } }], 'any');
        return [...counter.decide(cmd, state), { type: 'Noted', data: { n: state.count } }];
      },
    };
    const result = await handleCommand({ store, decider: slowReplica, streamId, command, metadata });
    expect(result).toMatchObject({ events: ['Noted'], revision: 1, duplicate: true });
    expect((await store.readStream(streamId)).map((e) => e.type)).toEqual(['Incremented', 'Noted']);
  });

  it('refuses a commandId already used for another stream', async () => {
    const { command, metadata } = commandOf('Increment');
    await handleCommand({ store, decider: counter, streamId: `${freshCategory()}-1`, command, metadata });
    const other = `${freshCategory()}-2`;
    const reused = handleCommand({ store, decider: counter, streamId: other, command, metadata });
    await expect(reused).rejects.toMatchObject({ code: 'command_id_reused' });
    await expect(store.readStream(other)).rejects.toBeInstanceOf(StreamNotFound);
  });

  it('turns an unavailable store into AgoraError unavailable', async () => {
    const { store: closing } = await openTempStore();
    await closing.close();
    const result = handleCommand({ store: closing, decider: counter, streamId: `${freshCategory()}-1`, ...commandOf('Increment') });
    await expect(result).rejects.toBeInstanceOf(AgoraError);
    await expect(result).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('refuses mismatched command ids and a bad maxAttempts before touching the store', async () => {
    const streamId = `${freshCategory()}-1`;
    const { command, metadata } = commandOf('Increment');
    await expect(handleCommand({ store, decider: counter, streamId, command, metadata: { ...metadata, commandId: randomUUID() } })).rejects.toThrow(TypeError);
    await expect(handleCommand({ store, decider: counter, streamId, command, metadata, maxAttempts: 0 })).rejects.toThrow(RangeError);
    await expect(store.readStream(streamId)).rejects.toBeInstanceOf(StreamNotFound);
  });
});
