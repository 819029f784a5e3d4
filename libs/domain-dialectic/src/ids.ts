import { DIALECTIC_SESSION_CATEGORY } from '@agora/contracts';

/** `dialectic_session-<sessionId>` */
export const dialecticStreamId = (sessionId: string): string => `${DIALECTIC_SESSION_CATEGORY}-${sessionId}`;

/** The voting session (its request id) of a quorum escalation: `<sessionId>-q<escalation>`. */
export const quorumVotingSessionId = (sessionId: string, escalation: number): string => `${sessionId}-q${escalation}`;

const QUORUM_ID = /^(.+)-q([1-9][0-9]*)$/;

/** The recovery session and escalation a quorum's voting session belongs to (from the voting events' sessionId), or undefined. */
export function parseQuorumVotingSessionId(votingSessionId: string): { sessionId: string; escalation: number } | undefined {
  const match = QUORUM_ID.exec(votingSessionId);
  if (!match || !/-p[1-9][0-9]*$/.test(match[1]!)) return undefined;
  return { sessionId: match[1]!, escalation: Number(match[2]) };
}
