/**
 * Proposals and their tribunal (seed 000, "Tribunal pattern"): an executive proposes a plan or a
 * frame; reviewers holding orthogonal constitutions (risk, premise, evidence, execution) challenge
 * it in time-boxed rounds; objections block until a revision answers them or their author withdraws
 * them, and are never outvoted; a deadlock goes to a human operator.
 *
 * One aggregate: the stream `proposal-<proposalId>` holds the proposal, its revisions, its review
 * rounds, objections and escalations, so every rule is decided atomically by one decider
 * (libs/domain-tribunal). Two services append to it: `proposal` (the executive's commands) and
 * `tribunal` (rounds, reviews, expiry, escalation decisions).
 *
 * Flow of a round: ProposalSubmitted / ProposalRevised / EscalationDecided(send_back) is followed by
 * ReviewRoundRequested; the tribunal service answers it with OpenReviewRound carrying the reviewer
 * candidates from the registry; the decider selects the reviewers and records them in
 * ReviewRoundOpened (with its `deadlineAt`), or escalates when fewer than `minConstitutions`
 * constitutions can be covered. Reviews (or ReviewDeemedApproved at the deadline) close the round:
 * ReviewRoundClosed, then ProposalApproved, nothing (blocked: the executive must revise), or
 * ProposalEscalated after too many contested rounds.
 *
 * After execution (RecordExecution), the proposer or an operator reports once whether it worked or
 * failed (ReportOutcome ─> OutcomeReported); the calibration figures (GetReviewerCalibration) compare
 * each reviewer's verdicts with those outcomes.
 */
import { SubmitProposal, ReviseProposal, WithdrawProposal, RecordExecution, ReportOutcome, ReleaseProposalToolCall, RecordProposalToolCallResult } from './tribunal-proposal-commands.js';
import { OpenReviewRound, SubmitReview, WithdrawObjection, ExpireReviewRound, DecideEscalation } from './tribunal-review-commands.js';
import {
  ProposalSubmitted,
  ProposalRevised,
  ProposalWithdrawn,
  ReviewRoundRequested,
  ReviewRoundOpened,
  ReviewSubmitted,
  ObjectionWithdrawn,
  ReviewDeemedApproved,
  ReviewRoundClosed,
  ProposalApproved,
  ProposalRejected,
  ProposalEscalated,
  EscalationDecided,
  ExecutionRecorded,
  ProceededDespiteObjections,
  OutcomeReported,
  ProposalToolCallReleased,
  ProposalToolCallResultRecorded,
} from './tribunal-events.js';
import { GetProposal, ListProposals, ListAssignments, GetTribunalStats, ListUnderCoveredProposals } from './tribunal-views.js';
import { GetReviewerCalibration } from './tribunal-calibration.js';

export * from './tribunal-policy.js';
export * from './tribunal-proposal-commands.js';
export * from './tribunal-review-commands.js';
export * from './tribunal-events.js';
export * from './tribunal-views.js';
export * from './tribunal-calibration.js';

export const proposalCommands = [SubmitProposal, ReviseProposal, WithdrawProposal, RecordExecution, ReportOutcome, ReleaseProposalToolCall, RecordProposalToolCallResult] as const;
export const tribunalCommands = [OpenReviewRound, SubmitReview, WithdrawObjection, ExpireReviewRound, DecideEscalation] as const;
export const tribunalEvents = [
  ProposalSubmitted,
  ProposalRevised,
  ProposalWithdrawn,
  ReviewRoundRequested,
  ReviewRoundOpened,
  ReviewSubmitted,
  ObjectionWithdrawn,
  ReviewDeemedApproved,
  ReviewRoundClosed,
  ProposalApproved,
  ProposalRejected,
  ProposalEscalated,
  EscalationDecided,
  ExecutionRecorded,
  ProceededDespiteObjections,
  OutcomeReported,
  ProposalToolCallReleased,
  ProposalToolCallResultRecorded,
] as const;
export const tribunalQueries = [GetProposal, ListProposals, ListAssignments, GetTribunalStats, ListUnderCoveredProposals, GetReviewerCalibration] as const;

/** Everything of the proposal and tribunal services, for the catalog. */
export const tribunalContracts = {
  commands: [...proposalCommands, ...tribunalCommands],
  events: tribunalEvents,
  queries: tribunalQueries,
} as const;
