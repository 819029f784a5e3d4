/**
 * Deciding on upcast events: a stream an older release wrote (version 1 of a test event, no
 * `schemaVersion`) is folded in today's shape (version 2) by handleCommand through upcastingStore,
 * and what it appends links to the stored bytes, so the commit chain and the log hash read from
 * the raw store stay intact.
 */
import { randomUUID } from 'node:crypto';
import type { VersionedEvent } from '@agora/contracts';
import type { Command, Decider, DomainEvent } from '@agora/decider';
import { upcastingStore, type EventStore } from '@agora/eventstore';
import { commitHash, genesisCommitHash, verifyStreamChain } from '@agora/identity';
import { handleCommand, LogHasher } from '../src/index.js';
import { freshCategory, openTempStore, readAll, removeTempDirs } from './helpers.js';

/** Version 1 had `amount` in cents; version 2 has `total` in whole units. */
const Paid: VersionedEvent = { type: 'TestPaid', version: 2, upcasters: [(data) => ({ total: (data as { amount: number }).amount / 100 })] };
const versions = (type: string) => (type === Paid.type ? Paid : undefined);

type RefundCommand = Command<'Refund', { total: number }>;
type LedgerEvent = DomainEvent<'TestPaid', { total: number }> | DomainEvent<'TestRefunded', { total: number }>;
/** Refunds at most what was paid: it needs today's `total` of every payment, old ones included. */
const ledger: Decider<RefundCommand, LedgerEvent, { balance: number }> = {
  initialState: () => ({ balance: 0 }),
  evolve: (state, event) => ({ balance: state.balance + (event.type === 'TestPaid' ? event.data.total : -event.data.total) }),
  decide: (command, state) => (command.payload.total <= state.balance ? [{ type: 'TestRefunded', data: { total: command.payload.total } }] : []),
};

let raw: EventStore;
beforeAll(async () => {
  ({ store: raw } = await openTempStore());
});
afterAll(async () => {
  await raw.close();
  removeTempDirs();
});

describe('handleCommand on a stream an older release wrote', () => {
  it('decides on the upcast shape and links its commit to the bytes as written', async () => {
    const streamId = `${freshCategory()}-1`;
    // The older release's commit, chained as it chained it: over what it wrote.
    const old = { id: randomUUID(), type: 'TestPaid', data: { amount: 1250 }, metadata: { actor: 'alice', commandId: 'c1', prevCommitHash: genesisCommitHash(streamId) } };
    await raw.append(streamId, [old], 'no_stream');

    const store = upcastingStore(raw, versions);
    const refund = async (total: number) => {
      const commandId = randomUUID();
      const now = new Date().toISOString();
      return handleCommand({
        store,
        decider: ledger,
        streamId,
        command: { type: 'Refund', payload: { total }, context: { now, actor: 'alice', actorRoles: ['operator'], commandId } },
        metadata: { commandId, commandType: 'Refund', actor: 'alice', issuedAt: now },
      });
    };
    // 12.5 was paid (1250 cents in version 1): a refund of 20 is more than that, one of 10 is not.
    expect((await refund(20)).events).toEqual([]);
    expect((await refund(10)).events).toEqual(['TestRefunded']);

    const stored = await raw.readStream(streamId);
    expect(stored[1]!.metadata['prevCommitHash']).toBe(commitHash([{ ...old, id: stored[0]!.id }]));
    expect(verifyStreamChain(streamId, stored)).toEqual([]);
    // Read through the upcasting store, the chain verifies the same (it hashes what was written).
    const upcast = await store.readStream(streamId);
    expect(upcast[0]!.data).toEqual({ total: 12.5 });
    expect(verifyStreamChain(streamId, upcast)).toEqual([]);
  });

  it('the log hash over upcast events is the hash over the events as stored', async () => {
    const store = upcastingStore(raw, versions);
    const overRaw = new LogHasher();
    for (const e of await readAll(raw)) overRaw.add(e);
    const overUpcast = new LogHasher();
    for await (const e of store.readAll()) overUpcast.add(e);
    expect(overUpcast.current).toEqual(overRaw.current);
    expect(overUpcast.current.count).toBeGreaterThan(0);
  });
});
