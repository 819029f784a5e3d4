/**
 * The divergence measure (deterministic, documented, recorded with its inputs):
 *
 * - Positions are normalized: Unicode NFKC, lower case, every character that is not a letter or a
 *   digit becomes a space, spaces collapsed. Two answers hold the same position when their
 *   normalized positions are equal.
 * - positionScore = 1 - (size of the largest group of equal positions) / (answers). Three answers
 *   in agreement: 0; two against one: 0.33; all different: 0.67.
 * - Claims are normalized the same way; a claim's negation parity is the number of negation words
 *   in it (not, no, never, cannot, none, neither, nor; "n't" counts as "not") modulo 2, and its core
 *   is the claim without them. Two answers contradict each other when one holds a claim whose core
 *   equals the core of a claim of the other with the opposite parity ("X is safe" / "X is not safe").
 *   claimScore = (pairs of answers that contradict each other) / (pairs of answers).
 * - score = max(positionScore, claimScore); the answers diverge when score > threshold.
 * - The majority is the position held by more than half of the answers, if any.
 */
import type { Divergence } from '@agora/contracts';

const NEGATIONS = new Set(['not', 'no', 'never', 'cannot', 'none', 'neither', 'nor']);

export function normalizeText(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/n['’]t\b/g, ' not')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
    .replace(/\s+/g, ' ');
}

/** A claim's core (without negation words) and its negation parity. */
export function claimCore(claim: string): { core: string; negated: boolean } {
  const words = normalizeText(claim).split(' ').filter(Boolean);
  const negations = words.filter((w) => NEGATIONS.has(w)).length;
  return { core: words.filter((w) => !NEGATIONS.has(w)).join(' '), negated: negations % 2 === 1 };
}

export interface DivergenceInput {
  panelist: number;
  position: string;
  claims: readonly string[];
}

const round = (x: number) => Math.round(x * 10_000) / 10_000;

export function measureDivergence(stage: Divergence['stage'], answers: readonly DivergenceInput[], threshold: number): Divergence {
  const inputs = answers.map((a) => ({ panelist: a.panelist, position: normalizeText(a.position), claims: a.claims.map(normalizeText).filter(Boolean) }));
  const groups = new Map<string, number>();
  for (const a of inputs) groups.set(a.position, (groups.get(a.position) ?? 0) + 1);
  let largest: [string, number] | undefined;
  for (const entry of [...groups.entries()].sort((x, y) => (x[0] < y[0] ? -1 : 1))) if (!largest || entry[1] > largest[1]) largest = entry;
  const n = inputs.length;
  const positionScore = n === 0 ? 0 : round(1 - (largest?.[1] ?? 0) / n);
  const contradictions: Divergence['contradictions'] = [];
  let contradictingPairs = 0;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const a = inputs[i]!;
      const b = inputs[j]!;
      const bCores = new Map(b.claims.map((c) => [claimCore(c).core, claimCore(c).negated] as const));
      let found = false;
      for (const claim of a.claims) {
        const { core, negated } = claimCore(claim);
        if (core && bCores.has(core) && bCores.get(core) !== negated) {
          contradictions.push({ a: a.panelist, b: b.panelist, claim: core });
          found = true;
        }
      }
      if (found) contradictingPairs++;
    }
  }
  const pairs = (n * (n - 1)) / 2;
  const claimScore = pairs === 0 ? 0 : round(contradictingPairs / pairs);
  const score = Math.max(positionScore, claimScore);
  const majority = largest && largest[1] * 2 > n ? { position: largest[0], count: largest[1], of: n } : null;
  return { stage, inputs, positionScore, claimScore, contradictions, score, threshold, divergent: score > threshold, majority };
}
