import { DEBATE_CATEGORY } from '@agora/contracts';

/** `debate-<debateId>` */
export const debateStreamId = (debateId: string): string => `${DEBATE_CATEGORY}-${debateId}`;

/** A falsifier's id: `<threadId>.f<seq>` (the seq of the message that declared it). */
export const falsifierIdOf = (threadId: string, seq: number): string => `${threadId}.f${seq}`;

/** A moderator proposal's id: `<threadId>.p<attempt>.<agentId>`. */
export const proposalIdOf = (threadId: string, attempt: number, agentId: string): string => `${threadId}.p${attempt}.${agentId}`;

/** The id the moderator speaks under in the transcript. */
export const MODERATOR = 'moderator';
