// Dialectic contracts: the recovery policy (hard limits, selection and escalation rules) and the circuit breaker's configuration.
import { z } from 'zod';
import { Unit } from '../registry/agents.js';
import { OperationName, ParameterName, RiskThreshold, SET_RISK_THRESHOLD } from './vocabulary.js';

// ---------------------------------------------------------------------------------------------
// Policy (configuration as data: RecoveryOpened records the resolved rules, and every later
// decision on that session reads them from there)
// ---------------------------------------------------------------------------------------------

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

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
    minConditions: z
      .number()
      .int()
      .min(1)
      .max(20)
      .default(1)
      .describe('A resolution resumes the agent with at least this many conditions ("resume with conditions"); fewer is a violation (too_few_conditions)'),
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
  .object({
    riskThreshold: RiskThreshold.default(0.6).describe('Default threshold; a resolution may set an agent its own (set_risk_threshold)'),
    probationRiskMargin: Unit.default(0.1).describe('On probation, the breaker trips this much below the threshold in force'),
    probationReportIntervalMs: z
      .number()
      .int()
      .min(1000)
      .max(DAY_MS)
      .default(3_600_000)
      .describe('On probation, the agent must have reported its health (ReportHealth) within this many ms to send anything else'),
    reportMinChange: Unit.default(0.05).describe(
      'A health report that trips nothing is recorded when its health or risk moved at least this much from the last recorded report (or its tags changed, or it has a note); 0: every report is recorded',
    ),
    reportSampleMs: z
      .number()
      .int()
      .min(0)
      .max(DAY_MS)
      .default(60_000)
      .describe('...and at least once this often per agent, whatever it says (a periodic sample); 0: every report is recorded'),
  })
  .strict();
export type BreakerPolicy = z.output<typeof BreakerPolicy>;
export type BreakerPolicyInput = z.input<typeof BreakerPolicy>;
