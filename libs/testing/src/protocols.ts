// The protocols' scripted commands as the demos play them, for the tests and tools that write a
// log of them: the tribunal's four reviewers approving a round, a recovery that converges. Agents
// send through an `ok` of their own (an `Agents`' ok, or any function of its shape).
import type { DialecticSessionView, ProposalView } from '@agora/contracts';
import { waitFor } from './basics.js';

/** Signs and sends a command of `type` as `agentId`, failing unless it is accepted (an `Agents`' `ok`). */
export type SendOk = (agentId: string, type: string, payload: Record<string, unknown>) => Promise<unknown>;

/** The demos' four reviewers by the constitution each reviews on (the tribunal draws one reviewer a constitution). */
export const REVIEWERS = { risk: 'harbinger', premise: 'heretic', evidence: 'sentinel', execution: 'zealot' } as const;

type Constitution = keyof typeof REVIEWERS;
/** Each reviewer's profile, keyed by its id (so that a cast spread from it keeps its agents' names as a type). */
type ReviewerProfiles = { readonly [C in Constitution as (typeof REVIEWERS)[C]]: { roles: ['reviewer']; constitutions: [C] } };

/** The four reviewers (REVIEWERS) as a fleet registers them: each a reviewer on its one constitution. */
export const REVIEWER_PROFILES = Object.fromEntries(
  Object.entries(REVIEWERS).map(([constitution, agentId]) => [agentId, { roles: ['reviewer'], constitutions: [constitution] }]),
) as unknown as ReviewerProfiles;

/** Each of the four reviewers (REVIEWERS) approves round `round` of `proposalId` on its constitution, one after the other. */
export async function approveRound(ok: SendOk, proposalId: string, round = 1): Promise<void> {
  for (const [constitution, agent] of Object.entries(REVIEWERS)) {
    await ok(agent, 'SubmitReview', { proposalId, round, constitution, verdict: 'approve', reasoning: `${agent} on ${constitution}` });
  }
}

/**
 * A proposal the tribunal approves in round 1: `proposer` submits `proposal` (the SubmitProposal
 * payload), the tribunal opens the round itself, the four reviewers approve (approveRound). Resolves
 * once `read` (the proposal as the test reads it, undefined while it cannot) shows it approved.
 */
export async function approveProposal(
  agents: { ok: SendOk; read: (proposalId: string) => Promise<ProposalView | undefined> },
  proposer: string,
  proposal: { proposalId: string; [field: string]: unknown },
  timeoutMs = 15_000,
): Promise<void> {
  const { proposalId } = proposal;
  await agents.ok(proposer, 'SubmitProposal', proposal);
  await waitFor(async () => (await agents.read(proposalId))?.rounds.some((r) => r.status === 'open') ?? false, `round 1 of ${proposalId} to open`, timeoutMs);
  await approveRound(agents.ok, proposalId);
  await waitFor(async () => (await agents.read(proposalId))?.status === 'approved', `${proposalId} approved`, timeoutMs);
}

/**
 * A recovery that converges, opened with its reviewer: the paused agent's thesis (a risk threshold
 * of 0.45), the reviewer's antithesis (0.48), then the agent's synthesis in round 1 and the
 * reviewer's in round 2 both agreeing on 0.48 (the resolution proposed, nobody signed yet).
 */
export async function convergeRecovery(ok: SendOk, session: Pick<DialecticSessionView, 'sessionId' | 'agentId' | 'reviewer'>): Promise<void> {
  const { sessionId, agentId, reviewer } = session;
  if (!reviewer) throw new Error(`the recovery ${sessionId} has no reviewer yet`);
  const threshold = (value: number) => ({ operation: 'set_risk_threshold', parameters: { threshold: value } });
  await ok(agentId, 'SubmitThesis', { sessionId, rootCause: 'spike', proposedConditions: [threshold(0.45)], reasoning: 'external' });
  await ok(reviewer, 'SubmitAntithesis', { sessionId, observedMetrics: { risk_score: 0.65 }, concerns: ['risk'], reasoning: 'tighter', counterProposal: { rootCause: 'spike', proposedConditions: [threshold(0.48)] } });
  await ok(agentId, 'SubmitSynthesis', { sessionId, round: 1, rootCause: 'spike', proposedConditions: [threshold(0.48)], reasoning: 'agreed', agrees: true });
  await ok(reviewer, 'SubmitSynthesis', { sessionId, round: 2, rootCause: 'spike', proposedConditions: [threshold(0.48)], reasoning: 'agreed', agrees: true });
}
