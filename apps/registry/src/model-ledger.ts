import type { ModelCallView, ModelLedgerView } from '@agora/contracts';
import { fold } from '@agora/decider';
import { callStatus, ledgerMonth, modelBudgetStreamId, modelLedgerDecider, modelLedgerStreamId, monthBefore, money, type LedgerCall, type ModelLedgerEvent, type ModelLedgerState } from '@agora/domain-registry';
import { StreamNotFound, type EventStore } from '@agora/eventstore';
import { pageOf } from '@agora/read-models';

/** A stream of the model_calls category folded as the log has it now (revision -1: nothing recorded). */
async function folded(store: EventStore, streamId: string): Promise<{ streamId: string; state: ModelLedgerState; revision: number }> {
  try {
    const events = await store.readStream(streamId);
    return { streamId, state: fold(modelLedgerDecider, events as unknown as ModelLedgerEvent[]), revision: events.at(-1)?.revision ?? -1 };
  } catch (error) {
    if (error instanceof StreamNotFound) return { streamId, state: modelLedgerDecider.initialState(), revision: -1 };
    throw error;
  }
}

/** The agent's budget now: the last ModelBudgetSet of its budget stream (null: none set). */
export async function modelBudgetOf(store: EventStore, agentId: string) {
  return (await folded(store, modelBudgetStreamId(agentId))).state.budget;
}

/** Where a call of the agent is: its month's ledger (this month's or last month's), or the one ledger of a log written before ledgers were monthly. */
export async function findModelCall(store: EventStore, agentId: string, callId: string, now: string): Promise<{ streamId: string; call: LedgerCall } | undefined> {
  const month = ledgerMonth(now);
  for (const streamId of [modelLedgerStreamId(agentId, month), modelLedgerStreamId(agentId, monthBefore(month)), modelBudgetStreamId(agentId)]) {
    const call = (await folded(store, streamId)).state.calls[callId];
    if (call && call.reservedAt !== null) return { streamId, call };
  }
  return undefined;
}

export interface MonthLedger {
  agentId: string;
  month: string;
  budget: ModelLedgerState['budget'];
  spent: number;
  reserved: number;
  calls: LedgerCall[];
  revision: number;
}

/**
 * An agent's ledger of one month as the log has it now (a query answers with every call recorded
 * before it): the month's stream, with the budget it was decided against (the agent's budget now
 * when no call of the month met one yet). The calls of a ledger written before ledgers were monthly
 * count for the month they were reserved in.
 */
export async function modelLedgerOf(store: EventStore, agentId: string, month: string): Promise<MonthLedger> {
  const [ledger, before] = await Promise.all([folded(store, modelLedgerStreamId(agentId, month)), folded(store, modelBudgetStreamId(agentId))]);
  const earlier = before.state.order.map((id) => before.state.calls[id]!).filter((c) => ledgerMonth(c.reservedAt ?? c.recordedAt ?? '') === month);
  const calls = [...earlier, ...ledger.state.order.map((id) => ledger.state.calls[id]!)];
  const spent = money(ledger.state.spent + earlier.reduce((sum, c) => sum + (c.outcome?.cost ?? 0), 0));
  const reserved = money(ledger.state.reserved + earlier.reduce((sum, c) => sum + (c.outcome === null ? c.maxCost : 0), 0));
  return { agentId, month, budget: ledger.state.budget ?? before.state.budget, spent, reserved, calls, revision: ledger.revision };
}

export function modelCallView(agentId: string, call: LedgerCall): ModelCallView {
  return { agentId, callId: call.callId, purpose: call.purpose, model: call.model, maxCost: call.maxCost, currency: call.currency, status: callStatus(call), reservedAt: call.reservedAt ?? call.recordedAt ?? '', outcome: call.outcome, recordedAt: call.recordedAt };
}

export function modelLedgerView(ledger: MonthLedger): ModelLedgerView {
  const calls = { total: ledger.calls.length, reserved: 0, completed: 0, failed: 0, interrupted: 0 };
  for (const call of ledger.calls) calls[callStatus(call)]++;
  const { agentId, month, budget, spent, reserved, revision } = ledger;
  return { agentId, month, budget, spent, reserved, remaining: budget ? Math.max(0, money(budget.amount - spent - reserved)) : null, calls, revision };
}

/** The month's figures and a page of its calls, in the order they were reserved. */
export function modelLedgerPage(ledger: MonthLedger, request: { limit?: number | undefined; cursor?: string | undefined }) {
  const indexed = ledger.calls.map((call, index) => ({ index, call }));
  const { items, nextCursor } = pageOf(indexed, { key: (c) => [c.index], directions: ['asc'] }, request, (c) => modelCallView(ledger.agentId, c.call));
  return { ledger: modelLedgerView(ledger), calls: items, ...(nextCursor === undefined ? {} : { nextCursor }) };
}
