/**
 * The month's ledger (`chamber_budget-<YYYY-MM>`): a session's maximum cost is reserved before its
 * first call, and replaced by its actual cost once it is over. Sessions per day and the month's
 * spend are read off these events only, so a replay or a redelivery cannot count anything twice.
 */
import { DomainError, type Decider } from '@agora/decider';
import type { BudgetCommand, BudgetEvent } from './events.js';

export interface LedgerEntry {
  day: string;
  reserved: number;
  /** The actual cost, once settled. */
  actual?: number;
}

export interface BudgetState {
  entries: Record<string, LedgerEntry>;
}

const money = (x: number) => Math.round(x * 1_000_000) / 1_000_000;

export interface BudgetFigures {
  spent: number;
  reserved: number;
  committed: number;
  sessionsOn(day: string): number;
}

export function budgetFigures(state: BudgetState): BudgetFigures {
  const entries = Object.values(state.entries);
  const spent = money(entries.reduce((sum, e) => sum + (e.actual ?? 0), 0));
  const reserved = money(entries.reduce((sum, e) => sum + (e.actual === undefined ? e.reserved : 0), 0));
  return { spent, reserved, committed: money(spent + reserved), sessionsOn: (day) => entries.filter((e) => e.day === day).length };
}

export const budgetDecider: Decider<BudgetCommand, BudgetEvent, BudgetState> = {
  initialState: () => ({ entries: {} }),
  evolve(state, event) {
    switch (event.type) {
      case 'ChamberBudgetReserved':
        return { entries: { ...state.entries, [event.data.sessionId]: { day: event.data.day, reserved: event.data.amount } } };
      case 'ChamberBudgetSettled': {
        const entry = state.entries[event.data.sessionId];
        return entry ? { entries: { ...state.entries, [event.data.sessionId]: { ...entry, actual: event.data.actual } } } : state;
      }
      default:
        return state;
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'ReserveChamberBudget': {
        const p = command.payload;
        if (state.entries[p.sessionId]) return [];
        const figures = budgetFigures(state);
        const today = figures.sessionsOn(p.day);
        if (today >= p.limits.sessionsPerDay) {
          throw new DomainError('illegal_state', `daily session limit reached: ${today} of ${p.limits.sessionsPerDay} sessions on ${p.day}; nothing was called`, { reason: 'daily_limit', sessionsThatDay: today, sessionsPerDay: p.limits.sessionsPerDay });
        }
        const committed = money(figures.committed + p.amount);
        if (committed > p.limits.monthlyBudget) {
          const { currency } = p.limits;
          throw new DomainError(
            'illegal_state',
            `monthly budget exhausted: ${figures.spent} ${currency} spent and ${figures.reserved} ${currency} reserved of ${p.limits.monthlyBudget} ${currency} in ${p.month}; this session needs up to ${p.amount} ${currency}; nothing was called`,
            { reason: 'budget_exhausted', spent: figures.spent, reserved: figures.reserved, monthlyBudget: p.limits.monthlyBudget, needed: p.amount },
          );
        }
        return [{ type: 'ChamberBudgetReserved', data: { month: p.month, sessionId: p.sessionId, day: p.day, amount: p.amount, limits: p.limits, sessionsThatDay: today + 1, committed } }];
      }
      case 'SettleChamberBudget': {
        const p = command.payload;
        const entry = state.entries[p.sessionId];
        if (!entry || entry.actual !== undefined) return [];
        return [{ type: 'ChamberBudgetSettled', data: { month: p.month, sessionId: p.sessionId, reserved: entry.reserved, actual: p.actual } }];
      }
      default:
        return [];
    }
  },
};
