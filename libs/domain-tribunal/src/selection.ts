/**
 * Who reviews a round: one reviewer per required constitution, each reviewer at most one
 * constitution, never an excluded agent (the proposer), only active agents.
 */

export interface ReviewerCandidateLike {
  agentId: string;
  constitutions: readonly string[];
  trustScore: number;
  /** Registry status; only `active` candidates are selected. */
  status: string;
}

export interface ReviewerAssignment {
  constitution: string;
  reviewer: string;
}

export interface ReviewerSelection {
  /** In the order of `required`. */
  assignments: ReviewerAssignment[];
  /** Required constitutions left without a reviewer, in the order of `required`. */
  uncovered: string[];
}

/** Highest trust first, ties by agent id (code-unit order, not locale: the same everywhere). */
export function byTrust(a: ReviewerCandidateLike, b: ReviewerCandidateLike): number {
  return b.trustScore - a.trustScore || (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0);
}

/**
 * Selects the reviewers of a round. Pure and deterministic (the same input gives the same answer,
 * whatever the order of `candidates`).
 *
 * 1. Coverage first: as many required constitutions as possible get a distinct reviewer (a maximum
 *    bipartite matching), so an agent holding two constitutions does not take one and starve the
 *    other when someone else could cover it.
 * 2. Then, constitution by constitution in the order of `required`, the highest-trust candidate
 *    (ties by id) that still lets the rest reach that maximum. When not every constitution can be
 *    covered, the later ones in `required` are the ones left uncovered.
 *
 * Candidates that are not `active`, are listed in `exclude`, or hold none of the required
 * constitutions are ignored; a duplicate agent id counts once (its best-ranked entry). Duplicate
 * constitutions in `required` count once.
 */
export function selectReviewers(candidates: readonly ReviewerCandidateLike[], required: readonly string[], exclude: readonly string[]): ReviewerSelection {
  const wanted = [...new Set(required)];
  const excluded = new Set(exclude);
  const seen = new Set<string>();
  const ranked = candidates
    .filter((c) => c.status === 'active' && !excluded.has(c.agentId))
    .sort(byTrust)
    .filter((c) => !seen.has(c.agentId) && seen.add(c.agentId));
  // options[i]: the agents able to review wanted[i], best first.
  const options = wanted.map((constitution) => ranked.filter((c) => c.constitutions.includes(constitution)).map((c) => c.agentId));

  const best = maximumCoverage(options, new Set());
  const taken = new Set<string>();
  const assignments: ReviewerAssignment[] = [];
  const uncovered: string[] = [];
  for (let i = 0; i < wanted.length; i++) {
    const constitution = wanted[i]!;
    const rest = options.slice(i + 1);
    let chosen: string | undefined;
    for (const agent of options[i]!) {
      if (taken.has(agent)) continue;
      taken.add(agent);
      if (assignments.length + 1 + maximumCoverage(rest, taken) === best) {
        chosen = agent;
        break;
      }
      taken.delete(agent);
    }
    if (chosen === undefined) uncovered.push(constitution);
    else assignments.push({ constitution, reviewer: chosen });
  }
  return { assignments, uncovered };
}

/** Size of a maximum matching of constitutions (rows) to distinct agents not in `unavailable` (Kuhn's augmenting paths). */
function maximumCoverage(options: readonly (readonly string[])[], unavailable: ReadonlySet<string>): number {
  const holder = new Map<string, number>();
  const assign = (row: number, visited: Set<string>): boolean => {
    for (const agent of options[row]!) {
      if (unavailable.has(agent) || visited.has(agent)) continue;
      visited.add(agent);
      const other = holder.get(agent);
      if (other === undefined || assign(other, visited)) {
        holder.set(agent, row);
        return true;
      }
    }
    return false;
  };
  let covered = 0;
  for (let row = 0; row < options.length; row++) if (assign(row, new Set())) covered++;
  return covered;
}
