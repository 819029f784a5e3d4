/**
 * A task's id names what it follows: `<skill>:<stream id>` (`tribunal-review:proposal-…`), so any
 * gateway (a restarted one, another replica) rebuilds the task from the log as its caller may read
 * it when its task store does not hold it. A task is named so when its first message carries a
 * signed start command that names its aggregate, or fields the command drafted from names one, or
 * the aggregate the command would open is foreseen (a recovery: AgoraSkill.foreseen) (route.ts);
 * other tasks keep the id the request handler draws, and live in the memory of the
 * gateway that opened them.
 */
import { TaskState, type Message, type Task } from '@a2a-js/sdk';
import type { Reader } from '@agora/contracts';
import { StreamNotFound, type EventStore } from '@agora/eventstore';
import type { Agora } from '@agora/sdk';
import { eventViewFor, publicMetadataOf, type StreamParties } from '../read-visibility.js';
import { agentMessage, boundedHistory, dataPart, outcomeArtifact, TASK_STATES, textPart } from './parts.js';
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

/** A rebuilt task's history: the messages of its aggregate's stream as the caller may read it (historyFromLog). */
export type HistoryOf = (streamId: string, reader: Reader | undefined, ids: { taskId: string; contextId: string }) => Promise<Message[]>;

/**
 * A rebuilt task's history from the log: each event of its aggregate's stream that the caller may
 * see, as GET /v1/events shows it to that caller (whole, or its type and public metadata only), an
 * agent message whose id is the event's and whose data part is the event; the latest within the
 * history's bounds (task-store.ts).
 */
export function historyFromLog(store: Pick<EventStore, 'readStream'>, parties: StreamParties, bounds: { historyMessages: number; historyBytes: number }): HistoryOf {
  return async (streamId, reader, ids) => {
    const events = await store.readStream(streamId).catch((error: unknown) => {
      if (error instanceof StreamNotFound) return [];
      throw error;
    });
    const view = eventViewFor(reader, parties);
    await view?.prepare(events);
    const messages = events.flatMap((event): Message[] => {
      const sight = view?.sight(event) ?? 'full';
      if (sight === 'none') return [];
      const { id, type, revision, position, recordedAt } = event;
      const seen = sight === 'full' ? { data: event.data, metadata: event.metadata } : { data: {}, metadata: publicMetadataOf(event) };
      return [{ ...agentMessage(ids, [textPart(`${type} (${streamId}, revision ${revision})`), dataPart({ event: { id, type, streamId, revision, position, recordedAt, ...seen } })]), messageId: id }];
    });
    return boundedHistory(messages, bounds.historyMessages, bounds.historyBytes);
  };
}

/**
 * A named task as the aggregate stands, read as the caller (its read token's agent): undefined
 * when the id names none, the caller may not read it, or another agent started it (a task is its
 * caller's, as in the task store): the same answer as for an unknown id, which says nothing of
 * what exists. Its context is its own id, as the tasks named when they open have it (route.ts);
 * its history is its aggregate's events as the caller may read them (`history`, historyFromLog).
 */
export async function rebuildTask(taskId: string, reader: Reader | undefined, readerClient: (reader: Reader | undefined) => Agora, history?: HistoryOf): Promise<Task | undefined> {
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
      history: (await history?.(followed.streamId, reader, ids)) ?? [],
      metadata: { agora: { skill: skill.id, streamId: followed.streamId, progress: status.progress, rebuilt: true } },
    };
  } finally {
    await agora.close();
  }
}
