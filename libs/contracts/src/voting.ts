/**
 * The Bot Tribunal voting engine (seed 002): a high-risk action request is put to 3 to 5 validators
 * chosen from the registry; each votes approve, deny or abstain with its reasoning and a confidence;
 * the votes make a consensus, and the decision rules turn it into a recommendation (approve, deny or
 * escalate to a human). A session that is not decided by its timeout is decided on its partial votes
 * and always goes to a human.
 *
 * Two aggregates:
 * - `voting_session-<sessionId>`: one session. The session id IS the request id, so the stream
 *   itself enforces "one session per request" (a second CreateVotingSession finds the stream and
 *   changes nothing). Its first event records the validators selected and the rules in force, so a
 *   replay never re-selects and decides with the rules of the day.
 * - `voting_config-global`: the engine's configuration (the seed's TribunalConfig), changed only by
 *   an operator's UpdateVotingConfig and recorded in VotingConfigUpdated.
 *
 * Consensus (libs/domain-voting/src/consensus.ts is the one implementation):
 * - weight of a vote: `trustScore / 1000 × confidence` when `weightByTrustScore`, else 1;
 * - quorum: at least `minValidators` validators selected and at least `minValidators` votes received,
 *   abstentions included; otherwise `no_quorum`;
 * - `unanimous_approve` / `unanimous_deny`: EVERY selected validator voted, and all the same way.
 *   An abstention is not an approval: 2 approve + 1 abstain is `majority_approve`, never unanimous;
 * - otherwise the weighted sums of approve and deny decide `majority_approve`, `majority_deny`, or
 *   `split` when they are equal (within 1e-9), including when every vote is an abstention;
 * - aggregate confidence: the mean confidence of the votes on the prevailing side, weighted by trust
 *   score when `weightByTrustScore` (by 1 otherwise); for split and no quorum, of every vote cast.
 * Decision rules, in this order: no quorum, split -> escalate; critical and not unanimous (when
 * `requireUnanimousForCritical`) -> escalate; confidence below `minConfidence` -> escalate; else the
 * prevailing side. Escalate always means `requiresHitl`, and the reverse.
 */
import { z } from 'zod';
import { AgentId, EntityId, ShortText, Timestamp } from './common.js';
import { defineCommand, defineEvent, defineQuery } from './define.js';
import { Specialization, TrustScore } from './registry.js';

// ---------------------------------------------------------------------------------------------
// Vocabulary and configuration
// ---------------------------------------------------------------------------------------------

/** Stream category of sessions: `voting_session-<sessionId>` (the session id is the request id). */
export const VOTING_SESSION_CATEGORY = 'voting_session';
/** Stream category of the configuration: one stream, `voting_config-global`. */
export const VOTING_CONFIG_CATEGORY = 'voting_config';
export const VOTING_CONFIG_ID = 'global';

const MINUTE_MS = 60_000;

export const RiskLevel = z.enum(['low', 'medium', 'high', 'critical']).describe('Risk level of the action, as the requester or its gate assessed it');
export type RiskLevel = z.infer<typeof RiskLevel>;

export const VoteDecision = z.enum(['approve', 'deny', 'abstain']);
export type VoteDecision = z.infer<typeof VoteDecision>;

export const ConsensusType = z
  .enum(['unanimous_approve', 'unanimous_deny', 'majority_approve', 'majority_deny', 'split', 'no_quorum'])
  .describe(
    'unanimous_*: every selected validator voted, all the same way (an abstention breaks unanimity); majority_*: more (weighted) approvals than denials or the reverse; split: equal; no_quorum: fewer than minValidators validators selected or votes received',
  );
export type ConsensusType = z.infer<typeof ConsensusType>;
export const CONSENSUS_TYPES = ConsensusType.options;

export const RecommendedDecision = z.enum(['approve', 'deny', 'escalate']).describe('escalate: a human operator decides (requiresHitl)');
export type RecommendedDecision = z.infer<typeof RecommendedDecision>;

export const OperatorVotingDecision = z.enum(['approve', 'deny']);
export type OperatorVotingDecision = z.infer<typeof OperatorVotingDecision>;

export const EscalationReason = z
  .enum(['no_quorum', 'split', 'critical_not_unanimous', 'low_confidence', 'expired'])
  .describe('Which decision rule sent the session to a human; expired: the timeout passed and the partial votes alone would have decided');
export type EscalationReason = z.infer<typeof EscalationReason>;

export const VotingSessionStatus = z
  .enum(['pending', 'voting', 'decided', 'expired', 'cancelled'])
  .describe('pending: no vote yet; voting: at least one vote; decided: every validator voted (or no quorum at creation); expired: the timeout passed first; cancelled');
export type VotingSessionStatus = z.infer<typeof VotingSessionStatus>;

/**
 * Tiers of the seed, derived from the trust score (0 to 1000) and recorded with each selected
 * validator: UNTRUSTED below 200, PROBATIONARY 200 to 499, STANDARD 500 to 699, TRUSTED 700 to
 * 899, ELITE 900 and above.
 */
export const ValidatorTier = z.enum(['UNTRUSTED', 'PROBATIONARY', 'STANDARD', 'TRUSTED', 'ELITE']);
export type ValidatorTier = z.infer<typeof ValidatorTier>;

export const VotingTimeoutMs = z
  .number()
  .int()
  .min(1000)
  .max(24 * 60 * MINUTE_MS)
  .describe('Milliseconds, 1 s to 24 h');
const ValidatorCount = z.number().int().min(3).max(25);
export const Confidence = z.number().min(0).max(1).describe('0 to 1');

/** The seed's defaults (TribunalConfig). */
export const DEFAULT_VOTING_CONFIG = {
  minValidators: 3,
  maxValidators: 5,
  votingTimeoutMs: 5 * MINUTE_MS,
  requireUnanimousForCritical: true,
  minConfidence: 0.6,
  weightByTrustScore: true,
} as const;

/**
 * The engine's rules (the seed's TribunalConfig). The configuration in force when a session is
 * created is recorded in its VotingSessionCreated (`rules`, with the session's own timeout), and
 * every later decision on the session reads it from there.
 */
export const VotingConfig = z
  .object({
    minValidators: ValidatorCount.describe('Validators required: fewer selected, or fewer votes at the timeout, is no quorum (3 to 25)'),
    maxValidators: ValidatorCount.describe('Validators selected at most (3 to 25, at least minValidators)'),
    votingTimeoutMs: VotingTimeoutMs.describe('Default time a session waits for its votes; a session may ask for its own'),
    requireUnanimousForCritical: z.boolean().describe('A critical action is decided automatically only by a unanimous vote; anything else escalates'),
    minConfidence: Confidence.describe('Aggregate confidence under this escalates'),
    weightByTrustScore: z.boolean().describe('Weight each vote by trustScore/1000 x confidence (else every vote weighs 1)'),
  })
  .strict();
export type VotingConfig = z.infer<typeof VotingConfig>;

/** What a session will be decided by: the configuration in force at its creation, with its own timeout. */
export const VotingRules = VotingConfig;
export type VotingRules = VotingConfig;

/** Validator selection criteria of the seed's `selectValidators`. */
export const SelectionCriteria = z
  .object({
    minTrustScore: TrustScore.default(0).describe('Only validators with at least this trust score'),
    excludeAgents: z.array(AgentId).max(100).default([]).describe('Never selected (conflicted agents); the requesting agent is always excluded'),
    preferredSpecializations: z.array(Specialization).max(16).default([]).describe('Covered first, in this order, each by its most trusted validator; the rest by trust'),
  })
  .strict();
export type SelectionCriteria = z.output<typeof SelectionCriteria>;

/** A validator the registry offers (agents with role `validator`), passed to the decider by the service. Only `active` ones are selected. */
export const ValidatorCandidate = z
  .object({
    agentId: AgentId,
    displayName: z.string(),
    trustScore: TrustScore,
    specializations: z.array(z.string()),
    status: z.string().min(1).max(32).describe('Registry status; only `active` agents are selected'),
  })
  .strict();
export type ValidatorCandidate = z.infer<typeof ValidatorCandidate>;

/** A validator selected for a session, as the registry knew it at selection: its weight comes from this trust score. */
export const SelectedValidator = z.object({
  agentId: AgentId,
  displayName: z.string(),
  trustScore: TrustScore,
  tier: ValidatorTier,
  specializations: z.array(z.string()),
});
export type SelectedValidator = z.infer<typeof SelectedValidator>;

export const VoteTally = z.object({
  validators: z.number().int().min(0).describe('Validators selected'),
  votes: z.number().int().min(0).describe('Votes received, abstentions included'),
  approve: z.number().int().min(0),
  deny: z.number().int().min(0),
  abstain: z.number().int().min(0),
  approveWeight: z.number().min(0),
  denyWeight: z.number().min(0),
  abstainWeight: z.number().min(0),
  quorum: z.number().int().min(0).describe('Votes needed (minValidators)'),
  weighted: z.boolean().describe('Weights are trustScore/1000 x confidence (else 1 each)'),
});
export type VoteTally = z.infer<typeof VoteTally>;

export const Recommendation = z.object({
  decision: RecommendedDecision,
  consensus: ConsensusType,
  confidence: Confidence.describe('Aggregate confidence (see the top of the voting contracts)'),
  reasoning: z.array(z.string()).describe('The rule that decided, then the reasoning of the prevailing votes'),
  dissent: z.array(z.string()).describe('The reasoning of the votes against the prevailing side'),
  requiresHitl: z.boolean().describe('A human operator must decide (DecideVotingEscalation); true exactly when decision is escalate'),
  escalationReason: EscalationReason.nullable(),
});
export type Recommendation = z.infer<typeof Recommendation>;

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

export const CreateVotingSession = defineCommand({
  type: 'CreateVotingSession',
  service: 'voting',
  aggregate: 'session',
  verb: 'create',
  roles: ['executive', 'operator'],
  summary:
    'Put a high-risk action request to a tribunal vote. The session id is the request id: a second create for the same request changes nothing (the first session stands). The requesting agent is the actor unless an operator names another; it is never a validator. The service selects 3 to 5 validators from the registry; fewer than minValidators qualified decides the session at once as no_quorum (escalate, human required)',
  payload: z
    .object({
      requestId: EntityId.describe('The action request; also the session id'),
      requestingAgent: AgentId.optional().describe('The agent asking to act; default the actor. Only an operator may name another agent'),
      actionType: ShortText(100).describe('What the agent wants to do, e.g. `deploy_production`'),
      riskLevel: RiskLevel,
      critical: z.boolean().optional().describe('Default: riskLevel is critical'),
      summary: ShortText(5000).optional().describe('The request, for the validators'),
      criteria: SelectionCriteria.default({ minTrustScore: 0, excludeAgents: [], preferredSpecializations: [] }),
      votingTimeoutMs: VotingTimeoutMs.optional().describe("This session's timeout; default the configuration's votingTimeoutMs"),
    })
    .strict(),
});

export const CastValidatorVote = defineCommand({
  type: 'CastValidatorVote',
  service: 'voting',
  aggregate: 'session',
  verb: 'vote',
  roles: ['validator'],
  summary:
    'Vote on a session you were selected for: approve, deny or abstain, with reasoning and a confidence from 0 to 1. Once per validator: the same vote again changes nothing, a different one (a changed mind) is refused. The last vote decides the session',
  payload: z
    .object({
      sessionId: EntityId,
      decision: VoteDecision,
      reasoning: ShortText(5000),
      confidence: Confidence,
      riskAssessment: ShortText(2000).optional(),
    })
    .strict(),
});

export const CancelVotingSession = defineCommand({
  type: 'CancelVotingSession',
  service: 'voting',
  aggregate: 'session',
  verb: 'cancel',
  roles: ['executive', 'operator'],
  summary: 'Cancel a session still collecting votes (an operator, or the requesting agent itself)',
  payload: z.object({ sessionId: EntityId, reason: ShortText(1000) }).strict(),
});

export const DecideVotingEscalation = defineCommand({
  type: 'DecideVotingEscalation',
  service: 'voting',
  aggregate: 'session',
  verb: 'decide',
  roles: ['operator'],
  summary: "A human operator decides a session whose recommendation requires a human (escalated, or expired): approve or deny, with a reason. Closes the session",
  payload: z.object({ sessionId: EntityId, decision: OperatorVotingDecision, reason: ShortText(2000) }).strict(),
});

export const ExpireVotingSession = defineCommand({
  type: 'ExpireVotingSession',
  service: 'voting',
  aggregate: 'session',
  verb: 'expire',
  roles: ['operator'],
  summary:
    "Close a session at its timeout (issued by the voting service's durable scheduler at the due time): the partial votes make the recommendation and a human must decide. Refused before the deadline; nothing happens on a session already closed",
  payload: z.object({ sessionId: EntityId }).strict(),
});

export const UpdateVotingConfig = defineCommand({
  type: 'UpdateVotingConfig',
  service: 'voting',
  aggregate: 'config',
  verb: 'update',
  roles: ['operator'],
  summary: 'Change the voting configuration (the fields given); sessions created from then on are decided by it, sessions already created keep the rules they recorded',
  payload: z
    .object({
      minValidators: ValidatorCount.optional(),
      maxValidators: ValidatorCount.optional(),
      votingTimeoutMs: VotingTimeoutMs.optional(),
      requireUnanimousForCritical: z.boolean().optional(),
      minConfidence: Confidence.optional(),
      weightByTrustScore: z.boolean().optional(),
    })
    .strict()
    .refine((p) => Object.keys(p).length > 0, { message: 'name at least one setting to change' }),
});

// ---------------------------------------------------------------------------------------------
// Events (category `voting_session`, stream `voting_session-<sessionId>`; and `voting_config`)
// ---------------------------------------------------------------------------------------------

const base = { sessionId: EntityId };

export const VotingSessionCreated = defineEvent({
  type: 'VotingSessionCreated',
  category: VOTING_SESSION_CATEGORY,
  summary: 'A session was created for an action request, with the validators selected and the rules that will decide it (a replay never re-selects); `deadlineAt` is its timeout',
  data: z.object({
    ...base,
    requestId: EntityId,
    requestingAgent: AgentId,
    createdBy: AgentId,
    actionType: z.string(),
    riskLevel: RiskLevel,
    critical: z.boolean(),
    summary: z.string().nullable(),
    criteria: SelectionCriteria,
    rules: VotingRules,
    configRevision: z.number().int().min(-1).describe('Revision of the voting_config-global stream the rules came from; -1: the defaults'),
    candidates: z.number().int().min(0).describe('Validators the registry offered'),
    validators: z.array(SelectedValidator),
    createdAt: Timestamp,
    deadlineAt: Timestamp,
  }),
});

export const ValidatorVoteReceived = defineEvent({
  type: 'ValidatorVoteReceived',
  category: VOTING_SESSION_CATEGORY,
  summary: 'A selected validator voted; `weight` is what the vote counts for in the consensus',
  data: z.object({
    ...base,
    validator: AgentId,
    validatorName: z.string(),
    decision: VoteDecision,
    reasoning: z.string(),
    confidence: Confidence,
    riskAssessment: z.string().nullable(),
    trustScore: TrustScore.describe('As recorded at selection'),
    weight: z.number().min(0),
    votedAt: Timestamp,
  }),
});

export const VotingConsensusReached = defineEvent({
  type: 'VotingConsensusReached',
  category: VOTING_SESSION_CATEGORY,
  summary: "Every selected validator has voted: the consensus of the votes (the seed's consensus:reached); VotingSessionDecided follows in the same commit",
  data: z.object({ ...base, consensus: ConsensusType, tally: VoteTally, reachedAt: Timestamp }),
});

export const VotingSessionDecided = defineEvent({
  type: 'VotingSessionDecided',
  category: VOTING_SESSION_CATEGORY,
  summary: 'The session is decided: every validator voted, or too few validators qualified at creation (no_quorum). An escalated recommendation waits for DecideVotingEscalation',
  data: z.object({
    ...base,
    trigger: z.enum(['all_voted', 'no_quorum_at_creation']),
    recommendation: Recommendation,
    tally: VoteTally,
    votingTimeMs: z.number().int().min(0).describe('From creation to decision'),
    decidedAt: Timestamp,
  }),
});

export const VotingSessionExpired = defineEvent({
  type: 'VotingSessionExpired',
  category: VOTING_SESSION_CATEGORY,
  summary: 'The timeout passed before every validator voted: the partial votes made the recommendation, and a human operator must decide (requiresHitl)',
  data: z.object({
    ...base,
    recommendation: Recommendation,
    tally: VoteTally,
    missing: z.array(AgentId).describe('Selected validators that had not voted'),
    deadlineAt: Timestamp,
    votingTimeMs: z.number().int().min(0).describe('From creation to expiry'),
    expiredAt: Timestamp,
  }),
});

export const VotingSessionCancelled = defineEvent({
  type: 'VotingSessionCancelled',
  category: VOTING_SESSION_CATEGORY,
  summary: 'The session was cancelled before it was decided',
  data: z.object({ ...base, reason: z.string(), cancelledBy: AgentId, votesReceived: z.number().int().min(0), cancelledAt: Timestamp }),
});

export const VotingEscalationResolved = defineEvent({
  type: 'VotingEscalationResolved',
  category: VOTING_SESSION_CATEGORY,
  summary: "A human operator decided a session that required one: the final decision; the session is closed",
  data: z.object({
    ...base,
    decision: OperatorVotingDecision,
    operator: AgentId,
    reason: z.string(),
    escalationReason: EscalationReason.nullable(),
    resolvedAt: Timestamp,
  }),
});

export const VotingConfigUpdated = defineEvent({
  type: 'VotingConfigUpdated',
  category: VOTING_CONFIG_CATEGORY,
  summary: 'An operator changed the voting configuration: `config` is the whole configuration from now on, `changed` the settings that changed',
  data: z.object({ config: VotingConfig, changed: z.array(z.string()), updatedBy: AgentId, updatedAt: Timestamp }),
});

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
  summary: 'One voting session with its validators, votes, recommendation and outcome',
  params: z.object({ sessionId: EntityId }).strict(),
  result: VotingSessionView,
});

export const GetVotingSessionByRequest = defineQuery({
  name: 'sessions.by_request',
  service: 'voting',
  httpPath: 'requests/:requestId/session',
  summary: 'The voting session of an action request',
  params: z.object({ requestId: EntityId }).strict(),
  result: VotingSessionView,
});

export const ListPendingVotingSessions = defineQuery({
  name: 'sessions.pending',
  service: 'voting',
  httpPath: 'pending-sessions',
  summary: 'Sessions still collecting votes (pending or voting), oldest first; or, with awaitingOperator, those waiting for a human decision; optionally those a validator has yet to vote on',
  params: z
    .object({
      awaitingOperator: z.union([z.boolean(), z.stringbool()]).optional().describe('List the sessions waiting for an operator instead'),
      validator: AgentId.optional().describe('Only sessions this validator was selected for and has not voted on'),
    })
    .strict(),
  result: z.object({ sessions: z.array(VotingSessionSummary) }),
});

export const ListValidators = defineQuery({
  name: 'validators.list',
  service: 'voting',
  httpPath: 'validators',
  summary: "The validators a session may select now: active agents with role validator, with their trust score, tier and specializations, most trusted first (the seed's getValidators)",
  params: z.object({ minTrustScore: z.coerce.number().int().min(0).max(1000).optional() }).strict(),
  result: z.object({ validators: z.array(ValidatorView) }),
});

/** Named `sessions.stats`, not `stats`: the generated documents key query schemas by name, and the tribunal has a `stats`. */
export const GetVotingStats = defineQuery({
  name: 'sessions.stats',
  service: 'voting',
  httpPath: 'stats',
  summary: "The seed's getStats(): sessions by status, consensus breakdown, recommendations, escalation rate, average voting time",
  params: z.object({}).strict(),
  result: VotingStats,
});

export const GetValidatorAgreement = defineQuery({
  name: 'validators.agreement',
  service: 'voting',
  httpPath: 'validators/agreement',
  summary: "Per validator: votes cast and how often its vote agreed with the session's final decision (the operator's, when a human decided)",
  params: z.object({ validator: AgentId.optional() }).strict(),
  result: z.object({ validators: z.array(ValidatorAgreement) }),
});

export const votingCommands = [CreateVotingSession, CastValidatorVote, CancelVotingSession, DecideVotingEscalation, ExpireVotingSession, UpdateVotingConfig] as const;
export const votingEvents = [
  VotingSessionCreated,
  ValidatorVoteReceived,
  VotingConsensusReached,
  VotingSessionDecided,
  VotingSessionExpired,
  VotingSessionCancelled,
  VotingEscalationResolved,
  VotingConfigUpdated,
] as const;
/** Answered by the voting service. */
export const votingServiceQueries = [GetVotingSession, GetVotingSessionByRequest, ListPendingVotingSessions, ListValidators] as const;
/** Answered by the projections service, from its read model. */
export const votingProjectionQueries = [GetVotingStats, GetValidatorAgreement] as const;
export const votingQueries = [...votingServiceQueries, ...votingProjectionQueries] as const;

/** Everything of the voting service, for the catalog. */
export const votingContracts = { commands: votingCommands, events: votingEvents, queries: votingQueries } as const;
