// The proposal decider's types, and the readings of a proposal's state shared by its rules.
import type { DataOf, DecideEscalation, EscalationDecided, ExecutionRecorded, ExpireReviewRound, ObjectionView, ObjectionWithdrawn, OpenReviewRound, OutcomeReported, PayloadOf, ProceededDespiteObjections, ProposalApproved, ProposalEscalated, ProposalRecord, ProposalRejected, ProposalRevised, ProposalSubmitted, ProposalWithdrawn, ProposalToolCallReleased, ProposalToolCallResultRecorded, RecordExecution, RecordProposalToolCallResult, ReleaseProposalToolCall, ReportOutcome, ReviewDeemedApproved, ReviewRoundClosed, ReviewRoundOpened, ReviewRoundRequested, ReviewRoundView, ReviewSubmitted, ReviseProposal, SubmitProposal, SubmitReview, WithdrawObjection, WithdrawProposal } from '@agora/contracts';
import type { Command, DomainEvent } from '@agora/decider';

export type ProposalEvent =
  | DomainEvent<'ProposalSubmitted', DataOf<typeof ProposalSubmitted>>
  | DomainEvent<'ProposalRevised', DataOf<typeof ProposalRevised>>
  | DomainEvent<'ProposalWithdrawn', DataOf<typeof ProposalWithdrawn>>
  | DomainEvent<'ReviewRoundRequested', DataOf<typeof ReviewRoundRequested>>
  | DomainEvent<'ReviewRoundOpened', DataOf<typeof ReviewRoundOpened>>
  | DomainEvent<'ReviewSubmitted', DataOf<typeof ReviewSubmitted>>
  | DomainEvent<'ObjectionWithdrawn', DataOf<typeof ObjectionWithdrawn>>
  | DomainEvent<'ReviewDeemedApproved', DataOf<typeof ReviewDeemedApproved>>
  | DomainEvent<'ReviewRoundClosed', DataOf<typeof ReviewRoundClosed>>
  | DomainEvent<'ProposalApproved', DataOf<typeof ProposalApproved>>
  | DomainEvent<'ProposalRejected', DataOf<typeof ProposalRejected>>
  | DomainEvent<'ProposalEscalated', DataOf<typeof ProposalEscalated>>
  | DomainEvent<'EscalationDecided', DataOf<typeof EscalationDecided>>
  | DomainEvent<'ExecutionRecorded', DataOf<typeof ExecutionRecorded>>
  | DomainEvent<'ProceededDespiteObjections', DataOf<typeof ProceededDespiteObjections>>
  | DomainEvent<'OutcomeReported', DataOf<typeof OutcomeReported>>
  | DomainEvent<'ProposalToolCallReleased', DataOf<typeof ProposalToolCallReleased>>
  | DomainEvent<'ProposalToolCallResultRecorded', DataOf<typeof ProposalToolCallResultRecorded>>;

export type ProposalCommand =
  | Command<'SubmitProposal', PayloadOf<typeof SubmitProposal>>
  | Command<'ReviseProposal', PayloadOf<typeof ReviseProposal>>
  | Command<'WithdrawProposal', PayloadOf<typeof WithdrawProposal>>
  | Command<'RecordExecution', PayloadOf<typeof RecordExecution>>
  | Command<'ReportOutcome', PayloadOf<typeof ReportOutcome>>
  | Command<'ReleaseProposalToolCall', PayloadOf<typeof ReleaseProposalToolCall>>
  | Command<'RecordProposalToolCallResult', PayloadOf<typeof RecordProposalToolCallResult>>
  | Command<'OpenReviewRound', PayloadOf<typeof OpenReviewRound>>
  | Command<'SubmitReview', PayloadOf<typeof SubmitReview>>
  | Command<'WithdrawObjection', PayloadOf<typeof WithdrawObjection>>
  | Command<'ExpireReviewRound', PayloadOf<typeof ExpireReviewRound>>
  | Command<'DecideEscalation', PayloadOf<typeof DecideEscalation>>;

/** A proposal with its whole review history (the ProposalRecord contract: a read model can be this state). */
export type Proposal = ProposalRecord;
export type ProposalState = { status: 'unsubmitted' } | Proposal;

type EventType = ProposalEvent['type'];
type EventOf<T extends EventType> = Extract<ProposalEvent, { type: T }>;
export type CommandOf<T extends ProposalCommand['type']> = Extract<ProposalCommand, { type: T }>;

export const event = <T extends EventType>(type: T, data: EventOf<T>['data']): EventOf<T> => ({ type, data }) as EventOf<T>;

// ---------------------------------------------------------------------------------------------
// Reading the state
// ---------------------------------------------------------------------------------------------

export const isFinal = (status: string): boolean => status === 'approved' || status === 'rejected' || status === 'withdrawn';
export const openObjections = (p: Proposal): ObjectionView[] => p.objections.filter((o) => o.status === 'open');
export const openRound = (p: Proposal): ReviewRoundView | undefined => p.rounds.find((r) => r.status === 'open');
export const latestRound = (p: Proposal): ReviewRoundView | undefined => p.rounds.at(-1);

/** Assigned constitutions satisfied in a round: approved, deemed approved, or objected and withdrawn by the author. */
export function satisfiedConstitutions(p: Proposal, round: ReviewRoundView): string[] {
  return round.assignments
    .filter(({ constitution }) => {
      const review = round.reviews.find((r) => r.constitution === constitution);
      if (!review) return false;
      if (review.verdict === 'approve') return true;
      return p.objections.find((o) => o.objectionId === review.objectionId)?.status === 'withdrawn';
    })
    .map((a) => a.constitution);
}

/** `r<round>-<constitution>` */
export const objectionIdOf = (round: number, constitution: string): string => `r${round}-${constitution}`;

export const ids = (objections: readonly ObjectionView[]) => objections.map((o) => o.objectionId);
