import { authorityScore, exclusionOf, expertiseScore, freshnessScore, healthScore, pickFromPool, selectCandidate, trackRecordScore, type SelectionRequest } from '../src/selection.js';
import { drawOf } from '@agora/domain-common';
import { at, candidate, HOUR, policy, T0 } from './fixtures.js';

const request = (over: Partial<SelectionRequest> = {}): SelectionRequest => ({ seed: 1, purpose: 'reviewer', now: T0, tags: ['cascade'], agentId: 'paused', parties: [], rules: policy.selection, ...over });

describe('authorityScore (the seed: health 40 %, track record 30 %, expertise 20 %, freshness 10 %)', () => {
  it('scores health by risk: under 0.30 is 1.0, 0.30 to 0.60 is 0.7, above 0.60 is 0.3', () => {
    expect([0, 0.29, 0.3, 0.45, 0.6, 0.61, 1].map(healthScore)).toEqual([1, 1, 0.7, 0.7, 0.7, 0.3, 0.3]);
  });

  it('scores the track record as successful / reviews, 0.5 without settled reviews', () => {
    expect(trackRecordScore({ reviews: 10, successful: 9 })).toBe(0.9);
    expect(trackRecordScore({ reviews: 0, successful: 0 })).toBe(0.5);
    expect(trackRecordScore({ reviews: 4, successful: 0 })).toBe(0);
  });

  it("scores domain expertise as the share of the session's tags the candidate has handled", () => {
    expect(expertiseScore(['cascade', 'latency'], ['cascade', 'complexity_spike'])).toBe(0.5);
    expect(expertiseScore(['cascade'], ['cascade'])).toBe(1);
    expect(expertiseScore(['cascade'], [])).toBe(0);
  });

  it('scores freshness 1.0 when the last report is under 24 h old, else 0', () => {
    expect(freshnessScore(at(-23 * HOUR), T0)).toBe(1);
    expect(freshnessScore(at(-24 * HOUR), T0)).toBe(0);
    expect(freshnessScore(null, T0)).toBe(0);
  });

  it('weights the components as the seed says', () => {
    expect(authorityScore(candidate('x'), T0, ['cascade'])).toEqual({ health: 1, trackRecord: 0.9, expertise: 1, freshness: 1, authority: 0.97 });
    const weak = candidate('y', { risk: 0.35, trackRecord: { reviews: 0, successful: 0 }, expertise: [], lastReportAt: null });
    expect(authorityScore(weak, T0, ['cascade'])).toEqual({ health: 0.7, trackRecord: 0.5, expertise: 0, freshness: 0, authority: 0.43 });
    const custom = { weights: { health: 1, trackRecord: 0, expertise: 0, freshness: 0 }, freshnessWindowMs: HOUR * 1000 };
    expect(authorityScore(weak, T0, ['cascade'], custom).authority).toBe(0.7);
  });
});

describe('exclusions (the seed: the paused agent, recent reviewers of it, risk at or above 0.40)', () => {
  const why = (over: Parameters<typeof candidate>[1], agentId = 'x') => exclusionOf(candidate(agentId, over), request({ parties: ['reviewer_b'] }));

  it('excludes each for its reason', () => {
    expect(why({}, 'paused')).toBe('self');
    expect(why({}, 'reviewer_b')).toBe('party');
    expect(why({ status: 'disabled' })).toBe('inactive');
    expect(why({ paused: true })).toBe('paused');
    expect(why({ risk: 0.4 })).toBe('unhealthy');
    expect(why({ risk: 0.39 })).toBeNull();
    expect(why({ lastReviewedAgentAt: at(-23 * HOUR) })).toBe('recently_reviewed');
    expect(why({ lastReviewedAgentAt: at(-24 * HOUR) })).toBeNull();
    expect(why({ collusionFlagged: true })).toBe('collusion_flagged');
  });
});

describe('selectCandidate', () => {
  const pool = [candidate('a', { risk: 0.1 }), candidate('b', { risk: 0.5, trackRecord: { reviews: 0, successful: 0 } }), candidate('c', { risk: 0.2, expertise: [] })];

  it('records the seed, the draw and the pool in id order, and picks by the draw', () => {
    const { selected, record } = selectCandidate(pool, request({ rules: { ...policy.selection, maxReviewerRisk: 0.6 } }));
    expect(record.seed).toBe(1);
    expect(record.draw).toBe(drawOf(1, 'reviewer'));
    expect(record.pool.map((p) => p.agentId)).toEqual(['a', 'b', 'c']);
    expect(selected).toBe(pickFromPool(record.pool, record.draw));
  });

  it('does not depend on the order of the candidates, and counts a duplicate once', () => {
    const a = selectCandidate(pool, request());
    expect(selectCandidate([...pool].reverse(), request())).toEqual(a);
    const dup = selectCandidate([...pool, candidate('a', { risk: 0.9 })], request());
    expect(dup.record.excluded).toEqual([{ agentId: 'a', reason: 'duplicate' }, { agentId: 'b', reason: 'unhealthy' }]);
    expect(dup.record.pool.find((p) => p.agentId === 'a')?.health).toBe(1); // the first entry
  });

  it('draws at random weighted by authority: over many seeds each agent is drawn in proportion to its score', () => {
    const two = [candidate('strong'), candidate('weak', { risk: 0.35, trackRecord: { reviews: 10, successful: 0 }, expertise: [], lastReportAt: null })];
    const counts = { strong: 0, weak: 0 };
    for (let seed = 0; seed < 5000; seed++) counts[selectCandidate(two, request({ seed })).selected as 'strong' | 'weak']++;
    // strong 0.97, weak 0.28: weak about 22 % of the draws.
    expect(counts.weak / 5000).toBeGreaterThan(0.19);
    expect(counts.weak / 5000).toBeLessThan(0.25);
  });

  it('selects nobody when everyone is excluded', () => {
    expect(selectCandidate([candidate('paused')], request()).selected).toBeNull();
  });
});

describe('pickFromPool', () => {
  it('gives each agent a slice of [0, total) as wide as its authority, in id order', () => {
    const pool = [
      { agentId: 'b', authority: 0.25 },
      { agentId: 'a', authority: 0.75 },
    ];
    expect(pickFromPool(pool, 0)).toBe('a');
    expect(pickFromPool(pool, 0.749)).toBe('a');
    expect(pickFromPool(pool, 0.75)).toBe('b');
    expect(pickFromPool(pool, 0.999)).toBe('b');
    expect(pickFromPool([], 0.5)).toBeNull();
  });
});
