/**
 * A tribunal reviewer (seed 000) played by a model: for each review round that assigns it, it
 * reviews the proposal for its constitution (the mandate in `prompts/constitutions/<name>.md`) and
 * approves, or objects under the seed's challenge protocol: the constraint violated, a concrete
 * failure scenario, a suggested revision (or the reason to reject), evidence cited where the
 * proposal gives any. The tribunal has no abstention: with no answer that fits, the reviewer sends
 * nothing, and the round's deadline records its silence as the seed says (ReviewDeemedApproved,
 * marked deemed in the log).
 */
import type { ProposalView } from '@agora/contracts';
import { onReviewRequested, type Agora, type ReviewAnswer, type RoleLoop, type RoleLoopOptions } from '@agora/sdk';
import { z } from 'zod';
import { actionOf, ask, blank, listed, type ParticipantSettings } from './participant.js';

/** The review a model answers with: every field present (null when unused), so strict JSON-schema modes accept it. */
export const ModelReview = z.object({
  verdict: z.enum(['approve', 'object']),
  reasoning: z.string().describe('Why, from your constitution'),
  citations: z.array(z.object({ ref: z.string(), summary: z.string() })).describe("Evidence of the proposal's your review relies on"),
  constraint: z.string().nullable().describe('object: the constitutional constraint violated'),
  scenario: z.string().nullable().describe('object: a concrete scenario in which the proposal fails'),
  suggestedRevision: z.string().nullable().describe('object: the revision that would answer it (or give rejectReason)'),
  rejectReason: z.string().nullable().describe('object: why the proposal should be rejected outright (or give suggestedRevision)'),
});
export type ModelReview = z.infer<typeof ModelReview>;

/** What the SubmitReview contract asks beyond the schema (the decider refuses these), and the seed's evidence rule. */
export function reviewProblem(review: ModelReview, proposal: Pick<ProposalView, 'evidence'>): string | undefined {
  if (blank(review.reasoning)) return 'reasoning is empty';
  if (review.verdict === 'approve') return undefined;
  const missing = [blank(review.constraint) && 'constraint', blank(review.scenario) && 'scenario', blank(review.suggestedRevision) && blank(review.rejectReason) && 'suggestedRevision or rejectReason'].filter(Boolean);
  if (missing.length > 0) return `an objection must give ${missing.join(', ')} (the challenge protocol: the constraint violated, a concrete failure scenario, a suggested revision or a reason to reject)`;
  if (proposal.evidence.length > 0 && review.citations.length === 0) return 'the proposal gives evidence: an objection cites the items it relies on (citations)';
  return undefined;
}

/** The SubmitReview answer of a model's review (an approval carries no objection parts). */
export function reviewAnswer(review: ModelReview): ReviewAnswer {
  const citations = review.citations.filter((c) => !blank(c.ref) && !blank(c.summary)).map((c) => ({ ref: c.ref.trim().slice(0, 200), summary: c.summary.trim().slice(0, 2000) }));
  const base = { verdict: review.verdict, reasoning: review.reasoning.trim().slice(0, 5000), citations };
  if (review.verdict === 'approve') return base;
  return {
    ...base,
    constraint: review.constraint!.trim().slice(0, 1000),
    scenario: review.scenario!.trim().slice(0, 5000),
    ...(blank(review.suggestedRevision) ? {} : { suggestedRevision: review.suggestedRevision!.trim().slice(0, 5000) }),
    ...(blank(review.rejectReason) ? {} : { rejectReason: review.rejectReason!.trim().slice(0, 5000) }),
  };
}

/** The review request's placeholders: the proposal as the reviewer sees it. */
export function reviewValues(proposal: ProposalView, round: number, constitution: string): Record<string, string | number> {
  return {
    proposalId: proposal.proposalId,
    revision: proposal.revision,
    proposer: proposal.proposer,
    round,
    constitution,
    title: proposal.title,
    problem: proposal.problem,
    body: proposal.body,
    evidence: listed(proposal.evidence.map((e) => `${e.ref}: ${e.summary}`)),
    objections: listed(proposal.objections.map((o) => `${o.objectionId} (${o.constitution}, round ${o.round}, ${o.status}): ${o.constraint} Scenario: ${o.scenario}${o.suggestedRevision ? ` Suggested: ${o.suggestedRevision}` : ''}`)),
  };
}

/** Reviews for this agent's assignments, with its model. */
export function runReviewer(agora: Agora, settings: ParticipantSettings, options: RoleLoopOptions = {}): RoleLoop {
  return onReviewRequested(
    agora,
    async ({ proposal, round, constitution }) => {
      const asked = await ask(settings, {
        key: `review:${proposal.proposalId}:${round}:${constitution}:${settings.agentId}`,
        purpose: `review proposal ${proposal.proposalId} round ${round} (${constitution})`,
        system: settings.prompts.render('reviewer', { agent: settings.agentId, constitution, mandate: settings.prompts.mandate(constitution) }),
        prompt: settings.prompts.render('review-request', reviewValues(proposal, round, constitution)),
        schema: ModelReview,
        schemaName: 'review',
        check: (review) => reviewProblem(review, proposal),
      });
      const where = `${proposal.proposalId} round ${round} (${constitution})`;
      if (!asked.ok) {
        settings.report?.(actionOf(settings, 'reviewer', asked, 'silent', `no review of ${where}: its silence counts at the deadline`));
        return undefined;
      }
      settings.report?.(actionOf(settings, 'reviewer', asked, 'acted', `${asked.output.verdict === 'approve' ? 'approved' : 'objected to'} ${where}`));
      return reviewAnswer(asked.output);
    },
    options,
  );
}
