/** The chamber's events and commands as the deciders see them, typed from the contracts. */
import type { ApproveChamberSession, CHAMBER_BUDGET_CATEGORY, CHAMBER_SESSION_CATEGORY, chamberContracts, PayloadOf } from '@agora/contracts';
import type { Command, CommandsOf, EventsOf } from '@agora/decider';

type ChamberCommandDefinition = (typeof chamberContracts.commands)[number];
type ChamberEventDefinition = (typeof chamberContracts.events)[number];

/** A session's events and commands, from the chamber contracts. */
export type ChamberEvent = EventsOf<Extract<ChamberEventDefinition, { category: typeof CHAMBER_SESSION_CATEGORY }>>;

/** Approval carries the reservation the service made in the month's ledger just before. */
export type ApprovePayload = PayloadOf<typeof ApproveChamberSession> & { reserved: number; month: string };

export type ChamberCommand = Exclude<CommandsOf<Extract<ChamberCommandDefinition, { aggregate: 'session' }>>, { type: 'ApproveChamberSession' }> | Command<'ApproveChamberSession', ApprovePayload>;

/** The month's budget ledger: its events and commands. */
export type BudgetEvent = EventsOf<Extract<ChamberEventDefinition, { category: typeof CHAMBER_BUDGET_CATEGORY }>>;
export type BudgetCommand = CommandsOf<Extract<ChamberCommandDefinition, { aggregate: 'budget' }>>;

export const chamberStreamId = (sessionId: string) => `chamber_session-${sessionId}`;
export const budgetStreamId = (month: string) => `chamber_budget-${month}`;
export const monthOf = (iso: string) => iso.slice(0, 7);
export const dayOf = (iso: string) => iso.slice(0, 10);
