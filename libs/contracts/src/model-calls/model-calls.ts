/**
 * Model calls in the log (design decision 9): what every model call records, and the ledger of the
 * calls an agent makes itself (a participant of the fleet, a debater played by a model).
 *
 * `CallOutcomeRecord` is the one record of a call's outcome: the chamber's calls (ChamberCallCompleted,
 * ChamberCallFailed) and an agent's (ModelCallRecorded) carry it; `outcomeRecord` and
 * `interruptedRecord` in @agora/providers build it.
 *
 * The ledger, served by the registry (which holds the agents), per agent and month as the chamber's
 * budget is: `model_calls-<agentId>` holds the agent's budget, the most its calls may cost in a
 * month (UTC), from the month it is set in until it is changed; `model_calls-<agentId>@<YYYY-MM>`
 * holds every call the agent reserved that month and its outcome, so "would this call exceed the
 * month's budget" and "was this call id already reserved" are decided on one bounded stream. The
 * month's first reservation copies the budget into it (ModelBudgetSet), and so does the first one
 * after a change. (Logs written before ledgers were monthly have one stream per agent,
 * `model_calls-<agentId>`, with the budget "in all" and every call: still read, their calls
 * counted for the month they were reserved in.)
 *
 *   SetModelBudget (operator) ─> ModelBudgetSet (amount a month, currency: the provider price table's)
 *   ReserveModelCall (the agent itself, before the call) ─> ModelCallReserved
 *       refused: no budget, another currency, spent + open reservations + this call's maximum over
 *       the month's budget, or the call id already reserved this month (nothing is called)
 *   RecordModelCallOutcome (the agent itself, after the call) ─> ModelCallRecorded
 *       the text verbatim, usage, cost, latency, or the provider's error verbatim; a call the agent
 *       never recorded (its process was killed mid-call) is recorded `interrupted` at its maximum
 *       cost when it next asks for that call id, and never made again under that id
 */
import { z } from 'zod';
import { AgentId, ShortText, Timestamp, type Role } from '../common.js';
import { access, defineCommand, defineEvent, defineQuery } from '../define.js';
import { NextCursor, pageParams } from '../paging.js';

export const MODEL_CALLS_CATEGORY = 'model_calls';

export const ModelRefText = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,39}:[^\s]{1,200}$/, 'a model is written <provider>:<model>, e.g. openai:gpt-4.1')
  .describe('A model as `<provider>:<model>`, e.g. `anthropic:claude-sonnet-4-20250514`');
export const Money = z.number().min(0).max(1_000_000).describe('An amount in the configured currency');
export const Currency = z.string().regex(/^[A-Z]{3}$/);

export const ProviderErrorRecord = z
  .object({
    kind: z.enum(['http', 'timeout', 'network', 'invalid_output', 'config', 'aborted', 'interrupted']),
    message: z.string(),
    status: z.number().int().optional(),
    body: z.string().optional().describe("The provider's error body, verbatim"),
    text: z.string().optional().describe('What the model answered, for invalid_output'),
    retryable: z.boolean(),
  })
  .strict();
export type ProviderErrorRecord = z.infer<typeof ProviderErrorRecord>;

export const CallUsage = z.object({ inputTokens: z.number().int().min(0), outputTokens: z.number().int().min(0) }).strict();

export const CallOutcomeRecord = z.discriminatedUnion('ok', [
  z
    .object({
      ok: z.literal(true),
      text: z.string().describe('The full response text, verbatim'),
      output: z.unknown().describe('The structured output'),
      responseModel: z.string().nullable(),
      finishReason: z.string(),
      usage: CallUsage,
      cost: Money,
      latencyMs: z.number().int().min(0),
      attempts: z.number().int().min(0),
      retried: z.array(ProviderErrorRecord),
    })
    .strict(),
  z
    .object({
      ok: z.literal(false),
      error: ProviderErrorRecord,
      usage: CallUsage,
      cost: Money,
      costEstimated: z.boolean().describe('True for an interrupted call: its cost is unknown and counted at its maximum'),
      latencyMs: z.number().int().min(0),
      attempts: z.number().int().min(0),
      retried: z.array(ProviderErrorRecord),
    })
    .strict(),
]);
export type CallOutcomeRecord = z.infer<typeof CallOutcomeRecord>;

/** A call id: chosen by the agent, deterministic from what caused the call (a UUID v5 of the triggering event and attempt fits). */
export const CallId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/, 'call ids are 1 to 128 letters, digits, "_", ".", ":" or "-"')
  .describe('Id of the call within the agent\'s ledger: the same cause and attempt always give the same id');

/** Every agent role but the auditor's (it reads everything and sends no command): an agent calls models for itself, within the budget an operator set it. */
const AGENT_ROLES: Role[] = ['executive', 'reviewer', 'validator', 'operator', 'observer', 'debater'];
/** Under rules 1 and 2 the auditor could reserve and record model calls too (libs/decider RULES_VERSION 3). */
const AUDITOR_BEFORE_RULES_3 = { rules: 3, roles: [...AGENT_ROLES, 'auditor'] as Role[] };
const ITSELF = 'the agent itself (agentId is the actor): nobody reserves or records calls for another agent';
const agent = { agentId: AgentId.describe('The agent whose ledger it is') };

// --- commands ---

export const SetModelBudget = defineCommand({
  type: 'SetModelBudget',
  service: 'registry',
  aggregate: 'model_calls',
  verb: 'set_budget',
  roles: ['operator'],
  summary:
    "An operator sets (or changes) an agent's model budget: the most its model calls may cost in a month (UTC), in the provider price table's currency, from this month on until it is changed. Lowering it below what is spent and reserved this month is allowed (further reservations are refused); changing the currency once a call is reserved this month is refused",
  payload: z.object({ ...agent, amount: Money, currency: Currency, note: z.string().trim().max(1000).optional() }).strict(),
});

export const ReserveModelCall = defineCommand({
  type: 'ReserveModelCall',
  service: 'registry',
  aggregate: 'model_calls',
  verb: 'reserve',
  roles: AGENT_ROLES,
  rolesBefore: AUDITOR_BEFORE_RULES_3,
  relation: ITSELF,
  whilePaused: true,
  summary:
    "The agent reserves a model call before making it: its id, purpose, model and maximum cost (ProviderLayer.maxCost). Refused (illegal_state, nothing reserved) when the agent has no budget, when what is spent plus what is reserved this month plus this maximum exceeds the budget, or when the call id is already reserved; invalid_command for another currency than the budget's",
  payload: z.object({ ...agent, callId: CallId, purpose: ShortText(300), model: ModelRefText, maxCost: Money, currency: Currency }).strict(),
});

export const RecordModelCallOutcome = defineCommand({
  type: 'RecordModelCallOutcome',
  service: 'registry',
  aggregate: 'model_calls',
  verb: 'record',
  roles: AGENT_ROLES,
  rolesBefore: AUDITOR_BEFORE_RULES_3,
  relation: ITSELF,
  whilePaused: true,
  summary:
    "The agent records the outcome of a call it reserved: the text verbatim, usage, cost and latency, or the provider's error verbatim; or, for a call its process left without an outcome, `interrupted` at the reservation's maximum cost. Refused for a call not reserved (not_found) and for a second, different outcome (illegal_state); the same outcome again changes nothing",
  payload: z.object({ ...agent, callId: CallId, outcome: CallOutcomeRecord }).strict(),
});

// --- events ---

export const ModelBudgetSet = defineEvent({
  type: 'ModelBudgetSet',
  category: MODEL_CALLS_CATEGORY,
  summary: "An agent's model budget was set or changed (on its budget stream), or copied into a month's ledger by the reservation that first meets it there",
  data: z
    .object({ ...agent, amount: Money, currency: Currency, previous: Money.nullable().describe('The budget before (null: none)'), note: z.string().nullable(), setBy: AgentId, setAt: Timestamp })
    .strict(),
});

export const ModelCallReserved = defineEvent({
  type: 'ModelCallReserved',
  category: MODEL_CALLS_CATEGORY,
  summary: "A model call reserved against the agent's budget for the month, before it was made, with the month's figures after it",
  data: z
    .object({
      ...agent,
      callId: CallId,
      purpose: z.string(),
      model: ModelRefText,
      maxCost: Money,
      currency: Currency,
      budget: Money,
      committed: Money.describe("The month's spent plus reserved, this reservation included"),
      reservedAt: Timestamp,
    })
    .strict(),
});

export const ModelCallRecorded = defineEvent({
  type: 'ModelCallRecorded',
  category: MODEL_CALLS_CATEGORY,
  summary: "A reserved call's outcome: the text verbatim, usage, cost, latency, or the provider's error verbatim (interrupted: the process stopped mid-call, counted at its maximum cost)",
  data: z.object({ ...agent, callId: CallId, model: ModelRefText, outcome: CallOutcomeRecord, spent: Money.describe("The agent's spend after it in the month the call was reserved in"), recordedAt: Timestamp }).strict(),
});

// --- queries ---

export const ModelCallStatus = z.enum(['reserved', 'completed', 'failed', 'interrupted']).describe('reserved: no outcome recorded yet (in flight, or its process stopped); the others: the outcome');
export type ModelCallStatus = z.infer<typeof ModelCallStatus>;

export const ModelCallView = z
  .object({
    ...agent,
    callId: CallId,
    purpose: z.string(),
    model: ModelRefText,
    maxCost: Money,
    currency: Currency,
    status: ModelCallStatus,
    reservedAt: Timestamp,
    outcome: CallOutcomeRecord.nullable(),
    recordedAt: Timestamp.nullable(),
  })
  .strict();
export type ModelCallView = z.infer<typeof ModelCallView>;

/** A ledger's month, `YYYY-MM` (UTC). */
export const LedgerMonth = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'a month is written YYYY-MM').describe('A month, `YYYY-MM` (UTC)');

export const ModelLedgerView = z
  .object({
    ...agent,
    month: LedgerMonth,
    budget: z.object({ amount: Money, currency: Currency, setBy: AgentId, setAt: Timestamp }).strict().nullable().describe("The month's budget: what its reservations were decided against, or the agent's budget now when none was"),
    spent: Money.describe('Cost of the recorded calls reserved in the month'),
    reserved: Money.describe('Maximum cost of the calls reserved in the month and not yet recorded'),
    remaining: Money.nullable().describe('Budget minus spent and reserved, at least 0 (null: no budget)'),
    calls: z.object({ total: z.number().int(), reserved: z.number().int(), completed: z.number().int(), failed: z.number().int(), interrupted: z.number().int() }).strict(),
    revision: z.number().int().describe('The revision of the month\'s ledger stream (-1: nothing recorded)'),
  })
  .strict();
export type ModelLedgerView = z.infer<typeof ModelLedgerView>;

export const GetModelLedger = defineQuery({
  name: 'model_calls.ledger',
  service: 'registry',
  httpPath: 'agents/:agentId/model-calls',
  visibility: { agent: access.own('agentId'), observer: access.none },
  summary: "An agent's model budget, spend and reservations of a month (default: this month, UTC), and the month's calls in the order reserved (paged): for the audit and the fleet's report",
  params: z.object({ ...agent, month: LedgerMonth.optional(), ...pageParams }).strict(),
  result: z.object({ ledger: ModelLedgerView, calls: z.array(ModelCallView), nextCursor: NextCursor }),
});

export const GetModelCall = defineQuery({
  name: 'model_calls.get',
  service: 'registry',
  httpPath: 'agents/:agentId/model-calls/:callId',
  visibility: { agent: access.own('agentId'), observer: access.none },
  summary: 'One call of an agent by its id, reserved this month or the month before: reserved (no outcome yet) or its outcome; not_found when not reserved then',
  params: z.object({ ...agent, callId: CallId }).strict(),
  result: ModelCallView,
});

