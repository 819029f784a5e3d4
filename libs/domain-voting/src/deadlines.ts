/**
 * The voting timeout as a durable deadline (docs/decisions/0005-durable-time.md), read off the log by the
 * scheduler: VotingSessionCreated sets the deadline of its session at `deadlineAt`;
 * VotingSessionDecided, VotingSessionExpired and VotingSessionCancelled (whatever ended the voting)
 * cancel it. When it is due, the voting service issues `ExpireVotingSession {sessionId}` (from
 * `parseSessionDeadlineKey(key)`) with `context.now` = the time it fires (never before the due time) and the command id
 * `deadlineCommandId(key, dueAt)`, so every replica and every restart that fires it lands once.
 */
import { VOTING_SESSION_CATEGORY } from '@agora/contracts';
import { aggregateDeadlineKey, deadlineRule, type DeadlineChange, type DeadlineEvent } from '@agora/decider';

const KEY = aggregateDeadlineKey(VOTING_SESSION_CATEGORY, 'timeout');

/** `voting_session-<sessionId>:timeout` */
export const sessionDeadlineKey = (sessionId: string): string => KEY.key(sessionId);

/** The session a deadline key names, or undefined for a key that is not a voting timeout. */
export function parseSessionDeadlineKey(key: string): { sessionId: string } | undefined {
  const sessionId = KEY.parse(key);
  return sessionId === undefined ? undefined : { sessionId };
}

/** How one event of a `voting_session` stream changes the pending timeouts. Pure. */
export const deadlineOf: (event: DeadlineEvent) => DeadlineChange = deadlineRule({
  sets: ['VotingSessionCreated'],
  cancels: ['VotingSessionDecided', 'VotingSessionExpired', 'VotingSessionCancelled'],
  keyOf: ({ sessionId }) => (typeof sessionId === 'string' ? sessionDeadlineKey(sessionId) : undefined),
});
