// Dialectic contracts: the vocabulary (conditions, parties, tiers, statuses, hard-limit violations), the selection record and the signed resolution.
import { z } from 'zod';
import { AgentId, EntityId, PublicKeyText, Timestamp } from '../common.js';
import { Unit } from '../registry/agents.js';

// ---------------------------------------------------------------------------------------------
// Vocabulary
// ---------------------------------------------------------------------------------------------

/** Stream category of recovery sessions: streams are `dialectic_session-<sessionId>`. */
export const DIALECTIC_SESSION_CATEGORY = 'dialectic_session';

export const RiskThreshold = Unit.describe('Risk at or above which the circuit breaker trips, 0 to 1');

/** Issue tags: what a pause is about, and what a reviewer has handled (its domain expertise). */
export const IssueTag = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,31}$/, 'tags are lowercase words, e.g. cascade, complexity_spike')
  .describe('Issue tag, e.g. `cascade`');

export const MetricName = z
  .string()
  .regex(/^[a-z][a-z0-9_.]{0,63}$/, 'metric names are lowercase words with "_" or ".", e.g. risk_score')
  .describe('Metric name, e.g. `risk_score`');
export const ObservedMetrics = z
  .record(MetricName, z.number())
  .refine((m) => Object.keys(m).length <= 50, 'at most 50 metrics')
  .describe('Metric name -> value');

export const OperationName = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, 'operations are lowercase words, e.g. set_risk_threshold')
  .describe('Operation of a condition, e.g. `set_risk_threshold`');
export const ParameterName = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'parameter names are lowercase words, e.g. threshold');
export const ParameterValue = z.union([z.string().max(500), z.number(), z.boolean()]).describe('A string (up to 500 characters), a number or a boolean');

/**
 * A condition of a recovery: a structured operation, never free text, so the hard limits are a
 * policy over data (a regex over text is easy to get around). `set_risk_threshold
 * {threshold}` is the one the circuit breaker applies itself when the agent resumes.
 */
export const Condition = z
  .object({
    operation: OperationName,
    parameters: z
      .record(ParameterName, ParameterValue)
      .refine((p) => Object.keys(p).length <= 20, 'at most 20 parameters')
      .default({})
      .describe('Parameter name -> value, as the operation defines them in the hard-limit policy'),
  })
  .strict();
export type Condition = z.infer<typeof Condition>;
export const Conditions = z.array(Condition).max(20);

/** The operation whose `threshold` parameter the circuit breaker applies on resume. */
export const SET_RISK_THRESHOLD = 'set_risk_threshold';
/** Caps the agent's commands per minute at every service's command gate (refusal: rate_limited). */
export const RATE_LIMIT = 'rate_limit';
/** A stricter breaker and required health reports for `hours`. */
export const PROBATION = 'probation';
/** The conditions Agora enforces itself; every other condition is announced as an obligation. */
export const ENFORCED_OPERATIONS: readonly string[] = [SET_RISK_THRESHOLD, RATE_LIMIT, PROBATION];

/** The conditions of a resume that Agora enforces, as the registry records them in AgentResumed. */
export const EnforcedConditions = z.object({
  rateLimitPerMinute: z.number().int().min(1).nullable().describe('rate_limit: commands per minute the agent may send to each service (health reports excepted)'),
  probation: z
    .object({
      since: Timestamp,
      until: Timestamp,
      riskMargin: z.number().min(0).max(1).describe('The breaker trips this much below the threshold until then'),
      reportEveryMs: z.number().int().min(1000).describe('A health report at most this old is needed to send anything else until then'),
    })
    .nullable()
    .describe('probation: a stricter breaker and required health reports'),
});
export type EnforcedConditions = z.infer<typeof EnforcedConditions>;

/** A party's stance: what it thinks happened and what it proposes. */
export const Position = z.object({ rootCause: z.string(), conditions: z.array(Condition) });
export type Position = z.infer<typeof Position>;

export const Party = z.enum(['agent', 'reviewer']).describe('agent: the paused agent; reviewer: the reviewer drawn for it');
export type Party = z.infer<typeof Party>;

export const EscalationTier = z
  .enum(['tie_break', 'quorum', 'operator'])
  .describe('tie_break (tier 1): a third agent picks a side; quorum (tier 2): a five-validator vote through the voting service; operator (tier 3): the agent stays paused until a human decides');
export type EscalationTier = z.infer<typeof EscalationTier>;

export const RecoveryEscalationReason = z
  .enum(['no_convergence', 'timeout', 'session_timeout', 'hard_limit_violation', 'no_reviewer', 'requested', 'tie_break_declined', 'no_tie_breaker', 'quorum_not_approved'])
  .describe(
    'no_convergence: the last synthesis round passed without agreement; timeout: a party (or the tie-breaker, or the quorum) missed its deadline; session_timeout: the whole dialectic ran out of time; hard_limit_violation: the resolution broke a hard limit (straight to an operator); no_reviewer: nobody was eligible to review; requested: a party or an operator asked for it; tie_break_declined: the tie-breaker sided with nobody; no_tie_breaker: nobody was eligible to break the tie; quorum_not_approved: the quorum denied, escalated or fell short of its size',
  );
export type RecoveryEscalationReason = z.infer<typeof RecoveryEscalationReason>;

export const DecidedBy = z.enum(['dialectic', 'tie_break', 'quorum', 'operator']).describe('Who settled the recovery: both parties (dialectic), a tie-breaker, a validator quorum, or a human operator');
export type DecidedBy = z.infer<typeof DecidedBy>;

export const DialecticStatus = z
  .enum(['awaiting_thesis', 'awaiting_antithesis', 'synthesis', 'awaiting_signatures', 'tie_break', 'quorum', 'awaiting_operator', 'resolved', 'stayed_paused'])
  .describe('resolved: the agent resumes under the resolution; stayed_paused: an operator decided it stays paused; every other status waits for someone');
export type DialecticStatus = z.infer<typeof DialecticStatus>;

export const ExclusionReason = z
  .enum(['self', 'party', 'inactive', 'paused', 'unhealthy', 'recently_reviewed', 'collusion_flagged', 'duplicate'])
  .describe(
    'self: the paused agent; party: already a party of the session (reviewer, tie-breaker); inactive: not active in the registry; paused: its own breaker is open; unhealthy: risk at or above maxReviewerRisk; recently_reviewed: reviewed this agent within recentReviewWindowMs; collusion_flagged: flagged with this agent for mutual reviews; duplicate: listed twice',
  );

export const ViolationRule = z
  .enum(['forbidden_operation', 'unknown_operation', 'risk_threshold_above_max', 'missing_parameter', 'unknown_parameter', 'invalid_parameter', 'out_of_range', 'conflicting_conditions', 'too_few_conditions'])
  .describe('The hard-limit rule a condition breaks');
export const HardLimitViolation = z.object({
  index: z.number().int().min(-1).describe('Position of the condition in the list; -1: the list as a whole (too_few_conditions)'),
  operation: OperationName.describe('The condition\'s operation; `conditions` for the list as a whole'),
  rule: ViolationRule,
  parameter: z.string().nullable(),
  message: z.string(),
});
export type HardLimitViolation = z.infer<typeof HardLimitViolation>;

// ---------------------------------------------------------------------------------------------
// Selection (reviewer, tie-breaker, auditor): what the registry and the read model say of each
// candidate, and the record of the draw
// ---------------------------------------------------------------------------------------------

export const TrackRecordCounts = z.object({
  reviews: z.number().int().min(0).describe('Settled reviews: resolutions it signed whose relapse window passed, and phases it let time out'),
  successful: z.number().int().min(0).describe('Of those, resolutions with no relapse and no unsound audit'),
});

/** A candidate the service offers (active agents of the registry, with their history from the dialectic read model). */
export const RecoveryCandidate = z
  .object({
    agentId: AgentId,
    status: z.string().min(1).max(32).describe('Registry status; only `active` agents are selected'),
    paused: z.boolean().describe("Its own circuit breaker is open"),
    risk: Unit,
    health: Unit,
    lastReportAt: Timestamp.nullable().describe('Its last health report (freshness)'),
    trackRecord: TrackRecordCounts,
    expertise: z.array(IssueTag).max(64).describe('Tags of the issues it has handled'),
    lastReviewedAgentAt: Timestamp.nullable().describe('When it last reviewed the paused agent, if ever'),
    collusionFlagged: z.boolean().describe('Flagged with the paused agent for reviewing each other repeatedly'),
  })
  .strict();
export type RecoveryCandidate = z.infer<typeof RecoveryCandidate>;

export const AuthorityBreakdown = z.object({
  health: Unit.describe('1 for risk under 0.30, 0.7 up to 0.60, 0.3 above'),
  trackRecord: Unit.describe('successful / reviews; 0.5 without settled reviews'),
  expertise: Unit.describe("Share of the session's tags the candidate has handled; 0 without tags"),
  freshness: Unit.describe('1 when its last report is within freshnessWindowMs, else 0'),
  authority: Unit.describe('The weighted sum'),
});
export type AuthorityBreakdown = z.infer<typeof AuthorityBreakdown>;

export const SelectionRecord = z.object({
  seed: z.number().int().min(0).max(0xffffffff).describe('Seed of the draw'),
  draw: z.number().min(0).max(1).describe('The uniform draw in [0, 1) mulberry32 made from the seed for this purpose'),
  candidates: z.number().int().min(0),
  pool: z.array(AuthorityBreakdown.extend({ agentId: AgentId })).describe('Eligible candidates in id order, each weighted by its authority'),
  excluded: z.array(z.object({ agentId: AgentId, reason: ExclusionReason })),
});
export type SelectionRecord = z.infer<typeof SelectionRecord>;

// ---------------------------------------------------------------------------------------------
// The signed resolution
// ---------------------------------------------------------------------------------------------

/** What is signed (with the signer's id, after the tag `agora.dialectic.resolution.v1`): canonical, naming the session, both agents, the root cause and the conditions. */
export const ResolutionPayload = z.object({
  sessionId: EntityId,
  agentId: AgentId.describe('The paused agent'),
  reviewer: AgentId.nullable().describe('The reviewer of the session; null when nobody was eligible'),
  pause: z.number().int().min(1),
  rootCause: z.string(),
  conditions: z.array(Condition).describe('In canonical order (sorted by their canonical JSON)'),
  decidedBy: DecidedBy,
  escalation: z.number().int().min(1).nullable().describe('The escalation that decided it; null for the dialectic'),
  decider: z.string().nullable().describe('The tie-breaker or operator who decided it, or the voting session of a quorum; null for the dialectic'),
});
export type ResolutionPayload = z.infer<typeof ResolutionPayload>;

export const Ed25519Signature = z.string().regex(/^[A-Za-z0-9_-]{86}$/, 'an Ed25519 signature is 86 base64url characters (64 bytes)').describe('Ed25519 signature, base64url');

export const ResolutionSignatureView = z.object({
  signer: AgentId,
  role: z.enum(['agent', 'reviewer', 'tie_breaker', 'operator']),
  publicKey: PublicKeyText,
  signature: Ed25519Signature,
  signedAt: Timestamp,
});
export type ResolutionSignatureView = z.infer<typeof ResolutionSignatureView>;
