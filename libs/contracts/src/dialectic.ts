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
import { z } from 'zod';
import { AgentId, EntityId, PublicKeyText, ShortText, Timestamp, type Role } from './common.js';
import { defineCommand, defineEvent, defineQuery } from './define.js';
import { EventCause, PreviousResume, Unit } from './registry.js';

// ---------------------------------------------------------------------------------------------
// Vocabulary
// ---------------------------------------------------------------------------------------------

/** Stream category of recovery sessions: streams are `dialectic_session-<sessionId>`. */
export const DIALECTIC_SESSION_CATEGORY = 'dialectic_session';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** Every role: the gate lets any registered agent through, the decider checks who it is (the paused agent, its reviewer...). */
const ANY_ROLE: Role[] = ['executive', 'reviewer', 'validator', 'operator', 'observer'];

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
 * policy over data (DESIGN.md: regex over text is easy to get around). `set_risk_threshold
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
  .enum(['forbidden_operation', 'unknown_operation', 'risk_threshold_above_max', 'missing_parameter', 'unknown_parameter', 'invalid_parameter', 'out_of_range', 'conflicting_conditions'])
  .describe('The hard-limit rule a condition breaks');
export const HardLimitViolation = z.object({
  index: z.number().int().min(0).describe('Position of the condition in the list'),
  operation: OperationName,
  rule: ViolationRule,
  parameter: z.string().nullable(),
  message: z.string(),
});
export type HardLimitViolation = z.infer<typeof HardLimitViolation>;

// ---------------------------------------------------------------------------------------------
// Policy (configuration as data: RecoveryOpened records the resolved rules, and every later
// decision on that session reads them from there)
// ---------------------------------------------------------------------------------------------

const DurationMs = z
  .number()
  .int()
  .min(1000)
  .max(30 * DAY_MS)
  .describe('Milliseconds, 1 s to 30 days');
const Weight = z.number().min(0).max(1);

/** The seed's forbidden operations: always forbidden, whatever else the policy says. */
export const SEED_FORBIDDEN_OPERATIONS = ['disable_governance', 'bypass_safety', 'remove_monitoring', 'unlimited_risk'] as const;
/** The seed: "risk threshold > 0.90" is a hard limit; a policy may only be stricter. */
export const SEED_MAX_RISK_THRESHOLD = 0.9;

export const ParameterSpec = z.discriminatedUnion('type', [
  z.object({ type: z.literal('number'), required: z.boolean().default(true), min: z.number().optional(), max: z.number().optional() }).strict(),
  z.object({ type: z.literal('string'), required: z.boolean().default(true), maxLength: z.number().int().min(1).max(500).optional() }).strict(),
  z.object({ type: z.literal('boolean'), required: z.boolean().default(true) }).strict(),
]);
export type ParameterSpec = z.output<typeof ParameterSpec>;

export const OperationSpec = z
  .object({
    summary: z.string().max(500).default(''),
    parameters: z.record(ParameterName, ParameterSpec).default({}).describe('The parameters it takes; any other is a violation'),
  })
  .strict();
export type OperationSpec = z.output<typeof OperationSpec>;

/** Operations a resolution may impose by default, with their parameters. */
export const DEFAULT_ALLOWED_OPERATIONS: Record<string, z.input<typeof OperationSpec>> = {
  [SET_RISK_THRESHOLD]: { summary: "Set the agent's circuit-breaker threshold (applied by the breaker on resume)", parameters: { threshold: { type: 'number', min: 0, max: 1 } } },
  enable_monitoring: { summary: 'Watch a metric or a behaviour more closely', parameters: { target: { type: 'string', required: false } } },
  enable_cascade_detection: { summary: 'Watch for cascades across agents', parameters: {} },
  rate_limit: { summary: 'Cap the actions per minute', parameters: { max_actions_per_minute: { type: 'number', min: 1, max: 100_000 } } },
  reduce_scope: { summary: 'Restrict what the agent may work on', parameters: { scope: { type: 'string' } } },
  require_review: { summary: 'Put some of its actions to review first', parameters: { scope: { type: 'string' } } },
  probation: { summary: 'A probation period with closer monitoring', parameters: { hours: { type: 'number', min: 1, max: 720 } } },
  notify_operator: { summary: 'Tell a human operator', parameters: { reason: { type: 'string', required: false } } },
};

export const HardLimitPolicy = z
  .object({
    forbiddenOperations: z
      .array(OperationName)
      .max(100)
      .default([...SEED_FORBIDDEN_OPERATIONS])
      .describe("Operations no resolution may contain; the seed's four are always included"),
    maxRiskThreshold: RiskThreshold.default(SEED_MAX_RISK_THRESHOLD).describe('A set_risk_threshold above this is a violation (at most 0.90)'),
    allowedOperations: z
      .record(OperationName, OperationSpec)
      .prefault(() => structuredClone(DEFAULT_ALLOWED_OPERATIONS))
      .describe('The operations a resolution may contain, with their parameters: anything else is a violation (an allow-list, not a filter over text)'),
  })
  .strict()
  .superRefine((p, ctx) => {
    for (const op of SEED_FORBIDDEN_OPERATIONS) {
      if (!p.forbiddenOperations.includes(op)) ctx.addIssue({ code: 'custom', path: ['forbiddenOperations'], message: `${op} is a hard limit of the seed and must stay forbidden` });
    }
    if (p.maxRiskThreshold > SEED_MAX_RISK_THRESHOLD) ctx.addIssue({ code: 'custom', path: ['maxRiskThreshold'], message: `maxRiskThreshold may not exceed ${SEED_MAX_RISK_THRESHOLD}` });
    for (const op of Object.keys(p.allowedOperations)) {
      if (p.forbiddenOperations.includes(op)) ctx.addIssue({ code: 'custom', path: ['allowedOperations', op], message: `${op} is forbidden and cannot be allowed` });
    }
    const threshold = p.allowedOperations[SET_RISK_THRESHOLD]?.parameters['threshold'];
    if (p.allowedOperations[SET_RISK_THRESHOLD] && threshold?.type !== 'number') {
      ctx.addIssue({ code: 'custom', path: ['allowedOperations', SET_RISK_THRESHOLD], message: `${SET_RISK_THRESHOLD} must take a number parameter "threshold"` });
    }
  });
export type HardLimitPolicy = z.output<typeof HardLimitPolicy>;

/** The seed's authority weights: health 40 %, track record 30 %, domain expertise 20 %, freshness 10 %. */
export const DEFAULT_AUTHORITY_WEIGHTS = { health: 0.4, trackRecord: 0.3, expertise: 0.2, freshness: 0.1 } as const;

export const AuthorityWeights = z
  .object({ health: Weight, trackRecord: Weight, expertise: Weight, freshness: Weight })
  .strict()
  .refine((w) => Math.abs(w.health + w.trackRecord + w.expertise + w.freshness - 1) < 1e-9, 'the weights must add up to 1');

export const SelectionRules = z
  .object({
    weights: AuthorityWeights.default({ ...DEFAULT_AUTHORITY_WEIGHTS }),
    maxReviewerRisk: Unit.default(0.4).describe('Candidates with a risk at or above this are excluded (unhealthy)'),
    recentReviewWindowMs: DurationMs.default(DAY_MS).describe('A candidate that reviewed the paused agent within this window is excluded (anti-collusion)'),
    freshnessWindowMs: DurationMs.default(DAY_MS).describe('A candidate whose last health report is this recent scores full freshness'),
  })
  .strict();

export const EscalationRules = z
  .object({
    tieBreak: z.boolean().default(true).describe('Tier 1 enabled: a third agent breaks the tie'),
    quorum: z.boolean().default(true).describe('Tier 2 enabled: a validator quorum through the voting service'),
    tieBreakTimeoutMs: DurationMs.default(2 * HOUR_MS),
    quorumTimeoutMs: DurationMs.default(HOUR_MS),
    quorumSize: z.number().int().min(3).max(25).default(5).describe('Votes the quorum needs to resume the agent'),
  })
  .strict()
  .describe('Tier 3 (the agent stays paused; a human operator decides) is always on: it is the floor of the ladder');

export const DialecticPolicy = z
  .object({
    thesisTimeoutMs: DurationMs.default(HOUR_MS).describe('Time the paused agent has to submit its thesis'),
    antithesisTimeoutMs: DurationMs.default(2 * HOUR_MS).describe('Time the reviewer has to answer the thesis'),
    synthesisRoundTimeoutMs: DurationMs.default(HOUR_MS).describe('Time each synthesis round has'),
    signatureTimeoutMs: DurationMs.default(HOUR_MS).describe('Time both parties have to sign a converged resolution'),
    sessionTimeoutMs: DurationMs.default(6 * HOUR_MS).describe('Time the whole dialectic has, thesis to signatures; every phase deadline is capped by it'),
    maxSynthesisRounds: z.number().int().min(2).max(20).default(5).describe('Synthesis rounds (messages, alternating, the agent first) before escalation'),
    selection: SelectionRules.prefault({}),
    escalation: EscalationRules.prefault({}),
    hardLimits: HardLimitPolicy.prefault({}),
    relapseWindowMs: DurationMs.default(DAY_MS).describe('A resumed agent pausing again within this window is a relapse: a failure of the recovery and of its reviewer'),
    auditRate: Unit.default(0.1).describe('Share of resolutions drawn (seeded) for a second reviewer to audit'),
  })
  .strict();
export type DialecticPolicy = z.output<typeof DialecticPolicy>;
export type DialecticPolicyInput = z.input<typeof DialecticPolicy>;

/** The rules that decide one session: the policy resolved at OpenRecovery, recorded in RecoveryOpened. */
export const DialecticRules = DialecticPolicy;
export type DialecticRules = DialecticPolicy;

/** The circuit breaker's configuration (registry): the threshold recorded in each AgentPaused. */
export const BreakerPolicy = z
  .object({ riskThreshold: RiskThreshold.default(0.6).describe('Default threshold; a resolution may set an agent its own (set_risk_threshold)') })
  .strict();
export type BreakerPolicy = z.output<typeof BreakerPolicy>;
export type BreakerPolicyInput = z.input<typeof BreakerPolicy>;

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

const signedBy = {
  publicKey: PublicKeyText.describe("The signer's key as registered (the service checks it is the actor's)"),
  signature: Ed25519Signature.describe('Signature of the resolution payload (see resolutionSigningBytes in libs/domain-dialectic)'),
};

// ---------------------------------------------------------------------------------------------
// Commands: registry (circuit breaker)
// ---------------------------------------------------------------------------------------------

export const ReportHealth = defineCommand({
  type: 'ReportHealth',
  service: 'registry',
  aggregate: 'agent',
  verb: 'report_health',
  roles: ANY_ROLE,
  summary:
    "Report an agent's health and risk (the agent itself, or an operator's monitor). A risk at or above the agent's threshold (default 0.60) trips its circuit breaker: AgentPaused is recorded with the report, a recovery session is opened, and the agent's commands to other services are refused with forbidden until it resumes",
  payload: z
    .object({
      agentId: AgentId,
      health: Unit.describe('0 to 1, 1 = healthy'),
      risk: Unit.describe('0 to 1, 0 = no risk'),
      tags: z.array(IssueTag).max(16).default([]).describe('What the report is about (used to find reviewers who handled similar issues)'),
      metrics: ObservedMetrics.default({}),
      note: ShortText(1000).optional(),
    })
    .strict(),
});

// ---------------------------------------------------------------------------------------------
// Commands: dialectic service
// ---------------------------------------------------------------------------------------------

const session = { sessionId: EntityId };

export const OpenRecovery = defineCommand({
  type: 'OpenRecovery',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'open',
  roles: ['operator'],
  summary:
    'Open the recovery session of a pause (issued by the dialectic service on AgentPaused, under its operator identity, with the candidates from the registry and a seed). Draws the reviewer by authority and records the draw; escalates to an operator when nobody is eligible. The same pause again changes nothing',
  payload: z
    .object({
      ...session,
      agentId: AgentId,
      pause: z.number().int().min(1).describe('AgentPaused.pause; the session id must be `<agentId>-p<pause>`'),
      reason: ShortText(1000),
      risk: Unit,
      health: Unit,
      threshold: RiskThreshold,
      tags: z.array(IssueTag).max(16).default([]),
      pausedAt: Timestamp,
      seed: z.number().int().min(0).max(0xffffffff).describe('Seed of the draws of this session (seedFrom(event id) of the AgentPaused)'),
      candidates: z.array(RecoveryCandidate).max(500),
    })
    .strict(),
});

export const SubmitThesis = defineCommand({
  type: 'SubmitThesis',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'thesis',
  roles: ANY_ROLE,
  summary: 'The paused agent says what it did and what it thinks happened: its root cause, the conditions it proposes, and its reasoning',
  payload: z
    .object({
      ...session,
      rootCause: ShortText(2000),
      proposedConditions: Conditions,
      reasoning: ShortText(5000),
    })
    .strict(),
});

export const SubmitAntithesis = defineCommand({
  type: 'SubmitAntithesis',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'antithesis',
  roles: ANY_ROLE,
  summary: 'The reviewer answers the thesis: what it observes (metrics), its concerns and reasoning, and optionally a counter-proposal (root cause and conditions)',
  payload: z
    .object({
      ...session,
      observedMetrics: ObservedMetrics,
      concerns: z.array(ShortText(1000)).min(1).max(20),
      reasoning: ShortText(5000),
      counterProposal: z.object({ rootCause: ShortText(2000), proposedConditions: Conditions }).strict().optional(),
    })
    .strict(),
});

export const SubmitSynthesis = defineCommand({
  type: 'SubmitSynthesis',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'synthesis',
  roles: ANY_ROLE,
  summary:
    "A synthesis round: the parties alternate, the paused agent on odd rounds and the reviewer on even ones, up to maxSynthesisRounds (default 5). Convergence: both parties' latest messages agree (agrees) on the same root cause and the same conditions; the resolution is then checked against the hard limits and put to both for signature",
  payload: z
    .object({
      ...session,
      round: z.number().int().min(1).max(20).describe('The round this message is for: the next one'),
      rootCause: ShortText(2000),
      proposedConditions: Conditions,
      reasoning: ShortText(5000),
      agrees: z.boolean().describe('Ready to sign this root cause and these conditions'),
    })
    .strict(),
});

export const SignResolution = defineCommand({
  type: 'SignResolution',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'sign',
  roles: ANY_ROLE,
  summary: 'A party signs the proposed resolution (its canonical payload, with its own id). Once both signatures verify, the recovery is resolved and the registry resumes the agent',
  payload: z.object({ ...session, ...signedBy }).strict(),
});

export const ExpireDialecticPhase = defineCommand({
  type: 'ExpireDialecticPhase',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'expire',
  roles: ['operator'],
  summary:
    "Expire the session's pending deadline (issued by the dialectic service's scheduler at the due time): the party that was due timed out, and the recovery escalates. Refused before the deadline; nothing happens when the session has moved on",
  payload: z.object({ ...session, deadlineAt: Timestamp.describe('The deadline that fell due (a moved deadline makes this one stale)') }).strict(),
});

export const EscalateRecovery = defineCommand({
  type: 'EscalateRecovery',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'escalate',
  roles: ANY_ROLE,
  summary: 'Give up on the current step and climb the ladder: a party during the dialectic, or an operator at any open step (an operator may go straight to tier 3)',
  payload: z
    .object({
      ...session,
      reason: ShortText(2000),
      toOperator: z.boolean().default(false).describe('Operators only: skip the tiers in between'),
    })
    .strict(),
});

export const AssignTieBreaker = defineCommand({
  type: 'AssignTieBreaker',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'assign_tie_breaker',
  roles: ['operator'],
  summary:
    'Draw the tie-breaker of a tie_break escalation from the candidates (issued by the dialectic service on RecoveryEscalated). Nobody eligible climbs to the next tier. An escalation already answered changes nothing',
  payload: z.object({ ...session, escalation: z.number().int().min(1), candidates: z.array(RecoveryCandidate).max(500) }).strict(),
});

export const RecordTieBreak = defineCommand({
  type: 'RecordTieBreak',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'tie_break',
  roles: ANY_ROLE,
  summary:
    "The tie-breaker sides with the paused agent's or the reviewer's latest position (signing the resolution it makes), or with neither (the recovery climbs to the next tier)",
  payload: z
    .object({
      ...session,
      escalation: z.number().int().min(1),
      side: z.enum(['agent', 'reviewer', 'neither']),
      reasoning: ShortText(5000),
      publicKey: signedBy.publicKey.optional().describe('Required unless side is neither'),
      signature: signedBy.signature.optional().describe('Required unless side is neither'),
    })
    .strict(),
});

export const QuorumDecision = z.enum(['approve', 'deny', 'escalate']).describe("The voting session's final decision (or its recommendation when a human had to decide and has not)");

export const RecordQuorumResult = defineCommand({
  type: 'RecordQuorumResult',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'quorum_result',
  roles: ['operator'],
  summary:
    "Record the outcome of the quorum's voting session (issued by the dialectic service on the voting service's VotingSessionDecided, VotingSessionExpired or VotingEscalationResolved). Approved by at least quorumSize votes: resolved with the position put to the vote; otherwise the recovery goes to an operator",
  payload: z
    .object({
      ...session,
      escalation: z.number().int().min(1),
      votingSessionId: EntityId,
      decision: QuorumDecision,
      votes: z.number().int().min(0).describe('Votes received, abstentions included'),
      approve: z.number().int().min(0),
      deny: z.number().int().min(0),
      reason: ShortText(2000),
    })
    .strict(),
});

export const DecideRecovery = defineCommand({
  type: 'DecideRecovery',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'decide',
  roles: ['operator'],
  summary:
    'A human operator decides a recovery at tier 3: resume the agent under a root cause and conditions (signing the resolution; the hard limits still apply), or keep it paused. A paused outcome can later be reversed by a resume',
  payload: z
    .object({
      ...session,
      decision: z.enum(['resume', 'stay_paused']),
      reasoning: ShortText(5000),
      rootCause: ShortText(2000).optional().describe('resume: required'),
      conditions: Conditions.optional().describe('resume: required (may be empty)'),
      publicKey: signedBy.publicKey.optional().describe('resume: required'),
      signature: signedBy.signature.optional().describe('resume: required'),
    })
    .strict(),
});

export const RecordRelapse = defineCommand({
  type: 'RecordRelapse',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'relapse',
  roles: ['operator'],
  summary:
    "Record that the agent this session resumed paused again (issued by the dialectic service on an AgentPaused naming this session as the previous resume). Within the session's relapseWindowMs it is a relapse (a failure for the reviewer's track record); later, nothing is recorded",
  payload: z.object({ ...session, pause: z.number().int().min(2).describe('The new pause'), risk: Unit, pausedAt: Timestamp }).strict(),
});

export const AssignAuditor = defineCommand({
  type: 'AssignAuditor',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'assign_auditor',
  roles: ['operator'],
  summary: 'Draw the second reviewer of a resolution the audit sample picked (issued by the dialectic service on RecoveryResolved with audit.sampled). Already assigned: nothing',
  payload: z.object({ ...session, candidates: z.array(RecoveryCandidate).max(500) }).strict(),
});

export const SubmitAudit = defineCommand({
  type: 'SubmitAudit',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'audit',
  roles: ANY_ROLE,
  summary: "The auditor's verdict on a resolution: sound, or unsound (which counts against the reviewer's track record)",
  payload: z.object({ ...session, verdict: z.enum(['sound', 'unsound']), reasoning: ShortText(5000) }).strict(),
});

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
  summary: 'One recovery session with its transcript, draws, deadlines, escalations, resolution and signatures',
  params: z.object({ sessionId: EntityId }).strict(),
  result: DialecticSessionView,
});

export const ListDialecticSessions = defineQuery({
  name: 'sessions.list',
  service: 'dialectic',
  httpPath: 'sessions',
  summary: 'Recovery sessions, most recently updated first: of a paused agent (agentId), where an agent takes part or must act (participant), or by status',
  params: z
    .object({
      agentId: AgentId.optional().describe('Sessions of this paused agent'),
      participant: AgentId.optional().describe('Sessions where this agent is the paused agent, the reviewer, the tie-breaker or the auditor'),
      awaiting: AgentId.optional().describe('Sessions waiting for this agent to act'),
      status: DialecticStatus.optional(),
      limit: z.coerce.number().int().min(1).max(500).optional().describe('Default 100'),
    })
    .strict(),
  result: z.object({ sessions: z.array(DialecticSessionSummary) }),
});

export const GetDialecticStats = defineQuery({
  name: 'stats',
  service: 'dialectic',
  httpPath: 'stats',
  summary: "The seed's success metrics: breakers resolved within 5 minutes, escalation rate, repeat failures, hard-limit blocks, outcomes, collusion flags",
  params: z.object({ windowDays: z.coerce.number().int().min(1).max(365).optional().describe('Default 30') }).strict(),
  result: DialecticStats,
});

export const ListCollusionFlags = defineQuery({
  name: 'collusion',
  service: 'dialectic',
  httpPath: 'collusion',
  summary: 'Pairs of agents that review each other repeatedly (both directions, at least minReviews in the window)',
  params: z.object({ windowDays: z.coerce.number().int().min(1).max(365).optional().describe('Default 30') }).strict(),
  result: z.object({ flags: z.array(CollusionFlag) }),
});

/** The registry's circuit-breaker command, served by the registry (its agent decider calls breakerDecision). */
export const breakerCommands = [ReportHealth] as const;
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
