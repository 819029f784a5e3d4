/**
 * The gateway's A2A task store is bounded: an ended task is forgotten, with its push
 * configurations, once `maxFinished` tasks have ended after it; tasks still followed are kept; a
 * caller reads and lists only its own tasks.
 */
import { TaskState, type Task } from '@a2a-js/sdk';
import { InMemoryPushNotificationStore, type ServerCallContext } from '@a2a-js/sdk/server';
import { BoundedTaskStore } from '../src/a2a/task-store.js';

const as = (userName: string) => ({ user: { isAuthenticated: true, userName } }) as unknown as ServerCallContext;
const task = (id: string, state: TaskState): Task =>
  ({ id, contextId: `c-${id}`, status: { state, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, Number(id.replace(/\D/g, '')) % 60)).toISOString() }, artifacts: [], history: [], metadata: undefined }) as unknown as Task;

describe('BoundedTaskStore', () => {
  it('forgets the oldest ended task and its push configurations past the bound, keeping the ones still followed', async () => {
    const push = new InMemoryPushNotificationStore();
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
    const store = new BoundedTaskStore(new InMemoryPushNotificationStore());
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
});
