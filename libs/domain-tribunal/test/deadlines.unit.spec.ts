import { deadlineOf, parseRoundDeadlineKey, proposalStreamId, roundDeadlineKey } from '../src/deadlines.js';
import { approve, assignments, at, expire, inRound1, object, play, PID } from './fixtures.js';

const stored = (e: { type: string; data: unknown }) => ({ ...e, streamId: proposalStreamId(PID) });

describe('round deadlines for the scheduler', () => {
  it('names a round deadline by stream and round, and parses the key back', () => {
    expect(roundDeadlineKey('p-1', 2)).toBe('proposal-p-1:round:2');
    expect(parseRoundDeadlineKey('proposal-p-1:round:2')).toEqual({ proposalId: 'p-1', round: 2 });
    expect(parseRoundDeadlineKey('vote-v1:timeout')).toBeUndefined();
    expect(parseRoundDeadlineKey('proposal-p1:round:0')).toBeUndefined();
  });

  it('sets the deadline when a round opens, at the deadlineAt the event records', () => {
    const opened = inRound1().find((e) => e.type === 'ReviewRoundOpened')!;
    expect(deadlineOf(stored(opened))).toEqual({ key: `proposal-${PID}:round:1`, dueAt: at(60) });
  });

  it('cancels it when the round closes, whatever closed it', () => {
    const byReviews = play(inRound1(), ...assignments.map((a) => approve(a.reviewer, a.constitution, 1)));
    const byExpiry = play(inRound1(), object('harbinger', 'risk', 1), expire(1, at(60)));
    for (const history of [byReviews, byExpiry]) {
      const closed = history.find((e) => e.type === 'ReviewRoundClosed')!;
      expect(deadlineOf(stored(closed))).toEqual({ cancel: `proposal-${PID}:round:1` });
    }
  });

  it('ignores every other event and malformed data', () => {
    for (const e of inRound1()) if (e.type !== 'ReviewRoundOpened') expect(deadlineOf(stored(e))).toBeUndefined();
    expect(deadlineOf({ type: 'ReviewRoundOpened', data: null, streamId: 'proposal-x' })).toBeUndefined();
    expect(deadlineOf({ type: 'ReviewRoundOpened', data: { proposalId: 'x', round: 1 }, streamId: 'proposal-x' })).toBeUndefined();
    expect(deadlineOf({ type: 'ReviewRoundClosed', data: { proposalId: 'x' }, streamId: 'proposal-x' })).toBeUndefined();
  });
});
