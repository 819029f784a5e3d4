import type { CallOutcomeRecord } from '@agora/contracts';
import { DeciderSpecification, expectConformingEvent, fold, type CommandContext } from '@agora/decider';
import { modelLedgerAnomalies, modelLedgerDecider, type ModelLedgerCommand, type ModelLedgerEvent } from '../src/model-calls.js';

const spec = DeciderSpecification.for(modelLedgerDecider);
const at = (s: number) => new Date(Date.UTC(2026, 10, 26, 10, 0, s)).toISOString();
const operator: CommandContext = { now: at(0), actor: 'root', actorRoles: ['operator'], commandId: 'c0' };
const self = (s = 1): CommandContext => ({ now: at(s), actor: 'harbinger', actorRoles: ['reviewer'], commandId: `c${s}` });

const budgetSet: ModelLedgerEvent = { type: 'ModelBudgetSet', data: { agentId: 'harbinger', amount: 1, currency: 'USD', previous: null, note: null, setBy: 'root', setAt: at(0) } };
const reserve = (callId: string, maxCost = 0.3, context = self()): ModelLedgerCommand => ({ type: 'ReserveModelCall', context, payload: { agentId: 'harbinger', callId, purpose: 'review proposal p-1 round 1', model: 'openai:gpt-4.1', maxCost, currency: 'USD' } });
const reserved = (callId: string, maxCost = 0.3, committed = maxCost, s = 1): ModelLedgerEvent => ({
  type: 'ModelCallReserved',
  data: { agentId: 'harbinger', callId, purpose: 'review proposal p-1 round 1', model: 'openai:gpt-4.1', maxCost, currency: 'USD', budget: 1, committed, reservedAt: at(s) },
});
const answered = (cost = 0.01): CallOutcomeRecord => ({ ok: true, text: '{"verdict":"approve"}', output: { verdict: 'approve' }, responseModel: 'gpt-4.1-2025', finishReason: 'stop', usage: { inputTokens: 900, outputTokens: 120 }, cost, latencyMs: 840, attempts: 1, retried: [] });
const http500: CallOutcomeRecord = { ok: false, error: { kind: 'http', status: 500, message: 'Internal server error', body: '{"error":"boom"}', retryable: true }, usage: { inputTokens: 0, outputTokens: 0 }, cost: 0, costEstimated: false, latencyMs: 30, attempts: 2, retried: [] };
const interrupted = (maxCost: number): CallOutcomeRecord => ({ ok: false, error: { kind: 'interrupted', message: 'the process stopped', retryable: true }, usage: { inputTokens: 0, outputTokens: 0 }, cost: maxCost, costEstimated: true, latencyMs: 0, attempts: 0, retried: [] });
const record = (callId: string, outcome: CallOutcomeRecord, context = self(2)): ModelLedgerCommand => ({ type: 'RecordModelCallOutcome', context, payload: { agentId: 'harbinger', callId, outcome } });
const recorded = (callId: string, outcome: CallOutcomeRecord, spent: number, s = 2): ModelLedgerEvent => ({ type: 'ModelCallRecorded', data: { agentId: 'harbinger', callId, model: 'openai:gpt-4.1', outcome, spent, recordedAt: at(s) } });

describe('model-call ledger decider', () => {
  it('sets a budget, and changes it naming the one before', () => {
    spec([]).when({ type: 'SetModelBudget', context: operator, payload: { agentId: 'harbinger', amount: 1, currency: 'USD' } }).then([budgetSet]);
    spec([budgetSet]).when({ type: 'SetModelBudget', context: operator, payload: { agentId: 'harbinger', amount: 1, currency: 'USD' } }).thenNothing();
    spec([budgetSet])
      .when({ type: 'SetModelBudget', context: operator, payload: { agentId: 'harbinger', amount: 2.5, currency: 'USD', note: 'more reviews this week' } })
      .then([{ type: 'ModelBudgetSet', data: { agentId: 'harbinger', amount: 2.5, currency: 'USD', previous: 1, note: 'more reviews this week', setBy: 'root', setAt: at(0) } }]);
  });

  it('refuses to change the currency once a call is reserved', () => {
    spec([budgetSet]).when({ type: 'SetModelBudget', context: operator, payload: { agentId: 'harbinger', amount: 1, currency: 'EUR' } }).thenEvents((e) => expect(e).toHaveLength(1));
    spec([budgetSet, reserved('a')]).when({ type: 'SetModelBudget', context: operator, payload: { agentId: 'harbinger', amount: 1, currency: 'EUR' } }).thenRefuses('illegal_state', /reserved in USD/);
  });

  it('reserves a call within the budget, with what is committed after it', () => {
    spec([budgetSet]).when(reserve('a')).then([reserved('a')]);
    spec([budgetSet, reserved('a'), recorded('a', answered(0.02), 0.02)]).when(reserve('b', 0.5)).then([reserved('b', 0.5, 0.52)]);
  });

  it('refuses a call with no budget, over the budget, in another currency, or under an id already reserved; nothing is reserved', () => {
    spec([]).when(reserve('a')).thenRefuses('illegal_state', /no model budget/);
    const over = spec([budgetSet, reserved('a', 0.6)]).when(reserve('b', 0.5)).thenRefuses('illegal_state', /exceed the budget of 1/);
    expect(over.details).toMatchObject({ reason: 'over_budget', spent: 0, reserved: 0.6, maxCost: 0.5 });
    spec([budgetSet]).when({ ...reserve('a'), payload: { ...(reserve('a').payload as object), currency: 'EUR' } } as ModelLedgerCommand).thenRefuses('invalid_command', /priced in EUR/);
    spec([budgetSet, reserved('a')]).when(reserve('a')).thenRefuses('illegal_state', /already reserved \(reserved\)/);
    spec([budgetSet, reserved('a'), recorded('a', answered(), 0.01)]).when(reserve('a')).thenRefuses('illegal_state', /already reserved \(completed\)/);
  });

  describe("a month's ledger (model_calls-<agentId>@<YYYY-MM>), given the agent's budget by the registry", () => {
    const budget = { amount: 1, currency: 'USD', setBy: 'root', setAt: at(0) };
    const carrying = (callId: string, maxCost = 0.3, given: typeof budget | null = budget): ModelLedgerCommand => ({ ...reserve(callId, maxCost), payload: { ...(reserve(callId, maxCost).payload as object), budget: given } } as ModelLedgerCommand);

    it("copies the budget into the month's stream with its first reservation, and again once it changed", () => {
      spec([]).when(carrying('a')).then([budgetSet, reserved('a')]);
      spec([budgetSet, reserved('a')]).when(carrying('b', 0.2)).then([reserved('b', 0.2, 0.5)]);
      const raised = { ...budget, amount: 2, setAt: at(5) };
      spec([budgetSet, reserved('a', 0.9)])
        .when(carrying('b', 0.5, raised))
        .then([{ type: 'ModelBudgetSet', data: { agentId: 'harbinger', amount: 2, currency: 'USD', previous: 1, note: null, setBy: 'root', setAt: at(5) } }, { ...reserved('b', 0.5, 1.4), data: { ...(reserved('b', 0.5, 1.4).data as object), budget: 2 } } as ModelLedgerEvent]);
    });

    it("decides against the month's spend only: a new month starts at 0 under the same budget", () => {
      // Last month's stream is full; this month's is empty: the budget holds again.
      spec([budgetSet, reserved('a', 0.6)]).when(carrying('b', 0.5)).thenRefuses('illegal_state', /exceed the budget of 1/);
      spec([]).when(carrying('b', 0.5)).then([budgetSet, reserved('b', 0.5)]);
    });

    it('refuses with no budget carried, and a budget whose currency moved under the month\'s calls', () => {
      spec([]).when(carrying('a', 0.3, null)).thenRefuses('illegal_state', /no model budget/);
      spec([budgetSet, reserved('a')]).when(carrying('b', 0.3, { ...budget, currency: 'EUR', setAt: at(5) })).thenRefuses('illegal_state', /reserved in USD: its budget in EUR applies from next month/);
    });

    it("refuses a budget's new currency on the budget stream when the registry says this month's calls are in another", () => {
      spec([budgetSet]).when({ type: 'SetModelBudget', context: operator, payload: { agentId: 'harbinger', amount: 1, currency: 'EUR', reservedIn: 'USD' } }).thenRefuses('illegal_state', /reserved in USD/);
    });
  });

  it('lets only the agent itself reserve and record its calls', () => {
    spec([budgetSet]).when(reserve('a', 0.3, { ...self(), actor: 'root', actorRoles: ['operator'] })).thenRefuses('forbidden', /only the agent itself/);
    spec([budgetSet, reserved('a')]).when(record('a', answered(), { ...self(), actor: 'sentinel' })).thenRefuses('forbidden', /only the agent itself/);
  });

  it("records an outcome (the text or the provider's error verbatim) with the spend after it", () => {
    spec([budgetSet, reserved('a')]).when(record('a', answered(0.0123))).then([recorded('a', answered(0.0123), 0.0123)]);
    spec([budgetSet, reserved('a')]).when(record('a', http500)).then([recorded('a', http500, 0)]);
    for (const event of [budgetSet, reserved('a'), recorded('a', http500, 0)]) expectConformingEvent(event, 'model_calls');
  });

  it('refuses an outcome for a call never reserved, and a second different outcome; the same outcome again is nothing', () => {
    spec([budgetSet]).when(record('a', answered())).thenRefuses('not_found', /never reserved/);
    spec([budgetSet, reserved('a'), recorded('a', answered(), 0.01)]).when(record('a', http500)).thenRefuses('illegal_state', /already has its outcome \(completed\)/);
    spec([budgetSet, reserved('a'), recorded('a', answered(), 0.01)]).when(record('a', answered())).thenNothing();
  });

  it('settles an interrupted call at its maximum cost only', () => {
    spec([budgetSet, reserved('a', 0.3)]).when(record('a', interrupted(0.3))).then([recorded('a', interrupted(0.3), 0.3)]);
    spec([budgetSet, reserved('a', 0.3)]).when(record('a', interrupted(0.1))).thenRefuses('invalid_command', /maximum cost \(0.3/);
  });

  it('folds spend and open reservations', () => {
    const state = fold(modelLedgerDecider, [budgetSet, reserved('a', 0.3), reserved('b', 0.2, 0.5), recorded('a', answered(0.05), 0.05)]);
    expect(state).toMatchObject({ spent: 0.05, reserved: 0.2, order: ['a', 'b'] });
    expect(state.calls['b']!.outcome).toBeNull();
  });

  it('names what the audit finds: an outcome with no reservation, a second outcome, spend over the budget', () => {
    const anomalies = (given: ModelLedgerEvent[], event: ModelLedgerEvent) => {
      const before = fold(modelLedgerDecider, given);
      return modelLedgerAnomalies(before, event, modelLedgerDecider.evolve(before, event));
    };
    expect(anomalies([budgetSet, reserved('a')], recorded('a', answered(), 0.01))).toEqual([]);
    expect(anomalies([budgetSet], recorded('x', answered(), 0.01))).toEqual([expect.stringMatching(/call x of harbinger is recorded with no reservation/)]);
    expect(anomalies([budgetSet, reserved('a'), recorded('a', answered(), 0.01)], recorded('a', http500, 0.01))).toEqual([expect.stringMatching(/second outcome/)]);
    expect(anomalies([budgetSet, reserved('a')], recorded('a', answered(1.5), 1.5))).toEqual([expect.stringMatching(/spent 1.5 USD on models, over its budget of 1/)]);
    expect(anomalies([], reserved('a'))).toEqual([expect.stringMatching(/reserved with no budget set/)]);
  });
});
