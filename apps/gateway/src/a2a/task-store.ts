/**
 * The A2A tasks the gateway remembers, bounded. A task that has ended (completed, canceled,
 * rejected, failed) stays readable by its caller (tasks/get, tasks/list) until `maxFinished` tasks
 * have ended after it; then it is forgotten, with its push-notification configurations. Tasks still
 * followed are bounded by the executor (`maxTasks`), so the memory held is bounded whatever a
 * caller sends. Tasks are scoped by tenant and caller as in the SDK's own in-memory store, whose
 * filtering and paging `list` reuses on the caller's tasks.
 */
import { TaskState, type ListTasksRequest, type ListTasksResponse, type Task } from '@a2a-js/sdk';
import { InMemoryTaskStore, type PushNotificationStore, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server';

const ENDED: ReadonlySet<TaskState> = new Set([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED, TaskState.TASK_STATE_FAILED]);

/** The default number of ended tasks kept readable. */
export const DEFAULT_MAX_FINISHED_TASKS = 1_000;

const scopeOf = (context: ServerCallContext): string => `${context.tenant ?? ''}\u0000${context.user?.userName || 'unknown'}`;

export class BoundedTaskStore implements TaskStore {
  /** Scope, then task id. */
  private readonly scopes = new Map<string, Map<string, Task>>();
  /** Ended tasks, oldest first: the key is scope and id, the value what forgetting one needs. */
  private readonly ended = new Map<string, { scope: string; taskId: string; context: ServerCallContext }>();

  constructor(
    private readonly pushConfigs: PushNotificationStore,
    private readonly maxFinished = DEFAULT_MAX_FINISHED_TASKS,
  ) {}

  /** How many tasks are held (followed and ended). */
  get size(): number {
    let count = 0;
    for (const tasks of this.scopes.values()) count += tasks.size;
    return count;
  }

  async save(task: Task, context: ServerCallContext): Promise<void> {
    const scope = scopeOf(context);
    let tasks = this.scopes.get(scope);
    if (tasks === undefined) this.scopes.set(scope, (tasks = new Map()));
    tasks.set(task.id, structuredClone(task));
    const key = `${scope}\u0000${task.id}`;
    this.ended.delete(key);
    if (task.status !== undefined && ENDED.has(task.status.state)) this.ended.set(key, { scope, taskId: task.id, context });
    while (this.ended.size > this.maxFinished) {
      const [oldestKey, oldest] = this.ended.entries().next().value as [string, { scope: string; taskId: string; context: ServerCallContext }];
      this.ended.delete(oldestKey);
      await this.forget(oldest.scope, oldest.taskId, oldest.context);
    }
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const task = this.scopes.get(scopeOf(context))?.get(taskId);
    return task === undefined ? undefined : structuredClone(task);
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const view = new InMemoryTaskStore();
    for (const task of this.scopes.get(scopeOf(context))?.values() ?? []) await view.save(task, context);
    return view.list(params, context);
  }

  private async forget(scope: string, taskId: string, context: ServerCallContext): Promise<void> {
    const tasks = this.scopes.get(scope);
    tasks?.delete(taskId);
    if (tasks?.size === 0) this.scopes.delete(scope);
    for (const config of await this.pushConfigs.load(taskId, context)) await this.pushConfigs.delete(taskId, context, config.id);
  }
}
