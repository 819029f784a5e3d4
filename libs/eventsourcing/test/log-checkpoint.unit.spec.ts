import type { RecordedEvent } from '@agora/eventstore';
import { checkpointMismatch, LOG_HASH_ALGORITHM, LOG_HASH_GENESIS, LogHasher, logCheckpointDecider, nextLogHash } from '../src/log-checkpoint.js';

const event = (n: number, data: unknown = { n }): RecordedEvent => ({
  id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  type: 'Happened',
  data,
  metadata: { actor: 'alice', commandId: `c${n}` },
  streamId: 'thing-1',
  revision: n,
  position: String(n + 1),
  recordedAt: '2026-01-01T00:00:00.000Z',
});
const log = [0, 1, 2, 3, 4].map((n) => event(n));
const headOf = (events: readonly RecordedEvent[]) => {
  const hasher = new LogHasher();
  for (const e of events) hasher.add(e);
  return hasher.current;
};

describe('log checkpoints (the hash over the whole log)', () => {
  it('chains every event onto the hash before it, from the genesis hash', () => {
    expect(new LogHasher().current).toEqual({ count: 0, hash: LOG_HASH_GENESIS, position: undefined });
    const head = headOf(log);
    expect(head.count).toBe(5);
    expect(head.position).toBe('5');
    expect(head.hash).toBe(log.reduce((hash, e) => nextLogHash(hash, e), LOG_HASH_GENESIS));
    expect(head.hash).toMatch(/^[0-9a-f]{64}$/);
    // Resuming from a head gives the same hash as hashing from the start.
    const resumed = new LogHasher(headOf(log.slice(0, 2)));
    for (const e of log.slice(2)) resumed.add(e);
    expect(resumed.current).toEqual(head);
  });

  it('a checkpoint matches the same log and no longer matches once an event is edited, removed or the log cut short', () => {
    const head = headOf(log);
    const checkpoint = { count: head.count, position: head.position!, hash: head.hash, algorithm: LOG_HASH_ALGORITHM };
    expect(checkpointMismatch(checkpoint, headOf(log))).toBeUndefined();

    const edited = log.map((e, i) => (i === 2 ? event(2, { n: 2, edited: true }) : e));
    expect(checkpointMismatch(checkpoint, headOf(edited))).toMatch(/hash over its first 5 events/);
    const metadataEdited = log.map((e, i) => (i === 1 ? { ...e, metadata: { ...e.metadata, actor: 'mallory' } } : e));
    expect(checkpointMismatch(checkpoint, headOf(metadataEdited))).toMatch(/was edited, removed or inserted/);
    // One event removed from the middle: the log reaches 5 events one position later.
    const removed = [...log.slice(0, 2), ...log.slice(3), event(5)];
    expect(checkpointMismatch(checkpoint, headOf(removed))).toMatch(/position 5; in the log it is at 6/);
    // Cut short: the checkpoint covers more events than the log has.
    expect(checkpointMismatch(checkpoint, headOf(log.slice(0, 4)))).toMatch(/covers 5 events; the log has 4/);
  });

  it('the checkpoint stream only moves forward', () => {
    const context = { now: '2026-01-01T00:00:00.000Z', actor: 'service:projections', actorRoles: [], commandId: 'x' };
    const payload = { count: 5, position: '5', hash: 'a'.repeat(64), algorithm: LOG_HASH_ALGORITHM };
    const [recorded] = logCheckpointDecider.decide({ type: 'RecordLogCheckpoint', payload, context }, logCheckpointDecider.initialState());
    expect(recorded).toEqual({ type: 'LogCheckpointRecorded', data: { ...payload, recordedAt: context.now } });
    const state = logCheckpointDecider.evolve(logCheckpointDecider.initialState(), recorded!);
    expect(logCheckpointDecider.decide({ type: 'RecordLogCheckpoint', payload: { ...payload, count: 4 }, context }, state)).toEqual([]);
    expect(logCheckpointDecider.decide({ type: 'RecordLogCheckpoint', payload: { ...payload, count: 6 }, context }, state)).toHaveLength(1);
  });
});

describe('the log hash over stored bytes', () => {
  it('is the hash over the values: an event handed with its stored bytes hashes as one handed without', () => {
    const data = { text: 'é "quoted" \\ 😀', list: [1, 2.5, null, { nested: true }] };
    const plain = event(7, data);
    const body = Buffer.from(`${JSON.stringify(plain.data)}|${JSON.stringify(plain.metadata)}`, 'utf8');
    const split = body.indexOf('|');
    const stored: RecordedEvent = { ...plain, stored: { bytes: body, data: [0, split], metadata: [split + 1, body.length] } };
    expect(nextLogHash(LOG_HASH_GENESIS, stored)).toBe(nextLogHash(LOG_HASH_GENESIS, plain));
    // The bytes are what is hashed: other bytes, another hash.
    const edited = Buffer.from(body.toString('utf8').replace('2.5', '3.5'), 'utf8');
    expect(nextLogHash(LOG_HASH_GENESIS, { ...stored, stored: { ...stored.stored!, bytes: edited } })).not.toBe(nextLogHash(LOG_HASH_GENESIS, plain));
  });
});
