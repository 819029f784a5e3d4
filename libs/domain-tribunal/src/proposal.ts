/**
 * The proposal decider: one aggregate, the stream `proposal-<proposalId>`, holds a proposal, its
 * revisions, its review rounds, the objections and the escalations, so every rule of the tribunal
 * (seed 000) is decided atomically here. Both services append to it: `proposal` (SubmitProposal,
 * ReviseProposal, WithdrawProposal, RecordExecution, ReportOutcome) and `tribunal` (OpenReviewRound, SubmitReview,
 * WithdrawObjection, ExpireReviewRound, DecideEscalation).
 *
 * Lifecycle
 *
 *   SubmitProposal ─> ProposalSubmitted (rules resolved from the policy) + ReviewRoundRequested
 *   OpenReviewRound (candidates from the registry) ─> ReviewRoundOpened (assignments, deadlineAt)
 *                                                  or ProposalEscalated(insufficient_coverage)
 *   SubmitReview ─> ReviewSubmitted; the last one closes the round
 *   ExpireReviewRound (at deadlineAt) ─> ReviewDeemedApproved per silent reviewer, round closes
 *   round closes ─> ReviewRoundClosed, then
 *       no open objection ─> ProposalApproved
 *       open objections   ─> blocked: the proposer revises (ReviseProposal ─> new round) or the
 *                            authors withdraw them; after `maxRoundsBeforeEscalation` contested
 *                            rounds ─> ProposalEscalated(deadlock)
 *   DecideEscalation (operator) ─> EscalationDecided + ProposalApproved | ProposalRejected |
 *                                  ReviewRoundRequested (send_back)
 *   RecordExecution ─> ExecutionRecorded (+ ProceededDespiteObjections unless approved)
 *   ReportOutcome (proposer or operator, after execution, once) ─> OutcomeReported (worked | failed)
 *   A proposal submitted for a governed tool call (`toolCall`: the call's digest), once approved:
 *   ReleaseProposalToolCall ─> ProposalToolCallReleased (once, the digest must match), then
 *   RecordProposalToolCallResult ─> ProposalToolCallResultRecorded (the outcome and the result's digest)
 *
 * Rules worth knowing
 * - Objections are never outvoted: one open objection blocks approval, whatever the others say. An
 *   objection is resolved only by a revision that names it in `answers`, or by its author
 *   withdrawing it (or overridden by an operator approving an escalated proposal).
 * - A constitution is satisfied in a round by an approval, a deemed approval (silence at the
 *   deadline), or an objection its author withdrew.
 * - A round is contested when it closes without approval while objections were raised in it or
 *   remain open (a round superseded by a revision after drawing objections counts: revising on
 *   every objection cannot loop forever). Contested rounds count towards escalation; an operator's
 *   send_back resets the count.
 * - Roles are checked here as well as by the service (context.actorRoles): executive to propose,
 *   reviewer to review, operator to open or expire rounds and to decide escalations.
 * - Time comes from context.now only. A repeated command that is already satisfied returns [].
 */
import type { Decider } from '@agora/decider';
import { DEFAULT_TRIBUNAL_POLICY, type TribunalPolicy } from './policy.js';
import { decideEscalation, recordExecution, reportOutcome } from './proposal-escalation.js';
import { evolveProposal } from './proposal-evolve.js';
import { expireReviewRound, openReviewRound, submitReview, withdrawObjection } from './proposal-review.js';
import type { ProposalCommand, ProposalEvent, ProposalState } from './proposal-state.js';
import { recordToolCallResult, releaseToolCall, revise, submit, withdraw } from './proposal-submission.js';

export type { Proposal, ProposalCommand, ProposalEvent, ProposalState } from './proposal-state.js';
export { isFinal, latestRound, objectionIdOf, openObjections, openRound, satisfiedConstitutions } from './proposal-state.js';
export { evolveProposal } from './proposal-evolve.js';


// ---------------------------------------------------------------------------------------------
// The decider
// ---------------------------------------------------------------------------------------------

/**
 * The proposal decider under a tribunal policy. The policy is read only by SubmitProposal, which
 * records the resolved rules in ProposalSubmitted; every other decision reads the proposal's own rules.
 */
export function createProposalDecider(policy: TribunalPolicy = DEFAULT_TRIBUNAL_POLICY): Decider<ProposalCommand, ProposalEvent, ProposalState> {
  return {
    initialState: () => ({ status: 'unsubmitted' }),
    evolve: evolveProposal,
    decide(command, state) {
      switch (command.type) {
        case 'SubmitProposal':
          return submit(command, state, policy);
        case 'ReviseProposal':
          return revise(command, state);
        case 'WithdrawProposal':
          return withdraw(command, state);
        case 'RecordExecution':
          return recordExecution(command, state);
        case 'ReportOutcome':
          return reportOutcome(command, state);
        case 'ReleaseProposalToolCall':
          return releaseToolCall(command, state);
        case 'RecordProposalToolCallResult':
          return recordToolCallResult(command, state);
        case 'OpenReviewRound':
          return openReviewRound(command, state);
        case 'SubmitReview':
          return submitReview(command, state);
        case 'WithdrawObjection':
          return withdrawObjection(command, state);
        case 'ExpireReviewRound':
          return expireReviewRound(command, state);
        case 'DecideEscalation':
          return decideEscalation(command, state);
      }
    },
  };
}

/** The proposal decider under the default tribunal policy. */
export const proposalDecider = createProposalDecider();
