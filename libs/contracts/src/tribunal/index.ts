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
import { contractsOf } from '../define.js';
import * as calibration from './calibration.js';
import * as events from './events.js';
import * as proposalCommands from './proposal-commands.js';
import * as reviewCommands from './review-commands.js';
import * as views from './views.js';

export * from './policy.js';
export * from './proposal-commands.js';
export * from './review-commands.js';
export * from './events.js';
export * from './views.js';
export * from './calibration.js';

/** Everything of the proposal and tribunal services (one aggregate, `proposal-<proposalId>`), for the catalog and the proposal decider. */
export const tribunalContracts = contractsOf(proposalCommands, reviewCommands, events, views, calibration);
/** The commands the tribunal service serves (rounds, reviews, expiry, escalation decisions). */
export const tribunalCommands = tribunalContracts.commands.filter((c) => c.service === 'tribunal');
