import { CHAMBER_BUDGET_CATEGORY, CHAMBER_SESSION_CATEGORY, type ChamberSessionSummary, type ChamberSessionView, type ChamberStatus, type PageRequest } from '@agora/contracts';
import {
  chamberRecordSums,
  chamberStreamId,
  chamberTimedSums,
  evolveChamber,
  evolveChamberRecord,
  evolveLedger,
  initialChamberState,
  type BudgetEvent,
  type ChamberEvent,
  type ChamberRecord,
  type ChamberSessionState,
  type MonthLedger,
} from '@agora/domain-chamber';
import type { EventStore } from '@agora/eventstore';
import type { SqlExecutor } from '@agora/read-store';
import { aggregateViews, integerColumn, readEvents, sqlAggregateViews, textColumn } from './aggregate-views.js';
import { equals, sqlPage, type Page, type SqlCondition } from './paging.js';

export type ChamberSessionRecord = ChamberSessionState & { streamRevision: number };
export type ChamberSessionsModel = Map<string, ChamberSessionRecord>;

/** Every chamber session's state, folded with the decider's own `evolveChamber`. */
export const chamberSessionsProjection = aggregateViews<ChamberSessionRecord, ChamberSessionState, ChamberEvent>({
  name: 'chamber_sessions',
  category: CHAMBER_SESSION_CATEGORY,
  initial: initialChamberState(),
  evolve: evolveChamber,
});

/** The one-line form of a session. */
export function chamberSessionSummary(s: ChamberSessionState): ChamberSessionSummary {
  const p = s.proposal!;
  const phase = s.status === 'cross_exam' ? 'cross_exam' : s.status === 'arbitration' ? 'arbiter' : 'blind';
  const answered = [...new Set(s.calls.filter((c) => c.request.step === phase && c.status === 'completed' && c.request.panelist !== null).map((c) => c.request.panelist!))].sort((a, b) => a - b);
  return {
    sessionId: p.sessionId,
    status: s.status as ChamberStatus,
    question: p.question,
    proposedBy: p.proposedBy,
    link: p.link,
    proposedAt: p.proposedAt,
    panel: p.panel.map((x) => x.model),
    arbiter: p.arbiter.model,
    maxCost: p.maxCost,
    cost: s.cost,
    currency: p.currency,
    answered,
    pendingCalls: s.calls.filter((c) => c.status === 'pending').length,
    outcome: s.conclusion?.outcome ?? null,
    followUp: s.followUp?.decision ?? null,
    updatedAt: s.updatedAt ?? p.proposedAt,
  };
}


/**
 * Every chamber session's state, one row each in `chamber_sessions_v<version>` (folded with the
 * decider's own `evolveChamber`): what ListChamberSessions reads, and where the chamber finds the
 * calls a stopped process left pending.
 */
export const chamberSessionsTable = sqlAggregateViews<ChamberSessionRecord, ChamberSessionState, ChamberEvent>({
  name: 'chamber_sessions',
  version: 1,
  category: CHAMBER_SESSION_CATEGORY,
  initial: initialChamberState(),
  evolve: evolveChamber,
  columns: [
    textColumn('status', (s) => s.status),
    textColumn('updated_at', (s) => s.updatedAt ?? s.proposal?.proposedAt ?? ''),
    integerColumn('proposed', (s) => s.proposal !== null && s.proposal !== undefined),
    integerColumn('pending_calls', (s) => s.calls.filter((c) => c.status === 'pending').length),
  ],
  indexes: [
    ['updated_at DESC', 'id'],
    ['status', 'updated_at DESC', 'id'],
    ['pending_calls'],
  ],
});

/** Sessions, most recently updated first, then by id: one page. */
export function listChamberSessions(db: SqlExecutor, filter: { status?: ChamberStatus } & PageRequest = {}): Promise<Page<ChamberSessionSummary>> {
  const where: SqlCondition[] = [equals('proposed', 1)];
  if (filter.status !== undefined) where.push(equals('status', filter.status));
  return sqlPage<{ doc: string; id: string; updated_at: string }, ChamberSessionSummary>(
    db,
    { from: `SELECT doc, id, updated_at FROM ${chamberSessionsTable.table}`, where, order: [{ column: 'updated_at', direction: 'desc' }, { column: 'id', direction: 'asc' }], key: (r) => [r.updated_at, r.id] },
    filter,
    (r) => chamberSessionSummary(JSON.parse(r.doc) as ChamberSessionState),
  );
}

/** The sessions with a model call pending (in flight, or left so by a stopped process). */
export async function chamberSessionsWithPendingCalls(db: SqlExecutor): Promise<ChamberSessionRecord[]> {
  return (await db.all<{ doc: string }>(`SELECT doc FROM ${chamberSessionsTable.table} WHERE pending_calls > 0 ORDER BY id`)).map((r) => JSON.parse(r.doc) as ChamberSessionRecord);
}

/** One session read straight from its stream: where it stands and its whole transcript, every event verbatim in log order. */
export async function readChamberSession(store: EventStore, sessionId: string): Promise<{ state: ChamberSessionState; view: ChamberSessionView } | undefined> {
  const events = await readEvents(store, chamberStreamId(sessionId));
  if (!events) return undefined;
  const state = events.reduce((s, e) => evolveChamber(s, { type: e.type, data: e.data } as ChamberEvent), initialChamberState());
  if (!state.proposal) return undefined;
  const transcript = events.map((e) => ({ revision: e.revision, type: e.type, recordedAt: e.recordedAt, actor: typeof e.metadata['actor'] === 'string' ? e.metadata['actor'] : null, data: e.data }));
  return { state, view: { summary: chamberSessionSummary(state), transcript } };
}

/** A chamber session's compact record (its figures), as a row of `chamber_records`. */
export type ChamberRecordView = ChamberRecord & { streamRevision: number };

/** Before its proposal, a session has no record: `unproposed` stands for that in the table's fold. */
type ChamberRecordState = ChamberRecord | { status: 'unproposed' };

/**
 * The chamber's figures: every session's compact record (evolveChamberRecord), one row each in
 * `chamber_records_v<version>`, with its share of the all-time figures as sums (chamberRecordSums)
 * and of the windowed ones at its proposal (chamberTimedSums): what the projections service's stats
 * query and metrics read. The month's ledger is read from its stream (readChamberLedger).
 */
export const chamberRecordsTable = sqlAggregateViews<ChamberRecordView, ChamberRecordState, ChamberEvent>({
  name: 'chamber_records',
  version: 1,
  category: CHAMBER_SESSION_CATEGORY,
  initial: { status: 'unproposed' },
  evolve: (state, event) => evolveChamberRecord(state.status === 'unproposed' ? undefined : (state as ChamberRecord), event) ?? state,
  columns: [textColumn('proposed_at', (r) => r.proposedAt)],
  indexes: [],
  sums: chamberRecordSums,
  timed: chamberTimedSums,
});

/** Before its first reservation, a month has no ledger: `unopened` stands for that in the table's fold. */
type LedgerState = MonthLedger | { status: 'unopened' };

/** Every month's chamber ledger (evolveLedger), one row each in `chamber_ledgers_v<version>`, by month: what the chamber's cost metrics read. */
export const chamberLedgersTable = sqlAggregateViews<MonthLedger & { status: 'open'; streamRevision: number }, LedgerState & { status: string }, BudgetEvent>({
  name: 'chamber_ledgers',
  version: 1,
  category: CHAMBER_BUDGET_CATEGORY,
  initial: { status: 'unopened' },
  evolve: (state, event) => ({ ...evolveLedger('month' in state ? state : undefined, event), status: 'open' }),
  columns: [],
  indexes: [],
});

/** The ledger of a month, folded from its stream (the budget query). */
export async function readChamberLedger(store: EventStore, month: string): Promise<MonthLedger | undefined> {
  const events = await readEvents(store, `${CHAMBER_BUDGET_CATEGORY}-${month}`);
  return events?.reduce<MonthLedger | undefined>((l, e) => evolveLedger(l, { type: e.type, data: e.data } as BudgetEvent), undefined);
}
