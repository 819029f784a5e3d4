/**
 * The gateway's A2A task store is bounded: an ended task is forgotten, with its push
 * configurations, once `maxFinished` tasks have ended after it, and a caller's ended tasks only
 * by its own; tasks still followed are kept; a task's history keeps its latest messages within a
 * count and a size; a caller reads and lists only its own tasks; a task held while its request
 * opens it counts as an ended one; a task not held is asked of `rebuild`, whose history is its
 * aggregate's events as the caller may read them (historyFromLog).
 */
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { PushConfigs } from '../src/a2a/push.js';
import { PushTargets } from '../src/a2a/push-target.js';
import { AGORA_SKILLS } from '../src/a2a/skills.js';
import { readerOf } from '@agora/contracts';
import type { EventStore, RecordedEvent } from '@agora/eventstore';
import { StreamNotFound } from '@agora/eventstore';
import { StreamParties } from '../src/read-visibility.js';
import { historyFromLog, openingTask } from '../src/a2a/task-id.js';
import { BoundedTaskStore } from '../src/a2a/task-store.js';

const pushConfigs = () => new PushConfigs(new PushTargets(['127.0.0.1']), { perTask: 5, perCaller: 50 });

const as = (userName: string) => ({ user: { isAuthenticated: true, userName } }) as unknown as ServerCallContext;
const task = (id: string, state: TaskState): Task =>
  ({ id, contextId: `c-${id}`, status: { state, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, Number(id.replace(/\D/g, '')) % 60)).toISOString() }, artifacts: [], history: [], metadata: undefined }) as unknown as Task;

describe('BoundedTaskStore', () => {
  it('forgets the oldest ended task and its push configurations past the bound, keeping the ones still followed', async () => {
    const push = pushConfigs();
    const store = new BoundedTaskStore(push, 2);
    const alice = as('alice');
    await store.save(task('t1', TaskState.TASK_STATE_WORKING), alice);
    await push.save('t1', alice, { id: 'hook', url: 'http://127.0.0.1:1/hook' } as never);
    await store.save(task('t2', TaskState.TASK_STATE_INPUT_REQUIRED), alice);
    await store.save(task('t1', TaskState.TASK_STATE_COMPLETED), alice);
    await store.save(task('t3', TaskState.TASK_STATE_FAILED), alice);
    expect(store.size).toBe(3);
    expect(await push.load('t1', alice)).toHaveLength(1);

    await store.save(task('t4', TaskState.TASK_STATE_CANCELED), alice);
    expect(await store.load('t1', alice)).toBeUndefined();
    expect(await push.load('t1', alice)).toEqual([]);
    expect((await store.load('t2', alice))?.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(store.size).toBe(3);

    // A task that ends again (saved anew) counts from its latest end.
    await store.save(task('t3', TaskState.TASK_STATE_FAILED), alice);
    await store.save(task('t5', TaskState.TASK_STATE_REJECTED), alice);
    expect(await store.load('t4', alice)).toBeUndefined();
    expect(await store.load('t3', alice)).toBeDefined();

    for (let i = 10; i < 1_010; i++) await store.save(task(`t${i}`, TaskState.TASK_STATE_COMPLETED), alice);
    expect(store.size).toBe(3);
  });

  it('answers a caller with its own tasks only, listed through the SDK paging', async () => {
    const store = new BoundedTaskStore(pushConfigs());
    await store.save(task('a1', TaskState.TASK_STATE_WORKING), as('alice'));
    await store.save(task('a2', TaskState.TASK_STATE_COMPLETED), as('alice'));
    await store.save(task('b1', TaskState.TASK_STATE_WORKING), as('bob'));
    expect(await store.load('b1', as('alice'))).toBeUndefined();
    const listed = await store.list({ pageSize: 10 } as never, as('alice'));
    expect(listed.tasks.map((t) => t.id).sort()).toEqual(['a1', 'a2']);
    const page = await store.list({ pageSize: 1 } as never, as('alice'));
    expect(page.tasks).toHaveLength(1);
    expect(page.nextPageToken).not.toBe('');
  });

  it("keeps a caller's tasks held while their requests open them (named ids whose requests failed) within its own share, and answers a task it does not hold as rebuilt", async () => {
    const vote = AGORA_SKILLS.find((s) => s.id === 'validator-vote')!;
    const rebuilt: string[] = [];
    const store = new BoundedTaskStore(pushConfigs(), { maxFinished: 1_000, perCaller: 3 }, async (taskId, context) => {
      rebuilt.push(`${taskId} as ${context.user?.userName ?? ''}`);
      return undefined;
    });
    for (let i = 0; i < 10; i++) await store.save(openingTask(`validator-vote:voting_session-m${i}`, `validator-vote:voting_session-m${i}`, vote), as('mal'));
    expect(store.size).toBe(3);
    expect((await store.load('validator-vote:voting_session-m9', as('mal')))?.id).toBe('validator-vote:voting_session-m9');
    expect(await store.load('validator-vote:voting_session-m0', as('mal'))).toBeUndefined();
    expect(rebuilt).toEqual(['validator-vote:voting_session-m0 as mal']);
  });

  it("evicts within the caller's own share: 1,001 ended tasks of one caller forget none of another's", async () => {
    const store = new BoundedTaskStore(pushConfigs(), { maxFinished: 1_000, perCaller: 100 });
    await store.save(task('bob-1', TaskState.TASK_STATE_COMPLETED), as('bob'));
    for (let i = 0; i < 1_001; i++) await store.save(task(`mal-${i}`, TaskState.TASK_STATE_REJECTED), as('mal'));
    expect(await store.load('bob-1', as('bob'))).toBeDefined();
    expect(await store.load('mal-0', as('mal'))).toBeUndefined();
    expect(await store.load('mal-1000', as('mal'))).toBeDefined();
    expect(store.size).toBe(101);
    // Past the bound of all, the caller holding the most gives up its oldest.
    const small = new BoundedTaskStore(pushConfigs(), { maxFinished: 4, perCaller: 3 });
    await small.save(task('b1', TaskState.TASK_STATE_COMPLETED), as('bob'));
    for (const id of ['m1', 'm2', 'm3']) await small.save(task(id, TaskState.TASK_STATE_COMPLETED), as('mal'));
    await small.save(task('c1', TaskState.TASK_STATE_COMPLETED), as('cyd'));
    expect([await small.load('b1', as('bob')), await small.load('m1', as('mal')), await small.load('c1', as('cyd'))].map((t) => t?.id)).toEqual(['b1', undefined, 'c1']);
  });

  it("keeps a task's latest messages within the count and the bytes of its bound", async () => {
    const store = new BoundedTaskStore(pushConfigs(), { historyMessages: 10, historyBytes: 200 * 1024 });
    const message = (i: number): Message => ({ messageId: `m${i}`, contextId: 'c', taskId: 't', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: 'x'.repeat(90 * 1024) }, mediaType: 'text/plain', filename: '', metadata: undefined }], metadata: undefined, extensions: [], referenceTaskIds: [] });
    const big = { ...task('t', TaskState.TASK_STATE_WORKING), history: Array.from({ length: 200 }, (_, i) => message(i)) };
    await store.save(big, as('alice'));
    const kept = (await store.load('t', as('alice')))!.history;
    expect(kept.map((m) => m.messageId)).toEqual(['m198', 'm199']);
    expect(Buffer.byteLength(JSON.stringify(kept))).toBeLessThanOrEqual(200 * 1024);
  });
});

describe('historyFromLog', () => {
  const event = (revision: number, type: string, data: Record<string, unknown>): RecordedEvent => ({
    id: `e${revision}`,
    type,
    data,
    metadata: { actor: 'envoy', commandType: 'CreateVotingSession', commandPayload: { secret: true } },
    streamId: 'voting_session-v1',
    revision,
    position: String(revision + 1),
    recordedAt: '2026-01-01T00:00:00.000Z',
  });
  const events = [event(0, 'VotingSessionCreated', { sessionId: 'v1', createdBy: 'envoy', validators: [] }), event(1, 'ValidatorVoteReceived', { sessionId: 'v1', validator: 'val-1' }), event(2, 'VotingSessionCancelled', { sessionId: 'v1' })];
  const store = {
    readStream: async (streamId: string) => {
      if (streamId !== 'voting_session-v1') throw new StreamNotFound(streamId);
      return events;
    },
  } as unknown as EventStore;
  const ids = { taskId: 'validator-vote:voting_session-v1', contextId: 'validator-vote:voting_session-v1' };
  const history = historyFromLog(store, new StreamParties(store), { historyMessages: 50, historyBytes: 256 * 1024 });
  const seen = async (reader: Parameters<typeof history>[1], streamId = 'voting_session-v1') =>
    (await history(streamId, reader, ids)).map((m) => ({ messageId: m.messageId, taskId: m.taskId, event: (m.parts[1]?.content?.value as { event: { type: string; data: unknown; metadata: unknown } }).event }));

  it('gives each event of the aggregate as the caller may read it: whole to a party, metadata only to an observer, nothing to another agent', async () => {
    const party = await seen(readerOf('envoy', ['executive']));
    expect(party.map((m) => [m.messageId, m.taskId, m.event.type])).toEqual([
      ['e0', ids.taskId, 'VotingSessionCreated'],
      ['e1', ids.taskId, 'ValidatorVoteReceived'],
      ['e2', ids.taskId, 'VotingSessionCancelled'],
    ]);
    expect(party[0]!.event).toMatchObject({ data: { createdBy: 'envoy' }, metadata: { commandPayload: { secret: true } } });
    const observer = await seen(readerOf('watcher', ['observer']));
    expect(observer.map((m) => m.event)).toEqual(events.map((e) => expect.objectContaining({ type: e.type, data: {}, metadata: { actor: 'envoy', commandType: 'CreateVotingSession' } })));
    expect(await seen(readerOf('nova', ['executive']))).toEqual([]);
    expect(await seen(undefined, 'voting_session-none')).toEqual([]);
  });

  it('keeps the latest events within the history\'s bounds', async () => {
    const short = historyFromLog(store, new StreamParties(store), { historyMessages: 2, historyBytes: 256 * 1024 });
    expect((await short('voting_session-v1', undefined, ids)).map((m) => m.messageId)).toEqual(['e1', 'e2']);
  });
});
