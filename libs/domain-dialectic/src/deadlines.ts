/**
 * The dialectic's deadlines as durable deadlines (docs/decisions/0005-durable-time.md), read off the log by the
 * scheduler of libs/eventsourcing. A session has one pending deadline at a time, under one key that
 * moves: every event that opens a phase records its `deadlineAt` (thesis, antithesis, each
 * synthesis round, signatures: each capped by the session limit; tie-break; quorum), and an
 * escalation to an operator (no deadline: the agent stays paused until a human decides), an
 * expiry, a resolution or an operator's decision cancel it. When it is due, the dialectic service
 * issues `ExpireDialecticPhase {sessionId, deadlineAt: dueAt}` (sessionId from
 * `parseSessionDeadlineKey(key)`) with `context.now` = the time it fires (never before the due time) and the command id
 * `deadlineCommandId(key, dueAt)`; a deadline that moved meanwhile makes it change nothing.
 */
import { DIALECTIC_SESSION_CATEGORY } from '@agora/contracts';
import { aggregateDeadlineKey, deadlineRule, type DeadlineChange, type DeadlineEvent } from '@agora/decider';

const KEY = aggregateDeadlineKey(DIALECTIC_SESSION_CATEGORY, 'deadline');

/** `dialectic_session-<sessionId>:deadline` */
export const sessionDeadlineKey = (sessionId: string): string => KEY.key(sessionId);

/** The session a deadline key names, or undefined for a key that is not a dialectic deadline. */
export function parseSessionDeadlineKey(key: string): { sessionId: string } | undefined {
  const sessionId = KEY.parse(key);
  return sessionId === undefined ? undefined : { sessionId };
}

/**
 * How one event of a `dialectic_session` stream changes the pending deadline. Pure. Events that open a
 * phase set (move) it with their `deadlineAt`; null cancels it, but SynthesisSubmitted's null leaves it
 * to the event that follows. After an expiry, a resolution or a decision nothing is due.
 */
export const deadlineOf: (event: DeadlineEvent) => DeadlineChange = deadlineRule({
  sets: ['ReviewerSelected', 'ThesisSubmitted', 'AntithesisSubmitted', 'SynthesisSubmitted', 'ResolutionProposed', 'RecoveryEscalated'],
  cancels: ['DialecticPhaseExpired', 'RecoveryResolved', 'RecoveryDecided'],
  cancelOnNull: ['ReviewerSelected', 'ThesisSubmitted', 'AntithesisSubmitted', 'ResolutionProposed', 'RecoveryEscalated'],
  keyOf: ({ sessionId }) => (typeof sessionId === 'string' ? sessionDeadlineKey(sessionId) : undefined),
});
