/**
 * The review time-box as durable deadlines (docs/decisions/0005-durable-time.md), read off the log by the
 * scheduler of libs/eventsourcing: ReviewRoundOpened sets the deadline of its round,
 * ReviewRoundClosed (whatever closed it: all reviews in, the expiry itself, a revision, a
 * withdrawal) cancels it. When a deadline is due, the tribunal service issues
 * `ExpireReviewRound {proposalId, round}` (from `parseRoundDeadlineKey(key)`) with `context.now` =
 * the time it fires (never before the due time) and the command id `deadlineCommandId(key, dueAt)`.
 */
import { PROPOSAL_CATEGORY } from '@agora/contracts';
import { deadlineRule, type DeadlineChange, type DeadlineEvent } from '@agora/decider';

export const proposalStreamId = (proposalId: string): string => `${PROPOSAL_CATEGORY}-${proposalId}`;

/** `proposal-<proposalId>:round:<n>` */
export const roundDeadlineKey = (proposalId: string, round: number): string => `${proposalStreamId(proposalId)}:round:${round}`;

const KEY = new RegExp(`^${PROPOSAL_CATEGORY}-(.+):round:([1-9][0-9]*)$`);

/** The round a deadline key names, or undefined for a key that is not a round deadline. */
export function parseRoundDeadlineKey(key: string): { proposalId: string; round: number } | undefined {
  const match = KEY.exec(key);
  if (!match) return undefined;
  return { proposalId: match[1]!, round: Number(match[2]) };
}

/** How one event of a `proposal` stream changes the pending round deadlines. Pure. */
export const deadlineOf: (event: DeadlineEvent) => DeadlineChange = deadlineRule({
  sets: ['ReviewRoundOpened'],
  cancels: ['ReviewRoundClosed'],
  keyOf: ({ proposalId, round }) => (typeof proposalId === 'string' && typeof round === 'number' ? roundDeadlineKey(proposalId, round) : undefined),
});
