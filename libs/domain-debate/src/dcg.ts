/**
 * Disagreement Compression Gain (seed 004, v1): how much of the debate's disagreement one crux
 * compresses. For a thread, over the debate's n participants:
 *   coverage = committed agents / n                      (how many took a side on the question)
 *   polarity = 1 - |YES - NO| / (YES + NO), 0 without    (1 for an even split, 0 one-sided)
 *   impact   = agents whose TopClaim flips with it / n   (how decision-relevant it is)
 *   DCG      = coverage × polarity × impact, in [0, 1]
 * The primary crux is the validated crux with the highest DCG (ties: the earlier thread).
 */
import type { DcgScore, DebateOutcome, ThreadView } from '@agora/contracts';
import { round6 } from '@agora/decider';

export function dcgOf(t: Pick<ThreadView, 'threadId' | 'commitments' | 'stage'>, participants: number): DcgScore {
  if (t.stage === 'UNRESOLVED' || participants === 0) return { threadId: t.threadId, coverage: 0, polarity: 0, impact: 0, score: 0 };
  const coverage = t.commitments.length / participants;
  const yes = t.commitments.filter((c) => c.side === 'YES').length;
  const no = t.commitments.filter((c) => c.side === 'NO').length;
  const polarity = yes + no === 0 ? 0 : 1 - Math.abs(yes - no) / (yes + no);
  const impact = t.commitments.filter((c) => c.topClaim.flipsIfCruxFlips).length / participants;
  return { threadId: t.threadId, coverage: round6(coverage), polarity: round6(polarity), impact: round6(impact), score: round6(coverage * polarity * impact) };
}

/** The debate's outcome and primary thread from its ended threads. */
export function promote(threads: readonly Pick<ThreadView, 'threadId' | 'commitments' | 'stage' | 'crux'>[], participants: number): { dcg: DcgScore[]; primaryThreadId: string | null; outcome: DebateOutcome } {
  const dcg = threads.map((t) => dcgOf(t, participants));
  let primary: { threadId: string; score: number } | undefined;
  for (const t of threads) {
    if (!t.crux?.validated) continue;
    const score = dcg.find((d) => d.threadId === t.threadId)!.score;
    if (!primary || score > primary.score) primary = { threadId: t.threadId, score };
  }
  const converged = threads.some((t) => t.stage === 'CONVERGED');
  return { dcg, primaryThreadId: primary?.threadId ?? null, outcome: primary ? 'converged' : converged ? 'unvalidated' : 'unresolved' };
}
