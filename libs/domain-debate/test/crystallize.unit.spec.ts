/** Milestone 5: the ThreadCrux in the seed's shape and its four validation checks; failures recorded, never hidden. */
import type { ThreadView } from '@agora/contracts';
import { crystallize, validateCrux } from '../src/crystallize.js';
import { newThread } from '../src/evolve.js';

const claim = (side: 'YES' | 'NO' | 'NUANCED', flips: boolean) => ({ statement: `claim ${side}`, side, confidence: 0.8, flipsIfCruxFlips: flips });
const commitment = (agentId: string, side: 'YES' | 'NO' | 'UNCERTAIN', flips = true) => ({ agentId, side, confidence: 0.7, topClaim: claim(side === 'UNCERTAIN' ? 'NUANCED' : side, flips), seq: 1 });
const falsifier = (agentId: string, metric = 'Spot BTC ETF AUM', threshold = '>= $100B') => ({
  falsifierId: `main.f${agentId}`,
  agentId,
  metric,
  threshold: { comparator: '>=' as const, value: 100, unit: '$ billion', text: threshold },
  deadline: '2027-12-31',
  reasoning: 'r',
  seq: 2,
  source: 'agent' as const,
});
const thread = (over: Partial<ThreadView>): ThreadView => ({ ...newThread('main', 'Bitcoin is digital gold'), question: 'Is Bitcoin a hedge?', ...over });

describe('crystallization (M5)', () => {
  it('produces the seed\'s ThreadCrux, validated when all four checks pass', () => {
    const crux = crystallize(thread({ commitments: [commitment('saylor', 'NO'), commitment('hayes', 'YES')], falsifiers: [falsifier('saylor'), falsifier('hayes')] }), { topic: 't' });
    expect(crux).toEqual({
      question: 'Is Bitcoin a hedge?',
      positions: {
        saylor: { side: 'NO', confidence: 0.7, topClaim: 'claim NO', topClaimSide: 'NO' },
        hayes: { side: 'YES', confidence: 0.7, topClaim: 'claim YES', topClaimSide: 'YES' },
      },
      falsifiers: [
        { agentId: 'saylor', metric: 'Spot BTC ETF AUM', threshold: '>= $100B', deadline: '2027-12-31', reasoning: 'r' },
        { agentId: 'hayes', metric: 'Spot BTC ETF AUM', threshold: '>= $100B', deadline: '2027-12-31', reasoning: 'r' },
      ],
      counterfactual: { saylor: { topClaim: 'claim NO', flipsIfCruxFlips: true }, hayes: { topClaim: 'claim YES', flipsIfCruxFlips: true } },
      resolutionCriteria: [
        "Spot BTC ETF AUM >= 100 $ billion by 2027-12-31: if it happens, saylor's NO is falsified",
        "Spot BTC ETF AUM >= 100 $ billion by 2027-12-31: if it happens, hayes's YES is falsified",
      ],
      validated: true,
      validation: { realDisagreement: true, concreteFalsifiers: true, decisionRelevant: true, resolutionCriteria: true, failures: [] },
    });
  });

  it('check 1, real disagreement: fails without both YES and NO', () => {
    const crux = crystallize(thread({ commitments: [commitment('a', 'YES'), commitment('b', 'UNCERTAIN')], falsifiers: [falsifier('a')] }), { topic: 't' });
    expect(crux.validated).toBe(false);
    expect(crux.validation).toMatchObject({ realDisagreement: false, concreteFalsifiers: true, decisionRelevant: true, resolutionCriteria: true });
    expect(crux.validation.failures).toEqual(['no real disagreement: the final positions are YES, UNCERTAIN, and a crux needs YES and NO']);
  });

  it('check 2, concrete falsifiers: fails with none, or with a vague one', () => {
    const none = crystallize(thread({ commitments: [commitment('a', 'YES'), commitment('b', 'NO')] }), { topic: 't' });
    expect(none.validation).toMatchObject({ concreteFalsifiers: false, resolutionCriteria: false });
    expect(none.validation.failures).toEqual(['no falsifier was declared', 'no resolution criteria: none can be derived without falsifiers']);
    const vague = crystallize(thread({ commitments: [commitment('a', 'YES'), commitment('b', 'NO')], falsifiers: [falsifier('a', 'probably correlated')] }), { topic: 't' });
    expect(vague.validation).toMatchObject({ concreteFalsifiers: false, resolutionCriteria: true });
  });

  it('check 3, decision-relevant: fails with fewer than 2 TopClaims that would flip', () => {
    const crux = crystallize(thread({ commitments: [commitment('a', 'YES', true), commitment('b', 'NO', false)], falsifiers: [falsifier('a')] }), { topic: 't' });
    expect(crux.validation.decisionRelevant).toBe(false);
    expect(crux.validation.failures).toEqual(['not decision-relevant: 1 agent(s) would flip their TopClaim if the crux flipped, 2 needed']);
  });

  it('check 4, resolution criteria: derived from the falsifiers', () => {
    expect(validateCrux({ question: 'q', positions: {}, falsifiers: [], counterfactual: {}, resolutionCriteria: [] }, true).resolutionCriteria).toBe(false);
  });
});
