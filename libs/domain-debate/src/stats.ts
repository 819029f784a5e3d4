/**
 * The debate figures behind the metrics (seed 004's success metrics), from the debates' folded state:
 * debates by outcome, lock attempts by result, the first-time ACCURATE rate (above 0.9, grading is
 * too lax), moderator interventions by kind, cheap concessions, and time and cost per completed debate.
 */
import type { DebateOutcome, DebateView, InterventionKind } from '@agora/contracts';
import { addSum, sumOf, sumsOf, sumsUnder, type Sums } from '@agora/decider';
import { firstTimeAccurate } from './steelman.js';

/** Buckets (upper bounds) of the wall time of a completed debate, in seconds: seed 004's target is under 120. */
export const DEBATE_DURATION_BUCKETS = [10, 30, 60, 120, 300, 600, 1800, 3600, 21600, 86400];
/** Buckets (upper bounds) of the recorded model cost of a completed debate, in US dollars: seed 004's target is under 0.50. */
export const DEBATE_COST_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5];

/** Observations counted by bucket: how many fell in each (by upper bound, Infinity past the last), and their sum. */
export interface BucketCounts {
  buckets: Map<number, number>;
  sum: number;
}

export interface DebateFigures {
  open: number;
  byOutcome: Record<DebateOutcome, number>;
  lockAttempts: { passed: number; failed: number };
  steelmans: { firstGraded: number; firstAccurate: number; firstAccurateRate: number | undefined };
  interventions: Record<InterventionKind, number>;
  concessions: { total: number; cheap: number };
  /** Completed debates: wall time (opened to completed, seconds) and recorded model cost (US dollars), by bucket. */
  completed: { debates: number; durationSeconds: BucketCounts; costUsd: BucketCounts };
}

type FiguredDebate = Pick<DebateView, 'status' | 'outcome' | 'threads' | 'openedAt' | 'completedAt' | 'usage'>;

/** Costs are kept in millionths of a dollar, so their sums are whole numbers. */
const MICRO = 1_000_000;

/** What one debate adds to the figures (debateFiguresFromSums). */
export function debateSums(d: FiguredDebate): Sums {
  const sums: Sums = new Map();
  if (d.status === 'open') addSum(sums, 1, 'open');
  else if (d.outcome) addSum(sums, 1, 'outcome', d.outcome);
  for (const t of d.threads) {
    for (const a of t.lockAttempts) addSum(sums, 1, 'lock_attempts', a.passed ? 'passed' : 'failed');
    const first = firstTimeAccurate(t.steelmans);
    addSum(sums, first.graded, 'first_steelmans', 'graded');
    addSum(sums, first.accurate, 'first_steelmans', 'accurate');
    for (const i of t.interventions) addSum(sums, 1, 'interventions', i.kind);
    addSum(sums, t.concessions.length, 'concessions', 'total');
    addSum(sums, t.concessions.filter((c) => !c.topClaimChanged).length, 'concessions', 'cheap');
  }
  if (d.completedAt) {
    const ms = Math.max(0, Date.parse(d.completedAt) - Date.parse(d.openedAt));
    const micros = Math.round(d.usage.costUsd * MICRO);
    addSum(sums, 1, 'completed');
    addSum(sums, ms, 'duration_ms');
    addSum(sums, 1, 'duration', DEBATE_DURATION_BUCKETS.find((le) => ms <= le * 1000) ?? 'Infinity');
    addSum(sums, micros, 'cost_micro_usd');
    addSum(sums, 1, 'cost', DEBATE_COST_BUCKETS.find((le) => micros <= Math.round(le * MICRO)) ?? 'Infinity');
  }
  return sums;
}

/** The figures of every debate given. */
export function debateFigures(debates: Iterable<FiguredDebate>): DebateFigures {
  return debateFiguresFromSums(sumsOf(debates, debateSums));
}

/** DebateFigures from the sums of debateSums. */
export function debateFiguresFromSums(sums: ReadonlyMap<string, number>): DebateFigures {
  const counts = (figure: string, sum: number): BucketCounts => ({ buckets: new Map(sumsUnder(sums, figure).map(([[le], n]) => [Number(le), n])), sum });
  const graded = sumOf(sums, 'first_steelmans', 'graded');
  const accurate = sumOf(sums, 'first_steelmans', 'accurate');
  const intervention = (kind: InterventionKind) => sumOf(sums, 'interventions', kind);
  return {
    open: sumOf(sums, 'open'),
    byOutcome: { converged: sumOf(sums, 'outcome', 'converged'), unvalidated: sumOf(sums, 'outcome', 'unvalidated'), unresolved: sumOf(sums, 'outcome', 'unresolved') },
    lockAttempts: { passed: sumOf(sums, 'lock_attempts', 'passed'), failed: sumOf(sums, 'lock_attempts', 'failed') },
    steelmans: { firstGraded: graded, firstAccurate: accurate, firstAccurateRate: graded === 0 ? undefined : accurate / graded },
    interventions: { lock_prompt: intervention('lock_prompt'), forced_binary: intervention('forced_binary'), proposed_falsifiers: intervention('proposed_falsifiers'), orbiting: intervention('orbiting'), horizon_mismatch: intervention('horizon_mismatch') },
    concessions: { total: sumOf(sums, 'concessions', 'total'), cheap: sumOf(sums, 'concessions', 'cheap') },
    completed: { debates: sumOf(sums, 'completed'), durationSeconds: counts('duration', sumOf(sums, 'duration_ms') / 1000), costUsd: counts('cost', sumOf(sums, 'cost_micro_usd') / MICRO) },
  };
}
