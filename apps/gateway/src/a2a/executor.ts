/**
 * The A2A agent executor: a message that carries a signed command of the caller starts a task; the
 * command goes to its service as the caller signed it (the gateway holds no agent's key), and the
 * task then follows the aggregate on the log, read as the caller, until it is final. A later
 * message of the task may carry the caller's own turn (a revision, a thesis); tasks/cancel carries
 * the caller's signed cancellation. Every command in the log is the caller's, under its signature.
 * A message without a signed command opens a task in input-required with the command drafted from
 * its fields (draft.ts); the signed command in a later message of that task starts it.
 */
import { TaskState, type Message, type Part, type Task } from '@a2a-js/sdk';
import { TaskNotCancelableError } from '@a2a-js/sdk/errors';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext, type ServerCallContext, type User } from '@a2a-js/sdk/server';
import type { CommandResult, ErrorCode, Reader, Reply } from '@agora/contracts';
import { waitOnLog, type Agora } from '@agora/sdk';
import type { LoggerService } from '@nestjs/common';
import type { CommandSender } from '../commands.js';
import type { Credential, EndReason } from '../credentials.js';
import { GatewayError } from '../http-reply.js';
import { loggable } from './loggable.js';
import { awaitsSignature, draftCommand, draftStatus } from './draft.js';
import { agentMessage, commandsIn, dataPart, ENDED_STATES, isObject, isSigned, outcomeArtifact, TASK_STATES, textPart } from './parts.js';
import { scopeOf } from './task-store.js';
import { followedByTaskId, isOpening } from './task-id.js';
import { AGORA_SKILLS, FINAL_STATES, skillStartedBy, type AgoraSkill, type Followed, type SkillStatus } from './skills.js';

/** The caller of an A2A request: the agent its read token proves (reads closed), or nobody in particular (reads open). */
export class A2ACaller implements User {
  constructor(
    readonly reader: Reader | undefined,
    /** What the caller's read stands on (reads closed): a task's pushes stop when it no longer holds. */
    readonly credential?: Credential,
  ) {}

  get isAuthenticated(): boolean {
    return this.reader !== undefined;
  }

  get userName(): string {
    return this.reader?.agentId ?? 'anyone';
  }
}

const callerOf = (context: ServerCallContext): A2ACaller => (context.user instanceof A2ACaller ? context.user : new A2ACaller(undefined));

/** Publishes a task as it opens, in the state given (AgoraAgentExecutor.opening). */
type Opening = (state: SkillStatus['state'], text: string, metadata: Record<string, unknown>, parts?: Part[]) => Task;

/** The skill a task was opened for (metadata.agora.skill). */
const skillOfTask = (task: Task): AgoraSkill | undefined => AGORA_SKILLS.find((s) => s.id === (task.metadata?.['agora'] as { skill?: unknown } | undefined)?.skill);

/** One task following its aggregate. */
interface Run {
  skill: AgoraSkill;
  followed: Followed;
  caller: A2ACaller;
  contextId: string;
  bus: ExecutionEventBus;
  stop: AbortController;
  /** The last status published. */
  last: SkillStatus | undefined;
  /** The stream revision the caller's latest turn reached: a view read before it is not published (it would say the turn is still awaited). */
  minRevision: number;
  /** A turn of the caller is under way: a change read meanwhile is held (it would end the turn's request with a state the turn may already have changed), then read again. */
  turning: boolean;
  held: boolean;
  /** The SDK client the task reads with, as its caller. */
  agora: Agora;
  done: Promise<void>;
  /** The caller's share of the tasks (scopeOf), and the command that started the task. */
  callerKey: string;
  commandId: string;
  /** Why the caller lost its right to the task (disabled, its key or roles changed), once it has. */
  revoked: EndReason | undefined;
  /** The task as it started (what a duplicate joins until the store has it). */
  started: Task;
}

export interface ExecutorOptions {
  commands: CommandSender;
  /** An SDK client that reads as the given reader (the visibility table), over the gateway's bus. */
  readerClient(reader: Reader | undefined): Agora;
  /** Tasks following the log at once; past that a new task is refused (default 1,000). */
  maxTasks?: number;
  /** Tasks one caller follows at once; past that its new task is refused, others' are not (default 100). */
  tasksPerCaller?: number;
  /**
   * Watches the caller's credential for as long as its task is followed: `end` is called when the
   * registry disables the agent or changes its key or roles (CredentialWatch.bind). Returns the unbinding.
   */
  watch?(credential: Credential, end: (reason: EndReason) => void): () => void;
  /** The caller lost its right to the task: its pushes stop at once (PushConfigs.revoke, PushQueue.drop). */
  revoke?(taskId: string, context: ServerCallContext): Promise<void>;
  /** A task as the store holds it (a duplicate command joins it). */
  current?(taskId: string, context: ServerCallContext): Promise<Task | undefined>;
  /** The longest a task follows its aggregate (default 24 hours); it then fails and says so. */
  followMs?: number;
  /** Opens the bus a task's follower publishes on when it adopts the task (no request of its own started it here). */
  openBus?(taskId: string, context: ServerCallContext): ExecutionEventBus;
  /** Called when a task's bus has ended and may be let go (buses are kept per caller: the request's context says whose). */
  settled(taskId: string, bus: ExecutionEventBus, context: ServerCallContext): void;
  logger: Pick<LoggerService, 'warn'>;
}

const DEFAULT_FOLLOW_MS = 24 * 60 * 60_000;

export class AgoraAgentExecutor implements AgentExecutor {
  private readonly runs = new Map<string, Run>();
  /** Tasks starting (their command sent, not yet followed), by caller and command id: a duplicate waits for the task it joins. */
  private readonly starting = new Map<string, Promise<string | undefined>>();
  /** Slots taken by tasks starting, by caller. */
  private readonly reserved = new Map<string, number>();
  /** Named task ids a request is opening (AgoraRequestHandler.name), with what ends the claim. */
  private readonly claims = new Map<string, { done: Promise<void>; release: () => void }>();
  /** tasks/cancel's metadata, handed over by the request handler (AgoraRequestHandler). */
  private readonly cancellations = new Map<string, { metadata: Record<string, unknown> | undefined; context: ServerCallContext }>();

  constructor(private readonly options: ExecutorOptions) {}

  get following(): number {
    return this.runs.size;
  }

  /** Whether a task's bus is this executor's to settle (its follower runs): the bus manager asks. */
  owns(taskId: string): boolean {
    return this.runs.has(taskId);
  }

  /**
   * Claims a named task id for the request that opens it: undefined when the request has it;
   * otherwise what to wait for before it goes on as a duplicate (which joins the task as today).
   */
  claim(taskId: string): Promise<void> | undefined {
    const held = this.claims.get(taskId);
    if (held !== undefined) return held.done;
    if (this.runs.has(taskId)) return Promise.resolve();
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    this.claims.set(taskId, { done, release });
    return undefined;
  }

  /** Ends a claim (the task is followed, refused or drafted; or its request failed before it reached the executor). */
  release(taskId: string): void {
    this.claims.get(taskId)?.release();
    this.claims.delete(taskId);
  }

  async execute(request: RequestContext, bus: ExecutionEventBus): Promise<void> {
    try {
      await this.open(request, bus);
    } finally {
      this.release(request.taskId);
    }
  }

  private async open(request: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const caller = callerOf(request.context);
    const message = request.userMessage;
    const run = this.runs.get(request.taskId);
    const current = request.task;
    if (current !== undefined && (run !== undefined || !(awaitsSignature(current) || isOpening(current)))) return this.turn(current, run, caller, message, bus);
    // A new task, or one waiting for its signed start command: the message's signed command starts it; anything else is drafted.
    const within = current === undefined ? undefined : skillOfTask(current);
    const commands = commandsIn(message);
    const envelope = commands.find(isSigned);
    const skill = envelope === undefined ? undefined : skillStartedBy(String(envelope['type']));
    const opening = this.opening(request, bus, skill ?? within);
    // A task named after its aggregate (task-id.ts) starts on that aggregate only.
    const owned = followedByTaskId(request.taskId)?.followed;
    // (A skill whose command does not name its aggregate, a recovery, was named by what it was foreseen to open.)
    const elsewhere = owned !== undefined && skill?.named !== undefined && skill.named(isObject(envelope?.['payload']) ? envelope['payload'] : {})?.streamId !== owned.streamId;
    if (envelope === undefined || skill === undefined || (within !== undefined && skill !== within) || elsewhere) {
      const draft = draftCommand(envelope ?? commands[0], caller.reader?.agentId, within, owned);
      const { text, data } = draftStatus(draft, request.taskId);
      opening('input-required', text, { ...(draft.skill === undefined ? {} : { skill: draft.skill.id }), awaiting: 'signature', ...(draft.command === undefined ? {} : { command: draft.command }) }, [dataPart(data)]);
      // Nothing follows the log for it: its bus ends here; a later message of the task opens another.
      bus.finished();
      this.options.settled(request.taskId, bus, request.context);
      return;
    }
    const callerKey = scopeOf(request.context);
    const commandId = String(envelope['commandId']);
    const startKey = `${callerKey}\u0000${commandId}`;
    // The same command again (resent, or sent many times at once) joins the task it started.
    // No await before `starting` is set, unless there is a task to join: requests sent at once see each other.
    const pending = this.starting.get(startKey);
    const joined = (pending === undefined ? undefined : await pending) ?? this.runFor(callerKey, (run) => run.commandId === commandId);
    if (joined !== undefined && (await this.join(joined, request, bus))) return;
    const refused = this.checkActor(caller, envelope) ?? this.checkSlots(callerKey);
    if (refused) {
      opening(refusalState(refused.code), `Agora refused ${String(envelope['type'])}: ${refused.code}: ${refused.message}`, { error: refused });
      return;
    }
    let started!: (taskId: string | undefined) => void;
    this.starting.set(startKey, new Promise((resolve) => (started = resolve)));
    this.reserved.set(callerKey, (this.reserved.get(callerKey) ?? 0) + 1);
    let followingAs: string | undefined;
    try {
      followingAs = await this.start(request, bus, { skill, envelope, caller, callerKey, commandId, opening });
    } finally {
      const left = (this.reserved.get(callerKey) ?? 1) - 1;
      if (left === 0) this.reserved.delete(callerKey);
      else this.reserved.set(callerKey, left);
      this.starting.delete(startKey);
      started(followingAs);
    }
  }

  /**
   * Publishes a task as it opens: the Task first (submitted, or as it stood when a later message
   * starts it), then the status it is in, so a stream sees the Task, then its updates in order.
   * Returns the task as it then stands.
   */
  private opening(request: RequestContext, bus: ExecutionEventBus, skill: AgoraSkill | undefined): Opening {
    const ids = { taskId: request.taskId, contextId: request.contextId };
    return (state, text, metadata, parts = []) => {
      const task: Task = {
        id: request.taskId,
        contextId: request.contextId,
        status: { state: request.task?.status?.state ?? TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
        artifacts: [],
        history: request.task?.history ?? [request.userMessage],
        metadata: { agora: { ...(skill === undefined ? {} : { skill: skill.id }), ...metadata } },
      };
      bus.publish(AgentEvent.task(task));
      const status = { state: TASK_STATES[state], message: agentMessage(ids, [textPart(text), ...parts]), timestamp: new Date().toISOString() };
      bus.publish(AgentEvent.statusUpdate({ ...ids, status, metadata: undefined }));
      return { ...task, status };
    };
  }

  /** The task a caller's run follows that matches, if any. */
  private runFor(callerKey: string, matches: (run: Run) => boolean): string | undefined {
    for (const [taskId, run] of this.runs) if (run.callerKey === callerKey && matches(run)) return taskId;
    return undefined;
  }

  /** Answers a request with the task it joins (the same command's, or the same aggregate's): no second follower, no second slot. */
  private async join(taskId: string, request: RequestContext, bus: ExecutionEventBus): Promise<boolean> {
    // The store has the task once its first event is recorded; until then, the task as it started.
    const current = (await this.options.current?.(taskId, request.context)) ?? this.runs.get(taskId)?.started;
    if (current === undefined || !this.runs.has(taskId)) return false;
    bus.publish(AgentEvent.task({ ...current, metadata: { ...current.metadata, agora: { ...(current.metadata?.['agora'] as Record<string, unknown> | undefined), joined: true } } }));
    // This request's own bus carries nothing more: the joined task goes on on its own.
    bus.finished();
    this.options.settled(request.taskId, bus, request.context);
    return true;
  }

  /** `too_many_sessions` when the caller follows its share of tasks, or the gateway all it may. */
  private checkSlots(callerKey: string): { code: ErrorCode; message: string } | undefined {
    let mine = this.reserved.get(callerKey) ?? 0;
    for (const run of this.runs.values()) if (run.callerKey === callerKey) mine++;
    let all = 0;
    for (const count of this.reserved.values()) all += count;
    all += this.runs.size;
    const perCaller = this.options.tasksPerCaller ?? 100;
    if (mine >= perCaller) return { code: 'too_many_sessions', message: `this caller follows ${mine} A2A tasks already, its most (${perCaller}): wait for one to end` };
    if (all >= (this.options.maxTasks ?? 1_000)) return { code: 'too_many_sessions', message: `this gateway follows ${all} A2A tasks already: try again later` };
    return undefined;
  }

  /** Sends a task's start command and follows its aggregate; the task id it follows as, if it does. */
  private async start(
    request: RequestContext,
    bus: ExecutionEventBus,
    { skill, envelope, caller, callerKey, commandId, opening }: { skill: AgoraSkill; envelope: Record<string, unknown>; caller: A2ACaller; callerKey: string; commandId: string; opening: Opening },
  ): Promise<string | undefined> {
    const reply = await this.send(envelope);
    if (!reply.ok) {
      opening(refusalState(reply.error.code), `Agora refused ${String(envelope['type'])}: ${reply.error.code}: ${reply.error.message}`, { error: reply.error });
      return undefined;
    }
    const agora = this.options.readerClient(caller.reader);
    const followed = await skill.followed(agora, { actor: String(envelope['actor']), payload: (envelope['payload'] ?? {}) as Record<string, unknown> }, reply.result.events).catch((error: unknown) => ({ reason: error instanceof Error ? error.message : String(error) }));
    const command = { commandId: reply.result.commandId, type: envelope['type'], streamId: reply.result.streamId, position: reply.result.position ?? null, duplicate: reply.result.duplicate };
    if ('reason' in followed) {
      await agora.close();
      opening('rejected', followed.reason, { command });
      return undefined;
    }
    // A command already decided (a repeat) whose aggregate a task of the caller follows joins that task.
    const same = this.runFor(callerKey, (run) => run.followed.streamId === followed.streamId);
    if (same !== undefined && (await this.join(same, request, bus))) {
      await agora.close();
      return same;
    }
    const started = opening('working', `${String(envelope['type'])} accepted: following ${followed.streamId}`, { command, streamId: followed.streamId });
    return this.followAs(request.taskId, request.context, { skill, followed, caller, callerKey, commandId, agora, bus, contextId: request.contextId, started }, reply.result.position);
  }

  /**
   * Follows a named task (task-id.ts) this gateway did not start: a restarted gateway, or another
   * replica, when the caller resubscribes to it, cancels it or sends it a message. True when the
   * task is followed (already, or now); false when it names no aggregate, is final, or the caller
   * has no slot left (its task is then answered as it stands, and not followed).
   */
  adopt(task: Task, context: ServerCallContext): boolean {
    if (this.runs.has(task.id)) return true;
    const named = followedByTaskId(task.id);
    if (named === undefined || task.status === undefined || ENDED_STATES.has(task.status.state) || awaitsSignature(task) || isOpening(task) || this.claims.has(task.id)) return false;
    const callerKey = scopeOf(context);
    if (this.options.openBus === undefined || this.checkSlots(callerKey) !== undefined) return false;
    const caller = callerOf(context);
    const bus = this.options.openBus(task.id, context);
    this.followAs(task.id, context, { ...named, caller, callerKey, commandId: '', agora: this.options.readerClient(caller.reader), bus, contextId: task.contextId, started: task }, undefined);
    return true;
  }

  /** Follows the aggregate for a task until it is final, as its caller (whose right is watched). */
  private followAs(taskId: string, context: ServerCallContext, parts: Pick<Run, 'skill' | 'followed' | 'caller' | 'callerKey' | 'commandId' | 'agora' | 'bus' | 'contextId' | 'started'>, after: string | undefined): string {
    const { caller, agora, bus } = parts;
    const stop = new AbortController();
    const newRun: Run = { ...parts, stop, last: undefined, minRevision: -1, turning: false, held: false, done: Promise.resolve(), revoked: undefined };
    this.runs.set(taskId, newRun);
    // Pushes stop, and the task with them, when the caller loses its right (as its streams end); not at its token's expiry.
    const credential = caller.credential;
    const unwatch =
      credential === undefined || this.options.watch === undefined
        ? undefined
        : this.options.watch({ agentId: credential.agentId, roles: credential.roles, publicKey: credential.publicKey, expiresAt: Date.now() + Math.min(this.options.followMs ?? DEFAULT_FOLLOW_MS, 2 ** 31 - 1) }, (reason) => {
            if (reason === 'token_expired' || reason === 'session_ended') return;
            newRun.revoked = reason;
            void this.options.revoke?.(taskId, context).finally(() => stop.abort());
          });
    newRun.done = this.follow(taskId, newRun, after).finally(() => {
      unwatch?.();
      this.runs.delete(taskId);
      void agora.close();
      bus.finished();
      this.options.settled(taskId, bus, context);
    });
    return taskId;
  }

  /** A later message of a task: the caller's own turn on the same aggregate. */
  private async turn(current: Task, run: Run | undefined, caller: A2ACaller, message: Message, bus: ExecutionEventBus): Promise<void> {
    const ids = { taskId: current.id, contextId: current.contextId };
    const answer = (text: string) => bus.publish(AgentEvent.message(agentMessage(ids, [textPart(text)])));
    if (run === undefined) return answer('This task no longer follows its aggregate: start a new one.');
    const [envelope] = commandsIn(message);
    if (envelope === undefined || !run.skill.turns.includes(String(envelope['type']))) {
      return answer(run.skill.turns.length === 0 ? `A ${run.skill.id} task takes no further command: it follows ${run.followed.streamId} until it is final.` : `Send one of ${run.skill.turns.join(', ')} for ${run.followed.id}, signed, as a data part.`);
    }
    run.turning = true;
    try {
      const refused = this.checkActor(caller, envelope) ?? this.checkTarget(run, envelope);
      const reply: Reply<CommandResult> = refused ? { ok: false, error: refused } : await this.send(envelope);
      if (!reply.ok) return answer(`Agora refused ${String(envelope['type'])}: ${reply.error.code}: ${reply.error.message}`);
      // The task goes on: working until the aggregate says more (the follower publishes its next change).
      if (run.last) run.last = { ...run.last, state: 'working' };
      if (reply.result.streamId === run.followed.streamId) run.minRevision = Math.max(run.minRevision, reply.result.revision);
      bus.publish(AgentEvent.task({ ...current, status: { state: TASK_STATES.working, message: agentMessage(ids, [textPart(`${String(envelope['type'])} accepted`)]), timestamp: new Date().toISOString() } }));
    } finally {
      run.turning = false;
      if (run.held) {
        run.held = false;
        void this.refresh(current.id, run);
      }
    }
  }

  /** Reads the aggregate again and publishes what changed (after a turn held a change); a final state ends the follower. */
  private async refresh(taskId: string, run: Run): Promise<void> {
    try {
      const view = await run.skill.read(run.agora, run.followed.id);
      if (view !== undefined && this.publishView(taskId, run, view)) run.stop.abort();
    } catch (error) {
      this.options.logger.warn(`A2A task ${taskId}: reading ${loggable(run.followed.streamId)} again failed: ${loggable(error instanceof Error ? error.message : String(error))}`);
    }
  }

  /**
   * Publishes the status a view of the aggregate reads as, when its progress changed (a view read
   * again unchanged publishes nothing), with the outcome artifact before a final status; true when
   * it is final. A view older than the caller's last turn, or read during a turn, publishes nothing.
   */
  private publishView(taskId: string, run: Run, view: unknown): boolean {
    const revision = (view as { streamRevision?: unknown }).streamRevision;
    if (typeof revision === 'number' && revision < run.minRevision) return false;
    if (run.turning) {
      run.held = true;
      return false;
    }
    const status = run.skill.status(view, run.caller.reader?.agentId ?? '');
    if (run.last?.progress !== status.progress) {
      run.last = status;
      const { contextId, bus } = run;
      if (FINAL_STATES.has(status.state)) bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact: outcomeArtifact(run.skill.id, view), append: false, lastChunk: true, metadata: undefined }));
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state: TASK_STATES[status.state], message: agentMessage({ taskId, contextId }, [textPart(status.text)]), timestamp: new Date().toISOString() }, metadata: { agora: { streamId: run.followed.streamId, progress: status.progress } } }));
    }
    return FINAL_STATES.has(status.state);
  }

  /** Follows the aggregate from the command's position, publishing each change of its status, until it is final. */
  private async follow(taskId: string, run: Run, after: string | undefined): Promise<void> {
    const { skill, followed, bus, agora } = run;
    const ids = { taskId, contextId: run.contextId };
    let exists = false;
    try {
      await waitOnLog(
        agora,
        {
          category: followed.category,
          streamId: followed.streamId,
          what: `${followed.streamId} to be final`,
          read: async (at) => {
            try {
              const view = await skill.read(agora, followed.id, at);
              if (view !== undefined) exists = true;
              return view;
            } catch (error) {
              // A party's read of an aggregate that does not exist yet is refused as if it were
              // someone else's (the refusal says nothing of what exists): until the caller's own
              // aggregate is first read (a recovery opens after the pause), that means "not yet".
              if (!exists && (error as { code?: string }).code === 'forbidden') return undefined;
              throw error;
            }
          },
          done: (view) => this.publishView(taskId, run, view),
        },
        { ...(after === undefined ? {} : { after }), signal: run.stop.signal, timeoutMs: this.options.followMs ?? DEFAULT_FOLLOW_MS },
      );
    } catch (error) {
      if (run.revoked !== undefined) {
        bus.publish(AgentEvent.statusUpdate({ taskId, contextId: run.contextId, status: { state: TASK_STATES.failed, message: agentMessage(ids, [textPart(`The caller lost its right to this task (${run.revoked}): it is no longer followed and pushes nothing more`)]), timestamp: new Date().toISOString() }, metadata: undefined }));
        return;
      }
      if (run.stop.signal.aborted) return;
      const text = error instanceof Error ? error.message : String(error);
      this.options.logger.warn(`A2A task ${taskId} stopped following ${loggable(followed.streamId)}: ${loggable(text)}`);
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId: run.contextId, status: { state: TASK_STATES.failed, message: agentMessage(ids, [textPart(`Stopped following ${followed.streamId}: ${text}; the aggregate goes on in Agora (query it)`), dataPart({ streamId: followed.streamId })]), timestamp: new Date().toISOString() }, metadata: undefined }));
    }
  }

  /** Called by AgoraRequestHandler before tasks/cancel reaches cancelTask, which sees only the task id (and with no context after it, to forget it). */
  cancellationOf(taskId: string, metadata: Record<string, unknown> | undefined, context: ServerCallContext | undefined): void {
    if (context === undefined) this.cancellations.delete(taskId);
    else this.cancellations.set(taskId, { metadata, context });
  }

  /** tasks/cancel: the caller's signed cancellation (metadata.command) is sent; the follower then sees the aggregate cancelled and ends the task `canceled`. */
  async cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    const asked = this.cancellations.get(taskId);
    this.cancellations.delete(taskId);
    const run = this.runs.get(taskId);
    if (run === undefined) {
      // A task still waiting for its signed start command sent nothing to Agora: cancelling it is the caller's word alone.
      const task = asked === undefined ? undefined : await this.options.current?.(taskId, asked.context);
      if (asked === undefined || task === undefined || !awaitsSignature(task)) throw new TaskNotCancelableError(`task ${taskId} no longer follows its aggregate`);
      const ids = { taskId, contextId: task.contextId };
      bus.publish(AgentEvent.statusUpdate({ ...ids, status: { state: TaskState.TASK_STATE_CANCELED, message: agentMessage(ids, [textPart('Cancelled before its command was signed: nothing was sent to Agora')]), timestamp: new Date().toISOString() }, metadata: undefined }));
      bus.finished();
      this.options.settled(taskId, bus, asked.context);
      return;
    }
    if (run.skill.cancels.length === 0) throw new TaskNotCancelableError(`a ${run.skill.id} task is decided by its parties or an operator: it cannot be cancelled`);
    const envelope = asked?.metadata?.['command'];
    if (typeof envelope !== 'object' || envelope === null || !run.skill.cancels.includes(String((envelope as Record<string, unknown>)['type']))) {
      throw new TaskNotCancelableError(`send the signed ${run.skill.cancels.join(' or ')} for ${run.followed.id} as metadata.command of tasks/cancel: Agora cancels only what its proposer signs`);
    }
    const command = envelope as Record<string, unknown>;
    const refused = this.checkActor(asked ? callerOf(asked.context) : run.caller, command) ?? this.checkTarget(run, command);
    const reply: Reply<CommandResult> = refused ? { ok: false, error: refused } : await this.send(command);
    if (!reply.ok) throw new TaskNotCancelableError(`Agora refused ${String(command['type'])}: ${reply.error.code}: ${reply.error.message}`);
    if (reply.result.events.length === 0) throw new TaskNotCancelableError(`${String(command['type'])} changed nothing (${reply.result.duplicate ? 'a command id already used' : 'already so'}): the task goes on`);
  }

  /** Stops every follower (the gateway closes): their tasks stay as they were last published. */
  async close(): Promise<void> {
    const runs = [...this.runs.values()];
    runs.forEach((run) => run.stop.abort());
    await Promise.all(runs.map((run) => run.done.catch(() => undefined)));
  }

  /** A command of another agent than the caller is refused: with reads closed, the caller is the agent its read token proves. */
  private checkActor(caller: A2ACaller, envelope: Record<string, unknown>): { code: ErrorCode; message: string } | undefined {
    if (caller.reader === undefined || envelope['actor'] === caller.reader.agentId) return undefined;
    return { code: 'forbidden', message: `the command's actor ${JSON.stringify(envelope['actor'])} is not the caller ${caller.reader.agentId} (its read token's agent): an A2A caller sends its own commands` };
  }

  /** A turn or a cancellation acts on the task's own aggregate. */
  private checkTarget(run: Run, envelope: Record<string, unknown>): { code: ErrorCode; message: string } | undefined {
    const payload = (envelope['payload'] ?? {}) as Record<string, unknown>;
    const id = payload['proposalId'] ?? payload['sessionId'] ?? payload['requestId'];
    return id === run.followed.id ? undefined : { code: 'invalid_command', message: `this task follows ${run.followed.streamId}: the command must be about ${run.followed.id} (it names ${JSON.stringify(id)})` };
  }

  private async send(envelope: Record<string, unknown>): Promise<Reply<CommandResult>> {
    try {
      return await this.options.commands.send(envelope);
    } catch (error) {
      if (error instanceof GatewayError) return error.toReply();
      throw error;
    }
  }
}

/** An A2A task refused at its start: `rejected` when Agora refused the command, `failed` when it could not be decided now. */
function refusalState(code: string): SkillStatus['state'] {
  return code === 'timeout' || code === 'unavailable' || code === 'internal' ? 'failed' : 'rejected';
}
