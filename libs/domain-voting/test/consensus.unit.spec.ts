// Consensus, weighted consensus, the decision rules table (one test per row) and the
// recommendation: the pure functions first, then through the decider where the seed's engine did it.
import type { ConsensusType, VoteDecision } from '@agora/contracts';
import { defineVotingConfig, type VotingConfig } from '../src/config.js';
import { aggregateConfidence, consensusOf, decisionRule, recommend, tallyVotes, voteWeight, type VoteLike } from '../src/consensus.js';
import { created, FIVE, play, stateOf, votesOf } from './fixtures.js';

const TRUST: Record<string, number> = { security_bot: 900, compliance_bot: 850, ops_bot: 800, risk_bot: 750, ethics_bot: 720 };

/** Votes of the first validators of FIVE, in order. */
function votes(decisions: VoteDecision[], confidence: number | number[] = 0.9, weighted = true): VoteLike[] {
  return decisions.map((decision, i) => {
    const validator = FIVE[i]!;
    const c = Array.isArray(confidence) ? confidence[i]! : confidence;
    return { validator, validatorName: validator, decision, reasoning: `${validator} says ${decision}`, confidence: c, trustScore: TRUST[validator]!, weight: voteWeight(TRUST[validator]!, c, weighted) };
  });
}

/** The consensus of `decisions` cast by the first validators of a session of `validators`. */
function consensus(decisions: VoteDecision[], validators = decisions.length, options: { weighted?: boolean; minValidators?: number; confidence?: number | number[] } = {}): ConsensusType {
  const weighted = options.weighted ?? false;
  return consensusOf(tallyVotes(votes(decisions, options.confidence ?? 0.9, weighted), validators, { minValidators: options.minValidators ?? 3, weightByTrustScore: weighted }));
}

describe('consensus calculation', () => {
  it('unanimous_approve: every selected validator approved', () => {
    expect(consensus(['approve', 'approve', 'approve'])).toBe('unanimous_approve');
    expect(consensus(['approve', 'approve', 'approve', 'approve', 'approve'], 5, { weighted: true })).toBe('unanimous_approve');
  });

  it('unanimous_deny: every selected validator denied', () => {
    expect(consensus(['deny', 'deny', 'deny', 'deny'])).toBe('unanimous_deny');
  });

  it('majority_approve: more approvals than denials', () => {
    expect(consensus(['approve', 'approve', 'deny'])).toBe('majority_approve');
    expect(consensus(['approve', 'deny', 'approve', 'abstain', 'approve'])).toBe('majority_approve');
  });

  it('majority_deny: more denials than approvals', () => {
    expect(consensus(['deny', 'approve', 'deny', 'deny', 'abstain'])).toBe('majority_deny');
  });

  it('split: as many approvals as denials, including when every vote is an abstention', () => {
    expect(consensus(['approve', 'deny', 'approve', 'deny'])).toBe('split');
    expect(consensus(['approve', 'deny', 'abstain'])).toBe('split');
    expect(consensus(['abstain', 'abstain', 'abstain'])).toBe('split');
  });

  it('no_quorum: fewer than minValidators selected, or fewer votes than minValidators', () => {
    expect(consensus(['approve', 'approve'])).toBe('no_quorum'); // two selected, three needed
    expect(consensus(['approve', 'approve'], 5)).toBe('no_quorum'); // five selected, two voted
    expect(consensus(['approve', 'approve', 'approve'], 5, { minValidators: 4 })).toBe('no_quorum');
    expect(consensus([], 5)).toBe('no_quorum');
  });

  it('counts abstentions toward the quorum but never toward unanimity (the seed engine got this wrong)', () => {
    // 2 approve + 1 abstain: a quorum of 3, and NOT unanimous: majority_approve.
    expect(consensus(['approve', 'approve', 'abstain'])).toBe('majority_approve');
    expect(consensus(['deny', 'abstain', 'deny'])).toBe('majority_deny');
    // Without the abstention there is no quorum at all.
    expect(consensus(['approve', 'approve'], 3)).toBe('no_quorum');
    // Through the decider: four approvals and an abstention is a majority, and a critical action escalates.
    const s = stateOf(play(created({ payload: { riskLevel: 'critical' } }), ...votesOf(['approve', 'approve', 'approve', 'approve', 'abstain'])));
    expect(s.recommendation).toMatchObject({ consensus: 'majority_approve', decision: 'escalate', escalationReason: 'critical_not_unanimous' });
    // And unanimity needs every selected validator: four approvals of five at the timeout are not unanimous.
    expect(consensus(['approve', 'approve', 'approve', 'approve'], 5)).toBe('majority_approve');
  });
});

describe('weighted consensus', () => {
  it('weighs each vote by trustScore/1000 × confidence: trusted, confident validators outweigh a less trusted majority', () => {
    expect(voteWeight(900, 0.8, true)).toBe(0.72);
    expect(voteWeight(900, 0.8, false)).toBe(1);
    // approve: security 900 × 0.95 + compliance 850 × 0.9; deny: ops 800 × 0.4, risk 750 × 0.4, ethics 720 × 0.5
    const decisions: VoteDecision[] = ['approve', 'approve', 'deny', 'deny', 'deny'];
    const confidence = [0.95, 0.9, 0.4, 0.4, 0.5];
    const weighted = tallyVotes(votes(decisions, confidence, true), 5, { minValidators: 3, weightByTrustScore: true });
    expect(weighted).toMatchObject({ approve: 2, deny: 3, approveWeight: 1.62, denyWeight: 0.98, weighted: true });
    expect(consensusOf(weighted)).toBe('majority_approve');
    // One validator, one vote: the three denials win.
    expect(consensus(decisions, 5, { weighted: false, confidence })).toBe('majority_deny');
    // Weights equal to the sixth decimal are a split.
    const even = tallyVotes(
      [
        { ...votes(['approve'], 0.5)[0]!, trustScore: 800, weight: voteWeight(800, 0.5, true) },
        { ...votes(['approve', 'deny'], 0.8)[1]!, trustScore: 500, weight: voteWeight(500, 0.8, true) },
        { ...votes(['approve', 'approve', 'abstain'])[2]! },
      ],
      3,
      { minValidators: 3, weightByTrustScore: true },
    );
    expect(consensusOf(even)).toBe('split');
    // Through the decider, with the seed's default config (weighting on).
    const s = stateOf(play(created(), ...votesOf(decisions, confidence)));
    expect(s).toMatchObject({ consensus: 'majority_approve', tally: { approveWeight: 1.62, denyWeight: 0.98 } });
  });

  it('averages the confidence of the prevailing side, weighted by trust when configured', () => {
    const v = votes(['approve', 'approve', 'deny'], [0.9, 0.6, 1]);
    expect(aggregateConfidence(v, 'majority_approve', false)).toBe(0.75);
    expect(aggregateConfidence(v, 'majority_approve', true)).toBeCloseTo((900 * 0.9 + 850 * 0.6) / 1750, 6);
    expect(aggregateConfidence(v, 'split', false)).toBeCloseTo(2.5 / 3, 6);
    expect(aggregateConfidence([], 'no_quorum', true)).toBe(0);
  });
});

describe('decision rules table (one pure function, a test per row)', () => {
  const rules = { requireUnanimousForCritical: true, minConfidence: 0.6 };
  const rule = (consensus: ConsensusType, critical = false, confidence = 0.9, r = rules) => decisionRule({ consensus, critical, confidence }, r);

  it('unanimous approval -> approve', () => {
    expect(rule('unanimous_approve')).toEqual({ decision: 'approve', escalationReason: null });
    expect(rule('unanimous_approve', true)).toEqual({ decision: 'approve', escalationReason: null });
  });
  it('unanimous denial -> deny', () => {
    expect(rule('unanimous_deny')).toEqual({ decision: 'deny', escalationReason: null });
    expect(rule('unanimous_deny', true)).toEqual({ decision: 'deny', escalationReason: null });
  });
  it('majority approval (non-critical) -> approve', () => {
    expect(rule('majority_approve')).toEqual({ decision: 'approve', escalationReason: null });
  });
  it('majority denial -> deny', () => {
    expect(rule('majority_deny')).toEqual({ decision: 'deny', escalationReason: null });
  });
  it('split decision -> escalate + HITL', () => {
    expect(rule('split')).toEqual({ decision: 'escalate', escalationReason: 'split' });
    expect(rule('split', false, 1)).toEqual({ decision: 'escalate', escalationReason: 'split' });
  });
  it('no quorum -> escalate + HITL', () => {
    expect(rule('no_quorum')).toEqual({ decision: 'escalate', escalationReason: 'no_quorum' });
    expect(rule('no_quorum', true, 0)).toEqual({ decision: 'escalate', escalationReason: 'no_quorum' });
  });
  it('critical + not unanimous -> escalate + HITL (a majority denial too), unless requireUnanimousForCritical is off', () => {
    expect(rule('majority_approve', true)).toEqual({ decision: 'escalate', escalationReason: 'critical_not_unanimous' });
    expect(rule('majority_deny', true)).toEqual({ decision: 'escalate', escalationReason: 'critical_not_unanimous' });
    expect(rule('majority_approve', true, 0.9, { ...rules, requireUnanimousForCritical: false })).toEqual({ decision: 'approve', escalationReason: null });
  });
  it('low confidence -> escalate + HITL, unanimous or not; at the minimum is enough', () => {
    expect(rule('unanimous_approve', false, 0.59)).toEqual({ decision: 'escalate', escalationReason: 'low_confidence' });
    expect(rule('majority_deny', false, 0.3)).toEqual({ decision: 'escalate', escalationReason: 'low_confidence' });
    expect(rule('majority_approve', false, 0.6)).toEqual({ decision: 'approve', escalationReason: null });
  });
});

describe('recommendation generation', () => {
  const session = (decisions: VoteDecision[], over: { critical?: boolean; confidence?: number | number[]; validators?: number; rules?: Partial<VotingConfig> } = {}) => ({
    validators: Array.from({ length: over.validators ?? decisions.length }),
    votes: votes(decisions, over.confidence ?? 0.9, (over.rules?.weightByTrustScore ?? true) === true),
    critical: over.critical ?? false,
    rules: defineVotingConfig(over.rules),
  });

  it('approves with the reasoning of the approvals and the dissent of the denials', () => {
    const { recommendation, tally } = recommend(session(['approve', 'deny', 'approve', 'abstain', 'approve']));
    expect(tally).toMatchObject({ validators: 5, votes: 5, approve: 3, deny: 1, abstain: 1 });
    expect(recommendation).toMatchObject({ decision: 'approve', consensus: 'majority_approve', confidence: 0.9, requiresHitl: false, escalationReason: null });
    expect(recommendation.reasoning[0]).toMatch(/^majority_approve: 3 approve \(weight 2\.178\), 1 deny \(weight 0\.765\), 1 abstain; 5 of 5 validators voted; confidence 0\.9 meets the minimum 0\.6: approve$/);
    expect(recommendation.reasoning.slice(1)).toEqual([
      'security_bot (security_bot) approve, confidence 0.9: security_bot says approve',
      'ops_bot (ops_bot) approve, confidence 0.9: ops_bot says approve',
      'ethics_bot (ethics_bot) approve, confidence 0.9: ethics_bot says approve',
      'risk_bot (risk_bot) abstain, confidence 0.9: risk_bot says abstain',
    ]);
    expect(recommendation.dissent).toEqual(['compliance_bot (compliance_bot) deny, confidence 0.9: compliance_bot says deny']);
  });

  it('denies unanimously with no dissent', () => {
    const { recommendation } = recommend(session(['deny', 'deny', 'deny']));
    expect(recommendation).toMatchObject({ decision: 'deny', consensus: 'unanimous_deny', dissent: [], requiresHitl: false });
  });

  it('escalates a split with every vote in the reasoning', () => {
    const { recommendation } = recommend(session(['approve', 'deny', 'abstain', 'approve', 'deny'], { rules: { weightByTrustScore: false } }));
    expect(recommendation).toMatchObject({ decision: 'escalate', consensus: 'split', requiresHitl: true, escalationReason: 'split', dissent: [] });
    expect(recommendation.reasoning).toHaveLength(6);
    expect(recommendation.reasoning[0]).toMatch(/approvals and denials weigh the same: a human decides$/);
  });

  it('escalates a critical action without unanimity, and low confidence', () => {
    expect(recommend(session(['approve', 'approve', 'deny'], { critical: true })).recommendation).toMatchObject({ decision: 'escalate', requiresHitl: true, escalationReason: 'critical_not_unanimous' });
    expect(recommend(session(['approve', 'approve', 'approve'], { critical: true })).recommendation).toMatchObject({ decision: 'approve', consensus: 'unanimous_approve' });
    const low = recommend(session(['approve', 'approve', 'approve'], { confidence: [0.5, 0.4, 0.7] })).recommendation;
    expect(low).toMatchObject({ decision: 'escalate', consensus: 'unanimous_approve', requiresHitl: true, escalationReason: 'low_confidence' });
    expect(low.reasoning[0]).toMatch(/confidence 0\.529412 is below the minimum 0\.6: a human decides$/);
  });

  it('makes requiresHitl true exactly when the decision is escalate, and the recommendation follows the recorded rules', () => {
    for (const decisions of [['approve', 'approve', 'approve'], ['deny', 'deny', 'approve'], ['approve', 'deny', 'abstain'], ['approve', 'approve']] as VoteDecision[][]) {
      for (const critical of [false, true]) {
        const { recommendation } = recommend(session(decisions, { critical, validators: 3 }));
        expect(recommendation.requiresHitl).toBe(recommendation.decision === 'escalate');
      }
    }
    expect(recommend(session(['approve', 'approve', 'approve'], { rules: { minValidators: 4, maxValidators: 5 } })).recommendation).toMatchObject({ consensus: 'no_quorum', decision: 'escalate' });
  });
});
