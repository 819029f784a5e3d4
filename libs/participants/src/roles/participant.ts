/**
 * What every model-backed participant shares: its settings, the report of what it did, and the one
 * way it asks its model for an answer that fits a role's contract (retried once with the reason the
 * first answer did not fit, then given up: the role turns that into its explicit abstention or
 * escalation, never an invented answer).
 */
import { uuidV5 } from '@agora/sdk';
import type { z } from 'zod';
import type { Prompts } from '../fleet/prompts.js';
import type { ModelCallOutcome, ModelCallRequest, ModelCalls } from '../model-calls.js';

/** What a participant did in answer to an event: logged by the fleet (who, what, cost). */
export interface ParticipantAction {
  agent: string;
  role: 'reviewer' | 'executive' | 'validator' | 'dialectic' | 'debater';
  /** acted: its answer was sent; abstained / escalated: its explicit answer when the model gave none that fits; silent: nothing sent (see docs/fleet.md). */
  outcome: 'acted' | 'abstained' | 'escalated' | 'silent';
  /** In a few words: `objected to p-1 round 1 (risk)`. */
  what: string;
  model: string;
  /** Model calls made for it (replayed ones included). */
  calls: number;
  /** Their cost, in the provider layer's currency. */
  cost: number;
  /** Why the model's answer was not used, when it was not. */
  error?: string;
}

export interface ParticipantSettings {
  agentId: string;
  /** `<provider>:<model>`. */
  model: string;
  calls: ModelCalls;
  prompts: Prompts;
  maxOutputTokens?: number;
  temperature?: number;
  /** Called after each action (the fleet logs it). */
  report?: (action: ParticipantAction) => void;
}

/** The outcome of asking: an answer that fits, or the reason there is none; with the calls made and their cost either way. */
export type Asked<T> = ({ ok: true; output: T } | { ok: false; error: string }) & { calls: number; cost: number };

export interface Question<T> {
  /** Names the call ids: `<purpose key>:<attempt>` is hashed into each call's id (UUIDv5), so a repeat asks the same ids. */
  key: string;
  purpose: string;
  system: string;
  prompt: string;
  schema: z.ZodType<T>;
  schemaName: string;
  /** What the contract asks beyond the schema: the reason an answer does not fit, or undefined when it does. */
  check?: (output: T) => string | undefined;
}

/** Attempts per question: the first, and one retry told why the first did not fit. */
export const ATTEMPTS = 2;

/**
 * Asks the participant's model: a structured answer checked against the schema and the role's
 * contract. An answer that does not fit is asked again once, with the reason appended to the prompt
 * (the retry prompt); a provider failure (the layer has retried what was transient) is not asked again.
 */
export async function ask<T>(settings: ParticipantSettings, question: Question<T>): Promise<Asked<T>> {
  let calls = 0;
  let cost = 0;
  let error = '';
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const prompt = attempt === 0 ? question.prompt : `${question.prompt}\n${settings.prompts.render('retry', { error })}`;
    const outcome = await callModel(settings.calls, {
      callId: uuidV5(`${question.key}:${attempt}`),
      purpose: attempt === 0 ? question.purpose : `${question.purpose} (retry)`,
      model: settings.model,
      system: question.system,
      prompt,
      schema: question.schema,
      schemaName: question.schemaName,
      ...(settings.maxOutputTokens === undefined ? {} : { maxOutputTokens: settings.maxOutputTokens }),
      ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
    });
    if ('refused' in outcome) return { ok: false, error: outcome.refused, calls, cost };
    calls += 1;
    cost += outcome.cost;
    if (!outcome.ok) {
      const { kind, status, message, text } = outcome.error;
      error = `${kind}${status === undefined ? '' : ` ${status}`}: ${message}${text === undefined ? '' : ` (the answer was: ${text.slice(0, 500)})`}`;
      if (kind === 'invalid_output') continue;
      return { ok: false, error: `the model call failed: ${error}`, calls, cost };
    }
    const problem = question.check?.(outcome.output);
    if (problem === undefined) return { ok: true, output: outcome.output, calls, cost };
    error = problem;
  }
  return { ok: false, error: `no answer that fits after ${ATTEMPTS} attempts: ${error}`, calls, cost };
}

/**
 * A model call through the participant's ModelCalls; a call refused before it was made (no budget
 * left, a model with no price) or whose outcome could not be recorded is `{refused}` with the reason,
 * so that the role answers as it does for any call that gave nothing (never a crashed loop).
 */
export async function callModel<T>(calls: ModelCalls, request: ModelCallRequest<T>): Promise<ModelCallOutcome<T> | { refused: string }> {
  try {
    return await calls.call(request);
  } catch (error) {
    const { code, message } = error as Error & { code?: string };
    return { refused: `the model call was refused: ${code ? `${code}: ` : ''}${message}` };
  }
}

/** The action report of an answer (or of the lack of one). */
export function actionOf(settings: ParticipantSettings, role: ParticipantAction['role'], asked: Asked<unknown>, outcome: ParticipantAction['outcome'], what: string): ParticipantAction {
  return { agent: settings.agentId, role, outcome, what, model: settings.model, calls: asked.calls, cost: Math.round(asked.cost * 1e6) / 1e6, ...(asked.ok ? {} : { error: asked.error }) };
}

/** A list for a prompt, one item a line, or `(none)`. */
export function listed(items: readonly string[]): string {
  return items.length === 0 ? '(none)' : items.map((item) => `- ${item}`).join('\n');
}

/** An empty or whitespace string is absent. */
export const blank = (text: string | null | undefined): boolean => text === null || text === undefined || text.trim() === '';
