import { randomUUID } from 'node:crypto';
import type { Command, Decider, DomainEvent } from '@agora/decider';
import { openEmbeddedEventStore, type EventStore, type RecordedEvent } from '@agora/eventstore';
import { FileSnapshotStore, Scheduler, deadlineCommandId, handleCommand, type DeadlineChange, type SchedulerOptions } from '../src/index.js';
import { delay, eventually, openTempStore, recordingLogger, removeTempDirs, tempDir } from './helpers.js';

const CATEGORY = 'timer';

function deadlineOf(event: RecordedEvent): DeadlineChange {
  const data = event.data as { key: string; dueAt?: string };
  if (event.type === 'DeadlineSet') return { key: data.key, dueAt: data.dueAt! };
  if (event.type === 'DeadlineCancelled' || event.type === 'Expired') return { cancel: data.key };
  return undefined;
}

const inMs = (ms: number): string => new Date(Date.now() + ms).toISOString();

function setDeadline(store: EventStore, key: string, dueAt: string, category = CATEGORY): Promise<unknown> {
  return store.append(`${category}-${key}`, [{ type: 'DeadlineSet', data: { key, dueAt } }], 'any');
}

function cancelDeadline(store: EventStore, key: string): Promise<unknown> {
  return store.append(`${CATEGORY}-${key}`, [{ type: 'DeadlineCancelled', data: { key } }], 'any');
}

interface Firing {
  key: string;
  dueAt: string;
  atMs: number;
}

const running: Scheduler[] = [];
const stores: EventStore[] = [];

/** A scheduler over `store` that records what it fires; stopped after each test. */
function schedulerOn(store: EventStore, overrides: Partial<SchedulerOptions> = {}): { scheduler: Scheduler; fired: Firing[]; logger: ReturnType<typeof recordingLogger> } {
  const fired: Firing[] = [];
  const logger = recordingLogger();
  const scheduler = new Scheduler({
    store,
    name: 'test',
    categories: [CATEGORY],
    deadlineOf,
    fire: async (key, dueAt) => void fired.push({ key, dueAt, atMs: Date.now() }),
    logger,
    retry: { initialDelayMs: 10, maxDelayMs: 20 },
    ...overrides,
  });
  running.push(scheduler);
  return { scheduler, fired, logger };
}

async function freshStore(): Promise<EventStore> {
  const { store } = await openTempStore();
  stores.push(store);
  return store;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
  await Promise.all(stores.splice(0).map((s) => s.close()));
});
afterAll(removeTempDirs);

describe('Scheduler', () => {
  it('an inactive scheduler (a standby replica) keeps its pending set from the log but fires nothing until activated', async () => {
    const store = await freshStore();
    const dueAt = inMs(20);
    await setDeadline(store, 'a', dueAt);
    await setDeadline(store, 'b', inMs(30));
    const { scheduler, fired } = schedulerOn(store, { active: false });
    await scheduler.start();
    // The holder fires b: its expiry reaches the log, and the standby's set follows.
    await store.append(`${CATEGORY}-b`, [{ type: 'Expired', data: { key: 'b' } }], 'any');
    await delay(100);
    expect(fired).toEqual([]);
    expect(scheduler.pending()).toEqual([{ key: 'a', dueAt }]);
    scheduler.setActive(true);
    await eventually(() => fired.length === 1, 2_000, 'the overdue deadline to fire once active');
    expect(fired[0]).toMatchObject({ key: 'a', dueAt });
    scheduler.setActive(false);
    await setDeadline(store, 'c', inMs(10));
    await delay(100);
    expect(fired).toHaveLength(1);
    expect(scheduler.pending().map((d) => d.key)).toEqual(['c']);
  });

  it('fires a deadline when it is due, not before, and forgets it', async () => {
    const store = await freshStore();
    const dueAt = inMs(60);
    await setDeadline(store, 'a', dueAt);
    await setDeadline(store, 'elsewhere', inMs(10), 'other');
    const { scheduler, fired } = schedulerOn(store);
    await scheduler.start();
    expect(scheduler.pending()).toEqual([{ key: 'a', dueAt }]);

    await eventually(() => fired.length === 1, 2_000, 'the deadline to fire');
    expect(fired[0]).toMatchObject({ key: 'a', dueAt });
    expect(fired[0]!.atMs).toBeGreaterThanOrEqual(Date.parse(dueAt) - 2);
    expect(scheduler.pending()).toEqual([]);
    await delay(50);
    expect(fired).toHaveLength(1);
  });

  it('fires in due order, including deadlines set and moved after start', async () => {
    const store = await freshStore();
    // Gaps of 150 ms: wide enough that a loaded machine finishes the start and the moves before 'a' was first due.
    await setDeadline(store, 'a', inMs(300));
    await setDeadline(store, 'b', inMs(150));
    const { scheduler, fired } = schedulerOn(store);
    await scheduler.start();
    await setDeadline(store, 'c', inMs(450));
    const movedTo = inMs(600);
    await setDeadline(store, 'a', movedTo);

    await eventually(() => fired.length === 3, 3_000, 'three deadlines to fire');
    expect(fired.map((f) => f.key)).toEqual(['b', 'c', 'a']);
    expect(fired[2]!.dueAt).toBe(movedTo);
    expect(fired[2]!.atMs).toBeGreaterThanOrEqual(Date.parse(movedTo) - 2);
    await delay(40);
    expect(fired).toHaveLength(3);
  });

  it('never fires a deadline cancelled before it is due, whether in history or live', async () => {
    const store = await freshStore();
    await setDeadline(store, 'old', inMs(30));
    await cancelDeadline(store, 'old');
    await setDeadline(store, 'live', inMs(300));
    const { scheduler, fired } = schedulerOn(store);
    await scheduler.start();
    expect(scheduler.pending().map((p) => p.key)).toEqual(['live']);
    await cancelDeadline(store, 'live');

    await delay(400);
    expect(fired).toEqual([]);
    expect(scheduler.pending()).toEqual([]);
  });

  it('fires a deadline after a restart of the scheduler and of the store', async () => {
    const { store: first, directory } = await openTempStore();
    const dueAt = inMs(200);
    await setDeadline(first, 'durable', dueAt);
    const before = schedulerOn(first);
    await before.scheduler.start();
    expect(before.scheduler.pending()).toEqual([{ key: 'durable', dueAt }]);
    await before.scheduler.stop();
    await first.close();

    const reopened = await openEmbeddedEventStore({ directory });
    stores.push(reopened);
    const after = schedulerOn(reopened);
    await after.scheduler.start();
    expect(after.scheduler.pending()).toEqual([{ key: 'durable', dueAt }]);
    await eventually(() => after.fired.length === 1, 2_000, 'the deadline to fire after restart');
    expect(after.fired[0]).toMatchObject({ key: 'durable', dueAt });
    expect(before.fired).toEqual([]);
  });

  it('restores the pending set from its snapshot and reads only the events after it: the same set as from the whole log', async () => {
    const { store: first, directory } = await openTempStore();
    const snapshots = new FileSnapshotStore(tempDir());
    await setDeadline(first, 'kept', inMs(60_000));
    await setDeadline(first, 'cancelled', inMs(60_000));
    await setDeadline(first, 'soon', inMs(1_500));
    const before = schedulerOn(first, { snapshots });
    await before.scheduler.start();
    await cancelDeadline(first, 'cancelled');
    await eventually(() => before.scheduler.pending().length === 2, 2_000, 'the live cancel to be read');
    await before.scheduler.stop();
    await first.close();

    const reopened = await openEmbeddedEventStore({ directory });
    stores.push(reopened);
    await setDeadline(reopened, 'later', inMs(120_000));
    const seen: string[] = [];
    const after = schedulerOn(reopened, { snapshots, deadlineOf: (event) => (seen.push(event.id), deadlineOf(event)) });
    await after.scheduler.start();
    expect(seen).toHaveLength(1);
    const rebuilt = schedulerOn(reopened);
    await rebuilt.scheduler.start();
    expect(after.scheduler.pending()).toEqual(rebuilt.scheduler.pending());
    expect(after.scheduler.pending().map((p) => p.key)).toEqual(['soon', 'kept', 'later']);
    await eventually(() => after.fired.some((f) => f.key === 'soon'), 5_000, 'the restored deadline to fire');

    // A snapshot of another version is discarded, logged, and the set rebuilt from the whole log.
    const other = schedulerOn(reopened, { snapshots, snapshotVersion: 2 });
    await other.scheduler.start();
    expect(other.logger.messages.join('\n')).toMatch(/does not match the code's version 2; discarded/);
    expect(other.scheduler.pending().map((p) => p.key)).toEqual(expect.arrayContaining(['kept', 'later']));
  });

  it("fires a deadline with the traceparent of the event that set it, from the log and from its snapshot", async () => {
    const { store: first, directory } = await openTempStore();
    const snapshots = new FileSnapshotStore(tempDir());
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    await first.append(`${CATEGORY}-traced`, [{ type: 'DeadlineSet', data: { key: 'traced', dueAt: inMs(1_500) }, metadata: { traceparent } }], 'any');
    await setDeadline(first, 'untraced', inMs(1_500));
    const causes = new Map<string, unknown>();
    const fire = async (key: string, _dueAt: string, cause?: { traceparent?: string }) => void causes.set(key, cause);
    const before = schedulerOn(first, { snapshots, fire });
    await before.scheduler.start();
    expect(before.scheduler.pending()).toEqual(expect.arrayContaining([expect.objectContaining({ key: 'traced', traceparent })]));
    await before.scheduler.stop();
    await first.close();

    const reopened = await openEmbeddedEventStore({ directory });
    stores.push(reopened);
    const seen: string[] = [];
    const after = schedulerOn(reopened, { snapshots, fire, deadlineOf: (event) => (seen.push(event.id), deadlineOf(event)) });
    await after.scheduler.start();
    expect(seen).toHaveLength(0);
    await eventually(() => causes.size === 2, 5_000, 'both deadlines to fire');
    expect(causes.get('traced')).toEqual({ traceparent });
    expect(causes.get('untraced')).toEqual({});
  });

  it('fires a deadline already past at start right after catch-up', async () => {
    const store = await freshStore();
    const dueAt = inMs(-60_000);
    await setDeadline(store, 'late', dueAt);
    const { scheduler, fired } = schedulerOn(store);
    await scheduler.start();
    const startedAt = Date.now();
    await eventually(() => fired.length === 1, 1_000, 'the past-due deadline to fire');
    expect(fired[0]).toMatchObject({ key: 'late', dueAt });
    expect(fired[0]!.atMs - startedAt).toBeLessThan(200);
  });

  it('decides "due" by the clock it is given', async () => {
    const store = await freshStore();
    await setDeadline(store, 'tomorrow', inMs(24 * 3600_000));
    const { scheduler, fired } = schedulerOn(store, { clock: { now: () => Date.now() + 48 * 3600_000 } });
    await scheduler.start();
    await eventually(() => fired.length === 1, 1_000, 'the deadline to fire on the given clock');
  });

  it('retries a failing fire with backoff, logging each failure', async () => {
    const store = await freshStore();
    await setDeadline(store, 'flaky', inMs(20));
    const calls: number[] = [];
    const { scheduler, logger } = schedulerOn(store, {
      fire: async () => {
        calls.push(Date.now());
        if (calls.length <= 2) throw new Error('expiry command timed out');
      },
    });
    await scheduler.start();

    await eventually(() => calls.length === 3, 2_000, 'the third attempt');
    expect(logger.messages).toHaveLength(2);
    expect(logger.messages[0]).toMatch(/flaky.*failed \(attempt 1\)/);
    expect(calls[1]! - calls[0]!).toBeGreaterThanOrEqual(9);
    await delay(60);
    expect(calls).toHaveLength(3);
    expect(scheduler.pending()).toEqual([]);
  });

  it('keeps firing other deadlines while one keeps failing', async () => {
    const store = await freshStore();
    await setDeadline(store, 'broken', inMs(10));
    await setDeadline(store, 'fine', inMs(40));
    const fired: string[] = [];
    const { scheduler } = schedulerOn(store, {
      fire: async (key) => {
        if (key === 'broken') throw new Error('always fails');
        fired.push(key);
      },
    });
    await scheduler.start();
    await eventually(() => fired.includes('fine'), 2_000, 'the healthy deadline');
    expect(scheduler.pending().map((p) => p.key)).toEqual(['broken']);
  });

  it('makes firing twice harmless when fire issues an idempotent expiry command (two replicas)', async () => {
    type VoteCommand = Command<'Open', { dueAt: string }> | Command<'Expire', { dueAt: string }>;
    type VoteEvent = DomainEvent<'DeadlineSet', { key: string; dueAt: string }> | DomainEvent<'Expired', { key: string }>;
    const vote: Decider<VoteCommand, VoteEvent, { key?: string; expired: boolean }> = {
      initialState: () => ({ expired: false }),
      evolve: (state, event) => (event.type === 'DeadlineSet' ? { ...state, key: event.data.key } : { ...state, expired: true }),
      decide: (command, state) => {
        if (command.type === 'Open') return [{ type: 'DeadlineSet', data: { key: 'v1', dueAt: command.payload.dueAt } }];
        return state.expired || !state.key ? [] : [{ type: 'Expired', data: { key: state.key } }];
      },
    };
    const store = await freshStore();
    const streamId = `${CATEGORY}-v1`;
    const issue = (command: VoteCommand) =>
      handleCommand({
        store,
        decider: vote,
        streamId,
        command,
        metadata: { commandId: command.context.commandId, commandType: command.type, actor: command.context.actor, issuedAt: command.context.now },
      });
    const fire = async (key: string, dueAt: string): Promise<void> => {
      await issue({ type: 'Expire', payload: { dueAt }, context: { now: dueAt, actor: 'scheduler', actorRoles: [], commandId: deadlineCommandId(key, dueAt) } });
    };
    const replicas = [schedulerOn(store, { fire }), schedulerOn(store, { fire })];
    await Promise.all(replicas.map((r) => r.scheduler.start()));
    const dueAt = inMs(40);
    await issue({ type: 'Open', payload: { dueAt }, context: { now: new Date().toISOString(), actor: 'alice', actorRoles: [], commandId: randomUUID() } });

    await eventually(() => replicas.every((r) => r.scheduler.pending().length === 0), 2_000, 'both replicas to see the expiry');
    // However many replicas fired, and a late extra firing (a restart before the expiry event was seen), change nothing.
    await Promise.all([fire('v1', dueAt), fire('v1', dueAt)]);
    await delay(50);
    expect((await store.readStream(streamId)).map((e) => e.type)).toEqual(['DeadlineSet', 'Expired']);
  });
});
