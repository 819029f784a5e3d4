/**
 * The dialectic's deadlines as durable deadlines (DESIGN.md decision 5), read off the log by the
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
import { dialecticStreamId } from './ids.js';

/** The part of a stored event deadlineOf reads (a RecordedEvent of the store fits). */
export interface EventLike {
  type: string;
  data: unknown;
  streamId: string;
}

/** Same shape as the scheduler's DeadlineChange. */
export type SessionDeadlineChange = { key: string; dueAt: string } | { cancel: string } | undefined;

/** `dialectic_session-<sessionId>:deadline` */
export const sessionDeadlineKey = (sessionId: string): string => `${dialecticStreamId(sessionId)}:deadline`;

const KEY = new RegExp(`^${DIALECTIC_SESSION_CATEGORY}-(.+):deadline$`);

/** The session a deadline key names, or undefined for a key that is not a dialectic deadline. */
export function parseSessionDeadlineKey(key: string): { sessionId: string } | undefined {
  const match = KEY.exec(key);
  return match ? { sessionId: match[1]! } : undefined;
}

/** Events that open a phase: `deadlineAt` sets (moves) the session's deadline; null cancels it (SynthesisSubmitted: null leaves it to the event that follows). */
const OPENS_PHASE = new Set(['ReviewerSelected', 'ThesisSubmitted', 'AntithesisSubmitted', 'SynthesisSubmitted', 'ResolutionProposed', 'RecoveryEscalated']);
/** Events after which nothing is due until another phase opens. */
const SETTLES = new Set(['DialecticPhaseExpired', 'RecoveryResolved', 'RecoveryDecided']);

/** How one event of a `dialectic_session` stream changes the pending deadline. Pure. */
export function deadlineOf(event: EventLike): SessionDeadlineChange {
  if (!OPENS_PHASE.has(event.type) && !SETTLES.has(event.type)) return undefined;
  if (typeof event.data !== 'object' || event.data === null) return undefined;
  const { sessionId, deadlineAt } = event.data as Record<string, unknown>;
  if (typeof sessionId !== 'string') return undefined;
  const key = sessionDeadlineKey(sessionId);
  if (SETTLES.has(event.type)) return { cancel: key };
  if (typeof deadlineAt === 'string') return { key, dueAt: deadlineAt };
  if (deadlineAt === null && event.type !== 'SynthesisSubmitted') return { cancel: key };
  return undefined;
}
