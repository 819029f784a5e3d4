/** Milestone 3: the crux-lock gate's four criteria (the seed's five cases), attempts as events, the moderator's interventions and the UNRESOLVED end. */
import type { ThreadView } from '@agora/contracts';
import { checkLock } from '../src/lock.js';
import { moderatorMovesFor, moderatorMovesForLockFailure } from '../src/moderator.js';
import { claim, commit, falsifier, HAYES, moderate, move, ofType, open, play, playExample, refusal, SAYLOR, stateOf, steelmanSeq, thread, SEED_LOCK, toCruxLock } from './fixtures.js';

type LockInput = Pick<ThreadView, 'commitments' | 'steelmans' | 'falsifiers'>;
const c = (agentId: string, side: 'YES' | 'NO' | 'UNCERTAIN') => ({ agentId, side, confidence: 0.8, topClaim: { statement: 's', side: 'NUANCED' as const, confidence: 0.5, flipsIfCruxFlips: true }, seq: 1 });
const sm = (author: string, target: string, grade: 'ACCURATE' | 'INCOMPLETE' | 'WRONG' | null, seq = 2) => ({ seq, author, target, text: 't', firstAttempt: true, grade, reason: grade ? 'r' : null });
const f = (agentId: string) => ({ falsifierId: `main.f${agentId}`, agentId, metric: 'm', threshold: { comparator: '>=' as const, value: 1, unit: '%', text: '>= 1 %' }, deadline: '2030-01-01', reasoning: 'r', seq: 3, source: 'agent' as const });
const complete: LockInput = { commitments: [c('a', 'YES'), c('b', 'NO')], steelmans: [sm('a', 'b', 'ACCURATE'), sm('b', 'a', 'ACCURATE')], falsifiers: [f('a'), f('b')] };
const P = ['a', 'b'];

describe('crux-lock gate (M3): the five cases', () => {
  it('fails on missing commitments', () => {
    const r = checkLock({ ...complete, commitments: [c('a', 'YES')] }, P);
    expect(r.passed).toBe(false);
    expect(r.failed).toContain('two_committed');
    expect(r.missing[0]).toMatch(/b must commit YES, NO or UNCERTAIN \(1 committed, 2 needed\)/);
  });

  it('fails without a YES and NO split (all UNCERTAIN)', () => {
    const r = checkLock({ ...complete, commitments: [c('a', 'UNCERTAIN'), c('b', 'UNCERTAIN')] }, P);
    // No opposing pair owes a steelman, so steelmans_accurate holds: only the split is missing.
    expect(r.failed).toEqual(['yes_and_no']);
    expect(checkLock({ ...complete, commitments: [c('a', 'YES'), c('b', 'YES')], steelmans: [] }, P)).toMatchObject({ failed: ['yes_and_no'] });
    expect(r.missing[0]).toMatch(/both YES and NO are needed \(commitments so far: UNCERTAIN\)/);
  });

  it('fails when a steelman is not graded ACCURATE (INCOMPLETE, or awaiting its grade)', () => {
    expect(checkLock({ ...complete, steelmans: [sm('a', 'b', 'ACCURATE'), sm('b', 'a', 'INCOMPLETE')] }, P)).toMatchObject({ passed: false, failed: ['steelmans_accurate'], missing: ['steelman: b of a was graded INCOMPLETE'] });
    expect(checkLock({ ...complete, steelmans: [sm('a', 'b', 'ACCURATE')] }, P).missing).toEqual(['steelman: b of a not attempted']);
    expect(checkLock({ ...complete, steelmans: [...complete.steelmans, sm('a', 'b', null, 9)] }, P).missing).toEqual(['steelman: a of b awaits its grade']);
  });

  it('fails on missing falsifiers', () => {
    expect(checkLock({ ...complete, falsifiers: [f('a')] }, P)).toMatchObject({ passed: false, failed: ['falsifiers_declared'], missing: [expect.stringMatching(/b must declare one/)] });
  });

  it('succeeds when all four criteria are met', () => {
    expect(checkLock(complete, P)).toEqual({ passed: true, failed: [], missing: [] });
    // An UNCERTAIN third agent commits and needs a falsifier, but no steelman (it opposes no one).
    expect(checkLock({ ...complete, commitments: [...complete.commitments, c('u', 'UNCERTAIN')], falsifiers: [...complete.falsifiers, f('u')] }, [...P, 'u']).passed).toBe(true);
  });
});

describe('lock attempts in a debate', () => {
  /** In CRUX_LOCK with commitments and ACCURATE steelmans, 6 messages: attempt 1 fails on falsifiers only. */
  function failedOnce() {
    let h = toCruxLock(play([], open({ settings: SEED_LOCK })));
    h = play(h, move(SAYLOR, commit('YES')), move(HAYES, commit('NO')));
    h = play(h, move(SAYLOR, { kind: 'STEELMAN', target: HAYES, text: 'Hayes: liquidity.' }));
    h = play(h, move(HAYES, { kind: 'GRADE_STEELMAN', steelmanSeq: steelmanSeq(h, SAYLOR), grade: 'ACCURATE', text: 'yes' }));
    h = play(h, move(HAYES, { kind: 'STEELMAN', target: SAYLOR, text: 'Saylor: scarcity.' }));
    return play(h, move(SAYLOR, { kind: 'GRADE_STEELMAN', steelmanSeq: steelmanSeq(h, HAYES), grade: 'ACCURATE', text: 'yes' }));
  }

  it('records each attempt as an event naming the failed criteria, then the lock succeeds and EVIDENCE starts', () => {
    let h = failedOnce();
    expect(ofType(h, 'CruxLockAttempted').map((e) => e.data)).toEqual([expect.objectContaining({ attempt: 1, passed: false, failed: ['falsifiers_declared'] })]);
    expect(ofType(h, 'CruxLockFailed')[0]!.data).toMatchObject({ attempt: 1, failed: ['falsifiers_declared'], attemptsLeft: 3 });
    h = play(h, move(SAYLOR, falsifier()), move(HAYES, falsifier({ threshold: '< $50B' })));
    const locked = ofType(h, 'CruxLocked')[0]!.data;
    expect(locked).toMatchObject({ attempt: 2, question: 'Will Bitcoin hold its value in the next equity crash?', committed: [SAYLOR, HAYES] });
    expect(locked.falsifierIds).toHaveLength(2);
    expect(thread(h).stage).toBe('EVIDENCE');
  });

  it('the moderator prompts after every failure, forces binary framing after 2, proposes falsifiers after 3', () => {
    expect(moderatorMovesForLockFailure({ debateId: 'd', threadId: 'main', seq: 1, at: 'x', attempt: 1, failed: [], attemptsLeft: 3 })).toEqual([{ kind: 'lock_prompt', attempt: 1 }]);
    expect(moderatorMovesForLockFailure({ debateId: 'd', threadId: 'main', seq: 1, at: 'x', attempt: 2, failed: [], attemptsLeft: 2 })).toEqual([
      { kind: 'lock_prompt', attempt: 2 },
      { kind: 'forced_binary', attempt: 2 },
    ]);
    expect(moderatorMovesForLockFailure({ debateId: 'd', threadId: 'main', seq: 1, at: 'x', attempt: 3, failed: [], attemptsLeft: 1 })).toEqual([
      { kind: 'lock_prompt', attempt: 3 },
      { kind: 'proposed_falsifiers', attempt: 3 },
    ]);
    expect(moderatorMovesForLockFailure({ debateId: 'd', threadId: 'main', seq: 1, at: 'x', attempt: 4, failed: [], attemptsLeft: 0 })).toEqual([]);
  });

  it('a lock prompt names what is missing; it is said once', () => {
    let h = failedOnce();
    const before = thread(h).stageMessages;
    h = play(h, moderate({ kind: 'lock_prompt', attempt: 1 }));
    const said = ofType(h, 'ModeratorIntervened')[0]!.data;
    expect(said).toMatchObject({ kind: 'lock_prompt', ref: 1 });
    expect(said.text).toMatch(/Lock attempt 1 failed \(3 left\)\. Still needed: falsifiers: saylor, hayes must declare one/);
    expect(stateOf(h).messages.at(-1)).toMatchObject({ agentId: 'moderator', kind: 'MODERATOR' });
    expect(thread(h).stageMessages).toBe(before); // the moderator's message is outside the debaters' budget
    expect(play(h, moderate({ kind: 'lock_prompt', attempt: 1 })).length).toBe(h.length);
  });

  it('forced binary framing restates the question and refuses UNCERTAIN from then on', () => {
    let h = toCruxLock(play([], open({ settings: SEED_LOCK })));
    h = play(h, move(SAYLOR, commit('UNCERTAIN')), move(HAYES, commit('NO')));
    for (let i = 0; i < 4; i++) h = play(h, move(i % 2 ? HAYES : SAYLOR, claim()));
    h = play(h, move(SAYLOR, claim()), move(HAYES, claim()));
    expect(thread(h).lockAttempts).toHaveLength(2);
    h = play(h, moderate({ kind: 'forced_binary', attempt: 2 }));
    expect(thread(h)).toMatchObject({ forcedBinary: true, question: 'Will Bitcoin hold its value in the next equity crash?' });
    const said = ofType(h, 'ModeratorIntervened').at(-1)!.data;
    expect(said).toMatchObject({ kind: 'forced_binary', question: 'Answer YES or NO: Will Bitcoin hold its value in the next equity crash?' });
    expect(said.text).toMatch(/Answer YES or NO: Will Bitcoin .* UNCERTAIN is no longer accepted; saylor must commit again/);
    const refused = refusal(h, move(SAYLOR, commit('UNCERTAIN')));
    expect(refused.message).toMatch(/COMMIT UNCERTAIN refused .* forced binary framing/);
    expect(play(h, move(SAYLOR, commit('YES'))).at(-1)!.type).toBe('CommitmentMade');
  });

  it('proposed falsifiers come from the dialogue and must be accepted or replaced before any other move', () => {
    let h = toCruxLock(play([], open({ settings: SEED_LOCK })));
    h = play(h, move(SAYLOR, commit('YES')), move(HAYES, commit('NO')));
    h = play(h, move(SAYLOR, falsifier()));
    h = play(h, move(HAYES, claim('If BTC correlation with Nasdaq stays > 0.6 correlation through 2027-06-30 it is a risk asset.')));
    for (let i = 0; i < 6; i++) h = play(h, move(i % 2 ? HAYES : SAYLOR, claim()));
    expect(thread(h).lockAttempts).toHaveLength(3);
    h = play(h, moderate({ kind: 'proposed_falsifiers', attempt: 3 }));
    const [proposal] = thread(h).proposedFalsifiers;
    // hayes opposes saylor, who has a falsifier: its mirror is proposed.
    expect(proposal).toMatchObject({ proposalId: 'main.p3.hayes', forAgent: HAYES, metric: 'Spot BTC ETF AUM', threshold: { comparator: '<', value: 100 }, deadline: '2027-12-31', status: 'pending' });
    const refused = refusal(h, move(HAYES, claim()));
    expect(refused.message).toMatch(/accept or replace the moderator's proposed falsifier main\.p3\.hayes first; allowed now: ACCEPT_FALSIFIER, DECLARE_FALSIFIER/);
    expect(refusal(h, move(SAYLOR, { kind: 'ACCEPT_FALSIFIER', proposalId: 'main.p3.hayes', text: 'mine' })).code).toBe('forbidden');
    const accepted = play(h, move(HAYES, { kind: 'ACCEPT_FALSIFIER', proposalId: 'main.p3.hayes', text: 'I accept it.' }));
    expect(ofType(accepted, 'FalsifierDeclared').at(-1)!.data).toMatchObject({ agentId: HAYES, source: 'moderator_proposal', replaces: 'main.p3.hayes' });
    expect(thread(accepted).proposedFalsifiers[0]!.status).toBe('accepted');
    const replaced = play(h, move(HAYES, falsifier({ metric: 'BTC 90-day correlation with Nasdaq 100', threshold: '< 0.2 correlation', replaces: 'main.p3.hayes' })));
    expect(thread(replaced).proposedFalsifiers[0]!.status).toBe('replaced');
  });

  it('derives a proposal from the agent\'s own words when no opponent has a falsifier', () => {
    let h = toCruxLock(play([], open({ settings: SEED_LOCK })));
    h = play(h, move(SAYLOR, commit('YES')), move(HAYES, commit('NO')));
    h = play(h, move(HAYES, claim('BTC correlation with Nasdaq > 0.6 correlation by 2027-06-30 settles it.')));
    for (let i = 0; i < 7; i++) h = play(h, move(i % 2 ? HAYES : SAYLOR, claim()));
    expect(thread(h).lockAttempts).toHaveLength(3);
    h = play(h, moderate({ kind: 'proposed_falsifiers', attempt: 3 }));
    expect(thread(h).proposedFalsifiers).toEqual([expect.objectContaining({ forAgent: HAYES, metric: 'BTC correlation with Nasdaq', threshold: expect.objectContaining({ comparator: '>', value: 0.6, unit: 'correlation' }), deadline: '2027-06-30' })]);
    expect(ofType(h, 'ModeratorIntervened').at(-1)!.data.text).toMatch(/No falsifier could be derived for saylor: declare one/);
  });

  it('ends UNRESOLVED with its reason after maxLockAttempts failures, and the debate completes unresolved', () => {
    let h = toCruxLock(play([], open({ settings: { ...SEED_LOCK, maxLockAttempts: 2 } })));
    for (let i = 0; i < 8; i++) h = play(h, move(i % 2 ? HAYES : SAYLOR, claim()));
    expect(thread(h)).toMatchObject({ stage: 'UNRESOLVED', unresolvedReason: 'lock_attempts_exhausted' });
    expect(ofType(h, 'CruxLockFailed').at(-1)!.data.attemptsLeft).toBe(0);
    expect(ofType(h, 'DebateCompleted')[0]!.data).toMatchObject({ outcome: 'unresolved', primaryThreadId: null, crux: null, lockAttempts: 2 });
    expect(refusal(h, move(SAYLOR, claim())).message).toMatch(/debate btc-gold is complete \(unresolved\)/);
  });

  it('asks the moderator about lock failures, debater messages in DISCOVERY and EVIDENCE, and falsifiers', () => {
    expect(moderatorMovesFor({ type: 'DebateMessagePosted', data: { threadId: 'main', seq: 4, kind: 'CLAIM', stage: 'DISCOVERY' } })).toEqual([{ threadId: 'main', move: { kind: 'orbiting', seq: 4 } }]);
    expect(moderatorMovesFor({ type: 'DebateMessagePosted', data: { threadId: 'main', seq: 4, kind: 'CLAIM', stage: 'CRUX_LOCK' } })).toEqual([]);
    expect(moderatorMovesFor({ type: 'DebateMessagePosted', data: { threadId: 'main', seq: 4, kind: 'MODERATOR', stage: 'EVIDENCE' } })).toEqual([]);
    expect(moderatorMovesFor({ type: 'FalsifierDeclared', data: { threadId: 'main', seq: 9 } })).toEqual([{ threadId: 'main', move: { kind: 'horizon_mismatch', seq: 9 } }]);
    expect(moderatorMovesFor({ type: 'CommitmentMade', data: { threadId: 'main', seq: 9 } })).toEqual([]);
  });

  it('refuses ModerateDebate from anyone but the service', () => {
    const h = failedOnceLite();
    expect(refusal(h, { ...moderate({ kind: 'lock_prompt', attempt: 1 }), context: { actor: SAYLOR, actorRoles: ['debater'], now: '2026-11-25T10:00:00.000Z', commandId: 'x' } }).code).toBe('forbidden');
  });
});

function failedOnceLite() {
  return toCruxLock(play([], open({ settings: SEED_LOCK })));
}

describe('what the lock records and what the moderator quotes', () => {
  it('CruxLocked carries the question, commitments, the ACCURATE steelman of each pair and the falsifiers it locked', () => {
    const h = playExample();
    const locked = ofType(h, 'CruxLocked')[0]!.data;
    const t = thread(h);
    expect(locked.question).toBe(t.question);
    expect(locked.commitments).toEqual(t.commitments);
    expect(locked.falsifiers).toEqual(t.falsifiers);
    // saylor's first steelman of hayes was INCOMPLETE: the lock names the retry graded ACCURATE.
    expect(locked.steelmans!.map((s) => [s.author, s.target, s.grade, s.firstAttempt])).toEqual([
      [SAYLOR, HAYES, 'ACCURATE', false],
      [HAYES, SAYLOR, 'ACCURATE', true],
    ]);
  });

  it('a proposal from a debater\'s words quotes them exactly, whole unit included; a mirror says it paraphrases', () => {
    const from = (text: string) => {
      let h = toCruxLock(play([], open({ settings: SEED_LOCK })));
      h = play(h, move(SAYLOR, commit('YES')), move(HAYES, commit('NO')));
      h = play(h, move(HAYES, claim(text)));
      for (let i = 0; i < 7; i++) h = play(h, move(i % 2 ? HAYES : SAYLOR, claim()));
      return play(h, moderate({ kind: 'proposed_falsifiers', attempt: 3 }));
    };
    for (const [text, threshold, unit] of [
      ['If spot ETF AUM >= 100 USD bn by 2027-12-31, I was wrong.', '>= 100 USD bn', 'USD bn'],
      ['Hashrate >= 700 EH/s by 2028-01-31 would change my mind.', '>= 700 EH/s', 'EH/s'],
    ] as const) {
      const h = from(text);
      const [p] = thread(h).proposedFalsifiers;
      expect(p).toMatchObject({ forAgent: HAYES, threshold: { text: threshold, unit } });
      const quoted = /"(.*)"\.$/.exec(p!.reasoning)![1]!;
      expect(text).toContain(quoted);
      expect(quoted).toContain(threshold);
      expect(ofType(h, 'ModeratorIntervened').at(-1)!.data.text).toContain(`${p!.metric} ${threshold} by`);
    }
    let h = toCruxLock(play([], open({ settings: SEED_LOCK })));
    h = play(h, move(SAYLOR, commit('YES')), move(HAYES, commit('NO')), move(SAYLOR, falsifier()));
    for (let i = 0; i < 7; i++) h = play(h, move(i % 2 ? HAYES : SAYLOR, claim()));
    h = play(h, moderate({ kind: 'proposed_falsifiers', attempt: 3 }));
    expect(thread(h).proposedFalsifiers[0]).toMatchObject({ threshold: { text: '< $100B' }, reasoning: expect.stringMatching(/^Paraphrased by the moderator, the mirror of saylor's falsifier/) });
    expect(ofType(h, 'ModeratorIntervened').at(-1)!.data.text).toMatch(/paraphrased: the mirror/);
  });
});
