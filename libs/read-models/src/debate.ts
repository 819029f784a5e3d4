import { DEBATE_CATEGORY, type DebateSummary, type DebateView } from '@agora/contracts';
import { debateStreamId, evolveDebate, type DebateEvent, type DebateState } from '@agora/domain-debate';
import type { EventStore } from '@agora/eventstore';
import { aggregateViews, readAggregateView } from './aggregate-views.js';

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

/** Debates matching the filter, most recently opened first. */
export function listDebates(model: DebatesModel, filter: { status?: 'open' | 'complete'; participant?: string; limit?: number } = {}): DebateSummary[] {
  return [...model.values()]
    .filter((d) => (filter.status === undefined || d.status === filter.status) && (filter.participant === undefined || d.participants.some((p) => p.agentId === filter.participant)))
    .sort((a, b) => (a.openedAt > b.openedAt ? -1 : a.openedAt < b.openedAt ? 1 : a.debateId < b.debateId ? -1 : 1))
    .slice(0, filter.limit ?? 100)
    .map(debateSummary);
}

/** One debate read straight from its stream (what a query answers right after a move). Undefined when there is none. */
export function readDebate(store: EventStore, debateId: string): Promise<DebateView | undefined> {
  return readAggregateView(store, debatesProjection, debateStreamId(debateId), debateId);
}
