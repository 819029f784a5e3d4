import { dialecticStreamId } from '../src/ids.js';
import { deadlineOf, parseSessionDeadlineKey, sessionDeadlineKey } from '../src/deadlines.js';
import type { DialecticEvent } from '../src/session.js';
import { at, converging, deadlocked, expire, HOUR, opened, play, proposedPayload, REVIEWER, AGENT, sign, SID, escalate, inSynthesis } from './fixtures.js';

const stored = (e: DialecticEvent) => ({ ...e, streamId: dialecticStreamId(SID) });
const KEY = `dialectic_session-${SID}:deadline`;
const changes = (events: readonly DialecticEvent[]) => events.map((e) => [e.type, deadlineOf(stored(e))]);

describe('dialectic deadlines for the scheduler', () => {
  it('names one deadline per session, and parses the key back', () => {
    expect(sessionDeadlineKey(SID)).toBe(KEY);
    expect(parseSessionDeadlineKey(KEY)).toEqual({ sessionId: SID });
    expect(parseSessionDeadlineKey('voting_session-x:timeout')).toBeUndefined();
    expect(parseSessionDeadlineKey('proposal-p1:round:1')).toBeUndefined();
  });

  it('moves the deadline with each phase: thesis, antithesis, each synthesis round, signatures; a resolution cancels it', () => {
    const h = converging();
    const payload = proposedPayload(h);
    const resolved = play(h, sign(AGENT, payload), sign(REVIEWER, payload));
    expect(changes(resolved)).toEqual([
      ['RecoveryOpened', undefined],
      ['ReviewerSelected', { key: KEY, dueAt: at(HOUR) }],
      ['ThesisSubmitted', { key: KEY, dueAt: at(60 + 2 * HOUR) }],
      ['AntithesisSubmitted', { key: KEY, dueAt: at(120 + HOUR) }],
      ['SynthesisSubmitted', { key: KEY, dueAt: at(150 + HOUR) }],
      ['SynthesisSubmitted', undefined], // it ended the synthesis: the next event sets the deadline
      ['ResolutionProposed', { key: KEY, dueAt: at(180 + HOUR) }],
      ['ResolutionSigned', undefined],
      ['ResolutionSigned', undefined],
      ['RecoveryResolved', { cancel: KEY }],
    ]);
  });

  it('cancels at an expiry, then sets the tier deadline; an escalation to an operator has none', () => {
    const h = play(opened(), expire(at(HOUR)));
    expect(changes(h.slice(-2))).toEqual([
      ['DialecticPhaseExpired', { cancel: KEY }],
      ['RecoveryEscalated', { cancel: KEY }],
    ]);
    expect(changes(deadlocked().slice(-1))).toEqual([['RecoveryEscalated', { key: KEY, dueAt: at(420 + 2 * HOUR) }]]);
    expect(changes(play(inSynthesis(), escalate('root', at(150), true)).slice(-1))).toEqual([['RecoveryEscalated', { cancel: KEY }]]);
  });

  it('ignores malformed data', () => {
    expect(deadlineOf({ type: 'ReviewerSelected', data: null, streamId: 'x' })).toBeUndefined();
    expect(deadlineOf({ type: 'ReviewerSelected', data: { deadlineAt: at(1) }, streamId: 'x' })).toBeUndefined();
    expect(deadlineOf({ type: 'VotingSessionCreated', data: { sessionId: 's', deadlineAt: at(1) }, streamId: 'x' })).toBeUndefined();
  });
});
