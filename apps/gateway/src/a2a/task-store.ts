/**
 * The A2A tasks the gateway remembers, bounded. A task that has ended (completed, canceled,
 * rejected, failed), that waits for its signed start command (nothing follows it), or that is held
 * while its request opens it under a named id (its request may fail before its first event), stays
 * readable by its caller (tasks/get, tasks/list) until its caller has ended `perCaller` more, or all callers together `maxFinished` (then the caller holding the most
 * gives up its oldest): one caller's tasks never push out another's. A forgotten task's
 * push-notification configurations go with it. A task's history keeps its latest messages, at
 * most `historyMessages` of them and `historyBytes` of JSON. Tasks still followed are bounded by
 * the executor (`maxTasks`, `tasksPerCaller`), so the memory held is bounded whatever a caller
 * sends. Tasks are scoped by tenant and caller as in the SDK's own in-memory store, whose filtering
 * and paging `list` reuses on the caller's tasks. A task it does not hold, a named one
 * (task-id.ts), is rebuilt from the log as the caller may read it (`rebuild`): a restarted gateway,
 * or another replica, answers for the tasks another opened.
 */
import { type ListTasksRequest, type ListTasksResponse, type Task } from '@a2a-js/sdk';
import { InMemoryTaskStore, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server';
import { awaitsSignature } from './draft.js';
import { boundedHistory, ENDED_STATES } from './parts.js';
import { isOpening } from './task-id.js';
import { DEFAULT_A2A_BOUNDS } from './settings.js';


/** The default number of ended tasks kept readable. */
export const DEFAULT_MAX_FINISHED_TASKS = DEFAULT_A2A_BOUNDS.maxFinishedTasks;

/** A caller's share of /a2a: tenant and agent (with reads open, everyone is one caller), as the SDK's stores scope tasks. */
export const scopeOf = (context: ServerCallContext): string => `${context.tenant ?? ''}\u0000${context.user?.userName || 'unknown'}`;

export interface TaskStoreBounds {
  /** Ended tasks kept in all (default 1,000). */
  maxFinished?: number;
  /** Ended tasks one caller keeps (default 100). */
  perCaller?: number;
  /** Messages of a task's history (default 50). */
  historyMessages?: number;
  /** JSON bytes of a task's history (default 256 KiB). */
  historyBytes?: number;
}

/** A task not held, rebuilt from the log as the request's caller may read it (rebuildTask); undefined when there is none to that caller. */
export type RebuildTask = (taskId: string, context: ServerCallContext) => Promise<Task | undefined>;

/** What forgets a task's push configurations (PushConfigs). */
export interface ForgetsPushes {
  forget(taskId: string, context: ServerCallContext): Promise<void>;
}

interface EndedTask {
  taskId: string;
  context: ServerCallContext;
}

export class BoundedTaskStore implements TaskStore {
  /** Scope, then task id. */
  private readonly scopes = new Map<string, Map<string, Task>>();
  /** Ended tasks by scope, oldest first (by task id). */
  private readonly ended = new Map<string, Map<string, EndedTask>>();
  private endedCount = 0;
  private readonly bounds: Required<TaskStoreBounds>;

  constructor(
    private readonly pushConfigs: ForgetsPushes,
    bounds: TaskStoreBounds | number = {},
    private readonly rebuild?: RebuildTask,
  ) {
    const given = typeof bounds === 'number' ? { maxFinished: bounds } : bounds;
    this.bounds = {
      maxFinished: given.maxFinished ?? DEFAULT_A2A_BOUNDS.maxFinishedTasks,
      perCaller: given.perCaller ?? DEFAULT_A2A_BOUNDS.finishedTasksPerCaller,
      historyMessages: given.historyMessages ?? DEFAULT_A2A_BOUNDS.historyMessages,
      historyBytes: given.historyBytes ?? DEFAULT_A2A_BOUNDS.historyBytes,
    };
  }

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
    const kept = structuredClone(task);
    kept.history = boundedHistory(kept.history ?? [], this.bounds.historyMessages, this.bounds.historyBytes);
    tasks.set(task.id, kept);
    let ended = this.ended.get(scope);
    if (ended?.delete(task.id)) this.endedCount--;
    // A task being opened (its request may fail before its first event) counts as the ended ones do, within its caller's share.
    if ((task.status !== undefined && ENDED_STATES.has(task.status.state)) || awaitsSignature(task) || isOpening(task)) {
      if (ended === undefined) this.ended.set(scope, (ended = new Map()));
      ended.set(task.id, { taskId: task.id, context });
      this.endedCount++;
    }
    // The caller's own share first; then, past the bound of all, the caller holding the most gives up its oldest.
    while (ended !== undefined && ended.size > this.bounds.perCaller) await this.forgetOldest(scope);
    while (this.endedCount > this.bounds.maxFinished) {
      const [largest] = [...this.ended.entries()].reduce((a, b) => (b[1].size > a[1].size ? b : a));
      await this.forgetOldest(largest);
    }
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const task = this.scopes.get(scopeOf(context))?.get(taskId);
    if (task === undefined) return this.rebuild?.(taskId, context);
    return structuredClone(task);
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const view = new InMemoryTaskStore();
    for (const task of this.scopes.get(scopeOf(context))?.values() ?? []) await view.save(task, context);
    return view.list(params, context);
  }

  private async forgetOldest(scope: string): Promise<void> {
    const ended = this.ended.get(scope);
    const oldest = ended?.values().next().value;
    if (ended === undefined || oldest === undefined) return;
    ended.delete(oldest.taskId);
    this.endedCount--;
    if (ended.size === 0) this.ended.delete(scope);
    const tasks = this.scopes.get(scope);
    tasks?.delete(oldest.taskId);
    if (tasks?.size === 0) this.scopes.delete(scope);
    await this.pushConfigs.forget(oldest.taskId, oldest.context);
  }
}
