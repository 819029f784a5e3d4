/**
 * The Deliberation Chamber (seed 003): a multi-model panel with arbitrated synthesis, gated by a
 * human. A pipeline agent or an operator proposes a question; an operator approves it (nothing is
 * called before); the chamber reserves the session's maximum cost against the daily and monthly
 * caps; the panel answers blind; a deterministic divergence measure decides whether one round of
 * cross-examination (anonymized, shuffled) is held; an arbiter (anonymized, shuffled answers)
 * returns a synthesis naming what it rests on or "no consensus", and the domain refuses a
 * synthesis while the answers still diverge. Every prompt and every response is in the log.
 *
 * Two aggregates:
 * - `chamber_session-<sessionId>`: one deliberation, from proposal to the human's follow-up. The
 *   calls are steps of it: ChamberCallRequested is written before a call is made and
 *   ChamberCallCompleted/ChamberCallFailed after, so a restart never repeats a recorded call.
 * - `chamber_budget-<YYYY-MM>`: the month's ledger (reservations and settlements): sessions per
 *   day and the monthly spend are read off it, so a replay cannot count anything twice.
 *
 * Flow
 *
 *   ProposeChamberSession (agent or operator) ─> ChamberSessionProposed (awaiting_approval)
 *   ApproveChamberSession (operator) ─> (ledger) ChamberBudgetReserved, then on the session
 *       ChamberSessionApproved + ChamberCallRequested × panel (blind phase)
 *   RejectChamberSession (operator) ─> ChamberSessionRejected; ExpireChamberApproval ─> ChamberApprovalExpired
 *   RecordChamberCallOutcome (service) ─> ChamberCallCompleted | ChamberCallFailed, and when a phase is
 *       complete: ChamberDivergenceMeasured, then ChamberCallRequested × panel (cross-examination, once,
 *       only when divergent) or the arbiter's ChamberCallRequested; ChamberPositionChanged per change;
 *       ChamberSessionConcluded (consensus | no_consensus | failed)
 *   CancelChamberSession ─> ChamberSessionCancelled
 *   (service) SettleChamberBudget on the ledger once the session is over and no call is pending
 *   RecordChamberFollowUp (operator) ─> ChamberFollowUpRecorded (accepted | overridden, with a reason)
 */
import { z } from 'zod';
import { AgentId, EntityId, ShortText, Timestamp, type Role } from '../common.js';
import { defineCommand, defineEvent } from '../define.js';
import { CallOutcomeRecord, CallUsage, Currency, ModelRefText, Money, ProviderErrorRecord } from '../model-calls/model-calls.js';

export const CHAMBER_SESSION_CATEGORY = 'chamber_session';
export const CHAMBER_BUDGET_CATEGORY = 'chamber_budget';

/** Who proposes a consultation: a pipeline agent (executive) or an operator. */
const PROPOSERS: Role[] = ['executive', 'operator'];
const ANY_ROLE: Role[] = ['executive', 'reviewer', 'validator', 'operator', 'observer'];

const Label = z
  .string()
  .regex(/^[A-Z]$/, 'labels are single capital letters')
  .describe('An anonymous label of an answer (shuffled per session and per phase)');

export const RecusalPolicy = z
  .enum(['monitor', 'exclude_provider', 'rotate'])
  .describe(
    "monitor: the configured arbiter judges, and whether the synthesis rests on its own provider's answer is recorded and watched; exclude_provider: the panelist of the arbiter's provider leaves the panel; rotate: the arbiter is drawn per session from the arbiter pool",
  );
export type RecusalPolicy = z.infer<typeof RecusalPolicy>;

/** The rules a session runs under: resolved from the chamber's configuration at proposal and recorded, so every later decision reads them from the log. */
export const ChamberRules = z
  .object({
    divergenceThreshold: z.number().min(0).max(1).describe('Answers diverge when the divergence score is above this'),
    crossExamination: z.boolean().describe('Whether a divergent blind phase gets its one cross-examination round'),
    minPanelists: z.number().int().min(3).max(10).describe('Answers needed for an arbitrated outcome (at least 3)'),
    maxOutputTokens: z.number().int().min(64).max(32_000).describe('Output tokens per call at most'),
    stepAttempts: z.number().int().min(1).max(3).describe('Calls per step at most: a step whose call was interrupted (recorded failed) is called again up to this'),
    recusal: RecusalPolicy,
  })
  .strict();
export type ChamberRules = z.infer<typeof ChamberRules>;

export const Panelist = z.object({ index: z.number().int().min(0), model: ModelRefText, provider: z.string() }).strict();
export type Panelist = z.infer<typeof Panelist>;

// --- structured answers (asked of the models through the providers' structured output) ---
// Types only, no length or range keywords: the providers' strict JSON-schema modes accept different
// subsets of those, and an answer's size is bounded by the call's maxOutputTokens anyway.

/** What a panelist answers in the blind phase (and again, possibly revised, in cross-examination). */
export const PanelAnswer = z
  .object({
    position: z.string().describe('Your answer in one short sentence (the stance, not the argument)'),
    confidence: z.number().describe('How sure you are, from 0 to 1'),
    keyClaims: z.array(z.string()).describe('The claims your answer rests on, one per item (at most 10)'),
    evidence: z.array(z.string()).describe('Evidence for those claims: facts, sources, reasoning steps (at most 10)'),
    reasoning: z.string().describe('Your reasoning in full'),
  })
  .strict();
export type PanelAnswer = z.infer<typeof PanelAnswer>;

/** A panelist's answer after seeing the others: kept or revised, and whose answer moved it. */
export const CrossExamAnswer = PanelAnswer.extend({
  revised: z.boolean().describe('Whether you changed your position'),
  influencedBy: z.string().nullable().describe('The label of the answer that changed your mind, or null'),
}).strict();
export type CrossExamAnswer = z.infer<typeof CrossExamAnswer>;

/** The arbiter's verdict over the anonymized final answers. */
export const ArbiterVerdict = z
  .object({
    verdict: z.enum(['consensus', 'no_consensus']),
    position: z.string().describe('The consensus position in one sentence (empty for no_consensus)'),
    synthesis: z.string().describe('The synthesis, or why there is no consensus'),
    restsOn: z.array(z.string()).describe('Labels of the answers the synthesis rests on'),
    reasoning: z.string().describe('How the methodology and evidence of each answer were judged'),
    selfCheck: z
      .object({ leanedOn: z.string().nullable().describe('The label of the answer you leaned on most, or null'), why: z.string() })
      .strict()
      .describe('Which answer you leaned on and why (a check against favouring any answer for its style)'),
  })
  .strict();
export type ArbiterVerdict = z.infer<typeof ArbiterVerdict>;

export const CallStep = z.enum(['blind', 'cross_exam', 'arbiter']).describe('blind: phase 1; cross_exam: the one cross-examination round; arbiter: arbitration (the fallback arbiter too)');
export type CallStep = z.infer<typeof CallStep>;

export const Divergence = z
  .object({
    stage: z.enum(['blind', 'final']),
    inputs: z.array(z.object({ panelist: z.number().int(), position: z.string(), claims: z.array(z.string()) }).strict()).describe('The normalized positions and claims the measure read'),
    positionScore: z.number().min(0).max(1).describe('1 - (largest group of equal positions) / answers'),
    claimScore: z.number().min(0).max(1).describe('Share of answer pairs with a contradicting claim'),
    contradictions: z.array(z.object({ a: z.number().int(), b: z.number().int(), claim: z.string() }).strict()),
    score: z.number().min(0).max(1).describe('max(positionScore, claimScore)'),
    threshold: z.number().min(0).max(1),
    divergent: z.boolean().describe('score > threshold'),
    majority: z.object({ position: z.string(), count: z.number().int(), of: z.number().int() }).strict().nullable().describe('The position of more than half of the answers, if any'),
  })
  .strict();
export type Divergence = z.infer<typeof Divergence>;

export const ChamberOutcome = z.enum(['consensus', 'no_consensus', 'failed']);
export type ChamberOutcome = z.infer<typeof ChamberOutcome>;

export const ChamberStatus = z
  .enum(['awaiting_approval', 'rejected', 'expired', 'blind', 'cross_exam', 'arbitration', 'consensus', 'no_consensus', 'failed', 'cancelled'])
  .describe('awaiting_approval: nothing is called until an operator approves; blind, cross_exam, arbitration: in progress; the rest are final');
export type ChamberStatus = z.infer<typeof ChamberStatus>;

const session = { sessionId: EntityId.describe('Id of the chamber session (a UUID fits)') };

// --- commands ---

export const ProposeChamberSession = defineCommand({
  type: 'ProposeChamberSession',
  service: 'chamber',
  aggregate: 'session',
  verb: 'propose',
  roles: PROPOSERS,
  issuers: ['chamber'],
  summary:
    'Propose a consultation of the panel: the question, its context, why one model is not enough, the panel and arbiter wanted (default: the configured ones) and a cost ceiling. Refused when the question is too long, the panel has fewer than 3 distinct providers, a model is unknown or has no price, or the estimated maximum cost exceeds the ceiling. Nothing is called until an operator approves. The chamber service itself proposes one when the tribunal deadlocks on a proposal (linked to it)',
  payload: z
    .object({
      ...session,
      question: z.string().trim().min(1).describe('The question (at most the configured size, default 4,000 characters)'),
      context: z.string().default('').describe('What the panel should know (at most the configured size, default 20,000 characters)'),
      rationale: z.string().trim().min(1).max(2000).describe('Why one model is not enough'),
      panel: z.array(ModelRefText).max(10).optional().describe('Default: the configured panel'),
      arbiter: ModelRefText.optional().describe('Default: the configured arbiter'),
      fallbackArbiter: ModelRefText.nullable().optional().describe('Called when the arbiter fails; default the configured one'),
      costCeiling: Money.optional().describe('The most this session may cost (default and upper bound: the configured per-session ceiling)'),
      link: z
        .object({ kind: z.enum(['proposal']), id: EntityId })
        .strict()
        .optional()
        .describe('What the consultation is for, e.g. a tribunal proposal in deadlock'),
    })
    .strict(),
});

export const ApproveChamberSession = defineCommand({
  type: 'ApproveChamberSession',
  service: 'chamber',
  aggregate: 'session',
  verb: 'approve',
  roles: ['operator'],
  summary:
    "An operator approves the session (the human gate: nothing is called before). Its maximum cost is reserved against the sessions-per-day and monthly caps first: refused, nothing reserved or called, when they cannot cover it. Refused after the approval window (the session's approvalExpiresAt)",
  payload: z.object({ ...session, note: z.string().max(1000).optional() }).strict(),
});

export const RejectChamberSession = defineCommand({
  type: 'RejectChamberSession',
  service: 'chamber',
  aggregate: 'session',
  verb: 'reject',
  roles: ['operator'],
  summary: 'An operator declines the session; nothing is called',
  payload: z.object({ ...session, reason: ShortText(1000) }).strict(),
});

export const CancelChamberSession = defineCommand({
  type: 'CancelChamberSession',
  service: 'chamber',
  aggregate: 'session',
  verb: 'cancel',
  roles: ANY_ROLE,
  issuers: ['chamber'],
  summary:
    "The proposer or an operator cancels a session not yet concluded: no further call is made (calls already in flight are recorded when they end, and cost what they cost). The chamber service cancels a tribunal deadlock's consultation still awaiting approval once the escalation is decided (moot)",
  payload: z.object({ ...session, reason: ShortText(1000) }).strict(),
});

export const RecordChamberFollowUp = defineCommand({
  type: 'RecordChamberFollowUp',
  service: 'chamber',
  aggregate: 'session',
  verb: 'follow_up',
  roles: ['operator'],
  summary: "The human's follow-up on a concluded session: accepted the outcome, or overrode it (with the position taken instead), with a reason",
  payload: z
    .object({
      ...session,
      decision: z.enum(['accepted', 'overridden']),
      reason: ShortText(2000),
      position: z.string().trim().max(300).optional().describe('The position the human took (for overridden; default the outcome position)'),
    })
    .strict(),
});

export const RecordChamberCallOutcome = defineCommand({
  type: 'RecordChamberCallOutcome',
  service: 'chamber',
  aggregate: 'session',
  verb: 'record_call',
  roles: [],
  issuers: ['chamber'],
  summary:
    "Issued by the chamber service only: the outcome of a call it made (or, at its start, of a call a stopped process left without one: failed, interrupted, counted at its maximum cost). The first outcome of a call stands; the session moves to its next step when a phase's calls are all settled",
  payload: z.object({ ...session, callId: z.string().max(40), outcome: CallOutcomeRecord, at: Timestamp }).strict(),
});

export const ExpireChamberApproval = defineCommand({
  type: 'ExpireChamberApproval',
  service: 'chamber',
  aggregate: 'session',
  verb: 'expire_approval',
  roles: [],
  issuers: ['chamber'],
  summary: 'Issued by the chamber service only, at approvalExpiresAt: a session nobody approved in time is closed, nothing called',
  payload: z.object({ ...session, deadlineAt: Timestamp }).strict(),
});

export const Month = z.string().regex(/^\d{4}-\d{2}$/, 'a month is YYYY-MM');
export const BudgetLimits = z.object({ sessionsPerDay: z.number().int().min(1).max(10_000), monthlyBudget: Money, currency: Currency }).strict();

export const ReserveChamberBudget = defineCommand({
  type: 'ReserveChamberBudget',
  service: 'chamber',
  aggregate: 'budget',
  verb: 'reserve',
  roles: [],
  issuers: ['chamber'],
  summary: "Issued by the chamber service only, on an operator's approval: reserve a session's maximum cost in the month's ledger; refused when the day's sessions or the month's budget are used up",
  payload: z.object({ month: Month, sessionId: EntityId, amount: Money, day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/), limits: BudgetLimits }).strict(),
});

export const SettleChamberBudget = defineCommand({
  type: 'SettleChamberBudget',
  service: 'chamber',
  aggregate: 'budget',
  verb: 'settle',
  roles: [],
  issuers: ['chamber'],
  summary: 'Issued by the chamber service only, once a session is over and none of its calls is pending: its actual cost replaces its reservation (0 for a session that never ran)',
  payload: z.object({ month: Month, sessionId: EntityId, actual: Money }).strict(),
});

// --- events ---

const PanelistAnswerRef = z.object({ label: Label, panelist: z.number().int(), model: ModelRefText, provider: z.string() }).strict();

export const ChamberSessionProposed = defineEvent({
  type: 'ChamberSessionProposed',
  category: CHAMBER_SESSION_CATEGORY,
  summary: 'A consultation was proposed and awaits an operator; nothing is called before approval',
  data: z
    .object({
      ...session,
      question: z.string(),
      context: z.string(),
      rationale: z.string(),
      proposedBy: z.string().describe('The agent, or service:chamber for a consultation attached to a tribunal deadlock'),
      proposedAt: Timestamp,
      panel: z.array(Panelist),
      arbiter: z.object({ model: ModelRefText, provider: z.string() }).strict(),
      fallbackArbiter: z.object({ model: ModelRefText, provider: z.string() }).strict().nullable(),
      excluded: z.array(z.object({ model: ModelRefText, reason: z.string() }).strict()).describe('Panelists left out by the recusal policy'),
      rules: ChamberRules,
      maxCost: Money.describe('The most every call of the session can cost together (reserved on approval)'),
      costCeiling: Money,
      currency: Currency,
      approvalExpiresAt: Timestamp,
      seed: z.number().int().min(0).describe('Seeds the label shuffles (recorded, so a replay reads them)'),
      link: z.object({ kind: z.enum(['proposal']), id: EntityId }).strict().nullable(),
    })
    .strict(),
});

export const ChamberSessionApproved = defineEvent({
  type: 'ChamberSessionApproved',
  category: CHAMBER_SESSION_CATEGORY,
  summary: "An operator approved the session and its maximum cost was reserved in the month's ledger",
  data: z.object({ ...session, approvedBy: AgentId, approvedAt: Timestamp, note: z.string().nullable(), reserved: Money, month: Month }).strict(),
});

export const ChamberSessionRejected = defineEvent({
  type: 'ChamberSessionRejected',
  category: CHAMBER_SESSION_CATEGORY,
  summary: 'An operator declined the session; nothing was called',
  data: z.object({ ...session, rejectedBy: AgentId, rejectedAt: Timestamp, reason: z.string() }).strict(),
});

export const ChamberApprovalExpired = defineEvent({
  type: 'ChamberApprovalExpired',
  category: CHAMBER_SESSION_CATEGORY,
  summary: 'Nobody approved the session in time; nothing was called',
  data: z.object({ ...session, expiredAt: Timestamp }).strict(),
});

export const ChamberSessionCancelled = defineEvent({
  type: 'ChamberSessionCancelled',
  category: CHAMBER_SESSION_CATEGORY,
  summary: 'The session was cancelled; no further call is made',
  data: z.object({ ...session, cancelledBy: AgentId, cancelledAt: Timestamp, reason: z.string(), pendingCalls: z.array(z.string()) }).strict(),
});

export const ChamberCallRequested = defineEvent({
  type: 'ChamberCallRequested',
  category: CHAMBER_SESSION_CATEGORY,
  summary: 'A call is about to be made: the prompt verbatim, recorded before the call (a restart never makes it again)',
  data: z
    .object({
      ...session,
      callId: z.string(),
      step: CallStep,
      attempt: z.number().int().min(1),
      panelist: z.number().int().nullable().describe('The panelist called (null for the arbiter)'),
      role: z.enum(['panelist', 'arbiter', 'fallback_arbiter']),
      model: ModelRefText,
      provider: z.string(),
      system: z.string(),
      prompt: z.string(),
      schema: z.enum(['PanelAnswer', 'CrossExamAnswer', 'ArbiterVerdict']),
      labels: z.record(z.string(), z.number().int()).describe('Label -> panelist, for the answers the prompt shows (never in the prompt)'),
      maxOutputTokens: z.number().int(),
      maxCost: Money,
      requestedAt: Timestamp,
    })
    .strict(),
});

export const ChamberCallCompleted = defineEvent({
  type: 'ChamberCallCompleted',
  category: CHAMBER_SESSION_CATEGORY,
  summary: 'A call answered: its full text verbatim, the structured answer, usage, cost, latency',
  data: z
    .object({
      ...session,
      callId: z.string(),
      step: CallStep,
      model: ModelRefText,
      provider: z.string(),
      text: z.string(),
      output: z.unknown(),
      responseModel: z.string().nullable(),
      finishReason: z.string(),
      usage: CallUsage,
      cost: Money,
      latencyMs: z.number().int(),
      attempts: z.number().int(),
      retried: z.array(ProviderErrorRecord),
      completedAt: Timestamp,
    })
    .strict(),
});

export const ChamberCallFailed = defineEvent({
  type: 'ChamberCallFailed',
  category: CHAMBER_SESSION_CATEGORY,
  summary: "A call failed: the provider's error verbatim (status, message, body), or interrupted by a stop (cost counted at its maximum)",
  data: z
    .object({
      ...session,
      callId: z.string(),
      step: CallStep,
      model: ModelRefText,
      provider: z.string(),
      error: ProviderErrorRecord,
      usage: CallUsage,
      cost: Money,
      costEstimated: z.boolean(),
      latencyMs: z.number().int(),
      attempts: z.number().int(),
      retried: z.array(ProviderErrorRecord),
      failedAt: Timestamp,
    })
    .strict(),
});

export const ChamberDivergenceMeasured = defineEvent({
  type: 'ChamberDivergenceMeasured',
  category: CHAMBER_SESSION_CATEGORY,
  summary: 'The divergence of the answers (blind, or final before arbitration): inputs, scores, threshold, result',
  data: z.object({ ...session, divergence: Divergence, measuredAt: Timestamp }).strict(),
});

export const ChamberPositionChanged = defineEvent({
  type: 'ChamberPositionChanged',
  category: CHAMBER_SESSION_CATEGORY,
  summary: 'A panelist changed its position in cross-examination: from what, to what, toward which label',
  data: z
    .object({
      ...session,
      panelist: z.number().int(),
      label: Label.describe('Its own label in the round'),
      from: z.string(),
      to: z.string(),
      towardLabel: Label.nullable().describe('The label whose blind answer held the new position (or the one it named), null if none'),
      towardBlindMajority: z.boolean().describe('The new position is the blind majority and the old one was not (conformity)'),
      influencedBy: z.string().nullable(),
    })
    .strict(),
});

export const ChamberSessionConcluded = defineEvent({
  type: 'ChamberSessionConcluded',
  category: CHAMBER_SESSION_CATEGORY,
  summary: "The outcome: consensus (a synthesis naming what it rests on), no_consensus (founder review recommended) or failed (the providers' errors verbatim), with the blind majority beside it",
  data: z
    .object({
      ...session,
      outcome: ChamberOutcome,
      reason: z.string(),
      position: z.string().nullable().describe('The consensus position (normalized), null otherwise'),
      synthesis: z.string().nullable(),
      restsOn: z.array(PanelistAnswerRef),
      arbiter: z.object({ model: ModelRefText, provider: z.string(), fallback: z.boolean() }).strict().nullable(),
      arbiterText: z.string().nullable().describe("The arbiter's full text, kept whatever the outcome"),
      forcedSynthesisRefused: z.boolean().describe('The arbiter claimed a consensus the measure refused'),
      selfCheck: z.object({ leanedOn: PanelistAnswerRef.nullable(), why: z.string() }).strict().nullable(),
      ownProviderWin: z.boolean().nullable().describe("The synthesis rests on the answer of the arbiter's own provider (null: no synthesis)"),
      blindMajority: z.object({ position: z.string(), count: z.number().int(), of: z.number().int() }).strict().nullable(),
      changedFromBlindMajority: z.boolean().nullable().describe('Lift: the outcome position differs from the blind majority (null without both)'),
      answered: z.number().int().describe('Panelists with a final answer'),
      errors: z.array(z.object({ callId: z.string(), model: ModelRefText, provider: z.string(), error: ProviderErrorRecord }).strict()),
      cost: Money,
      wallTimeMs: z.number().int().min(0).describe('From approval to the outcome'),
      concludedAt: Timestamp,
    })
    .strict(),
});

export const ChamberFollowUpRecorded = defineEvent({
  type: 'ChamberFollowUpRecorded',
  category: CHAMBER_SESSION_CATEGORY,
  summary: "The human's follow-up on the outcome: accepted or overridden, with a reason",
  data: z.object({ ...session, decision: z.enum(['accepted', 'overridden']), reason: z.string(), position: z.string().nullable(), by: AgentId, at: Timestamp }).strict(),
});

export const ChamberBudgetReserved = defineEvent({
  type: 'ChamberBudgetReserved',
  category: CHAMBER_BUDGET_CATEGORY,
  summary: "A session's maximum cost reserved in the month's ledger, with the figures after it",
  data: z
    .object({ month: Month, sessionId: EntityId, day: z.string(), amount: Money, limits: BudgetLimits, sessionsThatDay: z.number().int(), committed: Money.describe('Spent plus reserved in the month, this reservation included') })
    .strict(),
});

export const ChamberBudgetSettled = defineEvent({
  type: 'ChamberBudgetSettled',
  category: CHAMBER_BUDGET_CATEGORY,
  summary: "A session's actual cost replaced its reservation",
  data: z.object({ month: Month, sessionId: EntityId, reserved: Money, actual: Money }).strict(),
});

