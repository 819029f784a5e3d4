import type { PageRequest, ProposalView, ReviewAssignmentView } from '@agora/contracts';
import { addSums } from '@agora/decider';
import {
  evolveProposal,
  latestRound,
  proposalCalibrationSums,
  proposalStreamId,
  proposalTimedSums,
  proposalTotalSums,
  openObjections,
  reviewedConstitutions,
  type ProposalCoverage,
  type ProposalEvent,
  type ProposalState,
} from '@agora/domain-tribunal';
import type { EventStore } from '@agora/eventstore';
import type { SqlExecutor } from '@agora/read-store';
import { aggregateViews, readAggregateView, sqlAggregateViews, childTable, integerColumn, textColumn } from './aggregate-views.js';
import { equals, sqlPage, type Page, type SqlCondition } from './paging.js';

/** Every proposal with its whole review history, by proposal id. */
export type ProposalsModel = Map<string, ProposalView>;

/**
 * Folds every `proposal-*` stream with the proposal decider's own `evolveProposal`, so the read
 * model and the decider cannot disagree about a proposal.
 */
export const proposalsProjection = aggregateViews<ProposalView, ProposalState, ProposalEvent>({
  name: 'proposals',
  category: 'proposal',
  initial: { status: 'unsubmitted' },
  evolve: evolveProposal,
  // 2: proposals carry their reported outcome (OutcomeReported).
  snapshotVersion: 2,
});

/** The one-line form of a proposal (ListProposals). */
export function proposalSummary(p: ProposalView) {
  return {
    proposalId: p.proposalId,
    proposer: p.proposer,
    title: p.title,
    proposalClass: p.proposalClass,
    status: p.status,
    revision: p.revision,
    round: latestRound(p)?.round ?? null,
    openObjections: openObjections(p).length,
    submittedAt: p.submittedAt,
    updatedAt: p.updatedAt,
  };
}

export interface ProposalFilter {
  status?: ProposalView['status'];
  proposer?: string;
  proposalClass?: ProposalView['proposalClass'];
}

/** A reviewer's assignment as a row of `proposal_assignments`: the view ListAssignments shows, by reviewer. */
type AssignmentRow = ReviewAssignmentView & { reviewer: string };

/** Every assignment of a proposal's rounds, with where each stands: pending (open, unanswered), reviewed, deemed or closed. */
function assignmentRows(p: ProposalView): AssignmentRow[] {
  const out: AssignmentRow[] = [];
  for (const round of p.rounds) {
    for (const a of round.assignments) {
      const review = round.reviews.find((r) => r.reviewer === a.reviewer && r.constitution === a.constitution);
      const state = review ? (review.deemed ? 'deemed' : 'reviewed') : round.status === 'open' ? 'pending' : 'closed';
      out.push({ reviewer: a.reviewer, proposalId: p.proposalId, title: p.title, proposer: p.proposer, round: round.round, revision: round.revision, constitution: a.constitution, deadlineAt: round.deadlineAt, state, verdict: review?.verdict ?? null });
    }
  }
  return out;
}


/** The distinct constitutions that reviewed a proposal explicitly, once a round of it has closed (what constitutionalCoverage measures); null before. */
const coverageOf = (p: ProposalView): number | null => (p.rounds.some((r) => r.status === 'closed') ? reviewedConstitutions(p).length : null);

/**
 * Every proposal with its whole review history, one row each in `proposals_v<version>` (folded with
 * the proposal decider's own `evolveProposal`), and each reviewer's assignments in
 * `proposal_assignments_v<version>`: what GetProposal, ListProposals and ListAssignments read. The
 * tribunal's figures live beside them: the all-time totals and the calibration as sums
 * (`proposals_sums_v<version>`), the windowed figures as timed sums (`proposals_timed_v<version>`),
 * each proposal's coverage as a column.
 */
export const proposalsTable = sqlAggregateViews<ProposalView, ProposalState, ProposalEvent>({
  name: 'proposals',
  // 2: the figures (sums, timed sums, coverage).
  version: 2,
  category: 'proposal',
  initial: { status: 'unsubmitted' },
  evolve: evolveProposal,
  columns: [
    textColumn('status', (p) => p.status),
    textColumn('proposer', (p) => p.proposer),
    textColumn('proposal_class', (p) => p.proposalClass),
    textColumn('updated_at', (p) => p.updatedAt),
    integerColumn('coverage', coverageOf),
  ],
  sums: (p) => addSums(proposalTotalSums(p), proposalCalibrationSums(p)),
  timed: proposalTimedSums,
  indexes: [
    ['coverage', 'id'],
    ['updated_at DESC', 'id'],
    ['status', 'updated_at DESC', 'id'],
    ['proposer', 'updated_at DESC', 'id'],
    ['proposal_class', 'updated_at DESC', 'id'],
  ],
  children: [
    childTable<ProposalView, AssignmentRow>({
      table: 'proposal_assignments',
      columns: [
        textColumn<AssignmentRow>('reviewer', (a) => a.reviewer),
        integerColumn<AssignmentRow>('round', (a) => a.round),
        textColumn<AssignmentRow>('constitution', (a) => a.constitution),
        textColumn<AssignmentRow>('deadline_at', (a) => a.deadlineAt),
        textColumn<AssignmentRow>('state', (a) => a.state),
        textColumn<AssignmentRow>('item', ({ reviewer: _, ...a }) => JSON.stringify(a)),
      ],
      key: ['round', 'constitution', 'reviewer'],
      indexes: [
        ['reviewer', 'deadline_at DESC', 'parent_id', 'round', 'constitution'],
        ['reviewer', 'state', 'deadline_at DESC', 'parent_id', 'round', 'constitution'],
      ],
      rows: assignmentRows,
    }),
  ],
});

/** One proposal with its whole review history (GetProposal), or undefined. */
export function getProposal(db: SqlExecutor, proposalId: string): Promise<ProposalView | undefined> {
  return proposalsTable.get(db, proposalId);
}

/** Proposals matching the filter, most recently updated first, then by id (ListProposals): one page. */
export function listProposals(db: SqlExecutor, filter: ProposalFilter & PageRequest = {}): Promise<Page<ReturnType<typeof proposalSummary>>> {
  const where: SqlCondition[] = [];
  if (filter.status !== undefined) where.push(equals('status', filter.status));
  if (filter.proposer !== undefined) where.push(equals('proposer', filter.proposer));
  if (filter.proposalClass !== undefined) where.push(equals('proposal_class', filter.proposalClass));
  return sqlPage<{ doc: string; updated_at: string; id: string }, ReturnType<typeof proposalSummary>>(
    db,
    { from: `SELECT doc, updated_at, id FROM ${proposalsTable.table}`, where, order: [{ column: 'updated_at', direction: 'desc' }, { column: 'id', direction: 'asc' }], key: (r) => [r.updated_at, r.id] },
    filter,
    (r) => proposalSummary(JSON.parse(r.doc) as ProposalView),
  );
}

/**
 * One proposal read straight from its stream, for another service's reactor (the chamber's
 * deadlock consultation); queries answer from the read model. Undefined when there is no such proposal.
 */
export function readProposal(store: EventStore, proposalId: string): Promise<ProposalView | undefined> {
  return readAggregateView(store, proposalsProjection, proposalStreamId(proposalId), proposalId);
}

/** A reviewer's assignments, latest deadline first (then by proposal, round and constitution): the open ones it has not answered (`pending`), or all of them; one page. */
export function assignmentsOf(db: SqlExecutor, reviewer: string, include: 'pending' | 'all', request: PageRequest = {}): Promise<Page<ReviewAssignmentView>> {
  const where: SqlCondition[] = [equals('reviewer', reviewer)];
  if (include === 'pending') where.push(equals('state', 'pending'));
  return sqlPage<{ item: string; deadline_at: string; parent_id: string; round: number; constitution: string }, ReviewAssignmentView>(
    db,
    {
      from: `SELECT item, deadline_at, parent_id, round, constitution FROM ${proposalsTable.childTable('proposal_assignments')}`,
      where,
      order: [
        { column: 'deadline_at', direction: 'desc' },
        { column: 'parent_id', direction: 'asc' },
        { column: 'round', direction: 'asc' },
        { column: 'constitution', direction: 'asc' },
      ],
      key: (r) => [r.deadline_at, r.parent_id, r.round, r.constitution],
    },
    request,
    (r) => JSON.parse(r.item) as ReviewAssignmentView,
  );
}

/** The proposals whose coverage (see constitutionalCoverage) is below `below`, fewest constitutions first, then by id: one page. */
export function underCoveredProposals(db: SqlExecutor, below: number, request: PageRequest = {}): Promise<Page<ProposalCoverage>> {
  return sqlPage<{ coverage: number; id: string }, ProposalCoverage>(
    db,
    {
      from: `SELECT coverage, id FROM ${proposalsTable.table}`,
      where: [(bind) => `coverage IS NOT NULL AND coverage < ${bind(below)}`],
      order: [
        { column: 'coverage', direction: 'asc' },
        { column: 'id', direction: 'asc' },
      ],
      key: (r) => [Number(r.coverage), r.id],
    },
    request,
    (r) => ({ proposalId: r.id, constitutionalCoverage: Number(r.coverage) }),
  );
}
