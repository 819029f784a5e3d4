/** Milestone 1: stages advance after their budgets, with a binary question, and excess messages are refused naming the stage and the allowed moves. */
import { binaryQuestionProblem, movesAllowed } from '../src/stages.js';
import { DEFAULT_DEBATE_SETTINGS } from '@agora/contracts';
import { claim, HAYES, move, open, ofType, play, refusal, SAYLOR, stateOf, thread, toCruxLock, typesOf } from './fixtures.js';

describe('stage pipeline (M1)', () => {
  it('starts every thread in DISCOVERY with the seed budgets', () => {
    const h = play([], open());
    expect(thread(h).stage).toBe('DISCOVERY');
    expect(stateOf(h).settings).toEqual(DEFAULT_DEBATE_SETTINGS);
    expect(stateOf(h).settings).toMatchObject({ discovery: { min: 6, max: 10 }, cruxLock: { min: 6, max: 8 }, evidence: { min: 12, max: 16 } });
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

  it('refuses excess DISCOVERY messages at its budget of 10, except the gate moves, naming the stage and the allowed moves', () => {
    let h = play([], open());
    for (let i = 0; i < 10; i++) h = play(h, move(i % 2 ? HAYES : SAYLOR, claim()));
    const refused = refusal(h, move(SAYLOR, claim()));
    expect(refused.code).toBe('illegal_state');
    expect(refused.message).toMatch(/CLAIM refused in stage DISCOVERY .*budget of 10 messages is spent; allowed now: PROPOSE_QUESTION, ACCEPT_QUESTION/);
    expect(refused.details).toMatchObject({ stage: 'DISCOVERY', allowed: ['PROPOSE_QUESTION', 'ACCEPT_QUESTION'], reason: 'over_budget' });
    h = play(h, move(SAYLOR, { kind: 'PROPOSE_QUESTION', text: 'Will Bitcoin outperform gold by 2030?' }), move(HAYES, { kind: 'ACCEPT_QUESTION', questionSeq: 11, text: 'fine' }));
    expect(thread(h).stage).toBe('CRUX_LOCK');
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

  it('closes a CRUX_LOCK round with a lock attempt at 6 messages, so the budget of 8 is never exceeded', () => {
    let h = toCruxLock();
    for (let i = 0; i < 5; i++) h = play(h, move(i % 2 ? HAYES : SAYLOR, claim()));
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
