/**
 * Crystallization (seed 004, Milestone 5): the ThreadCrux of a thread and its validation. The
 * checks are the seed's, and a failure is recorded in the crux (validated false, one sentence per
 * failed check), never hidden:
 *   realDisagreement     YES and NO both present among the final positions
 *   concreteFalsifiers   at least one falsifier, and every one concrete
 *   decisionRelevant     at least 2 agents whose TopClaim would flip if the crux flipped
 *   resolutionCriteria   criteria derived from the falsifiers (one per falsifier)
 */
import type { CruxValidation, DebateView, ThreadCrux, ThreadView } from '@agora/contracts';
import { falsifierLine, isConcrete } from './falsifiers.js';

export function resolutionCriteriaOf(t: Pick<ThreadView, 'falsifiers' | 'commitments'>): string[] {
  return t.falsifiers.map((f) => {
    const side = t.commitments.find((c) => c.agentId === f.agentId)?.side ?? 'UNCERTAIN';
    return `${falsifierLine(f)}: if it happens, ${f.agentId}'s ${side} is falsified`;
  });
}

export function validateCrux(crux: Omit<ThreadCrux, 'validated' | 'validation'>, concrete: boolean): CruxValidation {
  const sides = new Set(Object.values(crux.positions).map((p) => p.side));
  const realDisagreement = sides.has('YES') && sides.has('NO');
  const concreteFalsifiers = crux.falsifiers.length > 0 && concrete;
  const flipping = Object.values(crux.counterfactual).filter((c) => c.flipsIfCruxFlips).length;
  const decisionRelevant = flipping >= 2;
  const resolutionCriteria = crux.resolutionCriteria.length > 0;
  const failures: string[] = [];
  if (!realDisagreement) failures.push(`no real disagreement: the final positions are ${[...sides].join(', ') || 'none'}, and a crux needs YES and NO`);
  if (!concreteFalsifiers) failures.push(crux.falsifiers.length === 0 ? 'no falsifier was declared' : 'a falsifier is not concrete (hedge words, no threshold or no date)');
  if (!decisionRelevant) failures.push(`not decision-relevant: ${flipping} agent(s) would flip their TopClaim if the crux flipped, 2 needed`);
  if (!resolutionCriteria) failures.push('no resolution criteria: none can be derived without falsifiers');
  return { realDisagreement, concreteFalsifiers, decisionRelevant, resolutionCriteria, failures };
}

/** The seed's ThreadCrux of a thread, validated. */
export function crystallize(t: ThreadView, debate: Pick<DebateView, 'topic'>): ThreadCrux {
  const positions: ThreadCrux['positions'] = {};
  const counterfactual: ThreadCrux['counterfactual'] = {};
  for (const c of t.commitments) {
    positions[c.agentId] = { side: c.side, confidence: c.confidence, topClaim: c.topClaim.statement, topClaimSide: c.topClaim.side };
    counterfactual[c.agentId] = { topClaim: c.topClaim.statement, flipsIfCruxFlips: c.topClaim.flipsIfCruxFlips };
  }
  const crux = {
    question: t.question ?? debate.topic,
    positions,
    falsifiers: t.falsifiers.map((f) => ({ agentId: f.agentId, metric: f.metric, threshold: f.threshold.text, deadline: f.deadline, reasoning: f.reasoning })),
    counterfactual,
    resolutionCriteria: resolutionCriteriaOf(t),
  };
  const validation = validateCrux(crux, t.falsifiers.every(isConcrete));
  return { ...crux, validated: validation.failures.length === 0, validation };
}
