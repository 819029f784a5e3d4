/** The A2A objects the gateway writes (v1.0 shapes of @a2a-js/sdk; its compat layer translates them for 0.3 clients). */
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Artifact, type Message, type Part } from '@a2a-js/sdk';
import type { SkillState } from './skills.js';

export const textPart = (text: string): Part => ({ content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined });

export const dataPart = (data: unknown): Part => ({ content: { $case: 'data', value: data }, mediaType: 'application/json', filename: '', metadata: undefined });

/** A message of the agent (Agora) in a task or context. */
export function agentMessage(ids: { taskId?: string; contextId: string }, parts: Part[]): Message {
  return { messageId: randomUUID(), contextId: ids.contextId, taskId: ids.taskId ?? '', role: Role.ROLE_AGENT, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

export function outcomeArtifact(skill: string, view: unknown): Artifact {
  return { artifactId: 'outcome', name: `${skill} outcome`, description: 'The aggregate as Agora decided it, read as the caller', parts: [dataPart(view)], metadata: undefined, extensions: [] };
}

export const TASK_STATES: Record<SkillState, TaskState> = {
  working: TaskState.TASK_STATE_WORKING,
  'input-required': TaskState.TASK_STATE_INPUT_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  canceled: TaskState.TASK_STATE_CANCELED,
  rejected: TaskState.TASK_STATE_REJECTED,
  failed: TaskState.TASK_STATE_FAILED,
};

/** The latest messages of a history within the bounds (the oldest go first). */
export function boundedHistory(history: readonly Message[], maxMessages: number, maxBytes: number): Message[] {
  const kept = history.slice(-maxMessages);
  const sizes = kept.map((m) => Buffer.byteLength(JSON.stringify(m)));
  let total = sizes.reduce((a, b) => a + b, 0);
  let first = 0;
  while (total > maxBytes && first < kept.length) total -= sizes[first++]!;
  return kept.slice(first);
}

/** The A2A states a task ends in. */
export const ENDED_STATES: ReadonlySet<TaskState> = new Set([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED, TaskState.TASK_STATE_FAILED]);

/**
 * What a message's parts ask for: a command, signed or still to sign, in a data part (the part's
 * value itself, or its `command` member) or in a text part that is such a JSON object (a client
 * that sends the Agent Card's examples as they are sends them as text).
 */
export function commandsIn(message: Message | undefined): Record<string, unknown>[] {
  const found: Record<string, unknown>[] = [];
  for (const part of message?.parts ?? []) {
    const value = part.content?.$case === 'data' ? (part.content.value as unknown) : part.content?.$case === 'text' ? jsonObjectIn(part.content.value) : undefined;
    const candidate = isObject(value) && isObject(value['command']) ? value['command'] : value;
    if (isObject(candidate)) found.push(candidate);
  }
  return found;
}

/** A text that is a JSON object, parsed; anything else undefined. */
function jsonObjectIn(text: string): unknown {
  if (!text.trimStart().startsWith('{')) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A command its actor signed (it carries a signature, good or not: Agora decides); one without is a draft to sign. */
export const isSigned = (command: Record<string, unknown>): boolean => typeof command['signature'] === 'string';

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
