/** The chamber's events and commands as the deciders see them, typed from the contracts. */
import type {
  ApproveChamberSession,
  CancelChamberSession,
  ChamberApprovalExpired,
  ChamberBudgetReserved,
  ChamberBudgetSettled,
  ChamberCallCompleted,
  ChamberCallFailed,
  ChamberCallRequested,
  ChamberDivergenceMeasured,
  ChamberFollowUpRecorded,
  ChamberPositionChanged,
  ChamberSessionApproved,
  ChamberSessionCancelled,
  ChamberSessionConcluded,
  ChamberSessionProposed,
  ChamberSessionRejected,
  DataOf,
  ExpireChamberApproval,
  PayloadOf,
  ProposeChamberSession,
  RecordChamberCallOutcome,
  RecordChamberFollowUp,
  RejectChamberSession,
  ReserveChamberBudget,
  SettleChamberBudget,
} from '@agora/contracts';
import type { Command, DomainEvent } from '@agora/decider';

type Ev<T extends string, D> = DomainEvent<T, D>;

export type ChamberEvent =
  | Ev<'ChamberSessionProposed', DataOf<typeof ChamberSessionProposed>>
  | Ev<'ChamberSessionApproved', DataOf<typeof ChamberSessionApproved>>
  | Ev<'ChamberSessionRejected', DataOf<typeof ChamberSessionRejected>>
  | Ev<'ChamberApprovalExpired', DataOf<typeof ChamberApprovalExpired>>
  | Ev<'ChamberSessionCancelled', DataOf<typeof ChamberSessionCancelled>>
  | Ev<'ChamberCallRequested', DataOf<typeof ChamberCallRequested>>
  | Ev<'ChamberCallCompleted', DataOf<typeof ChamberCallCompleted>>
  | Ev<'ChamberCallFailed', DataOf<typeof ChamberCallFailed>>
  | Ev<'ChamberDivergenceMeasured', DataOf<typeof ChamberDivergenceMeasured>>
  | Ev<'ChamberPositionChanged', DataOf<typeof ChamberPositionChanged>>
  | Ev<'ChamberSessionConcluded', DataOf<typeof ChamberSessionConcluded>>
  | Ev<'ChamberFollowUpRecorded', DataOf<typeof ChamberFollowUpRecorded>>;

/** Approval carries the reservation the service made in the month's ledger just before. */
export type ApprovePayload = PayloadOf<typeof ApproveChamberSession> & { reserved: number; month: string };

export type ChamberCommand =
  | Command<'ProposeChamberSession', PayloadOf<typeof ProposeChamberSession>>
  | Command<'ApproveChamberSession', ApprovePayload>
  | Command<'RejectChamberSession', PayloadOf<typeof RejectChamberSession>>
  | Command<'CancelChamberSession', PayloadOf<typeof CancelChamberSession>>
  | Command<'RecordChamberFollowUp', PayloadOf<typeof RecordChamberFollowUp>>
  | Command<'RecordChamberCallOutcome', PayloadOf<typeof RecordChamberCallOutcome>>
  | Command<'ExpireChamberApproval', PayloadOf<typeof ExpireChamberApproval>>;

export type BudgetEvent = Ev<'ChamberBudgetReserved', DataOf<typeof ChamberBudgetReserved>> | Ev<'ChamberBudgetSettled', DataOf<typeof ChamberBudgetSettled>>;
export type BudgetCommand = Command<'ReserveChamberBudget', PayloadOf<typeof ReserveChamberBudget>> | Command<'SettleChamberBudget', PayloadOf<typeof SettleChamberBudget>>;

export const chamberStreamId = (sessionId: string) => `chamber_session-${sessionId}`;
export const budgetStreamId = (month: string) => `chamber_budget-${month}`;
export const monthOf = (iso: string) => iso.slice(0, 7);
export const dayOf = (iso: string) => iso.slice(0, 10);
