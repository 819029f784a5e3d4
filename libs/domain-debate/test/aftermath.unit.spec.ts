/** v1, after the debate (seed 004, "scale to 3-5 agents"): coalition detection and common-ground extraction. */
import { agreementOf, coalitionsOf, commonGroundOf } from '../src/aftermath.js';
import { ofType, playExample } from './fixtures.js';

const c = (agentId: string, side: 'YES' | 'NO' | 'UNCERTAIN') => ({ agentId, side, confidence: 0.7, topClaim: { statement: 's', side: 'NUANCED' as const, confidence: 0.5, flipsIfCruxFlips: true }, seq: 1 });
const t = (threadId: string, sides: Record<string, 'YES' | 'NO' | 'UNCERTAIN'>, extra: Partial<{ mergedInto: string | null; question: string | null }> = {}) => ({
  threadId,
  topic: `topic ${threadId}`,
  question: `Question ${threadId}?`,
  mergedInto: null,
  commitments: Object.entries(sides).map(([a, s]) => c(a, s)),
  concessions: [],
  falsifiers: [],
  ...extra,
});

describe('coalition detection', () => {
  it('groups debaters who sided together on at least 2/3 of the threads both committed on', () => {
    const threads = [t('a', { s: 'YES', l: 'YES', h: 'NO', k: 'NO' }), t('b', { s: 'YES', l: 'YES', h: 'NO', k: 'YES' }), t('c', { s: 'NO', l: 'NO', h: 'YES', k: 'YES' }), t('m', { s: 'NO', l: 'YES' }, { mergedInto: 'a' })];
    expect(agreementOf(threads, 's', 'l')).toEqual({ shared: 3, agree: 3 }); // the merged thread does not count
    expect(agreementOf(threads, 'h', 'k')).toEqual({ shared: 3, agree: 2 });
    expect(coalitionsOf(threads, ['s', 'l', 'h', 'k'])).toEqual([
      { members: ['s', 'l'], threads: ['a', 'b', 'c'], agreement: 1 },
      { members: ['h', 'k'], threads: ['a', 'b', 'c'], agreement: 0.6667 },
    ]);
  });

  it('UNCERTAIN sides with no one; opponents form no coalition', () => {
    expect(coalitionsOf([t('a', { s: 'YES', h: 'NO', u: 'UNCERTAIN' })], ['s', 'h', 'u'])).toEqual([]);
  });
});

describe('common ground', () => {
  it('agreed questions, concessions, and falsifier metrics named by both sides', () => {
    const f = (agentId: string, metric: string) => ({ falsifierId: `x.${agentId}`, agentId, metric, threshold: { comparator: '>' as const, value: 1, unit: '%', text: '> 1 %' }, deadline: '2030-01-01', reasoning: 'r', seq: 2, source: 'agent' as const });
    const threads = [
      t('agree', { s: 'YES', h: 'YES' }),
      { ...t('split', { s: 'YES', h: 'NO' }), concessions: [{ seq: 5, agentId: 's', point: 'The 2020 crash was severe.', topClaimChanged: false }], falsifiers: [f('s', 'BTC drawdown in the next crash'), f('h', 'btc drawdown in the next crash ')] },
      t('half', { s: 'YES', h: 'UNCERTAIN' }),
    ];
    expect(commonGroundOf(threads)).toEqual({
      agreedQuestions: [{ threadId: 'agree', question: 'Question agree?', side: 'YES', agents: ['s', 'h'] }],
      concessions: [{ threadId: 'split', agentId: 's', point: 'The 2020 crash was severe.' }],
      sharedMetrics: [{ metric: 'BTC drawdown in the next crash', agents: ['s', 'h'] }],
    });
  });

  it('the seed\'s debate completes with its coalitions (none: Saylor and Hayes disagree) and its common ground (the conceded point)', () => {
    const done = ofType(playExample(), 'DebateCompleted')[0]!.data;
    expect(done.coalitions).toEqual([]);
    expect(done.commonGround).toEqual({ agreedQuestions: [], concessions: [{ threadId: 'main', agentId: 'saylor', point: 'The 2020 crash was severe for Bitcoin holders.' }], sharedMetrics: [] });
  });
});
