/**
 * The command Agora drafts for a message that carries none signed: a client that knows nothing of
 * Agora's signing sends a skill's example (or its own fields) and gets a task in `input-required`
 * whose status carries the exact unsigned envelope to sign, with the signing text's version; it
 * signs it and sends it in a later message of the same task (executor.ts). The gateway holds no
 * agent's key: it drafts, the caller signs.
 */
import { randomUUID } from 'node:crypto';
import { TaskState, type Task } from '@a2a-js/sdk';
import { commandByType, SIGNED_ENVELOPE_FIELDS, SIGNING_TAGS } from '@agora/contracts';
import { describeIssues } from '@agora/messaging';
import { isObject } from './parts.js';
import { AGORA_SKILLS, skillStartedBy, type AgoraSkill, type Followed } from './skills.js';

/** The URI of Agora's A2A extension: a skill's command is signed by the caller (the Agent Card declares it). */
export const SIGNED_COMMAND_EXTENSION = 'urn:agora:a2a:signed-command:v1';

/** Where the signing is specified, in the repository's documentation. */
const SPECIFICATION = 'docs/any-language-agents.md#signing-specification';

export interface Draft {
  /** The skill the message asks for, when it names one (by a start command's type, or `skill`). */
  skill: AgoraSkill | undefined;
  /** The unsigned envelope, as far as the message's fields make one. */
  command: Record<string, unknown> | undefined;
  /** Why it is not yet a command the caller can sign as it is; undefined when it is. */
  reason: string | undefined;
}

const startTypes = () => AGORA_SKILLS.map((s) => `${s.starts.join('/')} (${s.id})`).join(', ');

/**
 * Drafts the start command of a skill from a message's fields (`{type, payload}` or `{skill,
 * payload}`, as the Agent Card's examples are): type, actor (the caller; with reads open, the
 * message's `actor`), the payload with what Agora fills in itself (a fresh aggregate id), a fresh
 * commandId and issuedAt now. The payload is checked against the command's contract, so a draft
 * without a reason is one Agora takes once signed. A task named after its aggregate (task-id.ts)
 * drafts the command for that aggregate (`aggregate`).
 */
export function draftCommand(fields: Record<string, unknown> | undefined, caller: string | undefined, within: AgoraSkill | undefined, aggregate?: Followed): Draft {
  const type = typeof fields?.['type'] === 'string' ? fields['type'] : undefined;
  const named = typeof fields?.['skill'] === 'string' ? AGORA_SKILLS.find((s) => s.id === fields['skill']) : undefined;
  const skill = (type === undefined ? undefined : skillStartedBy(type)) ?? named ?? within;
  if (skill === undefined) {
    const why = type === undefined ? 'The message names no skill' : `${JSON.stringify(type).slice(0, 80)} starts no skill`;
    return { skill, command: undefined, reason: `${why}: send {"command": {"type": ..., "payload": {...}}} with one of ${startTypes()} (the Agent Card's skills' examples), or such a command signed` };
  }
  if ((within !== undefined && skill !== within) || (type !== undefined && !skill.starts.includes(type))) {
    const its = within ?? skill;
    return { skill: its, command: undefined, reason: `this task is a ${its.id} task: it starts with ${its.starts.join(' or ')}` };
  }
  const commandType = type ?? skill.starts[0]!;
  const actor = caller ?? (typeof fields?.['actor'] === 'string' ? fields['actor'] : undefined);
  const given = isObject(fields?.['payload']) ? fields['payload'] : {};
  const payload = { ...skill.fills(actor ?? ''), ...given, ...(aggregate !== undefined && skill.idField !== undefined && aggregate.category === skill.category ? { [skill.idField]: aggregate.id } : {}) };
  const command = { commandId: randomUUID(), type: commandType, actor: actor ?? '', issuedAt: new Date().toISOString(), payload };
  if (actor === undefined) return { skill, command, reason: 'Name the agent that signs: with reads open no read token names the caller, so the message gives its `actor`' };
  const parsed = commandByType(commandType)!.payload.safeParse(payload);
  if (!parsed.success) {
    const issues = describeIssues(parsed.error.issues, ['payload']).issues.map((i) => `${i.path}: ${i.message}`);
    return { skill, command, reason: `The fields do not make a ${commandType}: ${issues.join('; ')}` };
  }
  return { skill, command, reason: undefined };
}

/** The status a draft's task waits in: what to sign, said in words and given as data. */
export function draftStatus(draft: Draft, taskId: string): { text: string; data: Record<string, unknown> } {
  const signing = { version: SIGNING_TAGS.command, covers: SIGNED_ENVELOPE_FIELDS, specification: SPECIFICATION, extension: SIGNED_COMMAND_EXTENSION };
  const what = draft.command === undefined ? 'the start command of a skill' : `this ${String(draft.command['type'])} as ${String(draft.command['actor']) || 'your agent'}`;
  const how = `sign ${what} with the agent's own key (the signing text ${SIGNING_TAGS.command}: ${SPECIFICATION}) and send {"command": <the signed envelope>} in a data part of a message of this task (${taskId})`;
  const text = draft.reason === undefined ? `Sign to start: ${how}` : `${draft.reason}. Then ${how}`;
  return { text, data: { ...(draft.command === undefined ? {} : { command: draft.command }), signing, ...(draft.reason === undefined ? {} : { reason: draft.reason }) } };
}

/** A task waiting for its signed start command (opened on a draft): nothing follows the log for it yet. */
export const awaitsSignature = (task: Task): boolean => (task.metadata?.['agora'] as { awaiting?: unknown } | undefined)?.awaiting === 'signature' && task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED;
