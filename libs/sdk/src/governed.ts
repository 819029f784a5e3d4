/**
 * Governed tool calls (docs/decisions/0014-a-governed-tool-call-is-a-decision.md): the one place where an agent's tool call that the
 * policy (tool-policy.ts) matches becomes an Agora decision. `agora mcp-proxy` (@agora/mcp) and the
 * adapters for the Vercel AI SDK (ai-sdk.ts), the OpenAI Agents SDK (openai-agents.ts) and LangGraph
 * (langgraph.ts) are all built on it; each only turns a decision into its own world's answer (an MCP
 * tool error, an AI SDK approval status, an approved or rejected interruption, a resumed graph).
 * governToolCall is openToolCall (the policy; the session or proposal opened) then awaitToolCall (the
 * wait for its decision), which a framework that stops while a call waits calls apart.
 *
 * - governToolCall: unmatched or `allow` passes; `deny` is refused at once; `vote` opens a voting
 *   session of validators (seed 002) for this call alone (a fresh request id), created with the call
 *   (`toolCall`: server, tool and the digest, sha256 of the RFC 8785 canonical JSON of {server, tool,
 *   arguments, caller}) and a summary holding the arguments themselves (what the validators vote
 *   on), and waits for its final decision. `person` does the same with a session that selects no
 *   validator (`decider: person`): it waits at once in the operator's inbox for a person's decision. No decision in time, or a cancelled wait, cancels the
 *   session, so that no later approval can stand for the call. `tribunal` submits the call as a
 *   tribunal proposal (SubmitProposal with `toolCall`, the summary as its body) reviewed as any
 *   proposal; it waits for the verdict: approved runs the call; rejected, or blocked by an open
 *   objection (the agent does not revise a tool call), refuses it; a blocked proposal, no verdict in
 *   time or a cancelled wait withdraws the proposal.
 * - releaseToolCall, right before the call runs: ReleaseToolCall (ReleaseProposalToolCall) with the digest; the voting (proposal) decider
 *   accepts it once, for an approved session bound to that digest, so an approval cannot be replayed
 *   for another call or used twice. The caller runs exactly the arguments that were digested.
 * - recordToolCallResult, after: the outcome and the digest of the result (the result stays with the agent).
 *
 * A refusal is an ErrorBody whose code is `tool_call_denied` (the policy, the vote, a person, a
 * cancellation, a release Agora refused) or `tool_call_expired` (the session expired, or no decision in time).
 */
import { createHash, randomUUID } from 'node:crypto';
import { PROPOSAL_CATEGORY, type ErrorBody, type ProposalView, type VotingSessionView } from '@agora/contracts';
import { canonicalJson } from '@agora/identity';
import type { Agora } from './client.js';
import type { AgoraEvent } from './transport.js';
import { readAt, viewIfFound, waitOnLog } from './wait.js';
import { ruleFor, type PolicyRule, type ToolPolicy } from './tool-policy.js';

/** A governed call as the log binds it. */
export interface GovernedCall {
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  caller: string;
}

/** Where a governed call comes from: the session's action type is `<source>:<server>/<tool>`. */
export type ToolCallSource = 'mcp_tool_call' | 'ai_sdk_tool_call' | 'openai_agents_tool_call' | 'langgraph_tool_call';
const SOURCE_LABEL: Record<ToolCallSource, string> = {
  mcp_tool_call: 'MCP tool call',
  ai_sdk_tool_call: 'AI SDK tool call',
  openai_agents_tool_call: 'OpenAI Agents SDK tool call',
  langgraph_tool_call: 'LangGraph tool call',
};

/** sha256 (hex) of the RFC 8785 canonical JSON of the call: what a decision is bound to. */
export function toolCallDigest(call: GovernedCall): string {
  return sha256(canonicalJson({ server: call.server, tool: call.tool, arguments: call.arguments, caller: call.caller }));
}

/** sha256 (hex) of the RFC 8785 canonical JSON of a tool's result: what the log keeps of it. */
export function resultDigest(result: unknown): string {
  return sha256(canonicalJson(result ?? null));
}

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

const SUMMARY_LIMIT = 5000;

/** What the validators read: the call, its digest and its arguments (cut short, never the digest, when they are long). */
export function callSummary(call: GovernedCall, digest: string, rule: PolicyRule, source: ToolCallSource = 'mcp_tool_call'): string {
  const head = `${SOURCE_LABEL[source]} ${call.server}/${call.tool} by ${call.caller}${rule.reason ? ` (${rule.reason})` : ''}\ncall digest sha256:${digest} (RFC 8785 JSON of server, tool, arguments, caller)\narguments: `;
  const args = canonicalJson(call.arguments);
  const room = SUMMARY_LIMIT - head.length;
  return head + (args.length <= room ? args : `${args.slice(0, room - 40)} ... (cut; the digest covers them all)`);
}

/** A refusal of a governed call. */
export const toolCallDenied = (message: string, details: Record<string, unknown>): ErrorBody => ({ code: 'tool_call_denied', message, details }) as ErrorBody;
const toolCallExpired = (message: string, details: Record<string, unknown>): ErrorBody => ({ code: 'tool_call_expired', message, details }) as ErrorBody;

/** An approval of one call: by a voting session (`sessionId`) or, for `tribunal`, by a proposal (`proposalId`); used once through releaseToolCall. */
export type ToolCallApproval = { sessionId: string; digest: string } | { proposalId: string; digest: string };

/** What Agora decided of a call: it passes (no rule, or `allow`), it was approved (run it through releaseToolCall), or it is refused. */
export type ToolCallDecision = { verdict: 'pass' } | ({ verdict: 'approved' } & ToolCallApproval) | { verdict: 'refused'; error: ErrorBody };

/** What decided an approval, for messages: `voting session <id>` or `proposal <id>`. */
export const approvalName = (approval: ToolCallApproval): string => ('proposalId' in approval ? `proposal ${approval.proposalId}` : `voting session ${approval.sessionId}`);

export interface GovernOptions {
  /** Names the session's action type; default `mcp_tool_call`. */
  source?: ToolCallSource;
  /** How long a held call waits for its decision before it is refused as expired (and its session cancelled); default 10 minutes. */
  decisionTimeoutMs?: number;
  /** Stops waiting: the session is cancelled and the call refused. */
  signal?: AbortSignal;
  /** Each event of the session while the call is held (votes, the decision). */
  onProgress?: (event: AgoraEvent) => void;
  /** Diagnostics. */
  log?: (line: string) => void;
}

export const DEFAULT_DECISION_TIMEOUT_MS = 10 * 60_000;

/**
 * A call held for a decision: the voting session (`sessionId`, decided by the validators or a person) or the tribunal
 * proposal (`proposalId`) that Agora holds it in, with the call's digest. Plain JSON: a framework that stops while the
 * call waits (a LangGraph interrupt) keeps it in its checkpoint and awaits the same decision after a restart.
 */
export type HeldToolCall = { server: string; tool: string; digest: string; position?: string } & ({ sessionId: string; decider: 'validators' | 'person' } | { proposalId: string; decider: 'tribunal' });

/** What openToolCall did with a call: it passes, it is refused at once, or it is held (await its decision with awaitToolCall). */
export type ToolCallOpening = { verdict: 'pass' } | { verdict: 'refused'; error: ErrorBody } | ({ verdict: 'held' } & HeldToolCall);

export interface OpenOptions extends Pick<GovernOptions, 'source' | 'log'> {
  /**
   * The session's (or proposal's) id; default a fresh one. The same id for the same call opens nothing new (Agora
   * keeps the first session of a request), so a caller that may open a call again after a restart passes an id
   * derived from the call (e.g. uuidV5 of its thread, tool call id and digest) and awaits the one decision.
   */
  requestId?: string;
}

/** Looks the call up in the policy and, for `vote` (or `person`), puts it to the validators (or to a person) and waits for the final decision. */
export async function governToolCall(agora: Agora, policy: ToolPolicy, call: GovernedCall, options: GovernOptions = {}): Promise<ToolCallDecision> {
  const opened = await openToolCall(agora, policy, call, options);
  if (opened.verdict !== 'held') return opened;
  const { verdict: _verdict, ...held } = opened;
  return awaitToolCall(agora, held, options);
}

/** The first half of governToolCall: looks the call up in the policy and, when it needs a decision, opens its voting session or tribunal proposal without waiting. */
export async function openToolCall(agora: Agora, policy: ToolPolicy, call: GovernedCall, options: OpenOptions = {}): Promise<ToolCallOpening> {
  const rule = ruleFor(policy, call);
  if (rule === undefined || rule.decision === 'allow') return { verdict: 'pass' };
  if (rule.decision === 'deny') return { verdict: 'refused', error: toolCallDenied(`the policy forbids ${call.server}/${call.tool}${rule.reason ? `: ${rule.reason}` : ''}`, { server: call.server, tool: call.tool }) };
  if (rule.decision === 'tribunal') return submitCall(agora, call, toolCallDigest(call), rule, options);
  return openVote(agora, call, toolCallDigest(call), rule, options);
}

/** The second half of governToolCall: waits for the decision on a held call; no decision in time, or a cancelled wait, closes its session (or withdraws its proposal). */
export async function awaitToolCall(agora: Agora, held: HeldToolCall, options: Omit<GovernOptions, 'source'> = {}): Promise<ToolCallDecision> {
  return 'proposalId' in held ? awaitVerdict(agora, held, options) : awaitVote(agora, held, options);
}

async function openVote(agora: Agora, call: GovernedCall, digest: string, rule: PolicyRule, options: OpenOptions): Promise<ToolCallOpening> {
  const source = options.source ?? 'mcp_tool_call';
  const log = options.log ?? (() => undefined);
  const sessionId = options.requestId ?? randomUUID();
  const created = await agora.trySend('CreateVotingSession', {
    requestId: sessionId,
    actionType: `${source}:${call.server}/${call.tool}`.slice(0, 100),
    riskLevel: rule.riskLevel,
    summary: callSummary(call, digest, rule, source),
    toolCall: { server: call.server.slice(0, 200), tool: call.tool.slice(0, 200), callDigest: digest },
    ...(rule.votingTimeoutMs === undefined ? {} : { votingTimeoutMs: rule.votingTimeoutMs }),
    ...(rule.decision === 'person' ? { decider: 'person' as const } : {}),
  });
  const decider = rule.decision === 'person' ? 'person' : 'validators';
  if (!created.ok) return { verdict: 'refused', error: toolCallDenied(`Agora refused to open a vote on ${call.server}/${call.tool}: ${created.error.code}: ${created.error.message}`, { server: call.server, tool: call.tool, sessionId, digest, agora: created.error }) };
  log(`${call.server}/${call.tool}: held for voting session ${sessionId} (${rule.riskLevel}, decided by ${decider === 'person' ? 'a person' : 'the validators'}, digest ${digest})`);
  return { verdict: 'held', server: call.server, tool: call.tool, digest, sessionId, decider, ...(options.requestId === undefined ? { position: created.result.position } : {}) };
}

async function awaitVote(agora: Agora, held: Extract<HeldToolCall, { sessionId: string }>, options: Omit<GovernOptions, 'source'>): Promise<ToolCallDecision> {
  const { server, tool, sessionId, digest } = held;
  const timeoutMs = options.decisionTimeoutMs ?? DEFAULT_DECISION_TIMEOUT_MS;
  const log = options.log ?? (() => undefined);
  const about = { server, tool, sessionId, digest };
  const refused = (error: ErrorBody): ToolCallDecision => ({ verdict: 'refused', error });
  let session: VotingSessionView;
  try {
    session = await agora.waitForDecision(sessionId, {
      timeoutMs,
      final: true,
      ...(held.position === undefined ? {} : { after: held.position }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
    });
  } catch (error) {
    // No decision in time, or the agent cancelled its call: the session is closed so that no later approval can stand for it.
    await agora.trySend('CancelVotingSession', { sessionId, reason: options.signal?.aborted ? 'the agent cancelled its tool call' : `no decision within ${timeoutMs} ms; the call was refused` });
    return refused(toolCallExpired(`no decision on ${server}/${tool} in time (voting session ${sessionId}): ${(error as Error).message}`, about));
  }
  if (session.status === 'expired') return refused(toolCallExpired(`voting session ${sessionId} on ${server}/${tool} expired before its validators decided`, { ...about, recommendation: session.recommendation }));
  if (session.status === 'cancelled') return refused(toolCallDenied(`voting session ${sessionId} on ${server}/${tool} was cancelled`, about));
  if (session.toolCall?.callDigest !== digest) return refused(toolCallDenied(`voting session ${sessionId} is not bound to this call of ${server}/${tool}`, about));
  if (session.finalDecision !== 'approve') {
    if (held.decider === 'person') return refused(toolCallDenied(`a person refused ${server}/${tool} (voting session ${sessionId}: ${session.resolution?.reason ?? session.finalDecision})`, about));
    return refused(toolCallDenied(`the validators' vote refused ${server}/${tool} (voting session ${sessionId}: ${session.consensus ?? 'no consensus'}, ${session.finalDecision})`, { ...about, consensus: session.consensus, recommendation: session.recommendation }));
  }
  log(`${server}/${tool}: approved by voting session ${sessionId} (${held.decider === 'person' ? 'a person' : 'the validators'})`);
  return { verdict: 'approved', sessionId, digest };
}

/** A proposal blocked by an objection: its latest round closed blocked and no round is pending (the proposer would have to revise). */
const blocked = (p: ProposalView): boolean => p.status === 'review' && p.pendingRound === null && p.rounds.at(-1)?.outcome === 'blocked';

async function submitCall(agora: Agora, call: GovernedCall, digest: string, rule: PolicyRule, options: OpenOptions): Promise<ToolCallOpening> {
  const source = options.source ?? 'mcp_tool_call';
  const log = options.log ?? (() => undefined);
  const proposalId = options.requestId ?? randomUUID();
  const submitted = await agora.trySend('SubmitProposal', {
    proposalId,
    title: `${SOURCE_LABEL[source]} ${call.server}/${call.tool}`.slice(0, 200),
    body: callSummary(call, digest, rule, source),
    problem: (rule.reason ?? `${call.caller} asks to run ${call.server}/${call.tool}, which the tool policy sends to the tribunal`).slice(0, 5000),
    toolCall: { server: call.server.slice(0, 200), tool: call.tool.slice(0, 200), callDigest: digest },
  });
  if (!submitted.ok) return { verdict: 'refused', error: toolCallDenied(`Agora refused to submit ${call.server}/${call.tool} to the tribunal: ${submitted.error.code}: ${submitted.error.message}`, { server: call.server, tool: call.tool, proposalId, digest, agora: submitted.error }) };
  log(`${call.server}/${call.tool}: held for tribunal proposal ${proposalId} (digest ${digest})`);
  return { verdict: 'held', server: call.server, tool: call.tool, digest, proposalId, decider: 'tribunal', ...(options.requestId === undefined ? { position: submitted.result.position } : {}) };
}

async function awaitVerdict(agora: Agora, held: Extract<HeldToolCall, { proposalId: string }>, options: Omit<GovernOptions, 'source'>): Promise<ToolCallDecision> {
  const { server, tool, proposalId, digest } = held;
  const timeoutMs = options.decisionTimeoutMs ?? DEFAULT_DECISION_TIMEOUT_MS;
  const log = options.log ?? (() => undefined);
  const about = { server, tool, proposalId, digest };
  const refused = (error: ErrorBody): ToolCallDecision => ({ verdict: 'refused', error });
  const withdraw = (reason: string) => agora.trySend('WithdrawProposal', { proposalId, reason });
  let proposal: ProposalView;
  try {
    proposal = await waitOnLog<ProposalView>(
      agora,
      {
        category: PROPOSAL_CATEGORY,
        streamId: `${PROPOSAL_CATEGORY}-${proposalId}`,
        what: `the verdict on proposal ${proposalId}`,
        read: (at) => viewIfFound(agora.tryQuery('GetProposal', { proposalId }, readAt(at))),
        done: (p) => ['approved', 'rejected', 'withdrawn'].includes(p.status) || blocked(p),
      },
      { timeoutMs, ...(held.position === undefined ? {} : { after: held.position }), ...(options.signal === undefined ? {} : { signal: options.signal }), ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }) },
    );
  } catch (error) {
    // No verdict in time, or the agent cancelled its call: the proposal is withdrawn so that no later approval can stand for it.
    await withdraw(options.signal?.aborted ? 'the agent cancelled its tool call' : `no verdict within ${timeoutMs} ms; the call was refused`);
    return refused(toolCallExpired(`no verdict on ${server}/${tool} in time (proposal ${proposalId}): ${(error as Error).message}`, about));
  }
  if (proposal.status === 'approved') {
    log(`${server}/${tool}: approved by tribunal proposal ${proposalId}`);
    return { verdict: 'approved', proposalId, digest };
  }
  const objections = proposal.objections.filter((o) => o.status === 'open').map((o) => `${o.constitution}: ${o.constraint}`);
  if (blocked(proposal)) await withdraw('blocked by an objection: a tool call is not revised');
  return refused(toolCallDenied(`the tribunal refused ${server}/${tool} (proposal ${proposalId}: ${blocked(proposal) ? 'blocked' : proposal.status}${objections.length ? `; ${objections.join('; ')}` : ''})`, { ...about, status: proposal.status, objections }));
}

/** Uses an approval, right before the call runs: Agora releases it once, for its own digest; a refusal (replayed, another call) is returned. */
export async function releaseToolCall(agora: Agora, approval: ToolCallApproval, call: GovernedCall): Promise<ErrorBody | undefined> {
  const released =
    'proposalId' in approval
      ? await agora.trySend('ReleaseProposalToolCall', { proposalId: approval.proposalId, callDigest: approval.digest })
      : await agora.trySend('ReleaseToolCall', { sessionId: approval.sessionId, callDigest: approval.digest });
  if (released.ok) return undefined;
  return toolCallDenied(`Agora did not release the approval of ${approvalName(approval)}: ${released.error.code}: ${released.error.message}`, {
    server: call.server,
    tool: call.tool,
    ...approval,
    agora: released.error,
  });
}

/** Writes what became of a released call; the agent gets its result even when the log refuses the record (said through `log`). */
export async function recordToolCallResult(agora: Agora, approval: ToolCallApproval, outcome: 'ok' | 'tool_error' | 'failed', result: unknown, log: (line: string) => void = () => undefined): Promise<void> {
  const digest = resultDigest(result);
  const recorded =
    'proposalId' in approval
      ? await agora.trySend('RecordProposalToolCallResult', { proposalId: approval.proposalId, outcome, resultDigest: digest })
      : await agora.trySend('RecordToolCallResult', { sessionId: approval.sessionId, outcome, resultDigest: digest });
  if (!recorded.ok) log(`${approvalName(approval)}: the result was not recorded: ${recorded.error.code}: ${recorded.error.message}`);
}
