/**
 * The crux-lock gate (seed 004, Milestone 3): the seed's four criteria, exactly.
 *   1. two_committed        at least 2 agents committed (YES / NO / UNCERTAIN)
 *   2. yes_and_no           both YES and NO present (not all UNCERTAIN, not all one side)
 *   3. steelmans_accurate   every steelman requirement graded ACCURATE: each committed agent has
 *                           steelmanned each committed agent of the opposite side (YES vs NO),
 *                           both ways, and the latest grade of each such pair is ACCURATE; it
 *                           holds when no opposing pair owes one (yes_and_no fails then)
 *   4. falsifiers_declared  every committed agent has declared a structured falsifier
 * `missing` says, per agent, what is still needed: what the moderator's prompt names.
 */
import type { LockCriterion, ThreadView } from '@agora/contracts';

export interface LockCheck {
  passed: boolean;
  failed: LockCriterion[];
  missing: string[];
}

/** The ordered pairs (author, target) that must be steelmanned ACCURATE: committed agents of opposite sides. */
export function steelmanRequirements(t: Pick<ThreadView, 'commitments'>): { author: string; target: string }[] {
  const out: { author: string; target: string }[] = [];
  for (const a of t.commitments) {
    for (const b of t.commitments) {
      if (a.agentId !== b.agentId && ((a.side === 'YES' && b.side === 'NO') || (a.side === 'NO' && b.side === 'YES'))) out.push({ author: a.agentId, target: b.agentId });
    }
  }
  return out;
}

export function checkLock(t: Pick<ThreadView, 'commitments' | 'steelmans' | 'falsifiers'>, participants: readonly string[]): LockCheck {
  const failed: LockCriterion[] = [];
  const missing: string[] = [];
  const committed = t.commitments.map((c) => c.agentId);
  if (committed.length < 2) {
    failed.push('two_committed');
    const uncommitted = participants.filter((p) => !committed.includes(p));
    missing.push(`commitments: ${uncommitted.join(', ')} must commit YES, NO or UNCERTAIN (${committed.length} committed, 2 needed)`);
  }
  const sides = new Set(t.commitments.map((c) => c.side));
  if (!(sides.has('YES') && sides.has('NO'))) {
    failed.push('yes_and_no');
    missing.push(`a real split: both YES and NO are needed (commitments so far: ${[...sides].join(', ') || 'none'})`);
  }
  const requirements = steelmanRequirements(t);
  const unmet = requirements.filter(({ author, target }) => {
    const latest = t.steelmans.findLast((s) => s.author === author && s.target === target);
    return latest?.grade !== 'ACCURATE';
  });
  // The criterion is about the pairs that owe a steelman: with no opposing pair (no split yet, which
  // yes_and_no reports), nothing is owed and it holds.
  if (unmet.length > 0) {
    failed.push('steelmans_accurate');
    for (const { author, target } of unmet) {
      const latest = t.steelmans.findLast((s) => s.author === author && s.target === target);
      missing.push(`steelman: ${author} of ${target} ${latest ? (latest.grade === null ? 'awaits its grade' : `was graded ${latest.grade}`) : 'not attempted'}`);
    }
  }
  const withoutFalsifier = committed.filter((a) => !t.falsifiers.some((f) => f.agentId === a));
  if (committed.length === 0 || withoutFalsifier.length > 0) {
    failed.push('falsifiers_declared');
    missing.push(committed.length === 0 ? 'falsifiers: no committed agent has declared one' : `falsifiers: ${withoutFalsifier.join(', ')} must declare one (metric, threshold, deadline, reasoning)`);
  }
  return { passed: failed.length === 0, failed, missing };
}
