/**
 * Who votes on a session (the seed's selectValidators): the registry's validators, filtered and
 * ranked by the session's criteria. Pure and deterministic; the decider records its answer in
 * VotingSessionCreated, so a replay never selects again.
 */
import type { SelectedValidator, ValidatorTier } from '@agora/contracts';

export interface ValidatorCandidateLike {
  agentId: string;
  displayName: string;
  trustScore: number;
  specializations: readonly string[];
  /** Registry status; only `active` candidates are selected. */
  status: string;
}

export interface SelectionCriteriaLike {
  minTrustScore: number;
  excludeAgents: readonly string[];
  preferredSpecializations: readonly string[];
}

/**
 * The seed's tiers as bands of the trust score (0 to 1000): UNTRUSTED below 200, PROBATIONARY 200
 * to 499, STANDARD 500 to 699, TRUSTED 700 to 899, ELITE 900 and above. Recorded with each selected
 * validator, as data.
 */
export function tierOf(trustScore: number): ValidatorTier {
  if (trustScore >= 900) return 'ELITE';
  if (trustScore >= 700) return 'TRUSTED';
  if (trustScore >= 500) return 'STANDARD';
  if (trustScore >= 200) return 'PROBATIONARY';
  return 'UNTRUSTED';
}

/** Highest trust first, ties by agent id (code-unit order: the same everywhere). */
export function byTrust(a: { agentId: string; trustScore: number }, b: { agentId: string; trustScore: number }): number {
  return b.trustScore - a.trustScore || (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0);
}

/** The validators a session could select from: active, not excluded, trusted enough; one entry per agent, most trusted first. */
export function eligibleValidators<C extends ValidatorCandidateLike>(candidates: readonly C[], criteria: Pick<SelectionCriteriaLike, 'minTrustScore' | 'excludeAgents'>): C[] {
  const excluded = new Set(criteria.excludeAgents);
  const seen = new Set<string>();
  return candidates
    .filter((c) => c.status === 'active' && !excluded.has(c.agentId) && c.trustScore >= criteria.minTrustScore)
    .sort(byTrust)
    .filter((c) => !seen.has(c.agentId) && seen.add(c.agentId));
}

/**
 * Selects at most `maxValidators` validators:
 * 1. only active candidates, not in `excludeAgents`, with at least `minTrustScore` (a duplicate
 *    agent id counts once, with its highest trust score);
 * 2. each preferred specialization, in the order given, is covered first by its most trusted
 *    eligible validator not selected yet;
 * 3. the remaining places go to the most trusted (ties by agent id).
 * The result is ordered most trusted first. The caller puts the requesting agent in `excludeAgents`.
 * Fewer than the session's minimum is possible: the session is then decided as `no_quorum`.
 */
export function selectValidators(candidates: readonly ValidatorCandidateLike[], criteria: SelectionCriteriaLike, maxValidators: number): SelectedValidator[] {
  const eligible = eligibleValidators(candidates, criteria);
  const chosen: ValidatorCandidateLike[] = [];
  const taken = new Set<string>();
  const take = (c: ValidatorCandidateLike) => {
    chosen.push(c);
    taken.add(c.agentId);
  };
  for (const specialization of new Set(criteria.preferredSpecializations)) {
    if (chosen.length >= maxValidators) break;
    if (chosen.some((c) => c.specializations.includes(specialization))) continue;
    const best = eligible.find((c) => !taken.has(c.agentId) && c.specializations.includes(specialization));
    if (best) take(best);
  }
  for (const c of eligible) {
    if (chosen.length >= maxValidators) break;
    if (!taken.has(c.agentId)) take(c);
  }
  return chosen.sort(byTrust).map((c) => ({
    agentId: c.agentId,
    displayName: c.displayName,
    trustScore: c.trustScore,
    tier: tierOf(c.trustScore),
    specializations: [...c.specializations],
  }));
}
