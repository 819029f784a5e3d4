/**
 * Steelman protocol (seed 004, Milestone 2): a steelman targets an opponent, that opponent grades
 * it ACCURATE, INCOMPLETE or WRONG with a reason, and a challenge against an opponent is refused
 * until the challenger's steelman of that opponent was graded ACCURATE. Pairs are tracked both
 * ways (A of B and B of A are two requirements).
 */
import type { SteelmanView, ThreadView } from '@agora/contracts';
import { DomainError } from '@agora/decider';

/** Whether `author` has a steelman of `target` graded ACCURATE in the thread. */
export const hasAccurateSteelman = (t: Pick<ThreadView, 'steelmans'>, author: string, target: string): boolean =>
  t.steelmans.some((s) => s.author === author && s.target === target && s.grade === 'ACCURATE');

/** Refuses a challenge before the challenger's steelman of the target was graded ACCURATE, saying where the pair stands. */
export function requireChallengeAllowed(t: Pick<ThreadView, 'threadId' | 'steelmans'>, challenger: string, target: string): void {
  if (hasAccurateSteelman(t, challenger, target)) return;
  const latest = t.steelmans.findLast((s) => s.author === challenger && s.target === target);
  const where = !latest
    ? `${challenger} has not steelmanned ${target} yet`
    : latest.grade === null
      ? `${challenger}'s steelman of ${target} (message ${latest.seq}) is not graded yet`
      : `${challenger}'s latest steelman of ${target} (message ${latest.seq}) was graded ${latest.grade}: ${latest.reason ?? ''}`;
  throw new DomainError('illegal_state', `CHALLENGE of ${target} refused in thread ${t.threadId}: ${where}; steelman ${target} and get an ACCURATE grade first`, {
    threadId: t.threadId,
    challenger,
    target,
    steelman: latest ? { seq: latest.seq, grade: latest.grade } : null,
    allowed: ['STEELMAN'],
  });
}

/** Whether this would be the author's first steelman of the target. */
export const isFirstAttempt = (t: Pick<ThreadView, 'steelmans'>, author: string, target: string): boolean => !t.steelmans.some((s) => s.author === author && s.target === target);

export interface SteelmanPair {
  author: string;
  target: string;
  attempts: number;
  grade: SteelmanView['grade'];
  accurate: boolean;
}

/** Every (author, target) pair with its attempts and its latest grade, in order of first attempt. */
export function steelmanPairs(t: Pick<ThreadView, 'steelmans'>): SteelmanPair[] {
  const pairs = new Map<string, SteelmanPair>();
  for (const s of t.steelmans) {
    const key = `${s.author}>${s.target}`;
    const pair = pairs.get(key) ?? { author: s.author, target: s.target, attempts: 0, grade: null, accurate: false };
    pair.attempts += 1;
    if (s.grade !== null) pair.grade = s.grade;
    pair.accurate ||= s.grade === 'ACCURATE';
    pairs.set(key, pair);
  }
  return [...pairs.values()];
}

/**
 * The first-time ACCURATE rate: of the first steelmans of each pair that were graded, the share
 * graded ACCURATE. Above 0.9, grading is too lax (the seed's risk). Undefined with none graded.
 */
export function firstTimeAccurate(steelmans: readonly Pick<SteelmanView, 'firstAttempt' | 'grade'>[]): { graded: number; accurate: number; rate: number | undefined } {
  const firsts = steelmans.filter((s) => s.firstAttempt && s.grade !== null);
  const accurate = firsts.filter((s) => s.grade === 'ACCURATE').length;
  return { graded: firsts.length, accurate, rate: firsts.length === 0 ? undefined : accurate / firsts.length };
}
