/**
 * Consensus and recommendation (seed 002, "Consensus Types", "Decision Rules", "Weighted Voting"):
 * pure functions of the votes and the session's recorded rules.
 *
 * Weight of a vote
 *   `weightByTrustScore`: trustScore / 1000 × confidence (a 900-trust validator at confidence 0.8
 *   weighs 0.72); otherwise every vote weighs 1. Weights are recorded rounded to 6 decimals, and
 *   the sums are compared at that precision, so the consensus can be re-derived from the record.
 *
 * Consensus (consensusOf), in this order
 *   no_quorum          fewer than `minValidators` validators were selected, or fewer than
 *                      `minValidators` votes were received. Abstentions count toward the quorum.
 *   unanimous_approve  every selected validator voted, and every vote is approve. Abstentions
 *   unanimous_deny     never count toward unanimity: 2 approve + 1 abstain is majority_approve.
 *   majority_approve   the approvals weigh more than the denials;
 *   majority_deny      the denials weigh more than the approvals;
 *   split              they weigh the same (also when every vote is an abstention, or every
 *                      deciding vote has confidence 0 under weighting).
 *
 * Aggregate confidence (aggregateConfidence)
 *   The mean confidence of the votes on the prevailing side (approve votes for *_approve, deny
 *   votes for *_deny), weighted by trust score when `weightByTrustScore` (the trust alone: the
 *   confidence is what is averaged) and by 1 otherwise; for split and no_quorum, of every vote cast;
 *   0 without votes. Rounded to 6 decimals.
 *
 * Decision rules (decisionRule), the first that applies
 *   1. no_quorum                                   -> escalate (no_quorum)
 *   2. split                                       -> escalate (split)
 *   3. critical, requireUnanimousForCritical, and
 *      not unanimous (majority_deny included)      -> escalate (critical_not_unanimous)
 *   4. confidence < minConfidence                  -> escalate (low_confidence)
 *   5. unanimous_approve, majority_approve         -> approve
 *      unanimous_deny, majority_deny               -> deny
 *   Escalate always requires a human (requiresHitl), and only escalate does. A session that
 *   expires is decided by these rules over its partial votes and escalated in any case (expired).
 */
import type { ConsensusType, EscalationReason, Recommendation, RecommendedDecision, VoteDecision, VoteTally, VotingRules } from '@agora/contracts';
import { round6 } from '@agora/decider';

export interface VoteLike {
  validator: string;
  validatorName: string;
  decision: VoteDecision;
  reasoning: string;
  confidence: number;
  trustScore: number;
  weight: number;
}

/** What a vote counts for: trustScore/1000 × confidence when weighting by trust, else 1. */
export function voteWeight(trustScore: number, confidence: number, weightByTrustScore: boolean): number {
  return weightByTrustScore ? round6((trustScore / 1000) * confidence) : 1;
}

/** Counts and weights of the votes of a session with `validators` selected validators. */
export function tallyVotes(votes: readonly VoteLike[], validators: number, rules: Pick<VotingRules, 'minValidators' | 'weightByTrustScore'>): VoteTally {
  const count = (d: VoteDecision) => votes.filter((v) => v.decision === d).length;
  const weight = (d: VoteDecision) => round6(votes.filter((v) => v.decision === d).reduce((sum, v) => sum + v.weight, 0));
  return {
    validators,
    votes: votes.length,
    approve: count('approve'),
    deny: count('deny'),
    abstain: count('abstain'),
    approveWeight: weight('approve'),
    denyWeight: weight('deny'),
    abstainWeight: weight('abstain'),
    quorum: rules.minValidators,
    weighted: rules.weightByTrustScore,
  };
}

/** The consensus of a tally (see the top of this file). */
export function consensusOf(tally: VoteTally): ConsensusType {
  if (tally.validators < tally.quorum || tally.votes < tally.quorum) return 'no_quorum';
  if (tally.validators > 0 && tally.approve === tally.validators) return 'unanimous_approve';
  if (tally.validators > 0 && tally.deny === tally.validators) return 'unanimous_deny';
  if (tally.approveWeight > tally.denyWeight) return 'majority_approve';
  if (tally.denyWeight > tally.approveWeight) return 'majority_deny';
  return 'split';
}

/** approve for *_approve, deny for *_deny, undefined for split and no_quorum. */
export function prevailingSide(consensus: ConsensusType): 'approve' | 'deny' | undefined {
  if (consensus === 'unanimous_approve' || consensus === 'majority_approve') return 'approve';
  if (consensus === 'unanimous_deny' || consensus === 'majority_deny') return 'deny';
  return undefined;
}

export const isUnanimous = (consensus: ConsensusType): boolean => consensus === 'unanimous_approve' || consensus === 'unanimous_deny';

/** The aggregate confidence (see the top of this file). */
export function aggregateConfidence(votes: readonly VoteLike[], consensus: ConsensusType, weightByTrustScore: boolean): number {
  const side = prevailingSide(consensus);
  const counted = side === undefined ? votes : votes.filter((v) => v.decision === side);
  if (counted.length === 0) return 0;
  const weights = counted.map((v) => (weightByTrustScore ? v.trustScore : 1));
  const total = weights.reduce((a, b) => a + b, 0);
  // Every counted validator has trust 0: their plain mean, rather than 0/0.
  if (total === 0) return round6(counted.reduce((sum, v) => sum + v.confidence, 0) / counted.length);
  return round6(counted.reduce((sum, v, i) => sum + weights[i]! * v.confidence, 0) / total);
}

export interface DecisionInput {
  consensus: ConsensusType;
  critical: boolean;
  confidence: number;
}

export interface RuleOutcome {
  decision: RecommendedDecision;
  escalationReason: EscalationReason | null;
}

/** The seed's decision rules table as one function (see the top of this file for the order). */
export function decisionRule(input: DecisionInput, rules: Pick<VotingRules, 'requireUnanimousForCritical' | 'minConfidence'>): RuleOutcome {
  const { consensus, critical, confidence } = input;
  if (consensus === 'no_quorum') return { decision: 'escalate', escalationReason: 'no_quorum' };
  if (consensus === 'split') return { decision: 'escalate', escalationReason: 'split' };
  if (critical && rules.requireUnanimousForCritical && !isUnanimous(consensus)) return { decision: 'escalate', escalationReason: 'critical_not_unanimous' };
  if (confidence < rules.minConfidence) return { decision: 'escalate', escalationReason: 'low_confidence' };
  return { decision: prevailingSide(consensus)!, escalationReason: null };
}

const fixed = (x: number) => String(round6(x));

function voteLine(v: VoteLike): string {
  return `${v.validatorName} (${v.validator}) ${v.decision}, confidence ${fixed(v.confidence)}: ${v.reasoning}`;
}

function countsOf(t: VoteTally): string {
  const w = (x: number) => (t.weighted ? ` (weight ${fixed(x)})` : '');
  return `${t.approve} approve${w(t.approveWeight)}, ${t.deny} deny${w(t.denyWeight)}, ${t.abstain} abstain; ${t.votes} of ${t.validators} validators voted`;
}

function ruleLine(outcome: RuleOutcome, consensus: ConsensusType, tally: VoteTally, confidence: number, rules: Pick<VotingRules, 'minConfidence'>, suggested: RecommendedDecision | undefined): string {
  const counts = `${consensus}: ${countsOf(tally)}`;
  switch (outcome.escalationReason) {
    case null:
      return `${counts}; confidence ${fixed(confidence)} meets the minimum ${fixed(rules.minConfidence)}: ${outcome.decision}`;
    case 'no_quorum':
      return `${counts}; ${tally.quorum} needed for a quorum: a human decides`;
    case 'split':
      return `${counts}; approvals and denials weigh the same: a human decides`;
    case 'critical_not_unanimous':
      return `${counts}; a critical action needs a unanimous vote: a human decides`;
    case 'low_confidence':
      return `${counts}; confidence ${fixed(confidence)} is below the minimum ${fixed(rules.minConfidence)}: a human decides`;
    case 'expired':
      return `${counts}; the timeout passed before every validator voted (the partial votes point to ${suggested ?? 'no decision'}): a human decides`;
    case 'person_decides':
      return 'the session was created for a person to decide (decider: person), no validator votes: a human decides';
  }
}

export interface SessionForRecommendation {
  validators: readonly unknown[];
  votes: readonly VoteLike[];
  critical: boolean;
  rules: VotingRules;
}

/**
 * The recommendation of a session's votes under its rules, with the tally it rests on. `person`:
 * a session created for a person (no validators) is escalated as `person_decides`. `expired`:
 * the timeout passed; the partial votes decide as usual, and the session is escalated in any case
 * (the reason stays the rule's when a rule escalated already, else `expired`).
 *
 * `reasoning` starts with the line of the rule that decided, then the votes of the prevailing side
 * and the abstentions (every vote for split and no quorum); `dissent` holds the votes against the
 * prevailing side.
 */
export function recommend(session: SessionForRecommendation, options: { expired?: boolean; person?: boolean } = {}): { recommendation: Recommendation; tally: VoteTally } {
  const tally = tallyVotes(session.votes, session.validators.length, session.rules);
  const consensus = consensusOf(tally);
  const confidence = aggregateConfidence(session.votes, consensus, session.rules.weightByTrustScore);
  const ruled = decisionRule({ consensus, critical: session.critical, confidence }, session.rules);
  const outcome: RuleOutcome = options.person
    ? { decision: 'escalate', escalationReason: 'person_decides' }
    : options.expired && ruled.decision !== 'escalate'
      ? { decision: 'escalate', escalationReason: 'expired' }
      : ruled;
  const side = prevailingSide(consensus);
  const reasoning = [ruleLine(outcome, consensus, tally, confidence, session.rules, ruled.decision === 'escalate' ? undefined : ruled.decision)];
  const dissent: string[] = [];
  if (side === undefined) {
    reasoning.push(...session.votes.map(voteLine));
  } else {
    reasoning.push(...session.votes.filter((v) => v.decision === side).map(voteLine), ...session.votes.filter((v) => v.decision === 'abstain').map(voteLine));
    dissent.push(...session.votes.filter((v) => v.decision !== side && v.decision !== 'abstain').map(voteLine));
  }
  return {
    tally,
    recommendation: {
      decision: outcome.decision,
      consensus,
      confidence,
      reasoning,
      dissent,
      requiresHitl: outcome.decision === 'escalate',
      escalationReason: outcome.escalationReason,
    },
  };
}
