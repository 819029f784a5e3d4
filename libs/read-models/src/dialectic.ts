import { DIALECTIC_SESSION_CATEGORY, type DialecticSessionSummary, type DialecticSessionView, type DialecticStatus, type PageRequest } from '@agora/contracts';
import { collusionWindow, dialecticStreamId, dialecticSessionSums, dialecticTimedSums, evolveSession, type CollusionOptions, type DialecticEvent, type DialecticSessionState, type DrawFigures } from '@agora/domain-dialectic';
import type { EventStore } from '@agora/eventstore';
import type { SqlExecutor } from '@agora/read-store';
import { agentsTable, aggregateViews, readAggregateView, sqlAggregateViews, textColumn } from './aggregate-views.js';
import { equals, hasAgent, sqlPage, type Page, type SqlCondition } from './paging.js';

/** Every recovery session with its whole transcript, by session id. */
export type DialecticSessionsModel = Map<string, DialecticSessionView>;

/**
 * Folds every `dialectic_session-*` stream with the session decider's own `evolveSession`, so the
 * read model and the decider cannot disagree about a recovery.
 */
export const dialecticSessionsProjection = aggregateViews<DialecticSessionView, DialecticSessionState, DialecticEvent>({
  name: 'dialectic_sessions',
  category: DIALECTIC_SESSION_CATEGORY,
  initial: { status: 'unopened' },
  evolve: evolveSession,
});

/** The one-line form of a session (sessions.list). */
export function dialecticSessionSummary(s: DialecticSessionView): DialecticSessionSummary {
  const resolved = s.resolved;
  return {
    sessionId: s.sessionId,
    agentId: s.agentId,
    pause: s.pause,
    status: s.status,
    reviewer: s.reviewer,
    round: s.round,
    awaiting: [...s.awaiting],
    deadlineAt: s.deadlineAt,
    tier: s.escalations.at(-1)?.tier ?? null,
    decidedBy: resolved ? resolved.resolution.decidedBy : null,
    pausedAt: s.pausedAt,
    openedAt: s.openedAt,
    closedAt: s.closedAt,
  };
}

export interface DialecticSessionFilter {
  /** Sessions of this paused agent. */
  agentId?: string;
  /** Sessions where this agent is the paused agent, the reviewer, a tie-breaker or the auditor. */
  participant?: string;
  /** Sessions waiting for this agent to act. */
  awaiting?: string;
  status?: DialecticStatus;
}

/** The paused agent, its reviewer, the tie-breakers and the auditor. */
const participants = (s: DialecticSessionView): (string | null)[] => [s.agentId, s.reviewer, ...s.escalations.map((e) => e.tieBreaker), s.audit?.auditor ?? null];


/**
 * Every recovery session with its whole transcript, one row each in `dialectic_sessions_v<version>`
 * (folded with the session decider's own `evolveSession`), with its participants and the agents it
 * awaits in child tables: what GetDialecticSession and ListDialecticSessions read.
 */
export const dialecticSessionsTable = sqlAggregateViews<DialecticSessionView, DialecticSessionState, DialecticEvent>({
  name: 'dialectic_sessions',
  version: 4,
  category: DIALECTIC_SESSION_CATEGORY,
  initial: { status: 'unopened' },
  evolve: evolveSession,
  // 3: the dialectic's figures as sums and timed sums (dialecticSessionSums, dialecticTimedSums).
  // 4: what a draw of candidates weighs among them (reviewerSums, reviewerTimedSums), and who reviewed
  // the session and when it opened (the last review of an agent by each reviewer), instead of every
  // session's history read at each draw.
  sums: dialecticSessionSums,
  timed: (s) => dialecticTimedSums(s),
  columns: [textColumn('agent_id', (s) => s.agentId), textColumn('status', (s) => s.status), textColumn('updated_at', (s) => s.updatedAt), textColumn('reviewer', (s) => s.reviewer), textColumn('opened_at', (s) => s.openedAt)],
  indexes: [
    ['updated_at DESC', 'id'],
    ['agent_id', 'updated_at DESC', 'id'],
    ['status', 'updated_at DESC', 'id'],
    ['agent_id', 'reviewer', 'opened_at'],
  ],
  children: [
    agentsTable<DialecticSessionView>('dialectic_participants', participants),
    agentsTable<DialecticSessionView>('dialectic_awaiting', (s) => s.awaiting),
  ],
});

/** One session with its whole transcript (GetDialecticSession), or undefined. */
export function getDialecticSession(db: SqlExecutor, sessionId: string): Promise<DialecticSessionView | undefined> {
  return dialecticSessionsTable.get(db, sessionId);
}

/** Sessions matching the filter, most recently updated first, then by id: one page. */
export function listDialecticSessions(db: SqlExecutor, filter: DialecticSessionFilter & PageRequest = {}): Promise<Page<DialecticSessionSummary>> {
  const where: SqlCondition[] = [];
  if (filter.agentId !== undefined) where.push(equals('agent_id', filter.agentId));
  if (filter.status !== undefined) where.push(equals('status', filter.status));
  if (filter.participant !== undefined) where.push(hasAgent(dialecticSessionsTable.childTable('dialectic_participants'), filter.participant));
  if (filter.awaiting !== undefined) where.push(hasAgent(dialecticSessionsTable.childTable('dialectic_awaiting'), filter.awaiting));
  return sqlPage<{ doc: string; id: string; updated_at: string }, DialecticSessionSummary>(
    db,
    { from: `SELECT doc, id, updated_at FROM ${dialecticSessionsTable.table}`, where, order: [{ column: 'updated_at', direction: 'desc' }, { column: 'id', direction: 'asc' }], key: (r) => [r.updated_at, r.id] },
    filter,
    (r) => dialecticSessionSummary(JSON.parse(r.doc) as DialecticSessionView),
  );
}

/**
 * What a draw of candidates for the recovery of `agentId` at `now` weighs (DrawFigures), read from
 * the tables: the sums, the successes still to settle after `now`, the collusion window's pairs, and
 * each reviewer's last session with the agent. A few indexed reads: a draw's cost does not grow with
 * the sessions held.
 */
export async function dialecticDrawFigures(db: SqlExecutor, agentId: string, now: string, collusion: CollusionOptions = {}): Promise<DrawFigures> {
  const { from, to } = collusionWindow(now, collusion);
  const [sums, unsettled, window, last] = await Promise.all([
    dialecticSessionsTable.sums(db),
    dialecticSessionsTable.windowSums(db, to + 1, Number.MAX_SAFE_INTEGER),
    dialecticSessionsTable.windowSums(db, from, to),
    db.all<{ reviewer: string; at: string }>(`SELECT reviewer, MAX(opened_at) AS at FROM ${dialecticSessionsTable.table} WHERE agent_id = $1 AND reviewer IS NOT NULL GROUP BY reviewer`, [agentId]),
  ]);
  return { sums, unsettled, collusionWindow: window, lastReviewed: new Map(last.map((r) => [r.reviewer, r.at])) };
}

/**
 * One session read straight from its stream, for a reactor deciding on it; queries answer from the
 * read model. Undefined when there is no such session.
 */
export function readDialecticSession(store: EventStore, sessionId: string): Promise<DialecticSessionView | undefined> {
  return readAggregateView(store, dialecticSessionsProjection, dialecticStreamId(sessionId), sessionId);
}
