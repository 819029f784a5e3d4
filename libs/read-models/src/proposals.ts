import type { ProposalView } from '@agora/contracts';
import { evolveProposal, latestRound, openObjections, type ProposalEvent, type ProposalState } from '@agora/domain-tribunal';
import type { Projection } from '@agora/eventsourcing';
import type { RecordedEvent } from '@agora/eventstore';

/** Every proposal with its whole review history, by proposal id. */
export type ProposalsModel = Map<string, ProposalView>;

const PREFIX = 'proposal-';

/**
 * Folds every `proposal-*` stream with the proposal decider's own `evolveProposal`, so the read
 * model and the decider cannot disagree about a proposal.
 */
export const proposalsProjection: Projection<ProposalsModel> = {
  name: 'proposals',
  categories: ['proposal'],
  initial: () => new Map(),
  apply(model, event: RecordedEvent) {
    const proposalId = event.streamId.slice(PREFIX.length);
    const current: ProposalState = model.get(proposalId) ?? { status: 'unsubmitted' };
    const next = evolveProposal(current, { type: event.type, data: event.data } as ProposalEvent);
    if (next.status !== 'unsubmitted') model.set(proposalId, { ...next, streamRevision: event.revision });
  },
};

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
