/** Milestone 2: a challenge is refused until the challenger's steelman of the target is graded ACCURATE; pairs both ways; the first-time ACCURATE rate. */
import { firstTimeAccurate, steelmanPairs } from '../src/steelman.js';
import { commit, falsifier, HAYES, move, open, play, refusal, SAYLOR, SEED_LOCK, steelmanSeq, thread, toCruxLock } from './fixtures.js';

/** Past the lock with only hayes' steelman of saylor ACCURATE and saylor's of hayes INCOMPLETE then ACCURATE later. */
function inEvidence(participants = [SAYLOR, HAYES]) {
  let h = toCruxLock(play([], open({ participants, settings: SEED_LOCK })));
  h = play(h, move(SAYLOR, commit('YES')), move(HAYES, commit('NO')));
  h = play(h, move(SAYLOR, { kind: 'STEELMAN', target: HAYES, text: 'Hayes: BTC is a liquidity asset.' }));
  h = play(h, move(HAYES, { kind: 'GRADE_STEELMAN', steelmanSeq: steelmanSeq(h, SAYLOR), grade: 'ACCURATE', text: 'Right.' }));
  h = play(h, move(HAYES, { kind: 'STEELMAN', target: SAYLOR, text: 'Saylor: BTC is scarce money.' }));
  h = play(h, move(SAYLOR, { kind: 'GRADE_STEELMAN', steelmanSeq: steelmanSeq(h, HAYES), grade: 'ACCURATE', text: 'Right.' }));
  h = play(h, move(SAYLOR, falsifier()), move(HAYES, falsifier({ metric: 'BTC correlation with Nasdaq 100', threshold: '< 0.2 correlation' })));
  return h;
}

describe('steelman protocol (M2)', () => {
  it('blocks CHALLENGE while the steelman is INCOMPLETE and allows it once ACCURATE', () => {
    let h = toCruxLock(play([], open({ settings: SEED_LOCK })));
    h = play(h, move(SAYLOR, commit('YES')), move(HAYES, commit('NO')));
    h = play(h, move(SAYLOR, { kind: 'STEELMAN', target: HAYES, text: 'Hayes thinks BTC is risky.' }));
    h = play(h, move(HAYES, { kind: 'GRADE_STEELMAN', steelmanSeq: steelmanSeq(h, SAYLOR), grade: 'INCOMPLETE', text: 'Misses leverage.' }));
    h = play(h, move(HAYES, { kind: 'STEELMAN', target: SAYLOR, text: 'Saylor: scarcity wins.' }));
    h = play(h, move(SAYLOR, { kind: 'GRADE_STEELMAN', steelmanSeq: steelmanSeq(h, HAYES), grade: 'ACCURATE', text: 'Yes.' }));
    // Lock attempt 1 failed (steelman INCOMPLETE, no falsifiers); declare falsifiers: attempt 2 fails only on the steelman.
    h = play(h, move(SAYLOR, falsifier()), move(HAYES, falsifier({ threshold: '< $50B' })));
    expect(thread(h).lockAttempts.map((a) => a.failed)).toEqual([['steelmans_accurate', 'falsifiers_declared'], ['steelmans_accurate']]);
    // Retry the steelman: attempt 3 is due after 2 more messages and passes.
    h = play(h, move(SAYLOR, { kind: 'STEELMAN', target: HAYES, text: 'Hayes: liquidity and leverage drive BTC.' }));
    h = play(h, move(HAYES, { kind: 'GRADE_STEELMAN', steelmanSeq: steelmanSeq(h, SAYLOR, 2), grade: 'ACCURATE', text: 'Now yes.' }));
    expect(thread(h).stage).toBe('EVIDENCE');
    expect(play(h, move(SAYLOR, { kind: 'CHALLENGE', target: HAYES, text: 'Leverage is shrinking.' })).at(-1)!.type).toBe('ChallengeIssued');
  });

  it('refuses a challenge before any steelman, while it awaits its grade, and after WRONG, saying where the pair stands', () => {
    let h = inEvidence([SAYLOR, HAYES, 'lyn']);
    expect(thread(h).stage).toBe('EVIDENCE');
    const challenge = move('lyn', { kind: 'CHALLENGE', target: SAYLOR, text: 'Scarcity is not value.' });
    let refused = refusal(h, challenge);
    expect(refused.code).toBe('illegal_state');
    expect(refused.message).toMatch(/lyn has not steelmanned saylor yet; steelman saylor and get an ACCURATE grade first/);
    expect(refused.details).toMatchObject({ challenger: 'lyn', target: SAYLOR, steelman: null, allowed: ['STEELMAN'] });
    h = play(h, move('lyn', { kind: 'STEELMAN', target: SAYLOR, text: 'Saylor: BTC is digital property.' }));
    expect(refusal(h, challenge).message).toMatch(/is not graded yet/);
    h = play(h, move(SAYLOR, { kind: 'GRADE_STEELMAN', steelmanSeq: steelmanSeq(h, 'lyn'), grade: 'WRONG', text: 'I never said property.' }));
    refused = refusal(h, challenge);
    expect(refused.message).toMatch(/was graded WRONG: I never said property/);
    // Pairs are one-way: lyn has steelmanned no one ACCURATE, hayes has steelmanned saylor ACCURATE.
    expect(refusal(h, move('lyn', { kind: 'CHALLENGE', target: HAYES, text: 'x' })).code).toBe('illegal_state');
    expect(play(h, move(HAYES, { kind: 'CHALLENGE', target: SAYLOR, text: 'x' })).at(-1)!.type).toBe('ChallengeIssued');
  });

  it('tracks steelman pairs both ways and the first-time ACCURATE rate', () => {
    let h = toCruxLock(play([], open({ settings: SEED_LOCK })));
    h = play(h, move(SAYLOR, { kind: 'STEELMAN', target: HAYES, text: 'a' }));
    h = play(h, move(HAYES, { kind: 'GRADE_STEELMAN', steelmanSeq: steelmanSeq(h, SAYLOR), grade: 'WRONG', text: 'Not my view.' }));
    h = play(h, move(HAYES, { kind: 'STEELMAN', target: SAYLOR, text: 'b' }));
    h = play(h, move(SAYLOR, { kind: 'GRADE_STEELMAN', steelmanSeq: steelmanSeq(h, HAYES), grade: 'ACCURATE', text: 'Yes.' }));
    h = play(h, move(SAYLOR, { kind: 'STEELMAN', target: HAYES, text: 'c' }));
    h = play(h, move(HAYES, { kind: 'GRADE_STEELMAN', steelmanSeq: steelmanSeq(h, SAYLOR, 2), grade: 'ACCURATE', text: 'Yes.' }));
    const t = thread(h);
    expect(steelmanPairs(t)).toEqual([
      { author: SAYLOR, target: HAYES, attempts: 2, grade: 'ACCURATE', accurate: true },
      { author: HAYES, target: SAYLOR, attempts: 1, grade: 'ACCURATE', accurate: true },
    ]);
    expect(t.steelmans.map((s) => s.firstAttempt)).toEqual([true, true, false]);
    expect(firstTimeAccurate(t.steelmans)).toEqual({ graded: 2, accurate: 1, rate: 0.5 });
    expect(firstTimeAccurate([])).toEqual({ graded: 0, accurate: 0, rate: undefined });
  });

  it('lets only the target grade a steelman, once; a steelman targets an opponent', () => {
    let h = toCruxLock(play([], open({ participants: [SAYLOR, HAYES, 'lyn'], settings: SEED_LOCK })));
    h = play(h, move(SAYLOR, { kind: 'STEELMAN', target: HAYES, text: 'a' }));
    const seq = steelmanSeq(h, SAYLOR);
    expect(refusal(h, move('lyn', { kind: 'GRADE_STEELMAN', steelmanSeq: seq, grade: 'ACCURATE', text: 'x' })).code).toBe('forbidden');
    expect(refusal(h, move(SAYLOR, { kind: 'STEELMAN', target: SAYLOR, text: 'me' })).code).toBe('invalid_command');
    expect(refusal(h, move(SAYLOR, { kind: 'STEELMAN', target: 'nobody', text: 'x' })).code).toBe('forbidden');
    h = play(h, move(HAYES, { kind: 'GRADE_STEELMAN', steelmanSeq: seq, grade: 'INCOMPLETE', text: 'half' }));
    expect(refusal(h, move(HAYES, { kind: 'GRADE_STEELMAN', steelmanSeq: seq, grade: 'ACCURATE', text: 'changed my mind' })).message).toMatch(/already graded INCOMPLETE/);
  });
});
