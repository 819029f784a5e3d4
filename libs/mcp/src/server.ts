/**
 * Agora as an MCP server, a thin layer over @agora/sdk. Its tools are generated from the
 * contracts' catalogue: one per command the agent's roles may send (createAgoraMcpServer's `roles`; input: the command's payload schema,
 * output: CommandResult) and one per query (input: its params and an optional minPosition, output:
 * its result schema), named in snake_case after the command or query (`submit_proposal`,
 * `get_proposal`), which gives seed 001's names (`submit_thesis`, `submit_antithesis`,
 * `submit_synthesis`, `get_dialectic_session`); `request_dialectic_review` finds the recovery a
 * paused agent is in. Waiting tools wait on the log with progress notifications and honour
 * cancellation. Resources are the things an agent follows (a proposal, a voting session, a
 * recovery, a debate), with update notifications. The SDK client signs; the model never sees a key.
 */
import { authorizeSender, commands, CommandResult, isServiceOnly, queryAccess, readerOf, DEBATE_CATEGORY, DIALECTIC_SESSION_CATEGORY, PROPOSAL_CATEGORY, VOTING_SESSION_CATEGORY, type CommandDefinition, type ErrorBody } from '@agora/contracts';
import { namedQueries, viewIfFound, waitOnLog, type Agora, type AgoraEvent, type CommandName, type QueryName, type WaitOptions } from '@agora/sdk';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, SubscribeRequestSchema, UnsubscribeRequestSchema, type CallToolResult, type ServerNotification, type ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { z } from 'zod';

export const MCP_SERVER_NAME = 'agora';

/** `SubmitProposal` -> `submit_proposal`. */
export function toolName(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** A refusal as a tool error: Agora's code and message, for the model to read and act on. */
export function refusal(error: ErrorBody): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `${error.code}: ${error.message}${error.details ? ` ${JSON.stringify(error.details)}` : ''}` }], _meta: { agora: { error } } };
}

function answer(result: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result as Record<string, unknown> };
}

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The things an agent follows, as resources: `agora://<kind>/<id>`, read with a query, updated by their stream's events. */
const FOLLOWED = [
  { kind: 'proposals', category: PROPOSAL_CATEGORY, query: 'GetProposal', param: 'proposalId', title: 'A proposal and its review rounds' },
  { kind: 'voting-sessions', category: VOTING_SESSION_CATEGORY, query: 'GetVotingSession', param: 'sessionId', title: 'A voting session, its validators and votes' },
  { kind: 'dialectic-sessions', category: DIALECTIC_SESSION_CATEGORY, query: 'GetDialecticSession', param: 'sessionId', title: 'A recovery: thesis, antithesis, synthesis, resolution' },
  { kind: 'debates', category: DEBATE_CATEGORY, query: 'GetDebate', param: 'debateId', title: 'A crux debate' },
] as const;

export interface AgoraMcpOptions {
  /** Version reported to clients. */
  version?: string;
  /** Command tools need a client with a key; without one (e.g. the gateway's /mcp) only queries, waits and resources are offered. */
  commands?: boolean;
  /**
   * The roles of the agent the server signs for: only the commands those roles may send (the contracts'
   * authorization table, as the command gate applies it) and the queries they may read at all (the visibility
   * table) are offered. Absent: every command an agent may send, and every query.
   */
  roles?: readonly string[];
}

/** Whether a reader with these roles may read anything of the query (what it reads of it is the visibility table's to say at each call). */
export function queryOfferedTo(definition: { service: string; name: string }, agentId: string, roles: readonly string[] | undefined): boolean {
  return roles === undefined || queryAccess(readerOf(agentId, roles), `${definition.service}.${definition.name}`).read !== 'none';
}

/** Whether an agent with these roles may send the command at all (its relation to the aggregate is the decider's to check). */
export function offeredTo(definition: CommandDefinition, agentId: string, roles: readonly string[] | undefined): boolean {
  if (isServiceOnly(definition) || NOT_FOR_MODELS.has(definition.type)) return false;
  return roles === undefined || authorizeSender(definition, { actor: agentId, roles }).allowed;
}

/** An MCP server over an SDK client (one per MCP session). `close()` ends its resource subscriptions too. */
export function createAgoraMcpServer(agora: Agora, options: AgoraMcpOptions = {}): McpServer {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, version: options.version ?? '0.1.0' },
    {
      capabilities: { resources: { subscribe: true, listChanged: true }, tools: { listChanged: true }, logging: {} },
      instructions:
        'Agora: governance for agent fleets. Commands are signed with the key this server was started with. Refusals come back as tool errors "<code>: <message>". ' +
        'wait_for_verdict, wait_for_decision and wait_for_resolution wait on the log; resources agora://proposals/{id}, agora://voting-sessions/{id}, agora://dialectic-sessions/{id} and agora://debates/{id} notify updates.',
    },
  );

  if (options.commands !== false && agora.agentId !== undefined) {
    for (const definition of commands) {
      if (!offeredTo(definition, agora.agentId, options.roles)) continue;
      if (definition.type === 'SignResolution') {
        registerSignResolution(server, agora, definition.summary);
        continue;
      }
      if (definition.type === 'RecordTieBreak' || definition.type === 'DecideRecovery') {
        registerSignedDecision(server, agora, definition);
        continue;
      }
      server.registerTool(
        toolName(definition.type),
        {
          title: definition.type,
          description: `${definition.summary}. Needs the role ${definition.roles.join(' or ')}${definition.relation ? ` (${definition.relation})` : ''}. Signed as ${agora.agentId}.`,
          inputSchema: definition.payload as z.ZodObject,
          outputSchema: CommandResult,
          annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
        },
        async (payload: Record<string, unknown>) => {
          const reply = await agora.trySend(definition.type as CommandName, payload as never);
          return reply.ok ? answer(reply.result) : refusal(reply.error);
        },
      );
    }
  }

  for (const [name, definition] of namedQueries()) {
    if (agora.agentId !== undefined && !queryOfferedTo(definition, agora.agentId, options.roles)) continue;
    const params = definition.params as z.ZodObject;
    server.registerTool(
      toolName(name),
      {
        title: name,
        description: `${definition.summary}. Read-only.`,
        inputSchema: params.extend({ minPosition: z.string().optional().describe("Read your writes: answer once the read model has reached this position (a command's `position`)") }),
        outputSchema: definition.result as z.ZodObject,
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      async (input: Record<string, unknown>) => {
        const { minPosition, ...rest } = input;
        const reply = await agora.tryQuery(name as QueryName, rest as never, typeof minPosition === 'string' ? { minPosition } : {});
        return reply.ok ? answer(reply.result) : refusal(reply.error);
      },
    );
  }

  registerWaits(server, agora);
  registerDialecticReview(server, agora);
  registerResources(server, agora);
  return server;
}

/**
 * Commands `agora mcp` does not offer: they name an agent's keys (RegisterAgent, RotateAgentKey, and
 * EnableAgent, which may bring an agent back under a new key), and a model never handles keys.
 * Identities are managed where the keys are (`agora keys`, `agora agents`).
 */
const NOT_FOR_MODELS = new Set(['RegisterAgent', 'RotateAgentKey', 'EnableAgent']);

/**
 * RecordTieBreak (siding with a party) and DecideRecovery (resume) resolve a recovery and carry the
 * decider's signature of the resolution: the model gives the decision, and this server reads the
 * session and signs what the decision resolves with the key it was started with.
 */
function registerSignedDecision(server: McpServer, agora: Agora, definition: (typeof commands)[number]): void {
  const type = definition.type as 'RecordTieBreak' | 'DecideRecovery';
  server.registerTool(
    toolName(type),
    {
      title: type,
      description: `${definition.summary}. Needs the role ${definition.roles.join(' or ') || 'any'}${definition.relation ? ` (${definition.relation})` : ''}. This server signs the resolution with the key it was started with (${agora.agentId}): give only the decision.`,
      inputSchema: (definition.payload as z.ZodObject).omit({ publicKey: true, signature: true }),
      outputSchema: CommandResult,
      annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (input: Record<string, unknown>) => {
      const sessionId = input['sessionId'] as string;
      const resolves = type === 'RecordTieBreak' ? input['side'] !== 'neither' : input['decision'] === 'resume';
      let signed: { publicKey: string; signature: string } | undefined;
      if (resolves) {
        const session = await agora.tryQuery('GetDialecticSession', { sessionId });
        if (!session.ok) return refusal(session.error);
        if (type === 'RecordTieBreak') {
          const side = input['side'] as 'agent' | 'reviewer';
          signed = agora.signTieBreak(session.result, input['escalation'] as number, side);
          if (signed === undefined) return refusal({ code: 'illegal_state', message: `the ${side} of recovery ${sessionId} has no position to side with` });
        } else if (typeof input['rootCause'] === 'string' && Array.isArray(input['conditions'])) {
          signed = agora.signRecoveryDecision(session.result, input['rootCause'], input['conditions'] as never);
        }
      }
      const reply = await agora.trySend(type, { ...input, ...signed } as never);
      return reply.ok ? answer(reply.result) : refusal(reply.error);
    },
  );
}

/**
 * SignResolution carries a signature made with the agent's key over the converged resolution: the
 * model only names the session, and this server signs (the key never reaches the model).
 */
function registerSignResolution(server: McpServer, agora: Agora, summary: string): void {
  server.registerTool(
    'sign_resolution',
    {
      title: 'SignResolution',
      description: `${summary}. This server reads the converged resolution and signs it with the key it was started with: give only the session.`,
      inputSchema: z.object({ sessionId: z.string() }),
      outputSchema: CommandResult,
      annotations: { readOnlyHint: false, openWorldHint: false },
    },
    async ({ sessionId }) => {
      const session = await agora.tryQuery('GetDialecticSession', { sessionId });
      if (!session.ok) return refusal(session.error);
      const proposed = session.result.proposed;
      if (!proposed) return refusal({ code: 'illegal_state', message: `recovery ${sessionId} has no resolution waiting for signatures (status ${session.result.status})` });
      const reply = await agora.trySend('SignResolution', agora.signResolution(sessionId, proposed.payload));
      return reply.ok ? answer(reply.result) : refusal(reply.error);
    },
  );
}

const waitInput = {
  timeoutSeconds: z.number().int().min(1).max(3600).default(300).describe('Give up after this long (a tool error `timeout`)'),
  final: z.boolean().default(false).describe('Wait through an escalation for the final outcome (a person may have to decide)'),
};

/** The options of a wait from a tool call: its timeout, the request's cancellation, and progress notifications when the client asked for them. */
export function waitOptions(input: { timeoutSeconds: number; final: boolean }, extra: Extra): WaitOptions {
  const progressToken = extra._meta?.progressToken;
  let progress = 0;
  return {
    timeoutMs: input.timeoutSeconds * 1000,
    final: input.final,
    signal: extra.signal,
    ...(progressToken === undefined
      ? {}
      : {
          onProgress: (event: AgoraEvent) => {
            progress++;
            void extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message: `${event.type} at ${event.recordedAt}` } }).catch(() => undefined);
          },
        }),
  };
}

async function waited(wait: Promise<unknown>): Promise<CallToolResult> {
  try {
    return answer(await wait);
  } catch (error) {
    const { code, message, details } = error as { code?: string; message?: string; details?: Record<string, unknown> };
    return refusal({ code: (code ?? 'internal') as ErrorBody['code'], message: message ?? String(error), ...(details ? { details } : {}) });
  }
}

function registerWaits(server: McpServer, agora: Agora): void {
  const annotations = { readOnlyHint: true, openWorldHint: false };
  server.registerTool(
    'wait_for_verdict',
    { title: 'Wait for a verdict', description: "Wait on the log for a proposal's verdict (approved, rejected, withdrawn; or escalated unless final). Reports each of the proposal's events as progress.", inputSchema: z.object({ proposalId: z.string(), ...waitInput }), annotations },
    (input, extra) => waited(agora.waitForVerdict(input.proposalId, waitOptions(input, extra))),
  );
  server.registerTool(
    'wait_for_decision',
    { title: 'Wait for a vote', description: "Wait on the log for a voting session's decision (its recommendation; with final, the final decision after a person's). Reports each vote as progress.", inputSchema: z.object({ sessionId: z.string(), ...waitInput }), annotations },
    (input, extra) => waited(agora.waitForDecision(input.sessionId, waitOptions(input, extra))),
  );
  server.registerTool(
    'wait_for_resolution',
    { title: 'Wait for a recovery', description: "Wait on the log for a recovery's outcome (resolved, kept paused; or waiting for an operator unless final). Reports each message as progress.", inputSchema: z.object({ sessionId: z.string(), ...waitInput }), annotations },
    (input, extra) => waited(agora.waitForResolution(input.sessionId, waitOptions(input, extra))),
  );
}

/**
 * Seed 001's `request_dialectic_review`: in Agora a recovery opens by itself when an agent's
 * circuit breaker trips (report_health); this finds the recovery the agent is in and waits for
 * its reviewer to be drawn.
 */
function registerDialecticReview(server: McpServer, agora: Agora): void {
  server.registerTool(
    'request_dialectic_review',
    {
      title: 'The recovery of a paused agent',
      description: "Seed 001's request_dialectic_review: the recovery session of a paused agent and the reviewer drawn for it. A recovery opens when the agent's circuit breaker trips (report_health with a risk at or above its threshold).",
      inputSchema: z.object({ agentId: z.string().optional().describe('Default: the agent this server signs for'), timeoutSeconds: waitInput.timeoutSeconds }),
      outputSchema: z.object({ sessionId: z.string(), reviewer: z.string().nullable(), status: z.string() }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (input, extra) => {
      const agentId = input.agentId ?? agora.agentId;
      if (agentId === undefined) return refusal({ code: 'invalid_command', message: 'name the agent (agentId)' });
      const agent = await agora.tryQuery('GetAgent', { agentId });
      if (!agent.ok) return refusal(agent.error);
      const sessionId = agent.result.breaker.sessionId;
      if (!sessionId) return refusal({ code: 'illegal_state', message: `${agentId} is not paused (its circuit breaker is ${agent.result.breaker.state}): a recovery opens when report_health trips it` });
      return waited(
        waitOnLog(
          agora,
          {
            category: DIALECTIC_SESSION_CATEGORY,
            streamId: `${DIALECTIC_SESSION_CATEGORY}-${sessionId}`,
            what: `the reviewer of ${sessionId}`,
            // The breaker names the session before the dialectic service has opened it.
            read: () => viewIfFound(agora.tryQuery('GetDialecticSession', { sessionId })),
            done: (session) => session.reviewer !== null || session.status !== 'awaiting_thesis',
          },
          { timeoutMs: input.timeoutSeconds * 1000, signal: extra.signal },
        ).then((session) => ({ sessionId, reviewer: session.reviewer, status: session.status })),
      );
    },
  );
}

function registerResources(server: McpServer, agora: Agora): void {
  for (const followed of FOLLOWED) {
    server.registerResource(
      followed.kind,
      new ResourceTemplate(`agora://${followed.kind}/{id}`, { list: undefined }),
      { title: followed.title, mimeType: 'application/json', description: `${followed.title}; subscribe for updates (one per event of its stream)` },
      async (uri, variables) => {
        const id = String(variables['id']);
        const reply = await agora.tryQuery(followed.query as QueryName, { [followed.param]: decodeURIComponent(id) } as never);
        // A refusal as an MCP error that carries Agora's code (`forbidden`, `not_found`) in its message and data.
        if (!reply.ok) throw new McpError(ErrorCode.InvalidParams, `${reply.error.code}: ${reply.error.message}`, { code: reply.error.code });
        return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(reply.result) }] };
      },
    );
  }
  const subscribed = new Set<string>();
  let follow: AbortController | undefined;
  const startFollowing = () => {
    if (follow) return;
    const controller = new AbortController();
    follow = controller;
    const byStream = new Map(FOLLOWED.map((f) => [f.category, f.kind]));
    void (async () => {
      try {
        for await (const event of agora.events({ categories: FOLLOWED.map((f) => f.category), signal: controller.signal })) {
          const dash = event.streamId.indexOf('-');
          const kind = byStream.get(event.streamId.slice(0, dash) as (typeof FOLLOWED)[number]['category']);
          const uri = kind && `agora://${kind}/${encodeURIComponent(event.streamId.slice(dash + 1))}`;
          if (uri && subscribed.has(uri)) await server.server.sendResourceUpdated({ uri }).catch(() => undefined);
        }
      } catch {
        // The stream ended with the connection; a new subscription starts it again.
      }
      if (follow === controller) follow = undefined;
    })();
  };
  server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    subscribed.add(request.params.uri);
    startFollowing();
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    subscribed.delete(request.params.uri);
    if (subscribed.size === 0) {
      follow?.abort();
      follow = undefined;
    }
    return {};
  });
  const close = server.server.onclose;
  server.server.onclose = () => {
    follow?.abort();
    close?.();
  };
}
