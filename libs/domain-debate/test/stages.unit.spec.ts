/** Milestone 1: stages advance after their budgets, with a binary question, and excess messages are refused naming the stage and the allowed moves. */
import { binaryQuestionProblem, cruxLockBudgetFor, lockMovesNeeded, movesAllowed } from '../src/stages.js';
import { DEFAULT_DEBATE_SETTINGS } from '@agora/contracts';
import { claim, commit, falsifier, HAYES, move, open, ofType, play, refusal, SAYLOR, stateOf, thread, toCruxLock, typesOf } from './fixtures.js';

describe('stage pipeline (M1)', () => {
  it('starts every thread in DISCOVERY with the seed budgets, CRUX_LOCK\'s following from the participants', () => {
    const h = play([], open());
    expect(thread(h).stage).toBe('DISCOVERY');
    expect(stateOf(h).settings).toEqual(DEFAULT_DEBATE_SETTINGS);
    expect(stateOf(h).settings).toMatchObject({ discovery: { min: 6, max: 10 }, cruxLock: { min: 8, max: 10 }, evidence: { min: 12, max: 16 } });
    expect(stateOf(play([], open({ participants: [SAYLOR, HAYES, 'lyn'] }))).settings.cruxLock).toEqual({ min: 14, max: 16 });
    expect(stateOf(play([], open({ participants: [SAYLOR, HAYES, 'lyn'], settings: { cruxLock: { min: 3, max: 5 } } }))).settings.cruxLock).toEqual({ min: 3, max: 5 });
  });

  it('keeps the seed\'s 6-8 CRUX_LOCK budget for a debate decided again under rules 1 (a log written before the budget followed from the participants)', () => {
    const underRules = (rules: number | undefined) => {
      const command = open();
      return stateOf(play([], { ...command, context: { ...command.context, rules } })).settings.cruxLock;
    };
    expect(underRules(1)).toEqual({ min: 6, max: 8 });
    expect(underRules(2)).toEqual({ min: 8, max: 10 });
    expect(underRules(undefined)).toEqual({ min: 8, max: 10 });
  });

  it('derives the lock budget from the fewest moves a lock can pass with at the most even split', () => {
    // 2 agents: 2 commits, 2 falsifiers, 2 steelmans and 2 grades. 1 YES against 2 NO: 3 + 3 + 4 pairs x 2.
    expect([2, 3, 4, 5].map(lockMovesNeeded)).toEqual([8, 14, 24, 34]);
    expect(cruxLockBudgetFor(2)).toEqual({ min: 8, max: 10 });
  });

  it('locks a three-agent crux (1 YES, 2 NO) on the first attempt with the derived budget', () => {
    const lyn = 'lyn';
    let h = toCruxLock(play([], open({ participants: [SAYLOR, HAYES, lyn] })));
    h = play(h, move(SAYLOR, commit('YES')), move(HAYES, commit('NO')), move(lyn, commit('NO')));
    for (const [author, target] of [[SAYLOR, HAYES], [SAYLOR, lyn], [HAYES, SAYLOR], [lyn, SAYLOR]] as const) {
      h = play(h, move(author, { kind: 'STEELMAN', target, text: `${target}'s view.` }));
      h = play(h, move(target, { kind: 'GRADE_STEELMAN', steelmanSeq: thread(h).steelmans.at(-1)!.seq, grade: 'ACCURATE', text: 'yes' }));
    }
    h = play(h, move(SAYLOR, falsifier()), move(HAYES, falsifier({ threshold: '< $50B' })));
    expect(thread(h).lockAttempts).toHaveLength(0);
    h = play(h, move(lyn, falsifier({ threshold: '< $60B' })));
    expect(thread(h).lockAttempts).toEqual([expect.objectContaining({ attempt: 1, passed: true })]);
    expect(thread(h).stage).toBe('EVIDENCE');
  });

  it('advances to CRUX_LOCK after 8 messages with a binary question proposed and accepted', () => {
    let h = play([], open());
    for (let i = 0; i < 6; i++) h = play(h, move(i % 2 ? HAYES : SAYLOR, claim()));
    expect(thread(h).stage).toBe('DISCOVERY'); // 6 messages but no question
    h = play(h, move(SAYLOR, { kind: 'PROPOSE_QUESTION', text: 'Is Bitcoin a hedge against equity crashes?' }));
    expect(thread(h).stage).toBe('DISCOVERY'); // proposed, not accepted
    const accepted = play(h, move(HAYES, { kind: 'ACCEPT_QUESTION', questionSeq: 7, text: 'Yes, that is it.' }));
    expect(typesOf(accepted.slice(h.length))).toEqual(['DebateMessagePosted', 'BinaryQuestionAccepted', 'DebateStageAdvanced']);
    expect(thread(accepted)).toMatchObject({ stage: 'CRUX_LOCK', stageMessages: 0, question: 'Is Bitcoin a hedge against equity crashes?' });
    expect(ofType(accepted, 'DebateStageAdvanced')[0]!.data).toMatchObject({ from: 'DISCOVERY', to: 'CRUX_LOCK' });
  });

  it('does not advance before the minimum even with an accepted question', () => {
    let h = play([], open());
    h = play(h, move(SAYLOR, { kind: 'PROPOSE_QUESTION', text: 'Is Bitcoin a hedge?' }), move(HAYES, { kind: 'ACCEPT_QUESTION', questionSeq: 1, text: 'ok' }));
    expect(thread(h)).toMatchObject({ stage: 'DISCOVERY', question: 'Is Bitcoin a hedge?' });
    for (let i = 0; i < 3; i++) h = play(h, move(SAYLOR, claim()));
    expect(thread(h).stage).toBe('DISCOVERY');
    h = play(h, move(HAYES, claim()));
    expect(thread(h).stage).toBe('CRUX_LOCK');
  });

  it('forces advancement at DISCOVERY\'s budget of 10: the moderator frames the most accepted question and question moves end', () => {
    let h = play([], open({ participants: [SAYLOR, HAYES, 'lyn'] }));
    for (let i = 0; i < 8; i++) h = play(h, move(i % 2 ? HAYES : SAYLOR, claim()));
    h = play(h, move(SAYLOR, { kind: 'PROPOSE_QUESTION', text: 'Will Bitcoin outperform gold by 2030?' }));
    const last = play(h, move(HAYES, { kind: 'PROPOSE_QUESTION', text: 'Is Bitcoin a hedge against equity crashes?' }));
    const advanced = ofType(last, 'DebateStageAdvanced')[0]!.data;
    // Two proposals, one acceptance each (their proposers): the latest wins the tie.
    expect(advanced).toMatchObject({ from: 'DISCOVERY', to: 'CRUX_LOCK', question: 'Is Bitcoin a hedge against equity crashes?' });
    expect(advanced.reason).toMatch(/discovery budget of 10 messages is spent without an accepted question; the moderator framed one from question 10/);
    expect(thread(last)).toMatchObject({ stage: 'CRUX_LOCK', question: 'Is Bitcoin a hedge against equity crashes?' });
    const refused = refusal(last, move('lyn', { kind: 'ACCEPT_QUESTION', questionSeq: 9, text: 'late' }));
    expect(refused.details).toMatchObject({ stage: 'CRUX_LOCK', reason: 'not_allowed' });
    // Without any proposal, the topic is framed.
    let bare = play([], open());
    for (let i = 0; i < 10; i++) bare = play(bare, move(i % 2 ? HAYES : SAYLOR, claim()));
    expect(thread(bare)).toMatchObject({ stage: 'CRUX_LOCK', question: 'Is Bitcoin digital gold?' });
  });

  it('refuses an either/or question, suggesting its framing', () => {
    const refused = refusal(play([], open()), move(SAYLOR, { kind: 'PROPOSE_QUESTION', text: 'Is Bitcoin a hedge or a risk asset?' }));
    expect(refused.message).toMatch(/either\/or question.*"Is Bitcoin a hedge\?"/);
    expect(binaryQuestionProblem('Will BTC reach $100k or more by 2030?')).toBeUndefined();
  });

  it('refuses a move the stage does not allow', () => {
    const h = play([], open());
    const refused = refusal(h, move(SAYLOR, { kind: 'CHALLENGE', target: HAYES, text: 'wrong' }));
    expect(refused.code).toBe('illegal_state');
    expect(refused.message).toMatch(/CHALLENGE refused in stage DISCOVERY.*allowed now: CLAIM, QUESTION, PROPOSE_QUESTION, ACCEPT_QUESTION/);
    expect(refused.details).toMatchObject({ stage: 'DISCOVERY', reason: 'not_allowed' });
    const lock = toCruxLock();
    expect(refusal(lock, move(SAYLOR, { kind: 'PROPOSE_QUESTION', text: 'Is it?' })).details).toMatchObject({ stage: 'CRUX_LOCK', allowed: movesAllowed('CRUX_LOCK', 0, DEFAULT_DEBATE_SETTINGS) });
  });

  it('closes a CRUX_LOCK round with a lock attempt at 8 messages (two agents), then every 2', () => {
    let h = toCruxLock();
    for (let i = 0; i < 7; i++) h = play(h, move(i % 2 ? HAYES : SAYLOR, claim()));
    expect(thread(h).lockAttempts).toHaveLength(0);
    h = play(h, move(HAYES, claim()));
    expect(thread(h).lockAttempts).toHaveLength(1);
    h = play(h, move(SAYLOR, claim()));
    expect(thread(h).lockAttempts).toHaveLength(1);
    h = play(h, move(HAYES, claim()));
    expect(thread(h).lockAttempts).toHaveLength(2); // every max - min = 2 messages after a failure
  });

  it('reads per-debate budgets', () => {
    let h = play([], open({ settings: { discovery: { min: 2, max: 3 } } }));
    h = play(h, move(SAYLOR, { kind: 'PROPOSE_QUESTION', text: 'Is Bitcoin a hedge?' }), move(HAYES, { kind: 'ACCEPT_QUESTION', questionSeq: 1, text: 'ok' }));
    expect(thread(h).stage).toBe('CRUX_LOCK');
    expect(refusal([], open({ settings: { discovery: { min: 5, max: 3 } } })).message).toMatch(/max 3 is below min 5/);
  });

  it('accepts only binary questions', () => {
    expect(binaryQuestionProblem('Will Bitcoin hold its value in a crash?')).toBeUndefined();
    expect(binaryQuestionProblem('What drives Bitcoin?')).toMatch(/open question/);
    expect(binaryQuestionProblem('Bitcoin is gold')).toMatch(/ends with "\?"/);
    expect(binaryQuestionProblem('Bitcoin, gold or not?')).toMatch(/starts with a verb/);
    const refused = refusal(play([], open()), move(SAYLOR, { kind: 'PROPOSE_QUESTION', text: 'Why is Bitcoin valuable?' }));
    expect(refused).toMatchObject({ code: 'invalid_command' });
  });

  it('needs a majority of participants to accept a question, and no one accepts twice', () => {
    let h = play([], open({ participants: ['a', 'b', 'c', 'd'] }));
    h = play(h, move('a', { kind: 'PROPOSE_QUESTION', text: 'Is Bitcoin a hedge?' }), move('b', { kind: 'ACCEPT_QUESTION', questionSeq: 1, text: 'ok' }));
    expect(thread(h).question).toBeNull(); // 2 of 4
    expect(refusal(h, move('b', { kind: 'ACCEPT_QUESTION', questionSeq: 1, text: 'again' })).message).toMatch(/already accepted/);
    expect(refusal(h, move('a', { kind: 'ACCEPT_QUESTION', questionSeq: 1, text: 'mine' })).message).toMatch(/already proposed/);
    h = play(h, move('c', { kind: 'ACCEPT_QUESTION', questionSeq: 1, text: 'ok' }));
    expect(thread(h).question).toBe('Is Bitcoin a hedge?');
  });

  it('refuses outsiders, unknown threads and a debate that does not exist; opening twice changes nothing', () => {
    const h = play([], open());
    expect(refusal(h, move('mallory', claim())).code).toBe('forbidden');
    expect(refusal(h, move(SAYLOR, claim(), 'side')).code).toBe('not_found');
    expect(refusal([], move(SAYLOR, claim())).code).toBe('not_found');
    expect(play(h, open()).length).toBe(h.length);
    expect(refusal([], open({ participants: ['a', 'a'] })).message).toMatch(/listed twice/);
  });
});
