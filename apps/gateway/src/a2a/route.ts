/**
 * Agora as an A2A agent on the gateway (@a2a-js/sdk): the Agent Card at
 * /.well-known/agent-card.json and the JSON-RPC binding at /a2a (message/send and stream,
 * tasks/get, cancel, resubscribe, the push-notification configs), A2A 1.0 and, through the SDK's
 * compat layer, 0.3. With reads closed every request carries the caller's read token (Bearer), as
 * /mcp and the HTTP API do; the caller's commands ride signed in the messages (executor.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { A2A_VERSION_HEADER, AGENT_CARD_PATH, AgentCard, type CancelTaskRequest, type SendMessageRequest, type StreamResponse, type SubscribeToTaskRequest, type Task } from '@a2a-js/sdk';
import { legacyAgentCardRouter } from '@a2a-js/sdk/compat/v0_3/server/express';
import {
  DefaultExecutionEventBusManager,
  DefaultRequestHandler,
  ResultManager,
  type AgentExecutionEvent,
  type ExecutionEventBus,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import type { Reader } from '@agora/contracts';
import { jsonRpcError } from '@agora/mcp';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '@agora/messaging';
import { Agora, MessagingTransport } from '@agora/sdk';
import { Logger } from '@nestjs/common';
import { readBody } from '../body.js';
import { CommandSender } from '../commands.js';
import { challengeUnauthenticated, GatewayError } from '../http-reply.js';
import { markRoute } from '../metrics.js';
import type { ResolvedGatewayOptions } from '../options.js';
import type { StreamParties } from '../read-visibility.js';
import { ReaderTransport } from '../reader-transport.js';
import { A2A_PATH, agentCard } from './card.js';
import { awaitsSignature, draftCommand } from './draft.js';
import { A2ACaller, AgoraAgentExecutor } from './executor.js';
import { commandsIn, ENDED_STATES, isObject, isSigned } from './parts.js';
import { a2aRefusal, PushConfigs, PushQueue } from './push.js';
import type { SharedRecords } from './push-store.js';
import { PushTargets } from './push-target.js';
import { loggable } from './loggable.js';
import { DEFAULT_A2A_BOUNDS, type A2aSetting } from './settings.js';
import { skillStartedBy, type AgoraSkill, type Followed } from './skills.js';
import { followedByTaskId, historyFromLog, namedTaskId, openingTask, rebuildTask } from './task-id.js';
import { BoundedTaskStore } from './task-store.js';

export { A2A_PATH };
export type { A2aSetting };

/** How deep a JSON-RPC request may nest: a command's own bound (the services') and the A2A message around it. */
export const A2A_MAX_JSON_DEPTH = MAX_JSON_DEPTH + 16;

/** The task ids a message may refer to (referenceTaskIds): how many, and what an id looks like. */
const MAX_REFERENCE_TASK_IDS = 16;
const TASK_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** A message's own ids (the client's choice): no control characters, bounded. */
// eslint-disable-next-line no-control-regex -- control characters are what it refuses
const MESSAGE_ID = /^[^\u0000-\u001f\u007f-\u009f\u2028\u2029]{1,256}$/;

/** The JSON-RPC methods that answer with a stream (1.0 and 0.3). */
const STREAMING_METHODS = new Set(['SendStreamingMessage', 'SubscribeToTask', 'message/stream', 'tasks/resubscribe']);

/** Where the Agent Card is (the A2A well-known path). */
export const A2A_CARD_PATH = `/${AGENT_CARD_PATH}`;

const CALLER = Symbol('agora.a2a.caller');

/** Express middleware, in node's own types (the gateway does not use express's). */
type Middleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

/** The buses of tasks: a task's follower settles its own bus when the task is final (the executor owns it until then). */
class FollowedBuses extends DefaultExecutionEventBusManager {
  executor: AgoraAgentExecutor | undefined;
  /** Attaches the recorder to every new bus. */
  onCreate: ((taskId: string, bus: ExecutionEventBus, context: ServerCallContext | undefined) => void) | undefined;

  override createOrGetByTaskId(taskId: string, context?: ServerCallContext): ExecutionEventBus {
    const existing = this.getByTaskId(taskId, context);
    const bus = super.createOrGetByTaskId(taskId, context);
    if (existing === undefined) this.onCreate?.(taskId, bus, context);
    return bus;
  }

  settleByTaskId(taskId: string): boolean {
    return this.executor?.owns(taskId) ?? false;
  }
}

/**
 * tasks/cancel hands its metadata (the signed cancellation) to the executor, whose cancelTask sees
 * only the task id; the card names the URL the gateway is reached at, known once it listens.
 */
class AgoraRequestHandler extends DefaultRequestHandler {
  executor: AgoraAgentExecutor | undefined;
  cardOf: (() => AgentCard) | undefined;
  tasks: BoundedTaskStore | undefined;
  buses: FollowedBuses | undefined;
  /** The aggregate a start command that does not name it would open, read as the request's caller (AgoraSkill.foreseen). */
  foresee: ((skill: AgoraSkill, command: { actor: string; payload: Record<string, unknown> }, context: ServerCallContext) => Promise<Followed | undefined>) | undefined;

  override async getAgentCard(): Promise<AgentCard> {
    return this.cardOf?.() ?? super.getAgentCard();
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext) {
    checkReferences(params);
    const named = await this.name(params, context);
    try {
      return await super.sendMessage(params, context);
    } catch (error) {
      if (named !== undefined) this.executor?.release(named);
      throw error;
    }
  }

  override async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext) {
    checkReferences(params);
    const named = await this.name(params, context);
    try {
      yield* super.sendMessageStream(params, context);
    } finally {
      if (named !== undefined) this.executor?.release(named);
    }
  }

  override async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext) {
    await this.adopt(params.id, context);
    yield* super.resubscribe(params, context);
  }

  /**
   * Names the task a message opens after what it follows (task-id.ts) when its signed start
   * command names its aggregate, or the command drafted for it does, or the aggregate it would open is
   * foreseen (a recovery), and no task of that name is there yet: the task is held as
   * opening (so the request handler finds it), and the executor starts it. A message of a named
   * task this gateway does not follow (another opened it) has the task followed here first.
   * Returns the id claimed, if any (the executor lets it go once the task is started).
   */
  private async name(params: SendMessageRequest, context: ServerCallContext): Promise<string | undefined> {
    const message = params.message;
    if (message === undefined) return undefined;
    if (message.taskId) {
      await this.adopt(message.taskId, context);
      return undefined;
    }
    // The signed start command's aggregate; or, for a message without one, the aggregate of the command drafted for it (the draft names it, and the signed command must).
    const commands = commandsIn(message);
    const envelope = commands.find(isSigned);
    const caller = context.user instanceof A2ACaller ? context.user.reader?.agentId : undefined;
    const draft = envelope === undefined ? draftCommand(commands[0], caller, undefined) : undefined;
    const skill = envelope === undefined ? draft?.skill : skillStartedBy(String(envelope['type']));
    const payload = envelope === undefined ? draft?.command?.['payload'] : envelope['payload'];
    const fields = isObject(payload) ? payload : {};
    const followed = skill?.named?.(fields) ?? (skill?.foreseen !== undefined && caller !== undefined ? await this.foresee?.(skill, { actor: caller, payload: fields }, context) : undefined);
    if (skill === undefined || followed === undefined || this.executor === undefined || this.tasks === undefined) return undefined;
    const taskId = namedTaskId(skill, followed);
    // Sent again while it opens or is followed here: the request goes on as a duplicate, which joins it.
    const claimed = this.executor.claim(taskId);
    if (claimed !== undefined) {
      await claimed;
      return undefined;
    }
    try {
      // A task of that name the caller already has (it ended, or another gateway follows it): the request opens one of its own, as before.
      if ((await this.tasks.load(taskId, context)) !== undefined) {
        this.executor.release(taskId);
        return undefined;
      }
      const contextId = message.contextId || taskId;
      await this.tasks.save(openingTask(taskId, contextId, skill), context);
      params.message = { ...message, taskId, contextId };
      return taskId;
    } catch (error) {
      this.executor.release(taskId);
      throw error;
    }
  }

  /** Has a named task followed here (resubscribed, cancelled or sent a message on a gateway that did not open it). */
  private async adopt(taskId: string, context: ServerCallContext): Promise<void> {
    if (this.executor === undefined || this.executor.owns(taskId) || followedByTaskId(taskId) === undefined) return;
    const task = await this.tasks?.load(taskId, context);
    if (task !== undefined) this.executor.adopt(task, context);
  }

  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    this.executor?.cancellationOf(params.id, params.metadata, context);
    try {
      await this.adopt(params.id, context);
      // A task waiting for its signed start command has no bus of its own: one is opened for the cancellation, which is recorded and pushed as any update.
      const task = await this.tasks?.load(params.id, context);
      if (task !== undefined && awaitsSignature(task)) this.buses?.createOrGetByTaskId(params.id, context);
      return await super.cancelTask(params, context);
    } finally {
      // Refused before it reached the executor (not found, already final): nothing stays behind.
      this.executor?.cancellationOf(params.id, undefined, undefined);
    }
  }
}

/**
 * A message's referenceTaskIds are task ids as the gateway makes them, and few: the request
 * handler looks each up and logs the ones it does not find, so an id is never free text.
 */
function checkReferences(params: SendMessageRequest): void {
  const message = params.message;
  // The request handler writes these in its log lines too (a task or message it cannot place).
  for (const [name, value] of [['messageId', message?.messageId], ['taskId', message?.taskId], ['contextId', message?.contextId]] as const) {
    if (value !== undefined && value !== '' && !MESSAGE_ID.test(value)) throw a2aRefusal('invalid_command', `${name} is an id: 1 to 256 characters, no control characters`);
  }
  const ids = message?.referenceTaskIds ?? [];
  if (ids.length > MAX_REFERENCE_TASK_IDS) throw a2aRefusal('invalid_command', `a message refers to at most ${MAX_REFERENCE_TASK_IDS} tasks (referenceTaskIds has ${ids.length})`);
  if (ids.some((id) => !TASK_ID.test(id))) throw a2aRefusal('invalid_command', 'referenceTaskIds are task ids: 1 to 128 letters, digits, ".", "_", ":" or "-"');
}

/** The task an executor's event is about. */
function taskIdOfEvent(event: AgentExecutionEvent): string | undefined {
  if (event.kind === 'task') return event.data.id;
  if (event.kind === 'statusUpdate' || event.kind === 'artifactUpdate') return event.data.taskId;
  return undefined;
}

/** The StreamResponse of an executor's event (what a push notification carries). */
function responseOf(event: AgentExecutionEvent): StreamResponse | undefined {
  switch (event.kind) {
    case 'task':
      return { payload: { $case: 'task', value: event.data } };
    case 'statusUpdate':
      return { payload: { $case: 'statusUpdate', value: event.data } };
    case 'artifactUpdate':
      return { payload: { $case: 'artifactUpdate', value: event.data } };
    default:
      return undefined;
  }
}

/** The members of an object that are set (an unset bound keeps its default). */
const definedOf = <T extends object>(value: T): Partial<T> => Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;

/** `records`: where push configurations are kept (openSharedRecords), shared by the gateway's replicas. */
export function a2aRoute(options: ResolvedGatewayOptions, parties: StreamParties, setting: A2aSetting, version: string, records: SharedRecords) {
  const logger = new Logger('agora:a2a');
  const bus = new MessagingTransport(options.client);
  const bounds = { ...DEFAULT_A2A_BOUNDS, ...definedOf(setting) };
  const targets = new PushTargets(setting.pushAllowHosts);
  const pushStore = new PushConfigs(targets, { perTask: bounds.pushConfigsPerTask, perCaller: bounds.pushConfigsPerCaller, ...(setting.pushConfigTtlSeconds === undefined ? {} : { ttlMs: setting.pushConfigTtlSeconds * 1000 }) }, records);
  void pushStore.prune().catch((error: unknown) => logger.warn(`A2A push configurations: removing the expired ones from ${records.where} failed: ${loggable(error instanceof Error ? error.message : String(error))}`));
  const readerClient = (reader: Reader | undefined) =>
    Agora.over(new ReaderTransport(options.client, bus, { reader: () => reader, commandRefusal: 'an A2A task reads as its caller; its commands are the caller\'s, signed' }, parties), { timeoutMs: options.requestTimeoutMs });
  const history = historyFromLog(options.store, parties, bounds);
  const rebuild = (taskId: string, context: ServerCallContext) => rebuildTask(taskId, context.user instanceof A2ACaller ? context.user.reader : undefined, readerClient, history);
  const taskStore = new BoundedTaskStore(pushStore, { maxFinished: bounds.maxFinishedTasks, perCaller: bounds.finishedTasksPerCaller, historyMessages: bounds.historyMessages, historyBytes: bounds.historyBytes }, rebuild);
  const push = new PushQueue(pushStore, { logger, targets });
  const buses = new FollowedBuses();
  const credentials = options.reads.credentials;
  const executor = new AgoraAgentExecutor({
    commands: new CommandSender(options),
    readerClient,
    maxTasks: bounds.maxTasks,
    tasksPerCaller: bounds.tasksPerCaller,
    logger,
    settled: (taskId, _bus, context) => buses.cleanupByTaskId(taskId, context),
    openBus: (taskId, context) => buses.createOrGetByTaskId(taskId, context),
    ...(credentials ? { watch: (credential, end) => credentials.bind(credential, end) } : {}),
    async revoke(taskId, context) {
      await pushStore.revoke(taskId, context);
      push.drop(taskId);
    },
    current: (taskId, context) => taskStore.load(taskId, context),
  });
  buses.executor = executor;
  // The recorder: every event of a task is kept in the task store and pushed to its webhooks once,
  // whoever is listening (a blocking send stops listening at input-required; the follower goes on).
  buses.onCreate = (taskId, taskBus, context) => {
    if (context === undefined) return;
    const recorder = new ResultManager(taskStore, context);
    let chain = Promise.resolve();
    taskBus.on('event', (event) => {
      chain = chain
        .then(async () => {
          await recorder.processEvent(event);
          const response = responseOf(event);
          // A request that joined another task (a duplicate command) carries that task once: it is not pushed again.
          if (response && taskIdOfEvent(event) === taskId) await push.send(response, context, structuredClone(recorder.getCurrentTask()));
          // Its last update pushed, an ended task's push configurations are kept a little longer only.
          if (event.kind === 'statusUpdate' && event.data.taskId === taskId && event.data.status !== undefined && ENDED_STATES.has(event.data.status.state)) await pushStore.ended(taskId, context);
        })
        .catch((error: unknown) => logger.warn(`A2A task ${loggable(taskId)}: recording an update failed: ${loggable(error instanceof Error ? error.message : String(error))}`));
    });
  };
  let baseUrl = setting.url ?? '';
  const card = () => agentCard({ url: baseUrl, version, readsClosed: options.reads.closed, documentationUrl: `${baseUrl.replace(/\/+$/, '')}/docs` });
  // Pushes are sent by the recorder above (once per event); the handler's own sender does nothing.
  const handler = new AgoraRequestHandler(card(), taskStore, executor, buses, pushStore, { send: async () => undefined });
  handler.executor = executor;
  handler.cardOf = card;
  handler.tasks = taskStore;
  handler.buses = buses;
  handler.foresee = async (skill, command, context) => {
    const agora = readerClient(context.user instanceof A2ACaller ? context.user.reader : undefined);
    try {
      return await skill.foreseen?.(agora, command);
    } catch (error) {
      // Not foreseen (the caller may not read it, a service did not answer): the task keeps a drawn id.
      logger.warn(`A2A: the aggregate of a ${skill.id} task could not be foreseen: ${loggable(error instanceof Error ? error.message : String(error))}`);
      return undefined;
    } finally {
      await agora.close();
    }
  };
  const rpc = jsonRpcHandler({ requestHandler: handler, userBuilder: async (req) => (req as unknown as Record<symbol, A2ACaller | undefined>)[CALLER] ?? new A2ACaller(undefined), legacyCompat: { enabled: true } });
  // A 0.3 client (no A2A-Version header, or 0.3) gets the card translated by the SDK's compat router;
  // a 1.0 client gets it in the protocol's JSON (the SDK's handler would write the TypeScript shape of
  // its oneof members, `{$case, value}`, which 1.0 clients do not read).
  const legacyCard = legacyAgentCardRouter({ agentCardProvider: handler });
  const cardRoute = agentCardHandler({ agentCardProvider: async () => AgentCard.toJSON(card()) as AgentCard });
  const varyByVersion: Middleware = (req, res, next) => {
    markRoute(req, A2A_CARD_PATH);
    res.setHeader('vary', A2A_VERSION_HEADER);
    next();
  };

  /** The caller of a request (its read token, with reads closed); its streams end when that credential does. */
  const authenticate: Middleware = (req, res, next) => {
    // Counted under /a2a; not timed, as an answer may be a stream that lasts as long as its task.
    markRoute(req, A2A_PATH, { streaming: true });
    void (async () => {
      try {
        const read = await options.reads.read(req);
        (req as unknown as Record<symbol, A2ACaller>)[CALLER] = new A2ACaller(read?.reader, read?.credential);
        if (read !== undefined && options.reads.credentials) {
          const unbind = options.reads.credentials.bind(read.credential, () => res.end());
          res.once('close', unbind);
        }
        next();
      } catch (error) {
        if (!(error instanceof GatewayError)) return next(error);
        req.resume();
        challengeUnauthenticated(res, error.status, error.toReply());
        jsonRpcError(res, error.status, -32001, `${error.code}: ${error.message}`, { code: error.code });
      }
    })();
  };

  /**
   * The request's body, read here with the gateway's size limit and nesting bound (the SDK's own
   * parser would take any depth, and its converters then overflow the stack): a JSON-RPC error of
   * its own for each. A stream is not opened on a read token already past its expiry.
   */
  const body: Middleware = (req, res, next) => {
    if (req.method !== 'POST') return next();
    void (async () => {
      let text: string;
      try {
        text = (await readBody(req, options.maxBodyBytes)).toString('utf8');
      } catch (error) {
        if (!(error instanceof GatewayError)) return next(error);
        return jsonRpcError(res, error.status, -32600, `${error.code}: ${error.message}`, { code: error.code });
      }
      if (jsonDepthExceeds(text, A2A_MAX_JSON_DEPTH)) return jsonRpcError(res, 400, -32600, `invalid_command: the request nests deeper than ${A2A_MAX_JSON_DEPTH} levels of arrays and objects`, { code: 'invalid_command', maxDepth: A2A_MAX_JSON_DEPTH });
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        return jsonRpcError(res, 400, -32700, `invalid_command: the body is not JSON: ${error instanceof Error ? error.message : String(error)}`, { code: 'invalid_command' });
      }
      const method = (parsed as { method?: unknown } | null)?.method;
      const credential = (req as unknown as Record<symbol, A2ACaller | undefined>)[CALLER]?.credential;
      if (typeof method === 'string' && STREAMING_METHODS.has(method) && credential !== undefined && options.reads.pastExpiry(credential)) {
        return jsonRpcError(res, 401, -32001, 'token_expired: the read token has expired: a stream is opened with a token still good (a fresh one: agora token)', { code: 'token_expired' });
      }
      (req as unknown as { body: unknown }).body = parsed;
      next();
    })();
  };

  return {
    card: [varyByVersion, legacyCard as Middleware, cardRoute as Middleware],
    rpc: [authenticate, body, rpc as Middleware],
    /** The URL the gateway listens on: the card names it unless AGORA_A2A_URL gave another. */
    listening(url: string) {
      if (setting.url === undefined) baseUrl = url;
    },
    executor,
    push,
    async close() {
      await executor.close();
      push.close();
    },
  };
}
