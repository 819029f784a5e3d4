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
import { ReportHealth, ResumeAgent, OpenRecovery, SubmitThesis, SubmitAntithesis, SubmitSynthesis, SignResolution, ExpireDialecticPhase, EscalateRecovery, AssignTieBreaker, RecordTieBreak, RecordQuorumResult, DecideRecovery, RecordRelapse, AssignAuditor, SubmitAudit } from './dialectic-commands.js';
import {
  AgentHealthReported,
  AgentPaused,
  AgentResumed,
  RecoveryOpened,
  ReviewerSelected,
  NoCandidateEligible,
  ThesisSubmitted,
  AntithesisSubmitted,
  SynthesisSubmitted,
  ResolutionProposed,
  ResolutionBlocked,
  ResolutionSigned,
  RecoveryResolved,
  DialecticPhaseExpired,
  RecoveryEscalated,
  TieBreakerSelected,
  TieBreakRecorded,
  QuorumResultRecorded,
  RecoveryDecided,
  RecoveryRelapsed,
  AuditorAssigned,
  AuditSubmitted,
} from './dialectic-events.js';
import { GetDialecticSession, ListDialecticSessions, GetDialecticStats, ListCollusionFlags } from './dialectic-views.js';

export * from './dialectic-vocabulary.js';
export * from './dialectic-policy.js';
export * from './dialectic-commands.js';
export * from './dialectic-events.js';
export * from './dialectic-views.js';

/** The registry's circuit-breaker commands, served by the registry (its agent decider calls breakerDecision). */
export const breakerCommands = [ReportHealth, ResumeAgent] as const;
export const breakerEvents = [AgentHealthReported, AgentPaused, AgentResumed] as const;

export const dialecticCommands = [
  OpenRecovery,
  SubmitThesis,
  SubmitAntithesis,
  SubmitSynthesis,
  SignResolution,
  ExpireDialecticPhase,
  EscalateRecovery,
  AssignTieBreaker,
  RecordTieBreak,
  RecordQuorumResult,
  DecideRecovery,
  RecordRelapse,
  AssignAuditor,
  SubmitAudit,
] as const;
export const dialecticEvents = [
  RecoveryOpened,
  ReviewerSelected,
  NoCandidateEligible,
  ThesisSubmitted,
  AntithesisSubmitted,
  SynthesisSubmitted,
  ResolutionProposed,
  ResolutionBlocked,
  ResolutionSigned,
  RecoveryResolved,
  DialecticPhaseExpired,
  RecoveryEscalated,
  TieBreakerSelected,
  TieBreakRecorded,
  QuorumResultRecorded,
  RecoveryDecided,
  RecoveryRelapsed,
  AuditorAssigned,
  AuditSubmitted,
] as const;
/** Answered by the dialectic service (from its sessions read model). */
export const dialecticServiceQueries = [GetDialecticSession, ListDialecticSessions] as const;
/** Answered by the projections service (from its dialectic read model, the same figures as its metrics). */
export const dialecticProjectionQueries = [GetDialecticStats, ListCollusionFlags] as const;
export const dialecticQueries = [...dialecticServiceQueries, ...dialecticProjectionQueries] as const;

/** Everything of the dialectic service, and the registry's breaker command and events, for the catalog. */
export const dialecticContracts = {
  commands: [...breakerCommands, ...dialecticCommands],
  events: [...breakerEvents, ...dialecticEvents],
  queries: dialecticQueries,
} as const;
