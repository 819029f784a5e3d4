// The proposal decider's types, and the readings of a proposal's state shared by its rules.
import type { ObjectionView, ProposalRecord, ReviewRoundView, tribunalContracts } from '@agora/contracts';
import { type CommandsOf, eventConstructor, type EventsOf, type OfType } from '@agora/decider';

/** The proposal's events and commands (the proposal and tribunal services' alike), from the tribunal contracts. */
export type ProposalEvent = EventsOf<(typeof tribunalContracts.events)[number]>;
export type ProposalCommand = CommandsOf<(typeof tribunalContracts.commands)[number]>;

/** A proposal with its whole review history (the ProposalRecord contract: a read model can be this state). */
export type Proposal = ProposalRecord;
export type ProposalState = { status: 'unsubmitted' } | Proposal;

export type CommandOf<T extends ProposalCommand['type']> = OfType<ProposalCommand, T>;
export const event = eventConstructor<ProposalEvent>();

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
