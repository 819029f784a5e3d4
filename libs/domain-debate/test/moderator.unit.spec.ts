/** v1 moderator: orbiting (keyword repetition above 2.0) and horizon mismatch; DCG and crux promotion across threads. */
import { dcgOf, promote } from '../src/dcg.js';
import { horizonMismatch, keywordRepetition, keywordsOf } from '../src/moderator.js';
import { claim, commit, falsifier, HAYES, moderate, move, ofType, open, play, SAYLOR, thread, toCruxLock } from './fixtures.js';

describe('orbiting detection', () => {
  it('measures keyword repetition as occurrences over distinct keywords', () => {
    expect(keywordsOf("Bitcoin's scarcity is the point, and the supply is fixed")).toEqual(['bitcoin', 'scarcity', 'point', 'supply', 'fixed']);
    expect(keywordRepetition(['scarcity matters', 'liquidity matters'])).toBeCloseTo(4 / 3);
    expect(keywordRepetition(['scarcity scarcity scarcity', 'scarcity'])).toBe(4);
    expect(keywordRepetition([])).toBe(0);
  });

  it('the moderator calls orbiting above 2.0 over the last 6 messages, once per window, and is silent otherwise', () => {
    let h = play([], open());
    for (let i = 0; i < 5; i++) h = play(h, move(i % 2 ? HAYES : SAYLOR, claim('Bitcoin scarcity means Bitcoin value.')));
    expect(play(h, moderate({ kind: 'orbiting', seq: 5 })).length).toBe(h.length); // window not full
    h = play(h, move(HAYES, claim('Bitcoin scarcity means Bitcoin value.')));
    const said = play(h, moderate({ kind: 'orbiting', seq: 6 }));
    expect(ofType(said, 'ModeratorIntervened')[0]!.data.text).toMatch(/The last 6 messages are orbiting \(keyword repetition 7\.50 > 2\): propose a binary question/);
    expect(play(said, moderate({ kind: 'orbiting', seq: 6 })).length).toBe(said.length);
    let fresh = play([], open());
    const topics = ['scarcity supply', 'liquidity leverage', 'custody banks', 'mining energy', 'halving schedule', 'treasury reserve'];
    for (const [i, t] of topics.entries()) fresh = play(fresh, move(i % 2 ? HAYES : SAYLOR, claim(t)));
    expect(play(fresh, moderate({ kind: 'orbiting', seq: 6 })).length).toBe(fresh.length);
  });
});

describe('horizon mismatch', () => {
  const f = (agentId: string, deadline: string) => ({ falsifierId: agentId, agentId, metric: 'm', threshold: { comparator: '>=' as const, value: 1, unit: '%', text: '>= 1 %' }, deadline, reasoning: 'r', seq: 1, source: 'agent' as const });
  it('compares horizons from the debate\'s time', () => {
    expect(horizonMismatch([f('a', '2027-11-25'), f('b', '2036-11-25')], '2026-11-25T00:00:00Z', 3)).toEqual({ shortest: ['a', 365], longest: ['b', 3653] });
    expect(horizonMismatch([f('a', '2027-11-25'), f('b', '2028-11-25')], '2026-11-25T00:00:00Z', 3)).toBeUndefined();
    expect(horizonMismatch([f('a', '2027-11-25')], '2026-11-25T00:00:00Z', 3)).toBeUndefined();
  });

  it('the moderator prompts the agents to align horizons', () => {
    let h = toCruxLock();
    h = play(h, move(SAYLOR, commit('YES')), move(HAYES, commit('NO')), move(SAYLOR, falsifier({ deadline: '2027-06-30' })), move(HAYES, falsifier({ deadline: '2040-12-31', threshold: '< $50B' })));
    const said = play(h, moderate({ kind: 'horizon_mismatch', seq: 10 }));
    expect(ofType(said, 'ModeratorIntervened')[0]!.data.text).toMatch(/Horizon mismatch: saylor's falsifier resolves in \d+ days, hayes's in \d+/);
    expect(play(said, moderate({ kind: 'horizon_mismatch', seq: 11 })).length).toBe(said.length);
  });
});

describe('Disagreement Compression Gain', () => {
  const c = (agentId: string, side: 'YES' | 'NO' | 'UNCERTAIN', flips: boolean) => ({ agentId, side, confidence: 0.5, topClaim: { statement: 's', side: 'NUANCED' as const, confidence: 0.5, flipsIfCruxFlips: flips }, seq: 1 });
  it('is coverage × polarity × impact', () => {
    expect(dcgOf({ threadId: 't', stage: 'CONVERGED', commitments: [c('a', 'YES', true), c('b', 'NO', true)] }, 2)).toEqual({ threadId: 't', coverage: 1, polarity: 1, impact: 1, score: 1 });
    const d = dcgOf({ threadId: 't', stage: 'CONVERGED', commitments: [c('a', 'YES', true), c('b', 'YES', false), c('c', 'NO', true)] }, 4);
    expect(d).toEqual({ threadId: 't', coverage: 0.75, polarity: expect.closeTo(1 - 1 / 3, 6), impact: 0.5, score: expect.closeTo(0.75 * (2 / 3) * 0.5, 6) });
    expect(dcgOf({ threadId: 't', stage: 'UNRESOLVED', commitments: [c('a', 'YES', true), c('b', 'NO', true)] }, 2).score).toBe(0);
  });

  it('promotes the validated crux with the highest DCG to primary', () => {
    const crux = (validated: boolean) => ({ validated }) as never;
    const threads = [
      { threadId: 'a', stage: 'CONVERGED' as const, commitments: [c('x', 'YES', true), c('y', 'YES', true), c('z', 'NO', true)], crux: crux(true) },
      { threadId: 'b', stage: 'CONVERGED' as const, commitments: [c('x', 'YES', true), c('y', 'NO', true), c('z', 'NO', false)], crux: crux(true) },
      { threadId: 'c', stage: 'CONVERGED' as const, commitments: [c('x', 'YES', true), c('y', 'NO', true), c('z', 'UNCERTAIN', true)], crux: crux(false) },
    ];
    const r = promote(threads, 3);
    expect(r.primaryThreadId).toBe('a'); // a: 1 × 2/3 × 1; b: 1 × 2/3 × 2/3; c is not validated
    expect(r.outcome).toBe('converged');
    expect(promote([threads[2]!], 3)).toMatchObject({ primaryThreadId: null, outcome: 'unvalidated' });
  });

  it('runs several threads in one debate with 3 agents, each with its own stages, and promotes the highest DCG', () => {
    const settings = { discovery: { min: 2, max: 4 }, cruxLock: { min: 10, max: 11 }, evidence: { min: 3, max: 3 } };
    let h = play([], open({ participants: [SAYLOR, HAYES, 'lyn'], settings, threads: [{ threadId: 'reserve', topic: 'Reserve asset?' }, { threadId: 'hedge', topic: 'Hedge?' }] }));
    const seqOf = (threadId: string, author: string) => thread(h, threadId).steelmans.findLast((x) => x.author === author)!.seq;
    function runThread(threadId: string, lynFlips: boolean) {
      const m = (agent: string, mv: Parameters<typeof move>[1]) => (h = play(h, move(agent, mv, threadId)));
      m(SAYLOR, { kind: 'PROPOSE_QUESTION', text: `Is Bitcoin a ${threadId}?` });
      m(HAYES, { kind: 'ACCEPT_QUESTION', questionSeq: thread(h, threadId).questions[0]!.seq, text: 'ok' });
      expect(thread(h, threadId).stage).toBe('CRUX_LOCK');
      m(SAYLOR, commit('YES'));
      m(HAYES, commit('NO'));
      m('lyn', { ...(commit('UNCERTAIN') as object), topClaim: { statement: 'It depends', side: 'NUANCED', confidence: 0.5, flipsIfCruxFlips: lynFlips } } as never);
      m(SAYLOR, { kind: 'STEELMAN', target: HAYES, text: 'a' });
      m(HAYES, { kind: 'GRADE_STEELMAN', steelmanSeq: seqOf(threadId, SAYLOR), grade: 'ACCURATE', text: 'ok' });
      m(HAYES, { kind: 'STEELMAN', target: SAYLOR, text: 'b' });
      m(SAYLOR, { kind: 'GRADE_STEELMAN', steelmanSeq: seqOf(threadId, HAYES), grade: 'ACCURATE', text: 'ok' });
      m(SAYLOR, falsifier());
      m(HAYES, falsifier({ threshold: '< $50B' }));
      m('lyn', falsifier({ threshold: '>= $70B' }));
      expect(thread(h, threadId).stage).toBe('EVIDENCE');
      for (const a of [SAYLOR, HAYES, 'lyn']) m(a, { kind: 'CONCLUDE', text: 'done' });
      expect(thread(h, threadId).stage).toBe('CONVERGED');
    }
    runThread('reserve', false);
    expect(ofType(h, 'DebateCompleted')).toHaveLength(0); // one thread still open
    expect(thread(h, 'hedge').stage).toBe('DISCOVERY');
    runThread('hedge', true);
    const done = ofType(h, 'DebateCompleted')[0]!.data;
    expect(done.dcg.map((d) => [d.threadId, d.score])).toEqual([
      ['reserve', expect.closeTo(2 / 3, 5)],
      ['hedge', 1],
    ]);
    expect(done).toMatchObject({ outcome: 'converged', primaryThreadId: 'hedge', crux: { question: 'Is Bitcoin a hedge?', validated: true } });
  });
});
