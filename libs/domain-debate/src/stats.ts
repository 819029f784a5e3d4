/**
 * The debate figures behind the metrics (seed 004's success metrics), from the debates' folded state:
 * debates by outcome, lock attempts by result, the first-time ACCURATE rate (above 0.9, grading is
 * too lax), moderator interventions by kind, cheap concessions, and time and cost per completed debate.
 */
import type { DebateOutcome, DebateView, InterventionKind } from '@agora/contracts';
import { firstTimeAccurate } from './steelman.js';

export interface DebateFigures {
  open: number;
  byOutcome: Record<DebateOutcome, number>;
  lockAttempts: { passed: number; failed: number };
  steelmans: { firstGraded: number; firstAccurate: number; firstAccurateRate: number | undefined };
  interventions: Record<InterventionKind, number>;
  concessions: { total: number; cheap: number };
  /** Completed debates: wall time (opened to completed) and recorded model cost. */
  completed: { durationsSeconds: number[]; costsUsd: number[] };
}

export function debateFigures(debates: Iterable<Pick<DebateView, 'status' | 'outcome' | 'threads' | 'openedAt' | 'completedAt' | 'usage'>>): DebateFigures {
  const f: DebateFigures = {
    open: 0,
    byOutcome: { converged: 0, unvalidated: 0, unresolved: 0 },
    lockAttempts: { passed: 0, failed: 0 },
    steelmans: { firstGraded: 0, firstAccurate: 0, firstAccurateRate: undefined },
    interventions: { lock_prompt: 0, forced_binary: 0, proposed_falsifiers: 0, orbiting: 0, horizon_mismatch: 0 },
    concessions: { total: 0, cheap: 0 },
    completed: { durationsSeconds: [], costsUsd: [] },
  };
  const steelmans = [];
  for (const d of debates) {
    if (d.status === 'open') f.open += 1;
    else if (d.outcome) f.byOutcome[d.outcome] += 1;
    for (const t of d.threads) {
      for (const a of t.lockAttempts) f.lockAttempts[a.passed ? 'passed' : 'failed'] += 1;
      steelmans.push(...t.steelmans);
      for (const i of t.interventions) f.interventions[i.kind] += 1;
      f.concessions.total += t.concessions.length;
      f.concessions.cheap += t.concessions.filter((c) => !c.topClaimChanged).length;
    }
    if (d.completedAt) {
      f.completed.durationsSeconds.push(Math.max(0, (Date.parse(d.completedAt) - Date.parse(d.openedAt)) / 1000));
      f.completed.costsUsd.push(d.usage.costUsd);
    }
  }
  const ft = firstTimeAccurate(steelmans);
  f.steelmans = { firstGraded: ft.graded, firstAccurate: ft.accurate, firstAccurateRate: ft.rate };
  return f;
}
