/**
 * Threads beyond the first (seed 004, v1 multi-threading): spawning ("second bite") and merging
 * (duplicate detection).
 *
 * - Spawning: a debater posts PROPOSE_THREAD (a topic) in an open thread; when another participant
 *   posts SECOND_THREAD on it (the second bite), the thread `<parent>-s<seq>` starts in DISCOVERY.
 *   A debate holds MAX_THREADS threads at most; a proposal whose topic duplicates a thread (as
 *   below) is refused, naming that thread. Thread moves are allowed in any open thread, whatever its stage and
 *   budget, and do not count against the stage's budget.
 * - Merging: when a thread accepts its binary question and that question duplicates the question
 *   or topic of another thread, open or converged (not one that ended UNRESOLVED: a second bite
 *   may take that up again), the thread is merged into the other and ends there.
 * - Duplicates: the Jaccard similarity of the two texts' keywords (content words of 4 letters or
 *   more, plurals made singular) at or above DUPLICATE_SIMILARITY (0.5).
 */
import type { ThreadView } from '@agora/contracts';
import { keywordsOf } from './moderator.js';

export const MAX_THREADS = 4;
export const DUPLICATE_SIMILARITY = 0.5;
export const THREAD_MOVES = ['PROPOSE_THREAD', 'SECOND_THREAD'] as const;

export const isThreadMove = (kind: string): boolean => (THREAD_MOVES as readonly string[]).includes(kind);

/** A thread that still takes moves: not ended, not merged. */
export const isOpenThread = (t: Pick<ThreadView, 'stage' | 'mergedInto'>): boolean => t.mergedInto === null && t.stage !== 'CONVERGED' && t.stage !== 'UNRESOLVED';

/** A thread that has ended: converged, unresolved or merged into another. */
export const hasEnded = (t: Pick<ThreadView, 'stage' | 'mergedInto'>): boolean => !isOpenThread(t);

/** A plural's singular, roughly: "equities" -> "equity", "crashes" -> "crash", "assets" -> "asset". */
function stem(w: string): string {
  if (w.length <= 4) return w;
  if (w.endsWith('ies')) return `${w.slice(0, -3)}y`;
  if (/(sh|ch|x|ss)es$/.test(w)) return w.slice(0, -2);
  return w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w;
}

/** The keyword set of a text, plurals made singular. */
export const keywordSet = (text: string): Set<string> => new Set(keywordsOf(text).map(stem));

/** Jaccard similarity of two texts' keyword sets: 0 (nothing shared) to 1 (the same keywords). */
export function similarity(a: string, b: string): number {
  const x = keywordSet(a);
  const y = keywordSet(b);
  if (x.size === 0 || y.size === 0) return 0;
  let shared = 0;
  for (const w of x) if (y.has(w)) shared++;
  return shared / (x.size + y.size - shared);
}

/**
 * The thread (other than `except`) whose question or topic is most like `text`, when at least
 * DUPLICATE_SIMILARITY: an open thread, or one that converged (its crux is settled). A thread that
 * ended UNRESOLVED is not a duplicate: taking its dispute up again is the second bite.
 */
export function duplicateOf(text: string, threads: readonly ThreadView[], except?: string): { threadId: string; similarity: number; of: string } | undefined {
  let best: { threadId: string; similarity: number; of: string } | undefined;
  for (const t of threads) {
    if (t.threadId === except || t.mergedInto !== null || t.stage === 'UNRESOLVED') continue;
    for (const other of [t.question, t.topic]) {
      if (other === null) continue;
      const s = similarity(text, other);
      if (s >= DUPLICATE_SIMILARITY && (best === undefined || s > best.similarity)) best = { threadId: t.threadId, similarity: Math.round(s * 1000) / 1000, of: other };
    }
  }
  return best;
}

/** The id of a spawned thread: `<parent>-s<seq>` (seq: the PROPOSE_THREAD message), cut to an entity id's 100 characters. */
export const spawnedThreadIdOf = (parentThreadId: string, proposalSeq: number): string => `${parentThreadId.slice(0, 90)}-s${proposalSeq}`;
