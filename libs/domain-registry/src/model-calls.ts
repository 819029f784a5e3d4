/**
 * An agent's model calls (design decision 9), a ledger per agent and month, as the chamber's budget is:
 * - `model_calls-<agentId>`, the agent's budget: what an operator set (ModelBudgetSet), the most its
 *   calls may cost in a month (UTC). It holds from the month it is set in until it is changed.
 * - `model_calls-<agentId>@<YYYY-MM>`, the month's ledger: every call the agent reserved in that
 *   month before making it, and every outcome it recorded after (in the month it was reserved in),
 *   so a stream is bounded by a month's calls. The budget the month's reservations are decided
 *   against is copied into it (ModelBudgetSet, by the reservation that first meets it), so the
 *   month's stream alone says what was committed against what; the spend starts at 0 each month.
 *
 * A reservation over the month's budget and a call id reserved before in the month are decided on
 * the month's stream. Logs written before ledgers were monthly have one stream per agent,
 * `model_calls-<agentId>`, with the budget and every call: folded the same way, its budget held
 * "in all" (a reservation without a carried budget is decided against the stream's own).
 */
import { MODEL_CALLS_CATEGORY, type CallOutcomeRecord, type modelCallContracts, type ModelCallStatus, type PayloadOf, type RecordModelCallOutcome, type ReserveModelCall, type SetModelBudget } from '@agora/contracts';
import { DomainError, type Command, type Decider, type EventsOf } from '@agora/decider';
import { canonicalJson } from '@agora/identity';

/** The ledger's events, from the model-call contracts. */
export type ModelLedgerEvent = EventsOf<(typeof modelCallContracts.events)[number]>;

/** The budget a month's reservations are decided against: the last ModelBudgetSet of the agent's budget stream. */
export interface ModelBudget {
  amount: number;
  currency: string;
  setBy: string;
  setAt: string;
}

export type ModelLedgerCommand =
  /** `reservedIn`, added by the registry: the currency of the current month's calls (a budget's currency cannot move under them). */
  | Command<'SetModelBudget', PayloadOf<typeof SetModelBudget> & { reservedIn?: string }>
  /** `budget`, added by the registry: the agent's budget now (null: none set). Absent on a ledger of one stream per agent, which holds its own. */
  | Command<'ReserveModelCall', PayloadOf<typeof ReserveModelCall> & { budget?: ModelBudget | null }>
  | Command<'RecordModelCallOutcome', PayloadOf<typeof RecordModelCallOutcome>>;

export interface LedgerCall {
  callId: string;
  purpose: string;
  model: string;
  maxCost: number;
  currency: string;
  /** Null for an outcome recorded without a reservation (only in a log not written by this decider: the audit reports it). */
  reservedAt: string | null;
  /** The first outcome recorded. */
  outcome: CallOutcomeRecord | null;
  recordedAt: string | null;
  /** Outcomes recorded: 0 or 1 in a log this decider wrote. */
  outcomes: number;
}

export interface ModelLedgerState {
  agentId: string | null;
  budget: ModelBudget | null;
  /** Cost of the recorded outcomes. */
  spent: number;
  /** Maximum cost of the calls reserved and not recorded. */
  reserved: number;
  calls: Readonly<Record<string, LedgerCall>>;
  /** Call ids in the order they were reserved. */
  order: readonly string[];
}

/** The agent's budget stream (and the whole ledger in logs written before ledgers were monthly). */
export const modelBudgetStreamId = (agentId: string): string => `${MODEL_CALLS_CATEGORY}-${agentId}`;
/** The agent's ledger of one month (`YYYY-MM`, UTC). `@` is in no agent id, so no agent's budget stream is another's month. */
export const modelLedgerStreamId = (agentId: string, month: string): string => `${MODEL_CALLS_CATEGORY}-${agentId}@${month}`;
/** The month (UTC) of a timestamp: a call counts for the month it is reserved in. */
export const ledgerMonth = (iso: string): string => iso.slice(0, 7);
/** The month before `month` (`YYYY-MM`). */
export function monthBefore(month: string): string {
  const [year, m] = month.split('-').map(Number) as [number, number];
  return m === 1 ? `${year - 1}-12` : `${year}-${String(m - 1).padStart(2, '0')}`;
}

/** Amounts to a millionth of the currency unit (as the provider layer prices calls), so sums do not drift. */
export const money = (amount: number): number => Math.round(amount * 1_000_000) / 1_000_000;

/** What a call's outcome says of it. */
export function callStatus(call: Pick<LedgerCall, 'outcome'>): ModelCallStatus {
  if (call.outcome === null) return 'reserved';
  if (call.outcome.ok) return 'completed';
  return call.outcome.error.kind === 'interrupted' ? 'interrupted' : 'failed';
}

const sameBudget = (a: ModelBudget | null, b: ModelBudget): boolean => a !== null && a.amount === b.amount && a.currency === b.currency && a.setBy === b.setBy && a.setAt === b.setAt;

function itself(context: { actor: string }, agentId: string, toDo: string): void {
  if (context.actor === agentId) return;
  throw new DomainError('forbidden', `${context.actor} may not ${toDo} for ${agentId}: only the agent itself does`, { actor: context.actor, agentId });
}

const initialState = (): ModelLedgerState => ({ agentId: null, budget: null, spent: 0, reserved: 0, calls: {}, order: [] });

export const modelLedgerDecider: Decider<ModelLedgerCommand, ModelLedgerEvent, ModelLedgerState> = {
  initialState,

  evolve(state, event) {
    switch (event.type) {
      case 'ModelBudgetSet': {
        const { agentId, amount, currency, setBy, setAt } = event.data;
        return { ...state, agentId, budget: { amount, currency, setBy, setAt } };
      }
      case 'ModelCallReserved': {
        const d = event.data;
        const call: LedgerCall = { callId: d.callId, purpose: d.purpose, model: d.model, maxCost: d.maxCost, currency: d.currency, reservedAt: d.reservedAt, outcome: null, recordedAt: null, outcomes: 0 };
        const order = d.callId in state.calls ? state.order : [...state.order, d.callId];
        return { ...state, agentId: d.agentId, reserved: money(state.reserved + d.maxCost), calls: { ...state.calls, [d.callId]: call }, order };
      }
      case 'ModelCallRecorded': {
        const d = event.data;
        const before = state.calls[d.callId];
        const open = before !== undefined && before.outcome === null;
        const call: LedgerCall = before
          ? { ...before, outcome: before.outcome ?? d.outcome, recordedAt: before.recordedAt ?? d.recordedAt, outcomes: before.outcomes + 1 }
          : { callId: d.callId, purpose: '', model: d.model, maxCost: 0, currency: state.budget?.currency ?? '', reservedAt: null, outcome: d.outcome, recordedAt: d.recordedAt, outcomes: 1 };
        return {
          ...state,
          agentId: d.agentId,
          spent: money(state.spent + d.outcome.cost),
          reserved: open ? money(state.reserved - before.maxCost) : state.reserved,
          calls: { ...state.calls, [d.callId]: call },
          order: before ? state.order : [...state.order, d.callId],
        };
      }
    }
  },

  decide(command, state) {
    const { context } = command;
    switch (command.type) {
      case 'SetModelBudget': {
        const p = command.payload;
        const note = p.note ?? null;
        if (state.budget && state.budget.amount === p.amount && state.budget.currency === p.currency && note === null) return [];
        const reservedIn = p.reservedIn ?? (state.budget && state.order.length > 0 ? state.budget.currency : undefined);
        if (reservedIn !== undefined && reservedIn !== p.currency) {
          throw new DomainError('illegal_state', `${p.agentId}'s calls are reserved in ${reservedIn}: its budget cannot move to ${p.currency}`, { currency: reservedIn });
        }
        return [{ type: 'ModelBudgetSet', data: { agentId: p.agentId, amount: p.amount, currency: p.currency, previous: state.budget?.amount ?? null, note, setBy: context.actor, setAt: context.now } }];
      }
      case 'ReserveModelCall': {
        const p = command.payload;
        itself(context, p.agentId, 'reserve a model call');
        const budget = p.budget === undefined ? state.budget : p.budget;
        if (!budget) throw new DomainError('illegal_state', `${p.agentId} has no model budget: an operator sets one (SetModelBudget) before it calls a model; nothing was called`, { reason: 'no_budget' });
        // The month's ledger takes the budget its reservations are decided against, when it first meets it.
        const carried = p.budget && !sameBudget(state.budget, p.budget);
        if (carried && state.budget && state.budget.currency !== budget.currency && state.order.length > 0) {
          throw new DomainError('illegal_state', `${p.agentId}'s calls of this month are reserved in ${state.budget.currency}: its budget in ${budget.currency} applies from next month; nothing was called`, { reason: 'currency_changed', currency: state.budget.currency, budgetCurrency: budget.currency });
        }
        if (p.currency !== budget.currency) throw new DomainError('invalid_command', `the call is priced in ${p.currency}, ${p.agentId}'s budget in ${budget.currency}`, { currency: p.currency, budgetCurrency: budget.currency });
        if (p.callId in state.calls) {
          throw new DomainError('illegal_state', `call ${p.callId} of ${p.agentId} is already reserved (${callStatus(state.calls[p.callId]!)}): a call id is called once`, { reason: 'call_reserved', callId: p.callId, status: callStatus(state.calls[p.callId]!) });
        }
        const committed = money(state.spent + state.reserved + p.maxCost);
        if (committed > budget.amount) {
          throw new DomainError(
            'illegal_state',
            `call ${p.callId} of ${p.agentId} may cost ${p.maxCost} ${budget.currency}: with ${state.spent} spent and ${state.reserved} reserved it would exceed the budget of ${budget.amount}; nothing was called`,
            { reason: 'over_budget', budget: budget.amount, spent: state.spent, reserved: state.reserved, maxCost: p.maxCost },
          );
        }
        const copy: ModelLedgerEvent[] = carried ? [{ type: 'ModelBudgetSet', data: { agentId: p.agentId, amount: budget.amount, currency: budget.currency, previous: state.budget?.amount ?? null, note: null, setBy: budget.setBy, setAt: budget.setAt } }] : [];
        return [...copy, { type: 'ModelCallReserved', data: { agentId: p.agentId, callId: p.callId, purpose: p.purpose, model: p.model, maxCost: p.maxCost, currency: p.currency, budget: budget.amount, committed, reservedAt: context.now } }];
      }
      case 'RecordModelCallOutcome': {
        const p = command.payload;
        itself(context, p.agentId, 'record a model call');
        const call = state.calls[p.callId];
        if (!call || call.reservedAt === null) throw new DomainError('not_found', `call ${p.callId} of ${p.agentId} was never reserved: a call is reserved before it is made`, { callId: p.callId });
        if (call.outcome !== null) {
          if (canonicalJson(call.outcome) === canonicalJson(p.outcome)) return [];
          throw new DomainError('illegal_state', `call ${p.callId} of ${p.agentId} already has its outcome (${callStatus(call)}): the first outcome stands`, { reason: 'call_recorded', callId: p.callId, status: callStatus(call) });
        }
        if (!p.outcome.ok && p.outcome.error.kind === 'interrupted' && (p.outcome.cost !== call.maxCost || !p.outcome.costEstimated)) {
          throw new DomainError('invalid_command', `an interrupted call is counted at its maximum cost (${call.maxCost}, estimated), not ${p.outcome.cost}`, { maxCost: call.maxCost, cost: p.outcome.cost });
        }
        return [{ type: 'ModelCallRecorded', data: { agentId: p.agentId, callId: p.callId, model: call.model, outcome: p.outcome, spent: money(state.spent + p.outcome.cost), recordedAt: context.now } }];
      }
    }
  },
};

/**
 * What the audit says of one event of a ledger, folded onto the state before it: an outcome
 * recorded for a call never reserved, a second outcome of a call, spend or commitments over the
 * budget. The decider writes none of these; a log that has them was written past it (or the
 * recorded cost of a call exceeded its reservation's estimate). Empty when all is well.
 */
export function modelLedgerAnomalies(before: ModelLedgerState, event: ModelLedgerEvent, after: ModelLedgerState): string[] {
  const found: string[] = [];
  if (event.type === 'ModelCallRecorded') {
    const call = before.calls[event.data.callId];
    if (!call || call.reservedAt === null) found.push(`the outcome of call ${event.data.callId} of ${event.data.agentId} is recorded with no reservation before it`);
    else if (call.outcome !== null) found.push(`call ${event.data.callId} of ${event.data.agentId} has a second outcome recorded (the first: ${callStatus(call)} at ${call.recordedAt})`);
  }
  const budget = after.budget;
  if (event.type === 'ModelCallReserved' && !before.budget) found.push(`call ${event.data.callId} of ${event.data.agentId} is reserved with no budget set`);
  if (budget && after.spent > budget.amount && before.spent <= budget.amount) found.push(`${event.data.agentId} has spent ${after.spent} ${budget.currency} on models, over its budget of ${budget.amount}`);
  return found;
}
