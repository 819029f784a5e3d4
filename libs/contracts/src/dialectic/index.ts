/**
 * Circuit-breaker recovery by dialectic (seed 001): an agent whose risk crosses its threshold is
 * paused by the registry; a healthy reviewer, drawn at random weighted by authority, argues its
 * recovery with it (thesis, antithesis, synthesis rounds); both sign a resolution that passes the
 * hard limits, and the agent resumes under its conditions. Otherwise the recovery climbs the
 * escalation ladder: a third agent as tie-breaker, a five-validator quorum through the voting
 * service, and the strict default (the agent stays paused) with a human operator's signed decision.
 *
 * Two aggregates:
 * - the registry's `agent-<agentId>` stream holds the circuit breaker (the registry owns health and
 *   risk): ReportHealth records AgentHealthReported and, when the risk reaches the threshold,
 *   AgentPaused in the same decision, naming the recovery session. AgentResumed is recorded by the
 *   registry itself in answer to RecoveryResolved. The pure rules are in libs/domain-dialectic
 *   (`breakerDecision`, `resumeDecision`, `evolveBreaker`), for the registry decider to call.
 * - `dialectic_session-<sessionId>` holds one recovery: the request, the reviewer drawn (seed, draw,
 *   pool and exclusions recorded, so a replay never re-selects), the messages, the pending
 *   deadline, the escalations, the resolution with its signatures, and what happened after (a
 *   relapse, an audit). The session id is `<agentId>-p<pause>`: one session per pause.
 *
 * Flow
 *
 *   AgentPaused ─> (service) OpenRecovery with candidates ─> RecoveryOpened + ReviewerSelected
 *                                                         or NoCandidateEligible + RecoveryEscalated(operator)
 *   SubmitThesis (the paused agent) ─> ThesisSubmitted
 *   SubmitAntithesis (the reviewer) ─> AntithesisSubmitted
 *   SubmitSynthesis (round 1 the agent, round 2 the reviewer, and so on, at most maxSynthesisRounds)
 *       ─> SynthesisSubmitted; when both latest messages agree on the same root cause and
 *          conditions: ResolutionProposed (or ResolutionBlocked by the hard limits + escalation);
 *          after the last round without convergence: RecoveryEscalated(no_convergence)
 *   SignResolution (both parties) ─> ResolutionSigned, then RecoveryResolved with both signatures
 *   RecoveryResolved ─> (registry) AgentResumed; (service) AssignAuditor when the audit drew it
 *   ExpireDialecticPhase (scheduler, at `deadlineAt`) ─> DialecticPhaseExpired + RecoveryEscalated
 *   escalation: tie_break ─> AssignTieBreaker ─> TieBreakerSelected ─> RecordTieBreak
 *               quorum    ─> (service) CreateVotingSession ... ─> RecordQuorumResult
 *               operator  ─> DecideRecovery (signed by a human operator)
 *   AgentPaused again within relapseWindowMs ─> (service) RecordRelapse ─> RecoveryRelapsed
 */
import { contractsOf, queryOwner } from '../define.js';
import * as commands from './commands.js';
import * as events from './events.js';
import * as views from './views.js';

export * from './vocabulary.js';
export * from './policy.js';
export * from './commands.js';
export * from './events.js';
export * from './views.js';

/** Everything of the dialectic service, and the registry's breaker commands and events, for the catalog and the session decider. */
export const dialecticContracts = contractsOf(commands, events, views);
/** The commands the dialectic service serves (the breaker's are the registry's). */
export const dialecticCommands = dialecticContracts.commands.filter((c) => c.service === 'dialectic');
/** Answered by the dialectic service (from its sessions read model); the figures are the projections service's. */
export const dialecticServiceQueries = dialecticContracts.queries.filter((q) => queryOwner(q) === 'dialectic');
