// Dialectic contracts: the events, of the registry's circuit breaker and of the recovery sessions.
import { z } from 'zod';
import { AgentId, EntityId, PublicKeyText, Timestamp } from '../common.js';
import { defineEvent } from '../define.js';
import { EventCause, PreviousResume, Unit } from '../registry/agents.js';
import { QuorumDecision } from './commands.js';
import { session } from './fields.js';
import { DialecticRules } from './policy.js';
import { Condition, DecidedBy, DIALECTIC_SESSION_CATEGORY, DialecticStatus, Ed25519Signature, EnforcedConditions, EscalationTier, HardLimitViolation, IssueTag, Party, Position, RecoveryEscalationReason, ResolutionPayload, ResolutionSignatureView, RiskThreshold, SelectionRecord } from './vocabulary.js';

// ---------------------------------------------------------------------------------------------
// Events: registry (category `agent`, stream `agent-<agentId>`)
// ---------------------------------------------------------------------------------------------

export const AgentHealthReported = defineEvent({
  type: 'AgentHealthReported',
  category: 'agent',
  summary: "An agent's health and risk as reported (they become its current health and risk)",
  data: z.object({
    agentId: AgentId,
    health: Unit,
    risk: Unit,
    tags: z.array(IssueTag),
    metrics: z.record(z.string(), z.number()),
    note: z.string().nullable(),
    reportedBy: AgentId,
    reportedAt: Timestamp,
  }),
});

export const AgentPaused = defineEvent({
  type: 'AgentPaused',
  category: 'agent',
  summary:
    "The agent's circuit breaker tripped: its risk reached its threshold. Its commands to other services are refused (forbidden) until AgentResumed; the dialectic service opens the recovery session `sessionId`",
  data: z.object({
    agentId: AgentId,
    pause: z.number().int().min(1).describe('1 for its first pause'),
    sessionId: EntityId.describe('The recovery session: `<agentId>-p<pause>`'),
    risk: Unit,
    health: Unit,
    threshold: RiskThreshold.describe('The threshold in force'),
    tags: z.array(IssueTag),
    reason: z.string(),
    previousResume: PreviousResume.nullable().describe('The last time it resumed (a relapse when recent)'),
    pausedAt: Timestamp,
  }),
});

export const AgentResumed = defineEvent({
  type: 'AgentResumed',
  category: 'agent',
  summary: 'The agent resumed under the conditions of its recovery (recorded by the registry in answer to RecoveryResolved); `riskThreshold` is its threshold from now on',
  data: z.object({
    agentId: AgentId,
    pause: z.number().int().min(1),
    sessionId: EntityId,
    decidedBy: DecidedBy,
    conditions: z.array(Condition),
    riskThreshold: RiskThreshold.nullable().describe("The agent's own threshold from now on; null: the policy's"),
    cause: EventCause,
    resumedAt: Timestamp,
    enforced: EnforcedConditions.optional().describe('What Agora enforces of the conditions from now on (absent in events recorded before it did)'),
    obligations: z.array(Condition).default([]).describe("The conditions Agora does not enforce itself: announced to the agent and its operators as obligations"),
  }),
});

// ---------------------------------------------------------------------------------------------
// Events: dialectic (category `dialectic_session`, stream `dialectic_session-<sessionId>`)
// Events that open a phase carry its `deadlineAt` (null: no deadline); the scheduler keeps one
// pending deadline per session.
// ---------------------------------------------------------------------------------------------

export const RecoveryOpened = defineEvent({
  type: 'RecoveryOpened',
  category: DIALECTIC_SESSION_CATEGORY,
  summary: 'A recovery session opened for a pause; `rules` decide it; `sessionDeadlineAt` caps the dialectic',
  data: z.object({
    ...session,
    agentId: AgentId,
    pause: z.number().int().min(1),
    reason: z.string(),
    trigger: z.object({ risk: Unit, health: Unit, threshold: RiskThreshold }),
    tags: z.array(IssueTag),
    rules: DialecticRules,
    seed: z.number().int().min(0).max(0xffffffff),
    pausedAt: Timestamp,
    openedAt: Timestamp,
    sessionDeadlineAt: Timestamp,
  }),
});

export const ReviewerSelected = defineEvent({
  type: 'ReviewerSelected',
  category: DIALECTIC_SESSION_CATEGORY,
  summary: 'The reviewer was drawn at random from the healthy pool, weighted by authority; the draw is recorded so a replay never re-selects. The paused agent has until `deadlineAt` for its thesis',
  data: z.object({ ...session, reviewer: AgentId, selection: SelectionRecord, selectedAt: Timestamp, deadlineAt: Timestamp }),
});

export const NoCandidateEligible = defineEvent({
  type: 'NoCandidateEligible',
  category: DIALECTIC_SESSION_CATEGORY,
  summary: 'Nobody could be drawn (reviewer, tie-breaker or auditor): every candidate was excluded',
  data: z.object({ ...session, purpose: z.enum(['reviewer', 'tie_breaker', 'auditor']), selection: SelectionRecord, at: Timestamp }),
});

const messageBase = {
  ...session,
  author: AgentId,
  reasoning: z.string(),
  violations: z.array(HardLimitViolation).describe('Hard limits the proposed conditions would break (recorded, not refused: only a resolution is blocked)'),
  submittedAt: Timestamp,
};

export const ThesisSubmitted = defineEvent({
  type: 'ThesisSubmitted',
  category: DIALECTIC_SESSION_CATEGORY,
  summary: "The paused agent's thesis; the reviewer has until `deadlineAt` for its antithesis",
  data: z.object({ ...messageBase, rootCause: z.string(), conditions: z.array(Condition), deadlineAt: Timestamp }),
});

export const AntithesisSubmitted = defineEvent({
  type: 'AntithesisSubmitted',
  category: DIALECTIC_SESSION_CATEGORY,
  summary: "The reviewer's antithesis; synthesis round 1 (the paused agent's) is due at `deadlineAt`",
  data: z.object({
    ...messageBase,
    observedMetrics: z.record(z.string(), z.number()),
    concerns: z.array(z.string()),
    counterProposal: Position.nullable(),
    deadlineAt: Timestamp,
  }),
});

export const SynthesisSubmitted = defineEvent({
  type: 'SynthesisSubmitted',
  category: DIALECTIC_SESSION_CATEGORY,
  summary: 'A synthesis round; `deadlineAt` is the next round\'s deadline, null when this message ended the synthesis (converged, or the last round)',
  data: z.object({
    ...messageBase,
    round: z.number().int().min(1),
    party: Party,
    rootCause: z.string(),
    conditions: z.array(Condition),
    agrees: z.boolean(),
    deadlineAt: Timestamp.nullable(),
  }),
});

export const ResolutionProposed = defineEvent({
  type: 'ResolutionProposed',
  category: DIALECTIC_SESSION_CATEGORY,
  summary: 'The parties converged and the resolution passed the hard limits: both must sign its payload by `deadlineAt`',
  data: z.object({ ...session, resolution: ResolutionPayload, digest: z.string().describe('sha256 (hex) of the canonical payload, for display'), proposedAt: Timestamp, deadlineAt: Timestamp }),
});

export const ResolutionBlocked = defineEvent({
  type: 'ResolutionBlocked',
  category: DIALECTIC_SESSION_CATEGORY,
  summary: 'A resolution broke the hard limits: blocked and logged, the agent stays paused (an operator decides next)',
  data: z.object({ ...session, resolution: ResolutionPayload, violations: z.array(HardLimitViolation).min(1), blockedAt: Timestamp }),
});

export const ResolutionSigned = defineEvent({
  type: 'ResolutionSigned',
  category: DIALECTIC_SESSION_CATEGORY,
  summary: "A party's signature of the proposed resolution, verified under the key it names",
  data: z.object({ ...session, signer: AgentId, party: Party, publicKey: PublicKeyText, signature: Ed25519Signature, signedAt: Timestamp }),
});

export const AuditDraw = z.object({ rate: Unit, draw: z.number().min(0).max(1), sampled: z.boolean().describe('draw < rate: a second reviewer audits it') });

export const RecoveryResolved = defineEvent({
  type: 'RecoveryResolved',
  category: DIALECTIC_SESSION_CATEGORY,
  summary:
    "The recovery is settled: the agent resumes under the resolution (the registry records AgentResumed). `signatures` verify the payload (both parties, or the tie-breaker, or the operator; none for a quorum, whose votes are signed in the voting session)",
  data: z.object({
    ...session,
    agentId: AgentId,
    pause: z.number().int().min(1),
    resolution: ResolutionPayload,
    signatures: z.array(ResolutionSignatureView),
    riskThreshold: RiskThreshold.nullable().describe('The threshold a set_risk_threshold condition gives the agent; null: unchanged'),
    audit: AuditDraw,
    resolvedAt: Timestamp,
  }),
});

export const DialecticPhaseExpired = defineEvent({
  type: 'DialecticPhaseExpired',
  category: DIALECTIC_SESSION_CATEGORY,
  summary: 'A deadline passed: `late` are who was due (the party, the parties that had not signed, the tie-breaker); RecoveryEscalated follows',
  data: z.object({ ...session, status: DialecticStatus, late: z.array(AgentId), sessionLimit: z.boolean().describe('The session limit, not the phase deadline'), deadlineAt: Timestamp, expiredAt: Timestamp }),
});

export const RecoveryEscalated = defineEvent({
  type: 'RecoveryEscalated',
  category: DIALECTIC_SESSION_CATEGORY,
  summary:
    'The recovery climbed the ladder to `tier`. tie_break: the service answers with AssignTieBreaker; quorum: the service creates the voting session `votingSessionId` on `proposal`; operator: the agent stays paused until DecideRecovery (no deadline)',
  data: z.object({
    ...session,
    escalation: z.number().int().min(1).describe('1 for the first escalation of this session'),
    tier: EscalationTier,
    reason: RecoveryEscalationReason,
    requestedBy: AgentId.nullable().describe('requested: who asked'),
    note: z.string().nullable(),
    proposal: Position.nullable().describe('quorum: the position put to the vote'),
    votingSessionId: EntityId.nullable().describe('quorum: the voting session (its request id) to create'),
    quorumSize: z.number().int().min(3).nullable(),
    escalatedAt: Timestamp,
    deadlineAt: Timestamp.nullable(),
  }),
});

export const TieBreakerSelected = defineEvent({
  type: 'TieBreakerSelected',
  category: DIALECTIC_SESSION_CATEGORY,
  summary: 'The tie-breaker was drawn like the reviewer (the parties excluded); the draw is recorded',
  data: z.object({ ...session, escalation: z.number().int().min(1), tieBreaker: AgentId, selection: SelectionRecord, selectedAt: Timestamp }),
});

export const TieBreakRecorded = defineEvent({
  type: 'TieBreakRecorded',
  category: DIALECTIC_SESSION_CATEGORY,
  summary: "The tie-breaker's decision; siding with a party resolves the recovery on that party's latest position (unless the hard limits block it), neither climbs the ladder",
  data: z.object({
    ...session,
    escalation: z.number().int().min(1),
    tieBreaker: AgentId,
    side: z.enum(['agent', 'reviewer', 'neither']),
    reasoning: z.string(),
    decidedAt: Timestamp,
  }),
});

export const QuorumResultRecorded = defineEvent({
  type: 'QuorumResultRecorded',
  category: DIALECTIC_SESSION_CATEGORY,
  summary: "The quorum's voting session ended; approved (with at least quorumSize votes) resolves on the proposal, anything else goes to an operator",
  data: z.object({
    ...session,
    escalation: z.number().int().min(1),
    votingSessionId: EntityId,
    decision: QuorumDecision,
    votes: z.number().int().min(0),
    approve: z.number().int().min(0),
    deny: z.number().int().min(0),
    approved: z.boolean(),
    reason: z.string(),
    recordedAt: Timestamp,
  }),
});

export const RecoveryDecided = defineEvent({
  type: 'RecoveryDecided',
  category: DIALECTIC_SESSION_CATEGORY,
  summary: "A human operator's decision: resume (RecoveryResolved follows, unless the hard limits block it) or stay paused",
  data: z.object({ ...session, escalation: z.number().int().min(1).nullable(), operator: AgentId, decision: z.enum(['resume', 'stay_paused']), reasoning: z.string(), decidedAt: Timestamp }),
});

export const RecoveryRelapsed = defineEvent({
  type: 'RecoveryRelapsed',
  category: DIALECTIC_SESSION_CATEGORY,
  summary: 'The agent this session resumed paused again within the relapse window: a repeat failure',
  data: z.object({ ...session, agentId: AgentId, pause: z.number().int().min(2), risk: Unit, resumedAt: Timestamp, relapsedAt: Timestamp, afterMs: z.number().int().min(0) }),
});

export const AuditorAssigned = defineEvent({
  type: 'AuditorAssigned',
  category: DIALECTIC_SESSION_CATEGORY,
  summary: 'A second reviewer was drawn to audit the resolution (the parties and the deciders excluded)',
  data: z.object({ ...session, auditor: AgentId, selection: SelectionRecord, assignedAt: Timestamp }),
});

export const AuditSubmitted = defineEvent({
  type: 'AuditSubmitted',
  category: DIALECTIC_SESSION_CATEGORY,
  summary: "The auditor's verdict on the resolution",
  data: z.object({ ...session, auditor: AgentId, verdict: z.enum(['sound', 'unsound']), reasoning: z.string(), submittedAt: Timestamp }),
});
