// The other ways into Agora that `npm run day` drives beside the SDK's role loops, each as its own
// registered agent with its own key, each through a real client from the npm registry:
// - an MCP client (the MCP SDK's Client) through `agora mcp` over stdio, proposing with the
//   submit_proposal tool, revising with revise_proposal and waiting with wait_for_verdict;
// - an A2A client (the official @a2a-js/sdk) against the gateway's A2A endpoint, asking for votes
//   with a signed CreateVotingSession as a data part, the same command id on every attempt, and
//   following each task with tasks/get until it ends;
// - an MCP client whose tool calls go through the governed tool-call proxy (`agora mcp-proxy`) in
//   front of the MCP memory server (@modelcontextprotocol/server-memory): storing a credential is
//   put to a vote of the fleet's validators, and runs only once approved.
// Their commands and decisions go in the run's ledger (drivers.mjs) with the way they came in.
import { randomUUID } from 'node:crypto';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { createSignedCommand, mintReadToken, parseKeyFile } from '@agora/identity';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ROOT } from '../cluster/cluster-lib.mjs';
import { startFleet } from '@agora/participants';
import { fleetFile, register } from './fleet.mjs';

const CLI = join(ROOT, 'apps', 'cli', 'dist', 'main.js');
const MEMORY_SERVER = join(dirname(createRequire(join(ROOT, 'package.json')).resolve('@modelcontextprotocol/server-memory/package.json')), 'dist', 'index.js');
/** The agents of the other ways in: executives all, registered by the operator as the fleet's are. */
export const WAYS = { mcp: 'mcp-executive', a2a: 'a2a-executive', proxy: 'proxy-executive' };
/** The proxy's policy: storing a credential in the shared memory is put to a vote; anything else passes. */
const POLICY = { server: 'memory', rules: [{ tool: 'create_entities', arguments: { entities: { $any: { entityType: 'credential' } } }, decision: 'vote', riskLevel: 'high', reason: 'storing a credential in shared memory' }] };
/** How long a wait for a decision may take (the MCP request's own timeout is kept above it). */
const DECISION_S = 600;
const ENDED = new Map([
  [TaskState.TASK_STATE_COMPLETED, 'completed'],
  [TaskState.TASK_STATE_CANCELED, 'canceled'],
  [TaskState.TASK_STATE_REJECTED, 'rejected'],
  [TaskState.TASK_STATE_FAILED, 'failed'],
]);

/** The code of a tool error, as `agora mcp` and the proxy answer it (`_meta.agora.error`, else its text's first word). */
const toolErrorCode = (result) => result._meta?.agora?.error?.code ?? String(result.content?.[0]?.text ?? 'error').split(':')[0];

/** An MCP client over stdio of `agora <args>`, its diagnostics written to `logFile`. */
async function mcpClient(name, args, logFile, env = {}) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, ...args], cwd: ROOT, env: { ...process.env, NO_COLOR: '1', ...env }, stderr: 'pipe' });
  transport.stderr?.pipe(createWriteStream(logFile, { flags: 'a' }));
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** The official A2A client of `agentId` at the gateway: the card and every request carry a fresh read token of its own. */
function a2aClient(url, agentId, secretKey) {
  const fetchImpl = (input, init) => {
    const headers = new globalThis.Headers(init?.headers);
    headers.set('authorization', `Bearer ${mintReadToken({ agentId, secretKey })}`);
    return globalThis.fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })], cardResolver: new DefaultAgentCardResolver({ fetchImpl }) }));
  return factory.createFromUrl(url);
}

/**
 * The A2A client as the ledger's `client`: `trySend` signs the command with the ledger's command id
 * and starts a task with it, answering as the SDK's trySend does (the task's metadata names the
 * command or Agora's refusal); `lastTask` is the task of the last acknowledged command.
 */
function a2aSender(url, agentId, secretKey) {
  let client;
  const sender = {
    lastTask: undefined,
    async trySend(type, payload, { commandId }) {
      client ??= await a2aClient(url, agentId, secretKey).catch((error) => {
        throw new Error(`the gateway's agent card: ${error.message}`);
      });
      const command = createSignedCommand({ type, actor: agentId, payload, secretKey, commandId });
      const message = { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'data', value: { command } }, mediaType: 'application/json', filename: '', metadata: undefined }], metadata: undefined, extensions: [], referenceTaskIds: [] };
      const task = await client.sendMessage({ tenant: '', message, configuration: { acceptedOutputModes: [], historyLength: undefined, returnImmediately: true, taskPushNotificationConfig: undefined }, metadata: undefined });
      const agora = task.metadata?.agora ?? {};
      if (agora.error) return { ok: false, error: agora.error };
      if (!agora.command) return { ok: false, error: { code: 'internal', message: `the task ${task.id} names no command` } };
      sender.lastTask = task;
      // The task names the command's stream and position, not its events: the ledger judges it by its position.
      return { ok: true, result: { commandId: agora.command.commandId, streamId: agora.command.streamId, position: agora.command.position ?? undefined, duplicate: agora.command.duplicate, events: undefined } };
    },
    /** Follows a task with tasks/get until it ends (its state then), or undefined after `timeoutMs`. */
    async ended(taskId, timeoutMs, running) {
      for (const deadline = Date.now() + timeoutMs; Date.now() < deadline && running(); await sleep(2000)) {
        const task = await client.getTask({ tenant: '', id: taskId, historyLength: 0 }).catch(() => undefined);
        const state = task && ENDED.get(task.status?.state);
        if (state) return state;
      }
      return undefined;
    },
  };
  return sender;
}

/** `agora mcp` as the ledger's `client`: a tool call per command (MCP has no command id: the reply names the one Agora gave it). */
function mcpSender(mcp) {
  const tool = (type) => type.replace(/[A-Z]/g, (c, i) => `${i ? '_' : ''}${c.toLowerCase()}`);
  return {
    async trySend(type, payload) {
      const result = await mcp.callTool({ name: tool(type), arguments: payload });
      if (result.isError) return { ok: false, error: { code: toolErrorCode(result), message: String(result.content?.[0]?.text ?? '') } };
      return { ok: true, result: result.structuredContent };
    },
  };
}

/**
 * Registers the three agents (a fleet file of their own in <dir>/fleet-ways) and starts their
 * clients. Resolves to { drivers(ctx, pause, decision): promises of their loops, close() }.
 */
export async function startWays({ dir, gatewayUrl, operatorKeyFile, layer, logDir }) {
  const agent = (id, roles) => ({ id, roles, specializations: ['planning'], keyFile: `keys/${id}.key.json`, model: 'openai:gpt-4.1' });
  const fleet = fleetFile(join(dir, 'fleet-ways'), Object.values(WAYS).map((id) => agent(id, ['executive', 'dialectic'])));
  await register(fleet, { url: gatewayUrl, operatorKeyFile, currency: layer.currency });
  // Any agent may be drawn to review a recovery: these take their turn as the fleet's do, through its
  // dialectic loop and model (their own ways in are for what they start; left out, a recovery that drew
  // one of them waited for its deadline).
  const turns = await startFleet({ fleet: fleetFile(join(dir, 'fleet-ways', 'dialectic'), Object.values(WAYS).map((id) => ({ ...agent(id, ['dialectic']), keyFile: join('..', 'keys', `${id}.key.json`) }))), layer, connection: { url: gatewayUrl, operatorKeyFile }, checkpoints: 'memory' });
  await turns.ready;
  const keyFile = (id) => fleet.agents.find((a) => a.id === id).keyFile;
  const policyFile = join(dir, 'fleet-ways', 'policy.json');
  writeFileSync(policyFile, `${JSON.stringify(POLICY, null, 2)}\n`);
  const clients = [];
  const connect = async (name, args, env) => {
    const client = await mcpClient(name, args, join(logDir, `${name}.log`), env);
    clients.push(client);
    return client;
  };
  const mcp = await connect('agora-mcp', ['mcp', '--key', keyFile(WAYS.mcp), '--url', gatewayUrl]);
  const proxy = await connect('agora-mcp-proxy', ['mcp-proxy', '--policy', policyFile, '--key', keyFile(WAYS.proxy), '--url', gatewayUrl, '--decision-timeout', String(DECISION_S), '--', process.execPath, MEMORY_SERVER], { MEMORY_FILE_PATH: join(dir, 'fleet-ways', 'memory.jsonl') });
  const a2a = a2aSender(gatewayUrl, WAYS.a2a, parseKeyFile(readFileSync(keyFile(WAYS.a2a), 'utf8')).secretKey);
  const timeout = { timeout: (DECISION_S + 30) * 1000 };

  /**
   * The MCP executive, model-free: a proposal through submit_proposal, then, as an agent would, its
   * state through get_proposal: revised through revise_proposal when reviewers' objections block it,
   * waited on through wait_for_verdict otherwise, until approved, rejected or escalated to a person.
   */
  async function overMcp(ctx, pause) {
    const sender = mcpSender(mcp);
    const tool = async (name, args, options) => {
      const result = await mcp.callTool({ name, arguments: args }, undefined, options).catch(() => undefined);
      return result && !result.isError ? result.structuredContent : undefined;
    };
    for (let i = 0; await pause(ctx.think() * 2, ctx.running); i++) {
      const proposalId = `mcp-${i}-${Date.now().toString(36)}`;
      const askedAt = Date.now();
      const sent = await ctx.ledger.send(sender, WAYS.mcp, 'SubmitProposal', { proposalId, title: `Runbook change ${proposalId}`, problem: 'The on-call runbook still names the old paging service.', body: 'Point the runbook at the new paging service; the old one stays reachable for a month as a fallback.', evidence: [{ ref: 'd/91ab33c2', summary: 'Three pages were missed last month' }] }, 'mcp');
      if (!sent) continue;
      let outcome = 'none';
      // Read at least as far as the last command of its own (read your writes), so a revision is never made twice.
      let position = sent.position;
      for (const deadline = Date.now() + DECISION_S * 1000; Date.now() < deadline; ) {
        const proposal = await tool('get_proposal', { proposalId, minPosition: position });
        if (proposal && ['approved', 'rejected', 'withdrawn', 'escalated'].includes(proposal.status)) {
          outcome = proposal.status;
          break;
        }
        const open = proposal?.objections.filter((o) => o.status === 'open').map((o) => o.objectionId) ?? [];
        const blocked = proposal?.status === 'review' && proposal.pendingRound === null && proposal.rounds.at(-1)?.outcome === 'blocked' && open.length > 0;
        if (blocked && proposal.revision > 3) {
          outcome = 'blocked';
          break;
        }
        if (blocked) {
          const body = `${proposal.body}\nRevision ${proposal.revision + 1}: answering ${open.join(', ')}: staged over a week, 10% of teams first, rolled back by restoring the old runbook page.`;
          const revised = await ctx.ledger.send(sender, WAYS.mcp, 'ReviseProposal', { proposalId, body: body.slice(0, 20_000), answers: open }, 'mcp');
          position = revised?.position ?? position;
          if (revised) continue;
        }
        // At most 15 s, less when the proposal moves; at least a second, should the tools fail at once.
        const waited = Date.now();
        await tool('wait_for_verdict', { proposalId, timeoutSeconds: 15 }, { timeout: 30_000 });
        await sleep(Math.max(0, 1_000 - (Date.now() - waited)));
      }
      ctx.ledger.decided('tribunal', askedAt, outcome, 'mcp');
    }
  }

  /** The A2A executive: a vote on a high-risk action as an A2A task, followed until it ends. */
  async function overA2a(ctx, pause) {
    for (let i = 0; await pause(ctx.think() * 2, ctx.running); i++) {
      const requestId = `a2a-${i}-${Date.now().toString(36)}`;
      const askedAt = Date.now();
      const sent = await ctx.ledger.send(a2a, WAYS.a2a, 'CreateVotingSession', { requestId, actionType: 'rotate_keys', riskLevel: 'high', summary: 'Rotate the payment gateway keys during business hours, old keys valid for an hour.' }, 'a2a');
      if (!sent) continue;
      const state = await a2a.ended(a2a.lastTask.id, DECISION_S * 1000, ctx.running);
      ctx.ledger.decided('voting', askedAt, state ?? 'none', 'a2a');
    }
  }

  /** The proxied executive: stores a credential through the proxy, held for the validators' vote; ran, denied or expired. */
  async function throughProxy(ctx, pause) {
    for (let i = 0; await pause(ctx.think() * 2, ctx.running); i++) {
      const askedAt = Date.now();
      const name = `${i % 3 === 0 ? 'prod' : 'staging'}-token-${i}-${Date.now().toString(36)}`;
      const result = await proxy.callTool({ name: 'create_entities', arguments: { entities: [{ name, entityType: 'credential', observations: ['scoped to the deploy pipeline'] }] } }, undefined, timeout).catch((error) => ({ isError: true, content: [{ text: `no reply: ${error.message}` }] }));
      const code = result.isError ? toolErrorCode(result) : undefined;
      if (code !== undefined && code !== 'tool_call_denied' && code !== 'tool_call_expired') {
        ctx.ledger.refusals.push({ at: Date.now(), code, type: 'mcp-proxy create_entities' });
        continue;
      }
      ctx.ledger.decided('voting', askedAt, code === undefined ? 'ran' : code === 'tool_call_denied' ? 'denied' : 'expired', 'proxy');
    }
  }

  return {
    agents: Object.values(WAYS),
    drivers: (ctx, pause) => [overMcp(ctx, pause), overA2a(ctx, pause), throughProxy(ctx, pause)],
    close: () => Promise.all([...clients.map((c) => c.close().catch(() => undefined)), turns.close().catch(() => undefined)]),
  };
}
