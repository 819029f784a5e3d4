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

/** The data parts of a message: where a signed command rides (the part's value itself, or its `command` member). */
export function commandsIn(message: Message | undefined): Record<string, unknown>[] {
  const found: Record<string, unknown>[] = [];
  for (const part of message?.parts ?? []) {
    if (part.content?.$case !== 'data') continue;
    const value = part.content.value as unknown;
    const candidate = isObject(value) && isObject(value['command']) ? value['command'] : value;
    if (isObject(candidate)) found.push(candidate);
  }
  return found;
}

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
