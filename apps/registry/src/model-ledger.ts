import type { ModelCallView, ModelLedgerView } from '@agora/contracts';
import { fold } from '@agora/decider';
import { callStatus, modelLedgerDecider, modelLedgerStreamId, money, type LedgerCall, type ModelLedgerEvent, type ModelLedgerState } from '@agora/domain-registry';
import { StreamNotFound, type EventStore } from '@agora/eventstore';
import { pageOf } from '@agora/read-models';

/** An agent's ledger as the log has it now (read from the store: a query answers with every call recorded before it). */
export async function modelLedgerOf(store: EventStore, agentId: string): Promise<{ agentId: string; state: ModelLedgerState; revision: number }> {
  try {
    const events = await store.readStream(modelLedgerStreamId(agentId));
    return { agentId, state: fold(modelLedgerDecider, events as unknown as ModelLedgerEvent[]), revision: events.at(-1)?.revision ?? -1 };
  } catch (error) {
    if (error instanceof StreamNotFound) return { agentId, state: modelLedgerDecider.initialState(), revision: -1 };
    throw error;
  }
}

export function modelCallView(agentId: string, call: LedgerCall): ModelCallView {
  return { agentId, callId: call.callId, purpose: call.purpose, model: call.model, maxCost: call.maxCost, currency: call.currency, status: callStatus(call), reservedAt: call.reservedAt ?? call.recordedAt ?? '', outcome: call.outcome, recordedAt: call.recordedAt };
}

export function modelLedgerView({ agentId, state, revision }: Awaited<ReturnType<typeof modelLedgerOf>>): ModelLedgerView {
  const calls = { total: state.order.length, reserved: 0, completed: 0, failed: 0, interrupted: 0 };
  for (const id of state.order) calls[callStatus(state.calls[id]!)]++;
  const budget = state.budget;
  return { agentId, budget, spent: state.spent, reserved: state.reserved, remaining: budget ? Math.max(0, money(budget.amount - state.spent - state.reserved)) : null, calls, revision };
}

/** The ledger's figures and a page of its calls, in the order they were reserved. */
export function modelLedgerPage(ledger: Awaited<ReturnType<typeof modelLedgerOf>>, request: { limit?: number | undefined; cursor?: string | undefined }) {
  const indexed = ledger.state.order.map((id, index) => ({ index, call: ledger.state.calls[id]! }));
  const { items, nextCursor } = pageOf(indexed, { key: (c) => [c.index], directions: ['asc'] }, request, (c) => modelCallView(ledger.agentId, c.call));
  return { ledger: modelLedgerView(ledger), calls: items, ...(nextCursor === undefined ? {} : { nextCursor }) };
}
