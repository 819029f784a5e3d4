import type { ProposalView, ReviewAssignmentView } from '@agora/contracts';
import { evolveProposal, latestRound, proposalStreamId, openObjections, type ProposalEvent, type ProposalState } from '@agora/domain-tribunal';
import type { EventStore } from '@agora/eventstore';
import { aggregateViews, readAggregateView } from './aggregate-views.js';

/** Every proposal with its whole review history, by proposal id. */
export type ProposalsModel = Map<string, ProposalView>;

/**
 * Folds every `proposal-*` stream with the proposal decider's own `evolveProposal`, so the read
 * model and the decider cannot disagree about a proposal.
 */
export const proposalsProjection = aggregateViews<ProposalView, ProposalState, ProposalEvent>({
  name: 'proposals',
  category: 'proposal',
  initial: { status: 'unsubmitted' },
  evolve: evolveProposal,
});

/** The one-line form of a proposal (ListProposals). */
export function proposalSummary(p: ProposalView) {
  return {
    proposalId: p.proposalId,
    proposer: p.proposer,
    title: p.title,
    proposalClass: p.proposalClass,
    status: p.status,
    revision: p.revision,
    round: latestRound(p)?.round ?? null,
    openObjections: openObjections(p).length,
    submittedAt: p.submittedAt,
    updatedAt: p.updatedAt,
  };
}

/**
 * One proposal read straight from its stream: what a query answers right after a command (the
 * live model trails the log a little). Undefined when there is no such proposal.
 */
export function readProposal(store: EventStore, proposalId: string): Promise<ProposalView | undefined> {
  return readAggregateView(store, proposalsProjection, proposalStreamId(proposalId), proposalId);
}

/** A reviewer's assignments, newest round first: the open ones it has not answered (`pending`), or all of them. */
export function assignmentsOf(model: ProposalsModel, reviewer: string, include: 'pending' | 'all'): ReviewAssignmentView[] {
  const out: ReviewAssignmentView[] = [];
  for (const p of model.values()) {
    for (const round of p.rounds) {
      for (const a of round.assignments) {
        if (a.reviewer !== reviewer) continue;
        const review = round.reviews.find((r) => r.reviewer === reviewer && r.constitution === a.constitution);
        const state = review ? (review.deemed ? 'deemed' : 'reviewed') : round.status === 'open' ? 'pending' : 'closed';
        if (include === 'pending' && state !== 'pending') continue;
        out.push({ proposalId: p.proposalId, title: p.title, proposer: p.proposer, round: round.round, revision: round.revision, constitution: a.constitution, deadlineAt: round.deadlineAt, state, verdict: review?.verdict ?? null });
      }
    }
  }
  return out.sort((a, b) => (a.deadlineAt < b.deadlineAt ? 1 : a.deadlineAt > b.deadlineAt ? -1 : 0));
}
