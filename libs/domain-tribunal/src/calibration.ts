/**
 * Calibration: how each reviewer's verdicts, under each constitution, compare with what became of
 * the proposals it reviewed (an executed proposal's OutcomeReported: worked or failed). Pure
 * functions of proposal records, like the health figures in stats.ts: the calibration query, the
 * metrics exporter and a test compute the same numbers from the same records. The counts are
 * defined in docs/protocols/tribunal.md ("Calibration") and on the ReviewerCalibration contract.
 *
 * Objections, one by one, each with exactly one fate:
 * - upheld by revision: a later revision answered it (named it in `answers`);
 * - otherwise, by the proposal's reported outcome: failed: upheld by outcome; worked: not upheld;
 *   no outcome (yet): pending.
 * Approvals and objections are compared with outcomes through the reviewer's final position: its
 * last explicit verdict for that constitution on a proposal with a reported outcome. Deemed
 * approvals (silence) are counted, never compared with outcomes.
 */
import type { OutcomeCounts, ProposalRecord, ReviewerCalibration } from '@agora/contracts';
import { addSum, sumOf, sumsOf, sumsUnder, type Sums } from '@agora/decider';

/** Which fate an objection had: one of the four, so they sum to the objections raised. */
export type ObjectionFate = 'upheld_by_revision' | 'upheld_by_outcome' | 'not_upheld' | 'pending';

export function objectionFate(p: ProposalRecord, objection: ProposalRecord['objections'][number]): ObjectionFate {
  if (objection.status === 'answered') return 'upheld_by_revision';
  const outcome = p.outcome?.outcome;
  return outcome === 'failed' ? 'upheld_by_outcome' : outcome === 'worked' ? 'not_upheld' : 'pending';
}

const FATE_FIELD = { upheld_by_revision: 'upheldByRevision', upheld_by_outcome: 'upheldByOutcome', not_upheld: 'notUpheld', pending: 'pending' } as const;

const empty = (reviewer: string, constitution: string): ReviewerCalibration => ({
  reviewer,
  constitution,
  approvals: 0,
  deemedApprovals: 0,
  objections: 0,
  upheldByRevision: 0,
  upheldByOutcome: 0,
  notUpheld: 0,
  pending: 0,
  withdrawn: 0,
  overridden: 0,
  upheldRate: null,
  approvalsWorked: 0,
  approvalsFailed: 0,
  objectionsFailed: 0,
  objectionsWorked: 0,
});

export interface CalibrationFilter {
  reviewer?: string | undefined;
  constitution?: string | undefined;
}

/** The counting fields of a ReviewerCalibration (every field but its keys and the rate derived from them). */
type CalibrationCount = Exclude<keyof ReviewerCalibration, 'reviewer' | 'constitution' | 'upheldRate'>;

/**
 * What one proposal adds to the calibration (`calibrationFromSums`): per reviewer and constitution,
 * its reviews and objections with their fates, and the final verdicts compared with its reported
 * outcome; and whether it was executed and how it turned out (`outcomeCountsFromSums`).
 */
export function proposalCalibrationSums(p: ProposalRecord): Sums {
  const sums: Sums = new Map();
  const count = (reviewer: string, constitution: string, field: CalibrationCount) => addSum(sums, 1, 'calibration', reviewer, constitution, field);
  // The final explicit verdict of each reviewer and constitution: rounds and their reviews are in log order.
  const finalVerdict = new Map<string, { reviewer: string; constitution: string; verdict: 'approve' | 'object' }>();
  for (const round of p.rounds) {
    for (const review of round.reviews) {
      if (review.deemed) {
        count(review.reviewer, review.constitution, 'deemedApprovals');
        continue;
      }
      if (review.verdict === 'approve') count(review.reviewer, review.constitution, 'approvals');
      finalVerdict.set(`${review.reviewer}\u0000${review.constitution}`, { reviewer: review.reviewer, constitution: review.constitution, verdict: review.verdict });
    }
  }
  for (const o of p.objections) {
    count(o.reviewer, o.constitution, 'objections');
    count(o.reviewer, o.constitution, FATE_FIELD[objectionFate(p, o)]);
    if (o.status === 'withdrawn') count(o.reviewer, o.constitution, 'withdrawn');
    if (o.status === 'overridden') count(o.reviewer, o.constitution, 'overridden');
  }
  if (p.execution) addSum(sums, 1, 'executed');
  const outcome = p.outcome?.outcome;
  if (outcome !== undefined) {
    addSum(sums, 1, 'outcome', outcome);
    for (const { reviewer, constitution, verdict } of finalVerdict.values()) {
      if (verdict === 'approve') count(reviewer, constitution, outcome === 'worked' ? 'approvalsWorked' : 'approvalsFailed');
      else count(reviewer, constitution, outcome === 'worked' ? 'objectionsWorked' : 'objectionsFailed');
    }
  }
  return sums;
}

/** The calibration rows of the sums of proposalCalibrationSums: per reviewer and constitution, sorted by reviewer then constitution; only the pairs matching the filter. */
export function calibrationFromSums(sums: ReadonlyMap<string, number>, filter: CalibrationFilter = {}): ReviewerCalibration[] {
  const rows = new Map<string, ReviewerCalibration>();
  for (const [[reviewer, constitution, field], value] of sumsUnder(sums, 'calibration')) {
    if (typeof reviewer !== 'string' || typeof constitution !== 'string') continue;
    if ((filter.reviewer !== undefined && reviewer !== filter.reviewer) || (filter.constitution !== undefined && constitution !== filter.constitution)) continue;
    const key = `${reviewer}\u0000${constitution}`;
    let r = rows.get(key);
    if (!r) rows.set(key, (r = empty(reviewer, constitution)));
    r[field as CalibrationCount] += value;
  }
  return [...rows.values()]
    .map((r) => {
      const decided = r.objections - r.pending;
      return { ...r, upheldRate: decided === 0 ? null : (r.upheldByRevision + r.upheldByOutcome) / decided };
    })
    .sort((a, b) => (a.reviewer < b.reviewer ? -1 : a.reviewer > b.reviewer ? 1 : a.constitution < b.constitution ? -1 : a.constitution > b.constitution ? 1 : 0));
}

/** Per reviewer and constitution, sorted by reviewer then constitution; only the pairs matching the filter. */
export function reviewerCalibration(records: Iterable<ProposalRecord>, filter: CalibrationFilter = {}): ReviewerCalibration[] {
  return calibrationFromSums(sumsOf(records, proposalCalibrationSums), filter);
}

/** Executed proposals, and of those the ones reported worked and failed, from the sums of proposalCalibrationSums. */
export function outcomeCountsFromSums(sums: ReadonlyMap<string, number>): OutcomeCounts {
  return { executed: sumOf(sums, 'executed'), worked: sumOf(sums, 'outcome', 'worked'), failed: sumOf(sums, 'outcome', 'failed') };
}

/** Executed proposals, and of those the ones reported worked and failed. */
export function outcomeCounts(records: Iterable<ProposalRecord>): OutcomeCounts {
  return outcomeCountsFromSums(sumsOf(records, proposalCalibrationSums));
}
