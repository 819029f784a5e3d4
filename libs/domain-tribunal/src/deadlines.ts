/**
 * The review time-box as durable deadlines (DESIGN.md decision 5), read off the log by the
 * scheduler of libs/eventsourcing: ReviewRoundOpened sets the deadline of its round,
 * ReviewRoundClosed (whatever closed it: all reviews in, the expiry itself, a revision, a
 * withdrawal) cancels it. When a deadline is due, the tribunal service issues
 * `ExpireReviewRound {proposalId, round}` (from `parseRoundDeadlineKey(key)`) with `context.now` =
 * the time it fires (never before the due time) and the command id `deadlineCommandId(key, dueAt)`.
 */
import { PROPOSAL_CATEGORY } from '@agora/contracts';

/** The part of a stored event deadlineOf reads (a RecordedEvent of the store fits). */
export interface EventLike {
  type: string;
  data: unknown;
  streamId: string;
}

/** Same shape as the scheduler's DeadlineChange. */
export type RoundDeadlineChange = { key: string; dueAt: string } | { cancel: string } | undefined;

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

interface RoundData {
  proposalId: string;
  round: number;
  deadlineAt?: string;
}

function roundData(data: unknown): RoundData | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const { proposalId, round, deadlineAt } = data as Record<string, unknown>;
  if (typeof proposalId !== 'string' || typeof round !== 'number') return undefined;
  return typeof deadlineAt === 'string' ? { proposalId, round, deadlineAt } : { proposalId, round };
}

/** How one event of a `proposal` stream changes the pending round deadlines. Pure. */
export function deadlineOf(event: EventLike): RoundDeadlineChange {
  if (event.type !== 'ReviewRoundOpened' && event.type !== 'ReviewRoundClosed') return undefined;
  const data = roundData(event.data);
  if (!data) return undefined;
  const key = roundDeadlineKey(data.proposalId, data.round);
  if (event.type === 'ReviewRoundClosed') return { cancel: key };
  return data.deadlineAt === undefined ? undefined : { key, dueAt: data.deadlineAt };
}
