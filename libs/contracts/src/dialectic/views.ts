// Dialectic contracts: the read model (the session record and its views), the statistics and the queries.
import { z } from 'zod';
import { AgentId, EntityId, Timestamp } from '../common.js';
import { NextCursor, pageParams } from '../paging.js';
import { access, defineQuery } from '../define.js';
import { Unit } from '../registry/agents.js';
import { QuorumDecision } from './commands.js';
import { AuditDraw } from './events.js';
import { DialecticRules } from './policy.js';
import { Condition, DecidedBy, DialecticStatus, EscalationTier, HardLimitViolation, IssueTag, Party, Position, RecoveryEscalationReason, ResolutionPayload, ResolutionSignatureView, RiskThreshold, SelectionRecord } from './vocabulary.js';

// ---------------------------------------------------------------------------------------------
// Read model (the session decider's state is this record)
// ---------------------------------------------------------------------------------------------

export const DialecticMessageView = z.object({
  kind: z.enum(['thesis', 'antithesis', 'synthesis']),
  round: z.number().int().min(1).nullable().describe('synthesis: its round'),
  author: AgentId,
  party: Party,
  rootCause: z.string().nullable().describe('null: an antithesis without a counter-proposal'),
  conditions: z.array(Condition).nullable(),
  reasoning: z.string(),
  observedMetrics: z.record(z.string(), z.number()).nullable(),
  concerns: z.array(z.string()).nullable(),
  agrees: z.boolean().nullable().describe('synthesis only'),
  violations: z.array(HardLimitViolation),
  at: Timestamp,
});
export type DialecticMessageView = z.infer<typeof DialecticMessageView>;

export const ProposedResolutionView = z.object({
  payload: ResolutionPayload,
  digest: z.string(),
  proposedAt: Timestamp,
  signatures: z.array(ResolutionSignatureView),
});

export const EscalationView = z.object({
  escalation: z.number().int().min(1),
  tier: EscalationTier,
  reason: RecoveryEscalationReason,
  requestedBy: AgentId.nullable(),
  note: z.string().nullable(),
  escalatedAt: Timestamp,
  deadlineAt: Timestamp.nullable(),
  proposal: Position.nullable(),
  votingSessionId: EntityId.nullable(),
  quorumSize: z.number().int().nullable(),
  tieBreaker: AgentId.nullable(),
  tieBreakerSelection: SelectionRecord.nullable(),
  tieBreak: z.object({ side: z.enum(['agent', 'reviewer', 'neither']), reasoning: z.string(), decidedAt: Timestamp }).nullable(),
  quorumResult: z
    .object({ decision: QuorumDecision, votes: z.number().int().min(0), approve: z.number().int().min(0), deny: z.number().int().min(0), approved: z.boolean(), reason: z.string(), recordedAt: Timestamp })
    .nullable(),
  outcome: z
    .enum(['resolved', 'blocked', 'declined', 'not_approved', 'expired', 'no_candidate', 'superseded', 'stayed_paused'])
    .nullable()
    .describe('null while it waits; superseded: someone escalated past it'),
  outcomeAt: Timestamp.nullable(),
});
export type EscalationView = z.infer<typeof EscalationView>;

export const ExpiryView = z.object({ status: DialecticStatus, late: z.array(AgentId), sessionLimit: z.boolean(), deadlineAt: Timestamp, expiredAt: Timestamp });

export const BlockedResolutionView = z.object({ resolution: ResolutionPayload, violations: z.array(HardLimitViolation), blockedAt: Timestamp });

export const ResolvedView = z.object({
  resolution: ResolutionPayload,
  signatures: z.array(ResolutionSignatureView),
  riskThreshold: RiskThreshold.nullable(),
  audit: AuditDraw,
  resolvedAt: Timestamp,
});

export const AuditView = z.object({
  auditor: AgentId.nullable(),
  selection: SelectionRecord.nullable(),
  noCandidate: z.boolean(),
  verdict: z.enum(['sound', 'unsound']).nullable(),
  reasoning: z.string().nullable(),
  assignedAt: Timestamp.nullable(),
  submittedAt: Timestamp.nullable(),
});

/** One recovery with its whole transcript: the state of the session decider. */
export const DialecticSessionRecord = z.object({
  sessionId: EntityId,
  agentId: AgentId,
  pause: z.number().int().min(1),
  reason: z.string(),
  trigger: z.object({ risk: Unit, health: Unit, threshold: RiskThreshold }),
  tags: z.array(IssueTag),
  rules: DialecticRules,
  seed: z.number().int(),
  status: DialecticStatus,
  reviewer: AgentId.nullable(),
  reviewerSelection: SelectionRecord.nullable(),
  messages: z.array(DialecticMessageView),
  round: z.number().int().min(0).describe('Synthesis rounds so far'),
  awaiting: z.array(AgentId).describe('Who must act now (empty when it waits for the service or nobody)'),
  deadlineAt: Timestamp.nullable().describe('The pending deadline'),
  sessionDeadlineAt: Timestamp,
  proposed: ProposedResolutionView.nullable().describe('The converged resolution waiting for signatures'),
  blocked: z.array(BlockedResolutionView).describe('Resolutions the hard limits blocked'),
  escalations: z.array(EscalationView),
  expiries: z.array(ExpiryView).describe('Deadlines that passed'),
  operatorDecision: z.object({ operator: AgentId, decision: z.enum(['resume', 'stay_paused']), reasoning: z.string(), decidedAt: Timestamp }).nullable(),
  resolved: ResolvedView.nullable(),
  relapse: z.object({ pause: z.number().int(), risk: Unit, relapsedAt: Timestamp, afterMs: z.number().int() }).nullable(),
  audit: AuditView.nullable(),
  pausedAt: Timestamp,
  openedAt: Timestamp,
  closedAt: Timestamp.nullable().describe('When it was resolved or an operator kept the agent paused'),
  updatedAt: Timestamp,
});
export type DialecticSessionRecord = z.infer<typeof DialecticSessionRecord>;

export const DialecticSessionView = DialecticSessionRecord.extend({ streamRevision: z.number().int().describe('Revision of the session stream the view reflects') });
export type DialecticSessionView = z.infer<typeof DialecticSessionView>;

export const DialecticSessionSummary = z.object({
  sessionId: EntityId,
  agentId: AgentId,
  pause: z.number().int().min(1),
  status: DialecticStatus,
  reviewer: AgentId.nullable(),
  round: z.number().int().min(0),
  awaiting: z.array(AgentId),
  deadlineAt: Timestamp.nullable(),
  tier: EscalationTier.nullable().describe('The latest escalation tier, if any'),
  decidedBy: DecidedBy.nullable(),
  pausedAt: Timestamp,
  openedAt: Timestamp,
  closedAt: Timestamp.nullable(),
});
export type DialecticSessionSummary = z.infer<typeof DialecticSessionSummary>;


const Count = z.number().int().min(0);
const Rate = z.number().min(0).max(1).nullable();

/** The seed's success metrics, over the sessions opened in a window. */
export const DialecticStats = z.object({
  window: z.object({ from: Timestamp, to: Timestamp, days: z.number().int().min(1) }),
  sessions: Count.describe('Sessions opened in the window (one per pause)'),
  byStatus: z.record(DialecticStatus, Count).describe('Current status of those sessions (every status listed)'),
  resolved: Count,
  decidedBy: z.object({ dialectic: Count, tie_break: Count, quorum: Count, operator: Count }).describe('Resolved sessions by who settled them'),
  resolvedWithinTarget: Count.describe('Resolved within targetMs of the pause'),
  resolvedWithinTargetRate: Rate.describe('resolvedWithinTarget / sessions; the seed wants 90 % within 5 minutes'),
  targetMs: z.number().int().min(1),
  escalated: Count.describe('Sessions with at least one escalation'),
  escalatedToQuorum: Count,
  escalationRate: Rate.describe('escalated / sessions'),
  quorumEscalationRate: Rate.describe('escalatedToQuorum / sessions; the seed wants under 5 %'),
  relapsed: Count.describe('Resolved sessions whose agent paused again within the relapse window'),
  repeatFailureRate: Rate.describe('relapsed / resolved; the seed wants under 10 %'),
  hardLimitBlocks: Count.describe('Resolutions blocked by the hard limits (ResolutionBlocked), in those sessions'),
  timeouts: Count.describe('Deadlines that expired, in those sessions'),
  audits: z.object({ sampled: Count, assigned: Count, sound: Count, unsound: Count }),
  collusionFlags: Count.describe('Pairs of agents flagged for reviewing each other repeatedly, over the sessions opened in the window; the seed wants none'),
  meanTimeToResolutionMs: z.number().min(0).nullable().describe('Mean ms from pause to resolution of the resolved sessions'),
});
export type DialecticStats = z.infer<typeof DialecticStats>;

export const CollusionFlag = z.object({
  agents: z.tuple([AgentId, AgentId]).describe('In id order'),
  reviews: z.number().int().min(0).describe('Reviews between them in the window, both directions'),
  firstToSecond: z.number().int().min(0),
  secondToFirst: z.number().int().min(0),
});
export type CollusionFlag = z.infer<typeof CollusionFlag>;

// ---------------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------------

export const GetDialecticSession = defineQuery({
  name: 'sessions.get',
  service: 'dialectic',
  httpPath: 'sessions/:sessionId',
  visibility: { agent: access.party('agentId', 'reviewer', 'messages.author', 'escalations.tieBreaker', 'audit.auditor'), observer: access.none },
  summary: 'One recovery session with its transcript, draws, deadlines, escalations, resolution and signatures',
  params: z.object({ sessionId: EntityId }).strict(),
  result: DialecticSessionView,
});

export const ListDialecticSessions = defineQuery({
  name: 'sessions.list',
  service: 'dialectic',
  httpPath: 'sessions',
  visibility: { agent: access.own('participant'), observer: access.none },
  summary: 'Recovery sessions, most recently updated first (then by id), paged: of a paused agent (agentId), where an agent takes part or must act (participant), or by status',
  params: z
    .object({
      agentId: AgentId.optional().describe('Sessions of this paused agent'),
      participant: AgentId.optional().describe('Sessions where this agent is the paused agent, the reviewer, the tie-breaker or the auditor'),
      awaiting: AgentId.optional().describe('Sessions waiting for this agent to act'),
      status: DialecticStatus.optional(),
      ...pageParams,
    })
    .strict(),
  result: z.object({ sessions: z.array(DialecticSessionSummary), nextCursor: NextCursor }),
});

export const GetDialecticStats = defineQuery({
  name: 'stats',
  service: 'dialectic',
  servedBy: 'projections',
  httpPath: 'stats',
  visibility: { agent: access.all, observer: access.all },
  summary: "The seed's success metrics: breakers resolved within 5 minutes, escalation rate, repeat failures, hard-limit blocks, outcomes, collusion flags",
  params: z.object({ windowDays: z.coerce.number().int().min(1).max(365).optional().describe('Default 30') }).strict(),
  result: DialecticStats,
});

export const ListCollusionFlags = defineQuery({
  name: 'collusion',
  service: 'dialectic',
  servedBy: 'projections',
  httpPath: 'collusion',
  visibility: { agent: access.none, observer: access.none },
  summary: 'Pairs of agents that review each other repeatedly (both directions, at least minReviews in the window), in id order; paged',
  params: z.object({ windowDays: z.coerce.number().int().min(1).max(365).optional().describe('Default 30'), ...pageParams }).strict(),
  result: z.object({ flags: z.array(CollusionFlag), nextCursor: NextCursor }),
});
