// The proposal decider's guards, and how a decision is built (requesting, closing and escalating rounds, approving).
import type { DataOf, ProposalEscalated, ReviewRoundClosed, ReviewRoundRequested, ReviewRoundView } from '@agora/contracts';
import { type CommandContext, DomainError } from '@agora/decider';
import { evolveProposal } from './proposal-evolve.js';
import { event, ids, isFinal, openObjections, type Proposal, type ProposalEvent, type ProposalState, satisfiedConstitutions } from './proposal-state.js';

// ---------------------------------------------------------------------------------------------
// Guards
// ---------------------------------------------------------------------------------------------

export function existing(state: ProposalState, proposalId: string): Proposal {
  if (state.status === 'unsubmitted') throw new DomainError('not_found', `proposal ${proposalId} does not exist`, { proposalId });
  return state;
}

export function requireProposer(p: Proposal, context: CommandContext, toDo: string): void {
  if (context.actor === p.proposer) return;
  throw new DomainError('forbidden', `only the proposer ${p.proposer} may ${toDo} proposal ${p.proposalId}; ${context.actor} is not its proposer`, {
    proposalId: p.proposalId,
    proposer: p.proposer,
    actor: context.actor,
  });
}

export function refuseFinal(p: Proposal, toDo: string): void {
  if (!isFinal(p.status)) return;
  throw new DomainError('illegal_state', `cannot ${toDo}: proposal ${p.proposalId} is ${p.status}`, { proposalId: p.proposalId, status: p.status });
}

export function refuseEscalated(p: Proposal, toDo: string): void {
  if (p.status !== 'escalated') return;
  const pending = p.escalations.at(-1);
  throw new DomainError('illegal_state', `cannot ${toDo}: proposal ${p.proposalId} is escalated and waits for an operator's decision (escalation ${pending?.escalation ?? '?'})`, {
    proposalId: p.proposalId,
    status: p.status,
    escalation: pending?.escalation,
  });
}

// ---------------------------------------------------------------------------------------------
// Building a decision: events are applied to a working copy as they are emitted, so that later
// rules see the effect of earlier events of the same command.
// ---------------------------------------------------------------------------------------------

export class Decision {
  readonly events: ProposalEvent[] = [];
  constructor(public state: Proposal) {}
  emit(e: ProposalEvent): this {
    this.events.push(e);
    this.state = evolveProposal(this.state, e) as Proposal;
    return this;
  }
}

export function requestRound(d: Decision, reason: DataOf<typeof ReviewRoundRequested>['reason'], now: string): void {
  const s = d.state;
  d.emit(
    event('ReviewRoundRequested', {
      proposalId: s.proposalId,
      round: s.rounds.length + 1,
      revision: s.revision,
      reason,
      requiredConstitutions: [...s.rules.requiredConstitutions],
      exclude: [s.proposer],
      requestedAt: now,
    }),
  );
}

export function escalate(d: Decision, reason: DataOf<typeof ProposalEscalated>['reason'], round: number, uncovered: string[], now: string): void {
  const s = d.state;
  d.emit(
    event('ProposalEscalated', {
      proposalId: s.proposalId,
      escalation: s.escalations.length + 1,
      reason,
      revision: s.revision,
      round,
      contestedRounds: s.contestedRounds,
      openObjections: ids(openObjections(s)),
      uncovered,
      escalatedAt: now,
    }),
  );
}

export function approveByTribunal(d: Decision, round: ReviewRoundView, now: string): void {
  const s = d.state;
  d.emit(
    event('ProposalApproved', {
      proposalId: s.proposalId,
      revision: s.revision,
      round: round.round,
      decidedBy: 'tribunal',
      operator: null,
      satisfied: satisfiedConstitutions(s, round),
      deemed: round.reviews.filter((r) => r.deemed).map((r) => r.constitution),
      overriddenObjections: [],
      approvedAt: now,
    }),
  );
}

/** Closes a round and draws its consequence: approval, nothing (blocked), or escalation after too many contested rounds. */
export function closeRound(d: Decision, roundNumber: number, reason: DataOf<typeof ReviewRoundClosed>['reason'], now: string): void {
  const s = d.state;
  const round = s.rounds.find((r) => r.round === roundNumber)!;
  const open = ids(openObjections(s));
  const raised = s.objections.filter((o) => o.round === roundNumber).map((o) => o.objectionId);
  const satisfied = satisfiedConstitutions(s, round);
  const outcome =
    reason === 'revised' ? 'superseded' : reason === 'withdrawn' ? 'withdrawn' : open.length === 0 && satisfied.length === round.assignments.length ? 'approved' : 'blocked';
  const contested = (outcome === 'blocked' || outcome === 'superseded') && (raised.length > 0 || open.length > 0);
  d.emit(
    event('ReviewRoundClosed', {
      proposalId: s.proposalId,
      round: roundNumber,
      revision: round.revision,
      reason,
      outcome,
      satisfied,
      deemed: round.reviews.filter((r) => r.deemed).map((r) => r.constitution),
      raisedObjections: raised,
      openObjections: open,
      contested,
      closedAt: now,
    }),
  );
  if (outcome === 'approved') approveByTribunal(d, d.state.rounds.find((r) => r.round === roundNumber)!, now);
  else if (contested && d.state.contestedRounds >= d.state.rules.maxRoundsBeforeEscalation) escalate(d, 'deadlock', roundNumber, [], now);
}

// ---------------------------------------------------------------------------------------------
