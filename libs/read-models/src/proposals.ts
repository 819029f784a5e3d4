import type { PageRequest, ProposalView, ReviewAssignmentView } from '@agora/contracts';
import { evolveProposal, latestRound, proposalStreamId, openObjections, type ProposalEvent, type ProposalState } from '@agora/domain-tribunal';
import type { EventStore } from '@agora/eventstore';
import { aggregateViews, readAggregateView } from './aggregate-views.js';
import { pageOf, type Page } from './paging.js';

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
  // 2: proposals carry their reported outcome (OutcomeReported).
  snapshotVersion: 2,
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

export interface ProposalFilter {
  status?: ProposalView['status'];
  proposer?: string;
  proposalClass?: ProposalView['proposalClass'];
}

/** Proposals matching the filter, most recently updated first, then by id (ListProposals): one page. */
export function listProposals(model: ProposalsModel, filter: ProposalFilter & PageRequest = {}): Page<ReturnType<typeof proposalSummary>> {
  const matching: ProposalView[] = [];
  for (const p of model.values()) {
    if ((filter.status === undefined || p.status === filter.status) && (filter.proposer === undefined || p.proposer === filter.proposer) && (filter.proposalClass === undefined || p.proposalClass === filter.proposalClass)) matching.push(p);
  }
  return pageOf(matching, { key: (p) => [p.updatedAt, p.proposalId], directions: ['desc', 'asc'] }, filter, proposalSummary);
}

/**
 * One proposal read straight from its stream, for another service's reactor (the chamber's
 * deadlock consultation); queries answer from the read model. Undefined when there is no such proposal.
 */
export function readProposal(store: EventStore, proposalId: string): Promise<ProposalView | undefined> {
  return readAggregateView(store, proposalsProjection, proposalStreamId(proposalId), proposalId);
}

/** A reviewer's assignments, latest deadline first (then by proposal, round and constitution): the open ones it has not answered (`pending`), or all of them; one page. */
export function assignmentsOf(model: ProposalsModel, reviewer: string, include: 'pending' | 'all', request: PageRequest = {}): Page<ReviewAssignmentView> {
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
  return pageOf(out, { key: (a) => [a.deadlineAt, a.proposalId, a.round, a.constitution], directions: ['desc', 'asc', 'asc', 'asc'] }, request, (a) => a);
}
