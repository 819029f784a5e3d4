import { DIALECTIC_SESSION_CATEGORY, type DialecticSessionSummary, type DialecticSessionView, type DialecticStatus, type PageRequest } from '@agora/contracts';
import { dialecticStreamId, evolveSession, type DialecticEvent, type DialecticSessionState } from '@agora/domain-dialectic';
import type { EventStore } from '@agora/eventstore';
import { aggregateViews, readAggregateView } from './aggregate-views.js';
import { pageOf, type Page } from './paging.js';

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

const participants = (s: DialecticSessionView): (string | null)[] => [s.agentId, s.reviewer, ...s.escalations.map((e) => e.tieBreaker), s.audit?.auditor ?? null];

/** Sessions matching the filter, most recently updated first, then by id: one page. */
export function listDialecticSessions(model: DialecticSessionsModel, filter: DialecticSessionFilter & PageRequest = {}): Page<DialecticSessionSummary> {
  const out: DialecticSessionView[] = [];
  for (const s of model.values()) {
    if (filter.agentId !== undefined && s.agentId !== filter.agentId) continue;
    if (filter.participant !== undefined && !participants(s).includes(filter.participant)) continue;
    if (filter.awaiting !== undefined && !s.awaiting.includes(filter.awaiting)) continue;
    if (filter.status !== undefined && s.status !== filter.status) continue;
    out.push(s);
  }
  return pageOf(out, { key: (s) => [s.updatedAt, s.sessionId], directions: ['desc', 'asc'] }, filter, dialecticSessionSummary);
}

/**
 * One session read straight from its stream, for a reactor deciding on it; queries answer from the
 * read model. Undefined when there is no such session.
 */
export function readDialecticSession(store: EventStore, sessionId: string): Promise<DialecticSessionView | undefined> {
  return readAggregateView(store, dialecticSessionsProjection, dialecticStreamId(sessionId), sessionId);
}
