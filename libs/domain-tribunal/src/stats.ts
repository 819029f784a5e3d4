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

export const DAY_MS = 86_400_000;
export const DEFAULT_STATS_WINDOW_DAYS = 30;

/** The seed's target: 20 to 40 % of proposals challenged; below 20 % the tribunal is losing its teeth. */
export const RUBBER_STAMPING_BELOW = 0.2;
/** The seed: "if > 60 %, coordination overhead too high". */
export const OVERHEAD_ABOVE = 0.6;
/** The seed's coverage measurement: `HAVING COUNT(DISTINCT constitution) < 3`. */
export const DEFAULT_COVERAGE_BELOW = 3;

export type HealthBand = 'rubber_stamping' | 'healthy' | 'overhead' | 'unknown';

/**
 * The seed's bands for a challenge rate: below 0.2 `rubber_stamping`, 0.2 to 0.6 inclusive
 * `healthy` (the seed's target is 0.2 to 0.4; 0.4 to 0.6 is tolerated), above 0.6 `overhead`,
 * `unknown` when there is no rate (nothing reviewed).
 */
export function healthBand(challengeRate: number | null): HealthBand {
  if (challengeRate === null || Number.isNaN(challengeRate)) return 'unknown';
  if (challengeRate < RUBBER_STAMPING_BELOW) return 'rubber_stamping';
  if (challengeRate > OVERHEAD_ABOVE) return 'overhead';
  return 'healthy';
}

const ms = (t: string): number => Date.parse(t);

function instant(now: string | Date): number {
  const t = typeof now === 'string' ? Date.parse(now) : now.getTime();
  if (!Number.isFinite(t)) throw new RangeError(`now ${String(now)} is not a valid time`);
  return t;
}

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
  positiveInt(windowDays, 'windowDays');
  const to = instant(now);
  const from = to - windowDays * DAY_MS;
  const inWindow = (t: string | null | undefined): boolean => {
    if (!t) return false;
    const x = ms(t);
    return x >= from && x <= to;
  };

  const submitted = records.filter((p) => inWindow(p.submittedAt));
  const reviewed = submitted.filter((p) => p.rounds.length > 0);
  const challenged = reviewed.filter((p) => p.objections.length > 0);

  const outcomes = { review: 0, escalated: 0, approved: 0, approvedByOperator: 0, rejected: 0, withdrawn: 0 };
  for (const p of submitted) {
    outcomes[p.status satisfies ProposalStatus]++;
    if (approvedByOperator(p)) outcomes.approvedByOperator++;
  }

  let deemedApprovals = 0;
  let deadlocksEscalated = 0;
  let coverageEscalations = 0;
  let proceededDespiteObjections = 0;
  let reviewedWithFewerThanMinConstitutions = 0;
  const operatorDecisions = { approve: 0, reject: 0, send_back: 0 };
  let approvedInWindow = 0;
  let roundsOfApproved = 0;

  for (const p of records) {
    for (const round of p.rounds) for (const review of round.reviews) if (review.deemed && inWindow(review.at)) deemedApprovals++;
    for (const e of p.escalations) {
      if (inWindow(e.escalatedAt)) {
        if (e.reason === 'deadlock') deadlocksEscalated++;
        else coverageEscalations++;
      }
      if (e.decision !== null && inWindow(e.decidedAt)) operatorDecisions[e.decision]++;
    }
    if (p.execution?.despiteObjections && inWindow(p.execution.recordedAt)) proceededDespiteObjections++;
    const decided = decidedAt(p);
    if (decided !== null && inWindow(decided)) {
      if (approvingConstitutionsInLastRound(p) < p.rules.minConstitutions) reviewedWithFewerThanMinConstitutions++;
      if (p.status === 'approved') {
        approvedInWindow++;
        roundsOfApproved += p.rounds.length;
      }
    }
  }

  return {
    window: { from: new Date(from).toISOString(), to: new Date(to).toISOString(), days: windowDays },
    proposals: { submitted: submitted.length, reviewed: reviewed.length, challenged: challenged.length },
    challengeRate: reviewed.length === 0 ? null : challenged.length / reviewed.length,
    reviewedWithFewerThanMinConstitutions,
    deemedApprovals,
    deadlocksEscalated,
    coverageEscalations,
    proceededDespiteObjections,
    outcomes,
    operatorDecisions,
    meanRoundsToApproval: approvedInWindow === 0 ? null : roundsOfApproved / approvedInWindow,
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
  /** Rounds opened for each proposal in a final status (approved, rejected, withdrawn), in record order. */
  resolutionRounds: number[];
}

/**
 * Totals over every record, all time. Each only grows as the log grows (final statuses are final,
 * events are never removed), so the exporter may publish them as counters: a restart rebuilds the
 * same values from the log instead of starting again from zero.
 */
export function tribunalTotals(records: readonly ProposalRecord[]): TribunalTotals {
  const totals: TribunalTotals = {
    proposalsByStatus: { review: 0, escalated: 0, approved: 0, rejected: 0, withdrawn: 0 },
    decisions: { approvedByTribunal: 0, approvedByOperator: 0, rejected: 0, withdrawn: 0 },
    deemedApprovals: 0,
    deadlocksEscalated: 0,
    coverageEscalations: 0,
    operatorDecisions: { approve: 0, reject: 0, send_back: 0 },
    proceededDespiteObjections: 0,
    openObjections: 0,
    resolutionRounds: [],
  };
  for (const p of records) {
    totals.proposalsByStatus[p.status]++;
    if (p.status === 'approved') totals.decisions[approvedByOperator(p) ? 'approvedByOperator' : 'approvedByTribunal']++;
    else if (p.status === 'rejected' || p.status === 'withdrawn') totals.decisions[p.status]++;
    if (p.status === 'approved' || p.status === 'rejected' || p.status === 'withdrawn') totals.resolutionRounds.push(p.rounds.length);
    for (const round of p.rounds) for (const review of round.reviews) if (review.deemed) totals.deemedApprovals++;
    for (const e of p.escalations) {
      if (e.reason === 'deadlock') totals.deadlocksEscalated++;
      else totals.coverageEscalations++;
      if (e.decision !== null) totals.operatorDecisions[e.decision]++;
    }
    if (p.execution?.despiteObjections) totals.proceededDespiteObjections++;
    if (p.status === 'review' || p.status === 'escalated') for (const o of p.objections) if (o.status === 'open') totals.openObjections++;
  }
  return totals;
}
