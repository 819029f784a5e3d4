import { DEBATE_CATEGORY, type DebateSummary, type DebateView, type PageRequest } from '@agora/contracts';
import { evolveDebate, type DebateEvent, type DebateState } from '@agora/domain-debate';
import { aggregateViews } from './aggregate-views.js';
import { pageOf, type Page } from './paging.js';

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

/** Debates matching the filter, most recently opened first, then by id: one page. */
export function listDebates(model: DebatesModel, filter: { status?: 'open' | 'complete'; participant?: string } & PageRequest = {}): Page<DebateSummary> {
  const matching = [...model.values()].filter((d) => (filter.status === undefined || d.status === filter.status) && (filter.participant === undefined || d.participants.some((p) => p.agentId === filter.participant)));
  return pageOf(matching, { key: (d) => [d.openedAt, d.debateId], directions: ['desc', 'asc'] }, filter, debateSummary);
}
