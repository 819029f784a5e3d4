/**
 * A task's id names what it follows: `<skill>:<stream id>` (`tribunal-review:proposal-…`), so any
 * gateway (a restarted one, another replica) rebuilds the task from the log as its caller may read
 * it when its task store does not hold it. A task is named so when its first message carries a
 * signed start command that names its aggregate, or fields the command drafted from names one, or
 * the aggregate the command would open is foreseen (a recovery: AgoraSkill.foreseen) (route.ts);
 * other tasks keep the id the request handler draws, and live in the memory of the
 * gateway that opened them.
 */
import { TaskState, type Task } from '@a2a-js/sdk';
import type { Reader } from '@agora/contracts';
import type { Agora } from '@agora/sdk';
import { agentMessage, outcomeArtifact, TASK_STATES, textPart } from './parts.js';
import { AGORA_SKILLS, aggregateOf, FINAL_STATES, type AgoraSkill, type Followed } from './skills.js';

/** The id of the task that follows the aggregate for a skill. */
export const namedTaskId = (skill: AgoraSkill, followed: Followed): string => `${skill.id}:${followed.streamId}`;

/**
 * The task a request opens under a named id, held until its first event replaces it: the request
 * handler finds a task of that id (as it does for a message of a task), and the executor starts it.
 */
export function openingTask(taskId: string, contextId: string, skill: AgoraSkill): Task {
  return { id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() }, artifacts: [], history: [], metadata: { agora: { skill: skill.id, awaiting: 'start' } } };
}

/** A task held while its request opens it (openingTask). */
export const isOpening = (task: Task): boolean => (task.metadata?.['agora'] as { awaiting?: unknown } | undefined)?.awaiting === 'start' && task.status?.state === TaskState.TASK_STATE_SUBMITTED;

/** The skill and aggregate a task id names, if it names one. */
export function followedByTaskId(taskId: string): { skill: AgoraSkill; followed: Followed } | undefined {
  const colon = taskId.indexOf(':');
  const skill = AGORA_SKILLS.find((s) => s.id === taskId.slice(0, colon));
  const streamId = taskId.slice(colon + 1);
  if (colon < 0 || skill === undefined || !streamId.startsWith(`${skill.category}-`)) return undefined;
  const id = streamId.slice(skill.category.length + 1);
  return id === '' ? undefined : { skill, followed: aggregateOf(skill.category, id) };
}

/**
 * A named task as the aggregate stands, read as the caller (its read token's agent): undefined
 * when the id names none, the caller may not read it, or another agent started it (a task is its
 * caller's, as in the task store): the same answer as for an unknown id, which says nothing of
 * what exists. Its context is its own id, as the tasks named when they
 * open have it (route.ts); its history is not in the log.
 */
export async function rebuildTask(taskId: string, reader: Reader | undefined, readerClient: (reader: Reader | undefined) => Agora): Promise<Task | undefined> {
  const named = followedByTaskId(taskId);
  if (named === undefined) return undefined;
  const { skill, followed } = named;
  const agora = readerClient(reader);
  try {
    const view = await skill.read(agora, followed.id).catch((error: unknown) => {
      // Refused as the caller: as if it did not exist.
      if ((error as { code?: string }).code === 'forbidden' || (error as { code?: string }).code === 'not_found') return undefined;
      throw error;
    });
    if (view === undefined || (reader !== undefined && skill.startedBy(view) !== reader.agentId)) return undefined;
    const status = skill.status(view, reader?.agentId ?? '');
    const ids = { taskId, contextId: taskId };
    return {
      id: taskId,
      contextId: taskId,
      status: { state: TASK_STATES[status.state], message: agentMessage(ids, [textPart(status.text)]), timestamp: new Date().toISOString() },
      artifacts: FINAL_STATES.has(status.state) ? [outcomeArtifact(skill.id, view)] : [],
      history: [],
      metadata: { agora: { skill: skill.id, streamId: followed.streamId, progress: status.progress, rebuilt: true } },
    };
  } finally {
    await agora.close();
  }
}
