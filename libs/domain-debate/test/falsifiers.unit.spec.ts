/** Structured falsifiers: concrete ones parsed, vague ones refused with the reason. */
import { checkFalsifier, hedgeWordsIn, parseThreshold } from '../src/falsifiers.js';
import { commit, falsifier, HAYES, move, ofType, play, refusal, SAYLOR, toCruxLock } from './fixtures.js';

const NOW = '2026-11-25T10:00:00.000Z';
const ok = { metric: 'Spot BTC ETF AUM', threshold: '>= $100B', deadline: '2027-12-31', reasoning: 'Why it matters.' };

describe('structured falsifiers', () => {
  it('parses comparator, number and unit in the forms people write', () => {
    expect(parseThreshold('>= $100B')).toEqual({ threshold: { comparator: '>=', value: 100, unit: '$ billion', text: '>= $100B' } });
    expect(parseThreshold('> 50 %')).toEqual({ threshold: { comparator: '>', value: 50, unit: '%', text: '> 50 %' } });
    expect(parseThreshold('≤ 0.3 correlation')).toMatchObject({ threshold: { comparator: '<=', value: 0.3, unit: 'correlation' } });
    expect(parseThreshold('< 1,000,000 BTC')).toMatchObject({ threshold: { value: 1000000, unit: 'BTC' } });
    expect(parseThreshold('>= 100 USD bn')).toMatchObject({ threshold: { value: 100, unit: 'USD bn' } });
  });

  it('accepts the seed\'s concrete example', () => {
    expect(checkFalsifier(ok, NOW)).toEqual({ falsifier: { metric: 'Spot BTC ETF AUM', threshold: (parseThreshold('>= $100B') as { threshold: never }).threshold, deadline: '2027-12-31', reasoning: 'Why it matters.' }, problems: [] });
    expect(checkFalsifier({ metric: 'Drops when SPY drops more than 30%', threshold: '> 50 %', deadline: '2028-01-01', reasoning: 'r' }, NOW).problems).toEqual([]);
  });

  it('refuses hedge words, no comparator, no number, no unit, no date and a past deadline, each with its reason', () => {
    expect(checkFalsifier({ ...ok, metric: 'Probably correlated' }, NOW).problems).toEqual([expect.stringMatching(/hedge words \(probably\)/)]);
    expect(checkFalsifier({ ...ok, threshold: 'about 100 USD' }, NOW).problems).toEqual([expect.stringMatching(/hedge words \(about\)/), expect.stringMatching(/no comparator/)]);
    expect(checkFalsifier({ ...ok, threshold: '100 USD' }, NOW).problems).toEqual([expect.stringMatching(/no comparator in threshold "100 USD"/)]);
    expect(checkFalsifier({ ...ok, threshold: '>= a lot' }, NOW).problems).toEqual([expect.stringMatching(/no number/)]);
    expect(checkFalsifier({ ...ok, threshold: '>= 100' }, NOW).problems).toEqual([expect.stringMatching(/no unit/)]);
    expect(checkFalsifier({ ...ok, deadline: 'soon' }, NOW).problems).toEqual([expect.stringMatching(/no date in deadline "soon"/)]);
    expect(checkFalsifier({ ...ok, deadline: '2025-01-01' }, NOW).problems).toEqual([expect.stringMatching(/deadline 2025-01-01 is not after the debate \(2026-11-25\)/)]);
    expect(checkFalsifier({ ...ok, deadline: '2026-11-25' }, NOW).problems).toHaveLength(1);
  });

  it('finds whole hedge words only', () => {
    expect(hedgeWordsIn('Probably, maybe; sort of')).toEqual(['probably', 'maybe', 'sort of']);
    expect(hedgeWordsIn('Aboutness of somewhere')).toEqual([]);
  });

  it('a vague falsifier is refused in a debate and nothing is written; a concrete one is declared with its id', () => {
    let h = toCruxLock();
    h = play(h, move(SAYLOR, commit('YES')), move(HAYES, commit('NO')));
    const refused = refusal(h, move(SAYLOR, falsifier({ metric: 'Probably correlated', threshold: 'high', deadline: 'later' })));
    expect(refused.code).toBe('invalid_command');
    expect(refused.message).toMatch(/^falsifier refused as vague: hedge words \(probably\).*; no comparator.*; no date/);
    expect((refused.details['problems'] as string[]).length).toBe(3);
    h = play(h, move(SAYLOR, falsifier()));
    expect(ofType(h, 'FalsifierDeclared')[0]!.data).toMatchObject({ falsifierId: 'main.f9', agentId: SAYLOR, threshold: { comparator: '>=', value: 100, unit: '$ billion' }, deadline: '2027-12-31', source: 'agent', replaces: null });
  });
});
