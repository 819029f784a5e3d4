import { DEBATE_CATEGORY, type DebateSummary, type DebateView, type PageRequest } from '@agora/contracts';
import { debateSums, evolveDebate, type DebateEvent, type DebateState } from '@agora/domain-debate';
import type { SqlExecutor } from '@agora/read-store';
import { agentsTable, aggregateViews, sqlAggregateViews, textColumn } from './aggregate-views.js';
import { equals, hasAgent, sqlPage, type Page, type SqlCondition } from './paging.js';

/** Every debate with its threads and transcript, by debate id. */
export type DebatesModel = Map<string, DebateView>;

/** Folds every `debate-*` stream with the debate decider's own `evolveDebate`, so the read model and the decider cannot disagree. */
export const debatesProjection = aggregateViews<DebateView, DebateState, DebateEvent>({
  name: 'debates',
  category: DEBATE_CATEGORY,
  initial: { status: 'unopened' },
  evolve: evolveDebate,
});

export function debateSummary(d: DebateView): DebateSummary {
  return {
    debateId: d.debateId,
    topic: d.topic,
    status: d.status,
    participants: d.participants.map((p) => p.agentId),
    stages: d.threads.map((t) => ({ threadId: t.threadId, stage: t.stage })),
    outcome: d.outcome,
    openedAt: d.openedAt,
    completedAt: d.completedAt,
  };
}

/**
 * Every debate with its threads and transcript, one row each in `debates_v<version>` (folded with the
 * debate decider's own `evolveDebate`), its participants in a child table: what GetDebate and
 * ListDebates read.
 */
export const debatesTable = sqlAggregateViews<DebateView, DebateState, DebateEvent>({
  name: 'debates',
  // 2: the debate figures as sums (debateSums).
  version: 2,
  category: DEBATE_CATEGORY,
  initial: { status: 'unopened' },
  evolve: evolveDebate,
  sums: debateSums,
  columns: [
    textColumn('status', (d) => d.status),
    textColumn('opened_at', (d) => d.openedAt),
  ],
  indexes: [
    ['opened_at DESC', 'id'],
    ['status', 'opened_at DESC', 'id'],
  ],
  children: [
    agentsTable<DebateView>('debate_participants', (d) => d.participants.map((p) => p.agentId)),
  ],
});

/** One debate with its threads and transcript (GetDebate), or undefined. */
export function getDebate(db: SqlExecutor, debateId: string): Promise<DebateView | undefined> {
  return debatesTable.get(db, debateId);
}

/** Debates matching the filter, most recently opened first, then by id: one page. */
export function listDebates(db: SqlExecutor, filter: { status?: 'open' | 'complete'; participant?: string } & PageRequest = {}): Promise<Page<DebateSummary>> {
  const where: SqlCondition[] = [];
  if (filter.status !== undefined) where.push(equals('status', filter.status));
  if (filter.participant !== undefined) where.push(hasAgent(debatesTable.childTable('debate_participants'), filter.participant));
  return sqlPage<{ doc: string; id: string; opened_at: string }, DebateSummary>(
    db,
    { from: `SELECT doc, id, opened_at FROM ${debatesTable.table}`, where, order: [{ column: 'opened_at', direction: 'desc' }, { column: 'id', direction: 'asc' }], key: (r) => [r.opened_at, r.id] },
    filter,
    (r) => debateSummary(JSON.parse(r.doc) as DebateView),
  );
}
