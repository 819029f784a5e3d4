import { deadlineOf, parseSessionDeadlineKey, sessionDeadlineKey } from '../src/deadlines.js';
import { votingSessionStreamId } from '../src/session.js';
import { at, cancel, created, expire, play, RID, votesOf } from './fixtures.js';

const stored = (e: { type: string; data: unknown }) => ({ ...e, streamId: votingSessionStreamId(RID) });

describe('voting timeouts for the scheduler', () => {
  it('names a timeout by session stream, and parses the key back', () => {
    expect(sessionDeadlineKey('r-1')).toBe('voting_session-r-1:timeout');
    expect(parseSessionDeadlineKey('voting_session-r-1:timeout')).toEqual({ sessionId: 'r-1' });
    expect(parseSessionDeadlineKey('proposal-p1:round:1')).toBeUndefined();
  });

  it('sets the timeout when the session is created, at the deadlineAt it records', () => {
    expect(deadlineOf(stored(created()[0]!))).toEqual({ key: `voting_session-${RID}:timeout`, dueAt: at(300) });
  });

  it('cancels it when voting ends, whatever ended it: the last vote, the expiry, a cancellation, no quorum at creation', () => {
    const endings = [
      play(created(), ...votesOf(['approve', 'approve', 'approve', 'approve', 'approve'])).find((e) => e.type === 'VotingSessionDecided')!,
      play(created(), expire(at(300))).at(-1)!,
      play(created(), cancel('withdrawn')).at(-1)!,
    ];
    for (const e of endings) expect(deadlineOf(stored(e))).toEqual({ cancel: `voting_session-${RID}:timeout` });
  });

  it('ignores every other event and malformed data', () => {
    for (const e of play(created(), ...votesOf(['approve', 'deny']))) if (e.type !== 'VotingSessionCreated') expect(deadlineOf(stored(e))).toBeUndefined();
    expect(deadlineOf({ type: 'VotingSessionCreated', data: null, streamId: 'voting_session-x' })).toBeUndefined();
    expect(deadlineOf({ type: 'VotingSessionCreated', data: { sessionId: 'x' }, streamId: 'voting_session-x' })).toBeUndefined();
    expect(deadlineOf({ type: 'VotingSessionExpired', data: {}, streamId: 'voting_session-x' })).toBeUndefined();
  });
});
