/**
 * Every model call of the log attributed to who made it and the budget it was reserved against:
 * an agent's own calls to its ledger of the month (`model_calls-<agentId>@<YYYY-MM>`, or the one
 * `model_calls-<agentId>` of a log written before ledgers were monthly: the fleet's participants,
 * debaters played by models), the chamber's calls to the month's budget (`chamber_budget-<YYYY-MM>`). A
 * ledger's anomalies (an outcome with no reservation, a second outcome, spend over the budget) are
 * findings.
 */
import type { ChamberCallCompleted, ChamberCallFailed, ChamberSessionApproved, DataOf } from '@agora/contracts';
import { modelLedgerAnomalies, type ModelLedgerEvent, type ModelLedgerState } from '@agora/domain-registry';
import type { RecordedEvent } from '@agora/eventstore';

/** The calls made against one budget. */
export interface ModelCallLedger {
  /** Who made the calls: an agent id, or `service:chamber`. */
  caller: string;
  /** The stream of the budget they were reserved against. */
  budget: string;
  /** The budget's amount (null: none set, or the chamber's, whose caps are in its own ledger). */
  amount: number | null;
  currency: string | null;
  /** Calls with an outcome recorded. */
  calls: number;
  /** Of those, interrupted (counted at their maximum cost). */
  interrupted: number;
  /** Calls reserved with no outcome yet. */
  open: number;
  spent: number;
}

export class ModelCallAttribution {
  /** By stream: an agent has a ledger a month. */
  private readonly agents = new Map<string, { caller: string; state: ModelLedgerState }>();
  private readonly chamber = new Map<string, ModelCallLedger>();
  private readonly sessionMonths = new Map<string, string>();

  /** An event of an agent's ledger, folded: what the audit finds in it. */
  ledgerEvent(event: RecordedEvent, before: unknown, after: unknown): string[] {
    const state = after as ModelLedgerState;
    const data = event.data as { agentId: string };
    this.agents.set(event.streamId, { caller: data.agentId, state });
    return modelLedgerAnomalies(before as ModelLedgerState, event as unknown as ModelLedgerEvent, state);
  }

  /** The chamber's calls, against the month's budget their session was approved under. */
  chamberEvent(event: RecordedEvent): void {
    if (event.type === 'ChamberSessionApproved') {
      const data = event.data as DataOf<typeof ChamberSessionApproved>;
      this.sessionMonths.set(data.sessionId, data.month);
      return;
    }
    if (event.type !== 'ChamberCallCompleted' && event.type !== 'ChamberCallFailed') return;
    const data = event.data as DataOf<typeof ChamberCallCompleted> | DataOf<typeof ChamberCallFailed>;
    const budget = `chamber_budget-${this.sessionMonths.get(data.sessionId) ?? 'unknown'}`;
    const ledger = this.chamber.get(budget) ?? { caller: 'service:chamber', budget, amount: null, currency: null, calls: 0, interrupted: 0, open: 0, spent: 0 };
    ledger.calls++;
    if ('error' in data && data.error.kind === 'interrupted') ledger.interrupted++;
    ledger.spent = Math.round((ledger.spent + data.cost) * 1_000_000) / 1_000_000;
    this.chamber.set(budget, ledger);
  }

  ledgers(): ModelCallLedger[] {
    // An agent's budget stream, with no call of its own, is listed only when the agent has no ledger with calls.
    const calling = new Set([...this.agents.values()].filter(({ state }) => state.order.length > 0).map(({ caller }) => caller));
    const ledgers = [...this.agents.entries()].filter(([, { caller, state }]) => state.order.length > 0 || !calling.has(caller));
    const agents = ledgers.map(([budget, { caller, state }]): ModelCallLedger => {
      const calls = state.order.map((id) => state.calls[id]!);
      const recorded = calls.filter((c) => c.outcome !== null);
      return {
        caller,
        budget,
        amount: state.budget?.amount ?? null,
        currency: state.budget?.currency ?? null,
        calls: recorded.length,
        interrupted: recorded.filter((c) => c.outcome && !c.outcome.ok && c.outcome.error.kind === 'interrupted').length,
        open: calls.length - recorded.length,
        spent: state.spent,
      };
    });
    return [...agents, ...this.chamber.values()].sort((a, b) => a.caller.localeCompare(b.caller) || a.budget.localeCompare(b.budget));
  }
}
