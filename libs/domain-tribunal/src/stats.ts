/**
 * The tribunal's health figures (seed 000, "Observable Metrics" and "Rejection as Signal"), computed
 * from proposal records alone: pure functions of the read model and of a `now` given by the caller
 * (no clock, no I/O), so the stats query, the metrics exporter and a test all compute the same
 * numbers from the same records.
 *
 * Windows. `tribunalStats` looks at the `windowDays` days up to `now`: an instant t is in the window
 * when `now - windowDays days <= t <= now` (both ends included; an event exactly at the window start
 * counts, an event after `now` does not). What is timed by what:
 * - proposal counts and `outcomes`: the proposal's `submittedAt` (then its current status);
 * - `deemedApprovals`: the deemed review's `at` (ReviewDeemedApproved.deemedAt);
 * - `deadlocksEscalated`, `coverageEscalations`: the escalation's `escalatedAt`;
 * - `operatorDecisions`: the escalation's `decidedAt`;
 * - `proceededDespiteObjections`: the execution's `recordedAt`;
 * - `meanRoundsToApproval`, `reviewedWithFewerThanMinConstitutions`: the time the proposal was
 *   decided (see `decidedAt`).
 */
import { positiveInt, type ProposalRecord, type ProposalStatus, type TribunalStats } from '@agora/contracts';
import { addSum, daysWindow, sumOf, sumsOf, sumsUnder, TimedSums, windowSums, type Sums, type TimedSum } from '@agora/decider';

export const DAY_MS = 86_400_000;
export const DEFAULT_STATS_WINDOW_DAYS = 30;

export { healthBand, OVERHEAD_ABOVE, RUBBER_STAMPING_BELOW, type HealthBand } from './health-band.js';

/** The seed's coverage measurement: `HAVING COUNT(DISTINCT constitution) < 3`. */
export const DEFAULT_COVERAGE_BELOW = 3;

const ms = (t: string): number => Date.parse(t);

const latest = (times: readonly (string | null | undefined)[]): string | null => {
  let best: string | null = null;
  for (const t of times) if (t && (best === null || ms(t) > ms(best))) best = t;
  return best;
};

/** True when an operator approved the proposal (EscalationDecided approve, followed by ProposalApproved). */
export const approvedByOperator = (p: ProposalRecord): boolean => p.status === 'approved' && p.escalations.some((e) => e.decision === 'approve');

/**
 * When the proposal was approved or rejected, read off the record (it keeps no approval time of its
 * own); null when it is neither.
 * - rejected: the `decidedAt` of the escalation decided `reject`;
 * - approved by an operator: the `decidedAt` of the escalation decided `approve`;
 * - approved by the tribunal: the close of its last round, or the withdrawal of the last open
 *   objection of a round that had closed blocked, whichever is later. Nothing can change a round or
 *   an objection once the proposal is approved, so that latest time is the approval.
 */
export function decidedAt(p: ProposalRecord): string | null {
  if (p.status === 'rejected') return latest(p.escalations.filter((e) => e.decision === 'reject').map((e) => e.decidedAt));
  if (p.status !== 'approved') return null;
  const byOperator = p.escalations.find((e) => e.decision === 'approve');
  if (byOperator) return byOperator.decidedAt;
  return latest([...p.rounds.map((r) => r.closedAt), ...p.objections.filter((o) => o.status === 'withdrawn').map((o) => o.resolvedAt)]);
}

/** Distinct constitutions that approved (explicitly or deemed) in the proposal's last round; 0 without a round. */
export function approvingConstitutionsInLastRound(p: ProposalRecord): number {
  const last = p.rounds.at(-1);
  if (!last) return 0;
  return new Set(last.reviews.filter((r) => r.verdict === 'approve').map((r) => r.constitution)).size;
}

/**
 * The tribunal's health over the `windowDays` days up to `now`, with the meanings the TribunalStats
 * schema documents (see the top of this file for what each figure is timed by):
 * - `proposals`: submitted in the window; of those, `reviewed` (at least one review round opened)
 *   and `challenged` (at least one objection raised, in any round);
 * - `challengeRate`: challenged / reviewed, null when none was reviewed;
 * - `reviewedWithFewerThanMinConstitutions`: proposals decided (approved or rejected) in the window
 *   whose last round had fewer than their `rules.minConstitutions` (at least 3) distinct
 *   constitutions approving, explicitly or deemed; a proposal decided without any round (an
 *   operator deciding a coverage escalation) had 0;
 * - `outcomes`: current status of the proposals submitted in the window (`approvedByOperator` is
 *   included in `approved`);
 * - `meanRoundsToApproval`: mean number of rounds opened for the proposals approved in the window,
 *   null when none was.
 */
export function tribunalStats(records: readonly ProposalRecord[], now: string | Date, windowDays = DEFAULT_STATS_WINDOW_DAYS): TribunalStats {
  const window = statsWindow(now, windowDays);
  return tribunalStatsFromSums(windowSums(records, proposalTimedSums, Date.parse(window.from), Date.parse(window.to)), window);
}

/** The window of `windowDays` days up to `now`, both ends included. */
export function statsWindow(now: string | Date, windowDays = DEFAULT_STATS_WINDOW_DAYS): TribunalStats['window'] {
  positiveInt(windowDays, 'windowDays');
  return daysWindow(now, windowDays);
}

/**
 * What one proposal adds to the windowed figures, each at the instant it is timed by (the top of
 * this file): summed over the instants in a window, they are `tribunalStats` (tribunalStatsFromSums).
 */
export function proposalTimedSums(p: ProposalRecord): TimedSum[] {
  const timed = new TimedSums();
  timed.add(p.submittedAt, 1, 'submitted');
  if (p.rounds.length > 0) {
    timed.add(p.submittedAt, 1, 'reviewed');
    if (p.objections.length > 0) timed.add(p.submittedAt, 1, 'challenged');
  }
  timed.add(p.submittedAt, 1, 'outcome', p.status);
  if (approvedByOperator(p)) timed.add(p.submittedAt, 1, 'outcome', 'approvedByOperator');
  for (const round of p.rounds) for (const review of round.reviews) if (review.deemed) timed.add(review.at, 1, 'deemed');
  for (const e of p.escalations) {
    timed.add(e.escalatedAt, 1, 'escalated', e.reason === 'deadlock' ? 'deadlock' : 'coverage');
    if (e.decision !== null) timed.add(e.decidedAt, 1, 'operator', e.decision);
  }
  if (p.execution?.despiteObjections) timed.add(p.execution.recordedAt, 1, 'proceeded');
  const decided = decidedAt(p);
  if (approvingConstitutionsInLastRound(p) < p.rules.minConstitutions) timed.add(decided, 1, 'fewer_than_min');
  if (p.status === 'approved') {
    timed.add(decided, 1, 'approved');
    timed.add(decided, p.rounds.length, 'approved_rounds');
  }
  return timed.items;
}

/** The TribunalStats of the sums of proposalTimedSums over a window. */
export function tribunalStatsFromSums(sums: ReadonlyMap<string, number>, window: TribunalStats['window']): TribunalStats {
  const submitted = sumOf(sums, 'submitted');
  const reviewed = sumOf(sums, 'reviewed');
  const challenged = sumOf(sums, 'challenged');
  const approved = sumOf(sums, 'approved');
  const outcome = (status: string) => sumOf(sums, 'outcome', status);
  const operator = (decision: string) => sumOf(sums, 'operator', decision);
  return {
    window,
    proposals: { submitted, reviewed, challenged },
    challengeRate: reviewed === 0 ? null : challenged / reviewed,
    reviewedWithFewerThanMinConstitutions: sumOf(sums, 'fewer_than_min'),
    deemedApprovals: sumOf(sums, 'deemed'),
    deadlocksEscalated: sumOf(sums, 'escalated', 'deadlock'),
    coverageEscalations: sumOf(sums, 'escalated', 'coverage'),
    proceededDespiteObjections: sumOf(sums, 'proceeded'),
    outcomes: { review: outcome('review'), escalated: outcome('escalated'), approved: outcome('approved'), approvedByOperator: outcome('approvedByOperator'), rejected: outcome('rejected'), withdrawn: outcome('withdrawn') },
    operatorDecisions: { approve: operator('approve'), reject: operator('reject'), send_back: operator('send_back') },
    meanRoundsToApproval: approved === 0 ? null : sumOf(sums, 'approved_rounds') / approved,
  };
}

export interface ProposalCoverage {
  proposalId: string;
  /** Distinct constitutions that reviewed the proposal explicitly, over all its rounds. */
  constitutionalCoverage: number;
}

/**
 * Explicitly reviewed constitutions of a proposal: the distinct constitutions of its submitted
 * reviews (approve or object) over all its rounds. Deemed approvals do not count: silence at a
 * deadline is not a review (in the seed's schema a review row needs a reasoning, and silence writes
 * none), and counting it would let a tribunal that stays silent look fully covered.
 */
export function reviewedConstitutions(p: ProposalRecord): string[] {
  const seen = new Set<string>();
  for (const round of p.rounds) for (const review of round.reviews) if (!review.deemed) seen.add(review.constitution);
  return [...seen];
}

/**
 * The seed's coverage measurement
 *
 *   SELECT proposal_id, COUNT(DISTINCT constitution) FROM reviews GROUP BY proposal_id
 *   HAVING COUNT(DISTINCT constitution) < 3
 *
 * over the records: the proposals whose `reviewedConstitutions` number fewer than `below`, fewest
 * first (then by id). Which proposals are measured: those with at least one closed review round,
 * all time. Two deliberate differences from the SQL, which only sees proposals with a review row:
 * - a proposal whose rounds all closed in silence (every review deemed) is measured, with 0: it is
 *   the worst coverage there is, not an absence of data;
 * - a proposal whose first round is still open is not measured yet: otherwise every new proposal
 *   would count as under-covered until its reviewers answer, and the figure would alert on traffic.
 * Proposals never put to a round (waiting for one, or escalated for lack of reviewers) are not
 * measured: `coverageEscalations` counts the latter.
 */
export function constitutionalCoverage(records: readonly ProposalRecord[], below = DEFAULT_COVERAGE_BELOW): ProposalCoverage[] {
  positiveInt(below, 'below');
  return records
    .filter((p) => p.rounds.some((r) => r.status === 'closed'))
    .map((p) => ({ proposalId: p.proposalId, constitutionalCoverage: reviewedConstitutions(p).length }))
    .filter((c) => c.constitutionalCoverage < below)
    .sort((a, b) => a.constitutionalCoverage - b.constitutionalCoverage || (a.proposalId < b.proposalId ? -1 : a.proposalId > b.proposalId ? 1 : 0));
}

/** Figures over the whole log (no window): what the metrics exporter turns into counters and gauges. */
export interface TribunalTotals {
  /** Proposals by current status. */
  proposalsByStatus: Record<ProposalStatus, number>;
  /** Proposals in a final status, by outcome and by whom it was decided. */
  decisions: { approvedByTribunal: number; approvedByOperator: number; rejected: number; withdrawn: number };
  /** ReviewDeemedApproved events. */
  deemedApprovals: number;
  /** ProposalEscalated events, by reason. */
  deadlocksEscalated: number;
  coverageEscalations: number;
  /** EscalationDecided events, by decision. */
  operatorDecisions: { approve: number; reject: number; send_back: number };
  /** ProceededDespiteObjections events. */
  proceededDespiteObjections: number;
  /** Objections open now on proposals still undecided (under review or escalated): a rejected or withdrawn proposal's open objections block nothing. */
  openObjections: number;
  /** Proposals in a final status (approved, rejected, withdrawn), by the number of rounds opened for them, fewest rounds first. */
  resolutionRounds: { rounds: number; proposals: number }[];
  /** Proposals measured by `constitutionalCoverage` with fewer than DEFAULT_COVERAGE_BELOW constitutions. */
  underCovered: number;
}

/**
 * What one proposal adds to the all-time totals (`tribunalTotalsFromSums`): its status, how it was
 * decided, its rounds if it is resolved, its deemed reviews, escalations and operator decisions, its
 * open objections while undecided, and its coverage once a round has closed.
 */
export function proposalTotalSums(p: ProposalRecord): Sums {
  const sums: Sums = new Map();
  addSum(sums, 1, 'status', p.status);
  if (p.status === 'approved') addSum(sums, 1, 'decision', approvedByOperator(p) ? 'approvedByOperator' : 'approvedByTribunal');
  else if (p.status === 'rejected' || p.status === 'withdrawn') addSum(sums, 1, 'decision', p.status);
  if (p.status === 'approved' || p.status === 'rejected' || p.status === 'withdrawn') addSum(sums, 1, 'resolution_rounds', p.rounds.length);
  for (const round of p.rounds) for (const review of round.reviews) if (review.deemed) addSum(sums, 1, 'deemed');
  for (const e of p.escalations) {
    addSum(sums, 1, 'escalated', e.reason === 'deadlock' ? 'deadlock' : 'coverage');
    if (e.decision !== null) addSum(sums, 1, 'operator', e.decision);
  }
  if (p.execution?.despiteObjections) addSum(sums, 1, 'proceeded');
  if (p.status === 'review' || p.status === 'escalated') addSum(sums, p.objections.filter((o) => o.status === 'open').length, 'open_objections');
  if (p.rounds.some((r) => r.status === 'closed')) addSum(sums, 1, 'coverage', reviewedConstitutions(p).length);
  return sums;
}

/** The TribunalTotals of the sums of proposalTotalSums. */
export function tribunalTotalsFromSums(sums: ReadonlyMap<string, number>): TribunalTotals {
  const status = (s: ProposalStatus) => sumOf(sums, 'status', s);
  const decision = (d: string) => sumOf(sums, 'decision', d);
  const operator = (d: string) => sumOf(sums, 'operator', d);
  return {
    proposalsByStatus: { review: status('review'), escalated: status('escalated'), approved: status('approved'), rejected: status('rejected'), withdrawn: status('withdrawn') },
    decisions: { approvedByTribunal: decision('approvedByTribunal'), approvedByOperator: decision('approvedByOperator'), rejected: decision('rejected'), withdrawn: decision('withdrawn') },
    deemedApprovals: sumOf(sums, 'deemed'),
    deadlocksEscalated: sumOf(sums, 'escalated', 'deadlock'),
    coverageEscalations: sumOf(sums, 'escalated', 'coverage'),
    operatorDecisions: { approve: operator('approve'), reject: operator('reject'), send_back: operator('send_back') },
    proceededDespiteObjections: sumOf(sums, 'proceeded'),
    openObjections: sumOf(sums, 'open_objections'),
    resolutionRounds: sumsUnder(sums, 'resolution_rounds')
      .map(([[rounds], proposals]) => ({ rounds: Number(rounds), proposals }))
      .sort((a, b) => a.rounds - b.rounds),
    underCovered: sumsUnder(sums, 'coverage').reduce((n, [[covered], proposals]) => (Number(covered) < DEFAULT_COVERAGE_BELOW ? n + proposals : n), 0),
  };
}

/**
 * Totals over every record, all time. Each only grows as the log grows (final statuses are final,
 * events are never removed), so the exporter may publish them as counters: a restart rebuilds the
 * same values from the log instead of starting again from zero.
 */
export function tribunalTotals(records: readonly ProposalRecord[]): TribunalTotals {
  return tribunalTotalsFromSums(sumsOf(records, proposalTotalSums));
}
