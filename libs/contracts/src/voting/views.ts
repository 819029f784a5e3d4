// Voting contracts: the read model (the session record and its views), the statistics and the queries.
import { z } from 'zod';
import { AgentId, EntityId, Timestamp } from '../common.js';
import { NextCursor, pageParams } from '../paging.js';
import { access, defineQuery } from '../define.js';
import { TrustScore } from '../registry/agents.js';
import { Confidence, ConsensusType, OperatorVotingDecision, Recommendation, RiskLevel, SelectedValidator, SelectionCriteria, ToolCallView, ValidatorTier, VoteDecision, VoteTally, VotingRules, VotingSessionStatus } from './vocabulary.js';

// ---------------------------------------------------------------------------------------------
// Read model (the session decider's state is this record)
// ---------------------------------------------------------------------------------------------

export const VoteView = z.object({
  validator: AgentId,
  validatorName: z.string(),
  decision: VoteDecision,
  reasoning: z.string(),
  confidence: Confidence,
  riskAssessment: z.string().nullable(),
  trustScore: TrustScore,
  weight: z.number().min(0),
  votedAt: Timestamp,
});
export type VoteView = z.infer<typeof VoteView>;

export const VotingResolutionView = z.object({ decision: OperatorVotingDecision, operator: AgentId, reason: z.string(), resolvedAt: Timestamp });

/** A session with its votes and outcome: the state of the session decider. */
export const VotingSessionRecord = z.object({
  sessionId: EntityId,
  requestId: EntityId,
  requestingAgent: AgentId,
  createdBy: AgentId,
  actionType: z.string(),
  riskLevel: RiskLevel,
  critical: z.boolean(),
  summary: z.string().nullable(),
  criteria: SelectionCriteria,
  rules: VotingRules,
  configRevision: z.number().int().min(-1),
  validators: z.array(SelectedValidator),
  votes: z.array(VoteView),
  status: VotingSessionStatus,
  consensus: ConsensusType.nullable().describe('Set when the session is decided or expired'),
  tally: VoteTally.nullable(),
  recommendation: Recommendation.nullable(),
  awaitingOperator: z.boolean().describe('The recommendation requires a human and none has decided yet'),
  resolution: VotingResolutionView.nullable().describe("The operator's decision of an escalated session"),
  finalDecision: OperatorVotingDecision.nullable().describe("approve or deny: the recommendation's, or the operator's when it escalated; null while undecided"),
  cancellation: z.object({ reason: z.string(), cancelledBy: AgentId, cancelledAt: Timestamp }).nullable(),
  createdAt: Timestamp,
  deadlineAt: Timestamp,
  concludedAt: Timestamp.nullable().describe('When it was decided or expired'),
  closedAt: Timestamp.nullable().describe('When nothing more could happen: decided without a human, resolved by one, or cancelled'),
  updatedAt: Timestamp,
  toolCall: ToolCallView.optional().describe('A governed tool call: the call the session decides, and whether it was released and ran'),
});
export type VotingSessionRecord = z.infer<typeof VotingSessionRecord>;

export const VotingSessionView = VotingSessionRecord.extend({ streamRevision: z.number().int().describe('Revision of the session stream the view reflects') });
export type VotingSessionView = z.infer<typeof VotingSessionView>;

export const VotingSessionSummary = z.object({
  sessionId: EntityId,
  requestId: EntityId,
  requestingAgent: AgentId,
  actionType: z.string(),
  riskLevel: RiskLevel,
  critical: z.boolean(),
  status: VotingSessionStatus,
  validators: z.array(AgentId),
  votesReceived: z.number().int().min(0),
  awaitingOperator: z.boolean(),
  decision: z.enum(['approve', 'deny']).nullable().describe("What was decided: a person's decision where one decided, else the recommendation where it needed no person; null while the session is open or waits for a human"),
  createdAt: Timestamp,
  deadlineAt: Timestamp,
});
export type VotingSessionSummary = z.infer<typeof VotingSessionSummary>;

const Count = z.number().int().min(0);

/** The seed's getStats(), over every session of the log. */
export const VotingStats = z.object({
  totalSessions: Count,
  pendingSessions: Count.describe('Collecting votes (pending or voting)'),
  decidedSessions: Count,
  expiredSessions: Count,
  cancelledSessions: Count,
  awaitingOperator: Count.describe('Decided or expired sessions waiting for a human'),
  consensusBreakdown: z.record(ConsensusType, Count).describe('Decided and expired sessions by consensus (every type listed)'),
  recommendations: z.object({ approve: Count, deny: Count, escalate: Count }).describe('Decided and expired sessions by recommended decision'),
  operatorDecisions: z.object({ approve: Count, deny: Count }),
  escalationRate: z.number().min(0).max(1).nullable().describe('Share of decided and expired sessions that required a human; null when none'),
  averageVotingTime: z.number().min(0).nullable().describe('Mean ms from creation to decision of the decided sessions (expired ones excluded); null when none'),
});
export type VotingStats = z.infer<typeof VotingStats>;

export const ValidatorAgreement = z.object({
  validator: AgentId,
  votes: Count.describe('Votes cast, all sessions'),
  approve: Count,
  deny: Count,
  abstain: Count,
  agreed: Count.describe('Approve or deny votes on sessions with a final decision, equal to it'),
  disagreed: Count.describe('Approve or deny votes on sessions with a final decision, opposite to it'),
  agreementRate: z.number().min(0).max(1).nullable().describe('agreed / (agreed + disagreed); null when none'),
});
export type ValidatorAgreement = z.infer<typeof ValidatorAgreement>;

export const ValidatorView = z.object({
  agentId: AgentId,
  displayName: z.string(),
  trustScore: TrustScore,
  tier: ValidatorTier,
  specializations: z.array(z.string()),
});

// ---------------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------------

export const GetVotingSession = defineQuery({
  name: 'sessions.get',
  service: 'voting',
  httpPath: 'sessions/:sessionId',
  visibility: { agent: access.party('requestingAgent', 'createdBy', 'validators.agentId'), observer: access.none },
  summary: 'One voting session with its validators, votes, recommendation and outcome',
  params: z.object({ sessionId: EntityId }).strict(),
  result: VotingSessionView,
});

export const GetVotingSessionByRequest = defineQuery({
  name: 'sessions.by_request',
  service: 'voting',
  httpPath: 'requests/:requestId/session',
  visibility: { agent: access.party('requestingAgent', 'createdBy', 'validators.agentId'), observer: access.none },
  summary: 'The voting session of an action request',
  params: z.object({ requestId: EntityId }).strict(),
  result: VotingSessionView,
});

export const ListPendingVotingSessions = defineQuery({
  name: 'sessions.pending',
  service: 'voting',
  httpPath: 'pending-sessions',
  visibility: { agent: access.own('validator'), observer: access.none },
  summary: 'Sessions still collecting votes (pending or voting), oldest first (then by id), paged; or, with awaitingOperator, those waiting for a human decision; optionally those a validator has yet to vote on',
  params: z
    .object({
      awaitingOperator: z.union([z.boolean(), z.stringbool()]).optional().describe('List the sessions waiting for an operator instead'),
      validator: AgentId.optional().describe('Only sessions this validator was selected for and has not voted on'),
      ...pageParams,
    })
    .strict(),
  result: z.object({ sessions: z.array(VotingSessionSummary), nextCursor: NextCursor }),
});

export const ListVotingSessions = defineQuery({
  name: 'sessions.list',
  service: 'voting',
  httpPath: 'sessions',
  visibility: { agent: access.own('requestingAgent'), observer: access.none },
  summary: 'Voting sessions, most recently updated first (then by id), paged, optionally by status or requesting agent (the console lists them; pending-sessions is the seed\'s getPendingSessions)',
  params: z
    .object({
      status: VotingSessionStatus.optional(),
      requestingAgent: AgentId.optional(),
      ...pageParams,
    })
    .strict(),
  result: z.object({ sessions: z.array(VotingSessionSummary), nextCursor: NextCursor }),
});

export const ListValidators = defineQuery({
  name: 'validators.list',
  service: 'voting',
  httpPath: 'validators',
  visibility: { agent: access.all, observer: access.none },
  summary: "The validators a session may select now: active agents with role validator, with their trust score, tier and specializations, most trusted first, then by id (the seed's getValidators); paged",
  params: z.object({ minTrustScore: z.coerce.number().int().min(0).max(1000).optional(), ...pageParams }).strict(),
  result: z.object({ validators: z.array(ValidatorView), nextCursor: NextCursor }),
});

/** Named `sessions.stats`, not `stats`: the generated documents key query schemas by name, and the tribunal has a `stats`. */
export const GetVotingStats = defineQuery({
  name: 'sessions.stats',
  service: 'voting',
  servedBy: 'projections',
  httpPath: 'stats',
  visibility: { agent: access.all, observer: access.all },
  summary: "The seed's getStats(): sessions by status, consensus breakdown, recommendations, escalation rate, average voting time",
  params: z.object({}).strict(),
  result: VotingStats,
});

export const GetValidatorAgreement = defineQuery({
  name: 'validators.agreement',
  service: 'voting',
  servedBy: 'projections',
  httpPath: 'validators/agreement',
  visibility: { agent: access.own('validator'), observer: access.none },
  summary: "Per validator, in id order: votes cast and how often its vote agreed with the session's final decision (the operator's, when a human decided); paged",
  params: z.object({ validator: AgentId.optional(), ...pageParams }).strict(),
  result: z.object({ validators: z.array(ValidatorAgreement), nextCursor: NextCursor }),
});
