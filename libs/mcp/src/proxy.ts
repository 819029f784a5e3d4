/**
 * `agora mcp-proxy`: an MCP server in front of another MCP server (the upstream), whose risky tool
 * calls wait for an Agora decision (DESIGN.md decision 14). `tools/list` passes through; a
 * `tools/call` is looked up in the policy (policy.ts): unmatched or `allow` passes through, `deny`
 * is refused at once, `vote` puts the call to a voting session of validators (seed 002) and is
 * forwarded only after the session's final decision is approve. A refused, expired or cancelled
 * call answers the agent with a tool error (`tool_call_denied` / `tool_call_expired`) and never
 * reaches the upstream.
 *
 * The binding, in the log: each governed call gets a session of its own (a fresh request id),
 * created with the call (`toolCall`: server, tool and the digest, sha256 of the RFC 8785 canonical
 * JSON of {server, tool, arguments, caller}) and a summary holding the arguments themselves (what
 * the validators vote on). Before forwarding, the proxy sends ReleaseToolCall with the digest: the
 * voting decider accepts it once, for an approved session bound to that digest, so an approval
 * cannot be replayed for another call or used twice. After the call, RecordToolCallResult writes its
 * outcome and the digest of its result. The proxy forwards exactly the arguments it digested.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { ErrorBody, VotingSessionView } from '@agora/contracts';
import { canonicalJson } from '@agora/identity';
import type { Agora } from '@agora/sdk';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ruleFor, type PolicyRule, type ToolPolicy } from './policy.js';
import { refusal, waitOptions, type Extra } from './server.js';

export interface McpProxyOptions {
  /** The upstream's name in the policy and in the log; default the policy's `server`, else the name the upstream reports. */
  server?: string;
  /** How long a governed call waits for its decision before it is refused as expired (and its session cancelled); default 10 minutes. */
  decisionTimeoutMs?: number;
  /** Diagnostics (stderr in the CLI). */
  log?: (line: string) => void;
}

/** A governed call as the log binds it. */
export interface GovernedCall {
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  caller: string;
}

/** sha256 (hex) of the RFC 8785 canonical JSON of the call: what a decision is bound to. */
export function toolCallDigest(call: GovernedCall): string {
  return createHash('sha256').update(canonicalJson({ server: call.server, tool: call.tool, arguments: call.arguments, caller: call.caller }), 'utf8').digest('hex');
}

const SUMMARY_LIMIT = 5000;

/** What the validators read: the call, its digest and its arguments (cut short, never the digest, when they are long). */
export function callSummary(call: GovernedCall, digest: string, rule: PolicyRule): string {
  const head = `MCP tool call ${call.server}/${call.tool} by ${call.caller}${rule.reason ? ` (${rule.reason})` : ''}\ncall digest sha256:${digest} (RFC 8785 JSON of server, tool, arguments, caller)\narguments: `;
  const args = canonicalJson(call.arguments);
  const room = SUMMARY_LIMIT - head.length;
  return head + (args.length <= room ? args : `${args.slice(0, room - 40)} ... (cut; the digest covers them all)`);
}

const denied = (message: string, details: Record<string, unknown>): CallToolResult => refusal({ code: 'tool_call_denied', message, details } as ErrorBody);
const expired = (message: string, details: Record<string, unknown>): CallToolResult => refusal({ code: 'tool_call_expired', message, details } as ErrorBody);

/** The proxy's MCP server over a connected upstream client; connect it to a transport (stdio in the CLI). */
export function createMcpProxy(agora: Agora, upstream: Client, policy: ToolPolicy, options: McpProxyOptions = {}): Server {
  const upstreamInfo = upstream.getServerVersion();
  const serverName = options.server ?? policy.server ?? upstreamInfo?.name ?? 'upstream';
  const log = options.log ?? (() => undefined);
  const proxy = new Server(
    { name: `agora-proxy:${serverName}`, version: upstreamInfo?.version ?? '0.0.0' },
    {
      capabilities: { tools: {} },
      instructions: `${upstream.getInstructions() ?? ''}\n\nTool calls go through Agora's governance: a risky call waits for a vote of validators before it runs; a refusal comes back as a tool error "tool_call_denied: ..." or "tool_call_expired: ...".`.trim(),
    },
  );

  proxy.setRequestHandler(ListToolsRequestSchema, (request) => upstream.listTools(request.params));

  proxy.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const call: GovernedCall = { server: serverName, tool: request.params.name, arguments: request.params.arguments ?? {}, caller: agora.agentId ?? 'anonymous' };
    const rule = ruleFor(policy, call);
    if (rule === undefined || rule.decision === 'allow') return (await upstream.callTool(request.params)) as CallToolResult;
    if (rule.decision === 'deny') return denied(`the policy forbids ${call.server}/${call.tool}${rule.reason ? `: ${rule.reason}` : ''}`, { server: call.server, tool: call.tool });
    const digest = toolCallDigest(call);
    const verdict = await decide(agora, call, digest, rule, extra, options.decisionTimeoutMs ?? 10 * 60_000, log);
    if (verdict.refusal) return verdict.refusal;
    const { sessionId } = verdict;
    const released = await agora.trySend('ReleaseToolCall', { sessionId, callDigest: digest });
    if (!released.ok) return denied(`Agora did not release the approval of voting session ${sessionId}: ${released.error.code}: ${released.error.message}`, { server: call.server, tool: call.tool, sessionId, digest, agora: released.error });
    log(`${call.server}/${call.tool}: approved by voting session ${sessionId}, forwarding`);
    let result: CallToolResult;
    try {
      result = (await upstream.callTool({ ...request.params, arguments: call.arguments })) as CallToolResult;
    } catch (error) {
      await record(agora, sessionId, 'failed', { error: (error as Error).message }, log);
      throw error;
    }
    await record(agora, sessionId, result.isError ? 'tool_error' : 'ok', result, log);
    return result;
  });

  return proxy;
}

/** sha256 (hex) of the RFC 8785 canonical JSON of a tool result: what the log keeps of it. */
export function resultDigest(result: unknown): string {
  return createHash('sha256').update(canonicalJson(result), 'utf8').digest('hex');
}

/** Writes what became of a released call; the agent gets its result even when the log refuses the record (said on stderr). */
async function record(agora: Agora, sessionId: string, outcome: 'ok' | 'tool_error' | 'failed', result: unknown, log: (line: string) => void): Promise<void> {
  const recorded = await agora.trySend('RecordToolCallResult', { sessionId, outcome, resultDigest: resultDigest(result) });
  if (!recorded.ok) log(`voting session ${sessionId}: the result was not recorded: ${recorded.error.code}: ${recorded.error.message}`);
}

/** Puts one call to a vote and waits for the final decision: approve, or the refusal to answer with. */
async function decide(agora: Agora, call: GovernedCall, digest: string, rule: PolicyRule, extra: Extra, timeoutMs: number, log: (line: string) => void): Promise<{ sessionId: string; refusal?: CallToolResult }> {
  const sessionId = randomUUID();
  const about = { server: call.server, tool: call.tool, sessionId, digest };
  const created = await agora.trySend('CreateVotingSession', {
    requestId: sessionId,
    actionType: `mcp_tool_call:${call.server}/${call.tool}`.slice(0, 100),
    riskLevel: rule.riskLevel,
    summary: callSummary(call, digest, rule),
    toolCall: { server: call.server.slice(0, 200), tool: call.tool.slice(0, 200), callDigest: digest },
    ...(rule.votingTimeoutMs === undefined ? {} : { votingTimeoutMs: rule.votingTimeoutMs }),
  });
  if (!created.ok) return { sessionId, refusal: denied(`Agora refused to open a vote on ${call.server}/${call.tool}: ${created.error.code}: ${created.error.message}`, { ...about, agora: created.error }) };
  log(`${call.server}/${call.tool}: held for voting session ${sessionId} (${rule.riskLevel}, digest ${digest})`);
  let session: VotingSessionView;
  try {
    session = await agora.waitForDecision(sessionId, { ...waitOptions({ timeoutSeconds: timeoutMs / 1000, final: true }, extra), after: created.result.position });
  } catch (error) {
    // No decision in time, or the agent cancelled its call: the session is closed so that no later approval can stand for it.
    await agora.trySend('CancelVotingSession', { sessionId, reason: extra.signal.aborted ? 'the agent cancelled its tool call' : `no decision within ${timeoutMs} ms; the proxy refused the call` });
    const message = (error as Error).message;
    return { sessionId, refusal: expired(`no decision on ${call.server}/${call.tool} in time (voting session ${sessionId}): ${message}`, about) };
  }
  if (session.status === 'expired') return { sessionId, refusal: expired(`voting session ${sessionId} on ${call.server}/${call.tool} expired before its validators decided`, { ...about, recommendation: session.recommendation }) };
  if (session.status === 'cancelled') return { sessionId, refusal: denied(`voting session ${sessionId} on ${call.server}/${call.tool} was cancelled`, about) };
  if (session.finalDecision !== 'approve') {
    return { sessionId, refusal: denied(`the validators' vote refused ${call.server}/${call.tool} (voting session ${sessionId}: ${session.consensus ?? 'no consensus'}, ${session.finalDecision})`, { ...about, consensus: session.consensus, recommendation: session.recommendation }) };
  }
  return { sessionId };
}
