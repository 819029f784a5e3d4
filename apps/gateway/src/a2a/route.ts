/**
 * Agora as an A2A agent on the gateway (@a2a-js/sdk): the Agent Card at
 * /.well-known/agent-card.json and the JSON-RPC binding at /a2a (message/send and stream,
 * tasks/get, cancel, resubscribe, the push-notification configs), A2A 1.0 and, through the SDK's
 * compat layer, 0.3. With reads closed every request carries the caller's read token (Bearer), as
 * /mcp and the HTTP API do; the caller's commands ride signed in the messages (executor.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { A2A_VERSION_HEADER, AGENT_CARD_PATH, AgentCard, type CancelTaskRequest, type StreamResponse, type Task } from '@a2a-js/sdk';
import { legacyAgentCardRouter } from '@a2a-js/sdk/compat/v0_3/server/express';
import {
  DefaultExecutionEventBusManager,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  ResultManager,
  type AgentExecutionEvent,
  type ExecutionEventBus,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import type { Reader } from '@agora/contracts';
import { jsonRpcError } from '@agora/mcp';
import { Agora, MessagingTransport } from '@agora/sdk';
import { Logger } from '@nestjs/common';
import { CommandSender } from '../commands.js';
import { challengeUnauthenticated, GatewayError } from '../http-reply.js';
import { markRoute } from '../metrics.js';
import type { ResolvedGatewayOptions } from '../options.js';
import type { StreamParties } from '../read-visibility.js';
import { ReaderTransport } from '../reader-transport.js';
import { A2A_PATH, agentCard } from './card.js';
import { A2ACaller, AgoraAgentExecutor } from './executor.js';
import { PushQueue } from './push.js';
import { DEFAULT_A2A_BOUNDS, type A2aSetting } from './settings.js';
import { BoundedTaskStore } from './task-store.js';

export { A2A_PATH };
export type { A2aSetting };

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

  override async getAgentCard(): Promise<AgentCard> {
    return this.cardOf?.() ?? super.getAgentCard();
  }

  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    this.executor?.cancellationOf(params.id, params.metadata, context);
    try {
      return await super.cancelTask(params, context);
    } finally {
      // Refused before it reached the executor (not found, already final): nothing stays behind.
      this.executor?.cancellationOf(params.id, undefined, undefined);
    }
  }
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

export function a2aRoute(options: ResolvedGatewayOptions, parties: StreamParties, setting: A2aSetting, version: string) {
  const logger = new Logger('agora:a2a');
  const bus = new MessagingTransport(options.client);
  const pushStore = new InMemoryPushNotificationStore();
  const taskStore = new BoundedTaskStore(pushStore, setting.maxFinishedTasks);
  const push = new PushQueue(pushStore, { logger });
  const buses = new FollowedBuses();
  const readerClient = (reader: Reader | undefined) =>
    Agora.over(new ReaderTransport(options.client, bus, { reader: () => reader, commandRefusal: 'an A2A task reads as its caller; its commands are the caller\'s, signed' }, parties), { timeoutMs: options.requestTimeoutMs });
  const executor = new AgoraAgentExecutor({ commands: new CommandSender(options), readerClient, maxTasks: setting.maxTasks ?? 1_000, logger, settled: (taskId) => buses.cleanupByTaskId(taskId) });
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
          if (response) await push.send(response, context, structuredClone(recorder.getCurrentTask()));
        })
        .catch((error: unknown) => logger.warn(`A2A task ${taskId}: recording an update failed: ${error instanceof Error ? error.message : String(error)}`));
    });
  };
  let baseUrl = setting.url ?? '';
  const card = () => agentCard({ url: baseUrl, version, readsClosed: options.reads.closed, documentationUrl: `${baseUrl.replace(/\/+$/, '')}/docs` });
  // Pushes are sent by the recorder above (once per event); the handler's own sender does nothing.
  const handler = new AgoraRequestHandler(card(), taskStore, executor, buses, pushStore, { send: async () => undefined });
  handler.executor = executor;
  handler.cardOf = card;
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
        (req as unknown as Record<symbol, A2ACaller>)[CALLER] = new A2ACaller(read?.reader);
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

  return {
    card: [varyByVersion, legacyCard as Middleware, cardRoute as Middleware],
    rpc: [authenticate, rpc as Middleware],
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
