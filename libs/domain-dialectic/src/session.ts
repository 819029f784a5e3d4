/**
 * The recovery session decider: one aggregate, the stream `dialectic_session-<sessionId>`, holds a
 * paused agent's recovery (seed 001), so every rule of the dialectic is decided atomically here.
 *
 * Lifecycle
 *
 *   OpenRecovery (service, on AgentPaused) ─> RecoveryOpened + ReviewerSelected (seed, draw, pool)
 *                                          or NoCandidateEligible + RecoveryEscalated(operator)
 *   SubmitThesis (the paused agent)  ─> ThesisSubmitted           awaiting_thesis ─> awaiting_antithesis
 *   SubmitAntithesis (the reviewer)  ─> AntithesisSubmitted       ─> synthesis
 *   SubmitSynthesis (agent on odd rounds, reviewer on even ones) ─> SynthesisSubmitted, then
 *       converged ─> ResolutionProposed (awaiting_signatures)
 *                    or ResolutionBlocked + RecoveryEscalated(operator) when it breaks a hard limit
 *       last round, not converged ─> RecoveryEscalated(no_convergence)
 *   SignResolution (each party) ─> ResolutionSigned; the second ─> RecoveryResolved (resolved)
 *   ExpireDialecticPhase (at deadlineAt) ─> DialecticPhaseExpired + RecoveryEscalated
 *   EscalateRecovery (a party, or an operator) ─> RecoveryEscalated
 *   The ladder, climbing only, each tier an event, tiers 1 and 2 as the rules enable them:
 *     tie_break: AssignTieBreaker ─> TieBreakerSelected; RecordTieBreak ─> TieBreakRecorded, then
 *                RecoveryResolved on the side's latest position, or the next tier
 *     quorum:    the service runs a voting session on `proposal`; RecordQuorumResult ─>
 *                QuorumResultRecorded, then RecoveryResolved or the operator tier
 *     operator:  no deadline, the agent stays paused; DecideRecovery ─> RecoveryDecided, then
 *                RecoveryResolved (resume) or stayed_paused
 *   RecordRelapse ─> RecoveryRelapsed (the resumed agent paused again within relapseWindowMs)
 *   RecoveryResolved with audit.sampled ─> AssignAuditor ─> AuditorAssigned; SubmitAudit ─> AuditSubmitted
 *
 * Rules worth knowing
 * - Identity first: only the paused agent submits the thesis, only its reviewer the antithesis,
 *   only those two the synthesis and the signatures (forbidden otherwise); then the phase and the
 *   turn (illegal_state): a refused command writes nothing.
 * - A tier is entered only when it can do something: the tie-breaker needs a position to side
 *   with, the quorum a position that passes the hard limits to vote on. A resolution that breaks a
 *   hard limit goes straight to an operator. The operator tier is always there: the strict default.
 * - Every phase has a deadline (capped by the session limit during the dialectic); the session
 *   keeps one pending deadline, recorded in the event that opened the phase.
 * - Time comes from context.now only; draws from the session's seed only. A repeated command that
 *   is already satisfied returns [].
 */
import type { Decider } from '@agora/decider';
import { DEFAULT_DIALECTIC_POLICY, type DialecticPolicy } from './policy.js';
import { antithesis, open, signResolution, synthesis, thesis } from './session-dialectic.js';
import { assignAuditor, assignTieBreaker, decideRecovery, escalateRecovery, expire, recordQuorumResult, recordRelapse, recordTieBreak, submitAudit } from './session-escalation.js';
import { evolveSession } from './session-evolve.js';
import type { DialecticCommand, DialecticEvent, DialecticSessionState } from './session-state.js';

export type { DialecticCommand, DialecticEvent, DialecticSession, DialecticSessionState } from './session-state.js';
export { highestTier, inDialectic, isClosed, latestPosition, partyOf, pendingEscalation, quorumProposal, turnOf } from './session-state.js';
export { evolveSession } from './session-evolve.js';

// ---------------------------------------------------------------------------------------------
// The decider
// ---------------------------------------------------------------------------------------------

/**
 * The recovery session decider under a dialectic policy. The policy is read only by OpenRecovery,
 * which records it in RecoveryOpened (`rules`); every other decision reads the session's own rules.
 */
export function createDialecticDecider(policy: DialecticPolicy = DEFAULT_DIALECTIC_POLICY): Decider<DialecticCommand, DialecticEvent, DialecticSessionState> {
  return {
    initialState: () => ({ status: 'unopened' }),
    evolve: evolveSession,
    decide(command, state) {
      switch (command.type) {
        case 'OpenRecovery':
          return open(command, state, policy);
        case 'SubmitThesis':
          return thesis(command, state);
        case 'SubmitAntithesis':
          return antithesis(command, state);
        case 'SubmitSynthesis':
          return synthesis(command, state);
        case 'SignResolution':
          return signResolution(command, state);
        case 'ExpireDialecticPhase':
          return expire(command, state);
        case 'EscalateRecovery':
          return escalateRecovery(command, state);
        case 'AssignTieBreaker':
          return assignTieBreaker(command, state);
        case 'RecordTieBreak':
          return recordTieBreak(command, state);
        case 'RecordQuorumResult':
          return recordQuorumResult(command, state);
        case 'DecideRecovery':
          return decideRecovery(command, state);
        case 'RecordRelapse':
          return recordRelapse(command, state);
        case 'AssignAuditor':
          return assignAuditor(command, state);
        case 'SubmitAudit':
          return submitAudit(command, state);
      }
    },
  };
}

/** The recovery session decider under the default dialectic policy. */
export const dialecticDecider = createDialecticDecider();
