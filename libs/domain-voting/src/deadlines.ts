/**
 * The voting timeout as a durable deadline (DESIGN.md decision 5), read off the log by the
 * scheduler: VotingSessionCreated sets the deadline of its session at `deadlineAt`;
 * VotingSessionDecided, VotingSessionExpired and VotingSessionCancelled (whatever ended the voting)
 * cancel it. When it is due, the voting service issues `ExpireVotingSession {sessionId}` (from
 * `parseSessionDeadlineKey(key)`) with `context.now` = the time it fires (never before the due time) and the command id
 * `deadlineCommandId(key, dueAt)`, so every replica and every restart that fires it lands once.
 */
import { VOTING_SESSION_CATEGORY } from '@agora/contracts';
import { votingSessionStreamId } from './session.js';

/** The part of a stored event deadlineOf reads (a RecordedEvent of the store fits). */
export interface EventLike {
  type: string;
  data: unknown;
  streamId: string;
}

/** Same shape as the scheduler's DeadlineChange. */
export type SessionDeadlineChange = { key: string; dueAt: string } | { cancel: string } | undefined;

/** `voting_session-<sessionId>:timeout` */
export const sessionDeadlineKey = (sessionId: string): string => `${votingSessionStreamId(sessionId)}:timeout`;

const KEY = new RegExp(`^${VOTING_SESSION_CATEGORY}-(.+):timeout$`);

/** The session a deadline key names, or undefined for a key that is not a voting timeout. */
export function parseSessionDeadlineKey(key: string): { sessionId: string } | undefined {
  const match = KEY.exec(key);
  return match ? { sessionId: match[1]! } : undefined;
}

const ENDS_VOTING = new Set(['VotingSessionDecided', 'VotingSessionExpired', 'VotingSessionCancelled']);

/** How one event of a `voting_session` stream changes the pending timeouts. Pure. */
export function deadlineOf(event: EventLike): SessionDeadlineChange {
  if (event.type !== 'VotingSessionCreated' && !ENDS_VOTING.has(event.type)) return undefined;
  if (typeof event.data !== 'object' || event.data === null) return undefined;
  const { sessionId, deadlineAt } = event.data as Record<string, unknown>;
  if (typeof sessionId !== 'string') return undefined;
  const key = sessionDeadlineKey(sessionId);
  if (ENDS_VOTING.has(event.type)) return { cancel: key };
  return typeof deadlineAt === 'string' ? { key, dueAt: deadlineAt } : undefined;
}
