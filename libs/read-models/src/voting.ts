import type { PageRequest, VotingSessionStatus, VotingSessionSummary, VotingSessionView } from '@agora/contracts';
import { evolveVotingSession, isOpenForVotes, votingConfigDecider, votingSessionSums, votingConfigStreamId, votingSessionStreamId, type VotingConfig, type VotingConfigEvent, type VotingSessionEvent, type VotingSessionState } from '@agora/domain-voting';
import type { EventStore } from '@agora/eventstore';
import type { SqlExecutor } from '@agora/read-store';
import { aggregateViews, childTable, integerColumn, readAggregateView, readEvents, sqlAggregateViews, textColumn } from './aggregate-views.js';
import { equals, sqlPage, type Page, type SqlCondition } from './paging.js';

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
    decision: s.resolution?.decision ?? (s.recommendation && !s.recommendation.requiresHitl && s.recommendation.decision !== 'escalate' ? s.recommendation.decision : null),
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

export interface VotingSessionFilter {
  status?: VotingSessionStatus;
  requestingAgent?: string;
}

/** A selected validator of a session, and whether it has voted: for the pending list by validator. */
interface ValidatorRow {
  validator: string;
  voted: number;
}


/**
 * Every voting session with its votes and outcome, one row each in `voting_sessions_v<version>`
 * (folded with the session decider's own `evolveVotingSession`), and its selected validators in
 * `voting_validators_v<version>`: what GetVotingSession, ListVotingSessions and
 * ListPendingVotingSessions read.
 */
export const votingSessionsTable = sqlAggregateViews<VotingSessionView, VotingSessionState, VotingSessionEvent>({
  name: 'voting_sessions',
  // 2: the voting figures as sums (votingSessionSums).
  version: 2,
  category: 'voting_session',
  initial: { status: 'none' },
  evolve: evolveVotingSession,
  sums: votingSessionSums,
  columns: [textColumn('status', (s) => s.status), textColumn('requesting_agent', (s) => s.requestingAgent), integerColumn('open_for_votes', (s) => isOpenForVotes(s.status)), integerColumn('awaiting_operator', (s) => s.awaitingOperator), textColumn('created_at', (s) => s.createdAt), textColumn('updated_at', (s) => s.updatedAt)],
  indexes: [
    ['updated_at DESC', 'id'],
    ['status', 'updated_at DESC', 'id'],
    ['requesting_agent', 'updated_at DESC', 'id'],
    ['open_for_votes', 'created_at', 'id'],
    ['awaiting_operator', 'created_at', 'id'],
  ],
  children: [
    childTable<VotingSessionView, ValidatorRow>({
      table: 'voting_validators',
      columns: [textColumn('validator', (v) => v.validator), integerColumn('voted', (v) => v.voted)],
      key: ['validator'],
      indexes: [['validator', 'voted']],
      rows: (s) => s.validators.map((v) => ({ validator: v.agentId, voted: s.votes.some((vote) => vote.validator === v.agentId) ? 1 : 0 })),
    }),
  ],
});

type SessionRow = { doc: string; id: string; created_at: string; updated_at: string };
const summaryOf = (r: SessionRow) => votingSessionSummary(JSON.parse(r.doc) as VotingSessionView);

/** One session with its votes and outcome (GetVotingSession), or undefined. */
export function getVotingSession(db: SqlExecutor, sessionId: string): Promise<VotingSessionView | undefined> {
  return votingSessionsTable.get(db, sessionId);
}

/** The seed's getPendingSessions(): sessions collecting votes (or waiting for an operator), oldest first, then by id: one page. */
export function pendingVotingSessions(db: SqlExecutor, filter: PendingFilter & PageRequest = {}): Promise<Page<VotingSessionSummary>> {
  const where: SqlCondition[] = [equals(filter.awaitingOperator ? 'awaiting_operator' : 'open_for_votes', 1)];
  if (filter.validator !== undefined) {
    const validator = filter.validator;
    where.push((bind) => `id IN (SELECT parent_id FROM ${votingSessionsTable.childTable('voting_validators')} WHERE validator = ${bind(validator)} AND voted = 0)`);
  }
  return sqlPage<SessionRow, VotingSessionSummary>(db, { from: `SELECT doc, id, created_at, updated_at FROM ${votingSessionsTable.table}`, where, order: [{ column: 'created_at', direction: 'asc' }, { column: 'id', direction: 'asc' }], key: (r) => [r.created_at, r.id] }, filter, summaryOf);
}

/** Sessions matching the filter, most recently updated first, then by id (ListVotingSessions): one page. */
export function listVotingSessions(db: SqlExecutor, filter: VotingSessionFilter & PageRequest = {}): Promise<Page<VotingSessionSummary>> {
  const where: SqlCondition[] = [];
  if (filter.status !== undefined) where.push(equals('status', filter.status));
  if (filter.requestingAgent !== undefined) where.push(equals('requesting_agent', filter.requestingAgent));
  return sqlPage<SessionRow, VotingSessionSummary>(db, { from: `SELECT doc, id, created_at, updated_at FROM ${votingSessionsTable.table}`, where, order: [{ column: 'updated_at', direction: 'desc' }, { column: 'id', direction: 'asc' }], key: (r) => [r.updated_at, r.id] }, filter, summaryOf);
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
