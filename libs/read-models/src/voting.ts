import type { PageRequest, VotingSessionStatus, VotingSessionSummary, VotingSessionView } from '@agora/contracts';
import { evolveVotingSession, isOpenForVotes, votingConfigDecider, votingConfigStreamId, votingSessionStreamId, type VotingConfig, type VotingConfigEvent, type VotingSessionEvent, type VotingSessionState } from '@agora/domain-voting';
import type { EventStore } from '@agora/eventstore';
import { aggregateViews, readAggregateView, readEvents } from './aggregate-views.js';
import { pageOf, type Page } from './paging.js';

/** Every voting session with its votes and outcome, by session id. */
export type VotingSessionsModel = Map<string, VotingSessionView>;

/**
 * Folds every `voting_session-*` stream with the session decider's own `evolveVotingSession`, so
 * the read model and the decider cannot disagree about a session.
 */
export const votingSessionsProjection = aggregateViews<VotingSessionView, VotingSessionState, VotingSessionEvent>({
  name: 'voting_sessions',
  category: 'voting_session',
  initial: { status: 'none' },
  evolve: evolveVotingSession,
});

/** The one-line form of a session (ListPendingVotingSessions). */
export function votingSessionSummary(s: VotingSessionView): VotingSessionSummary {
  return {
    sessionId: s.sessionId,
    requestId: s.requestId,
    requestingAgent: s.requestingAgent,
    actionType: s.actionType,
    riskLevel: s.riskLevel,
    critical: s.critical,
    status: s.status,
    validators: s.validators.map((v) => v.agentId),
    votesReceived: s.votes.length,
    awaitingOperator: s.awaitingOperator,
    createdAt: s.createdAt,
    deadlineAt: s.deadlineAt,
  };
}

export interface PendingFilter {
  /** The sessions waiting for an operator instead of those collecting votes. */
  awaitingOperator?: boolean;
  /** Only sessions this validator was selected for and has not voted on (collecting votes). */
  validator?: string;
}

/** The seed's getPendingSessions(): sessions collecting votes (or waiting for an operator), oldest first, then by id: one page. */
export function pendingVotingSessions(model: VotingSessionsModel, filter: PendingFilter & PageRequest = {}): Page<VotingSessionSummary> {
  const out: VotingSessionView[] = [];
  for (const s of model.values()) {
    if (filter.awaitingOperator ? !s.awaitingOperator : !isOpenForVotes(s.status)) continue;
    if (filter.validator !== undefined && (!s.validators.some((v) => v.agentId === filter.validator) || s.votes.some((v) => v.validator === filter.validator))) continue;
    out.push(s);
  }
  return pageOf(out, { key: (s) => [s.createdAt, s.sessionId], directions: ['asc', 'asc'] }, filter, votingSessionSummary);
}

export interface VotingSessionFilter {
  status?: VotingSessionStatus;
  requestingAgent?: string;
}

/** Sessions matching the filter, most recently updated first, then by id (ListVotingSessions): one page. */
export function listVotingSessions(model: VotingSessionsModel, filter: VotingSessionFilter & PageRequest = {}): Page<VotingSessionSummary> {
  const out: VotingSessionView[] = [];
  for (const s of model.values()) {
    if (filter.status !== undefined && s.status !== filter.status) continue;
    if (filter.requestingAgent !== undefined && s.requestingAgent !== filter.requestingAgent) continue;
    out.push(s);
  }
  return pageOf(out, { key: (s) => [s.updatedAt, s.sessionId], directions: ['desc', 'asc'] }, filter, votingSessionSummary);
}

/**
 * One session read straight from its stream, for a service deciding on it (the dialectic's quorum);
 * queries answer from the read model. Undefined when there is no such session.
 */
export function readVotingSession(store: EventStore, sessionId: string): Promise<VotingSessionView | undefined> {
  return readAggregateView(store, votingSessionsProjection, votingSessionStreamId(sessionId), sessionId);
}

/** The voting configuration in force (the seed's defaults before any change) and the revision of `voting_config-global` it comes from (-1: none). */
export async function readVotingConfig(store: EventStore): Promise<{ config: VotingConfig; revision: number }> {
  const events = (await readEvents(store, votingConfigStreamId())) ?? [];
  let state = votingConfigDecider.initialState();
  for (const event of events) state = votingConfigDecider.evolve(state, { type: event.type, data: event.data } as VotingConfigEvent);
  return { config: state.config, revision: events.at(-1)?.revision ?? -1 };
}
