/**
 * What the models are sent. Prompts are built here, from the session's recorded state, and
 * recorded verbatim in ChamberCallRequested before any call: no model or provider name ever
 * appears in them, and answers are shown under labels shuffled per session and per phase, with a
 * panelist's self-identification ("I am Claude, made by Anthropic") masked (self-identification.ts).
 */
import type { CrossExamAnswer, PanelAnswer } from '@agora/contracts';
import { drawOf } from '@agora/domain-common';
import { maskSelfIdentification } from './self-identification.js';

const LETTERS = 'ABCDEFGHIJ';

/** Label -> panelist: the panelists in a seeded shuffled order, lettered A, B, C... (Fisher-Yates over independent draws). */
export function shuffledLabels(seed: number, purpose: string, panelists: readonly number[]): Record<string, number> {
  const order = [...panelists].sort((a, b) => a - b);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(drawOf(seed, `${purpose}:${i}`) * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return Object.fromEntries(order.map((panelist, i) => [LETTERS[i]!, panelist]));
}

export function labelOf(labels: Record<string, number>, panelist: number): string | undefined {
  return Object.entries(labels).find(([, p]) => p === panelist)?.[0];
}

export const PANELIST_SYSTEM =
  'You are one member of an independent panel consulted on a strategic question. Answer on your own judgement. ' +
  'Be concrete and honest about uncertainty: give your position in one short sentence, your confidence from 0 to 1, ' +
  'the key claims your answer rests on (one claim per item, stated plainly so they can be compared), the evidence for them, and your full reasoning. ' +
  'Answer only with the requested JSON object.';

export const ARBITER_SYSTEM =
  'You are the arbiter of a panel of independent answers to a strategic question. The answers are anonymous and in random order; ' +
  'you may have written one of them yourself, and you must not try to guess which. Judge methodology and evidence, not authorship, style or length. ' +
  'Return "consensus" only when the answers genuinely agree on a position; name the labels of the answers your synthesis rests on. ' +
  'When they genuinely disagree, return "no_consensus" and say why: an honest "no consensus" is a valid outcome and a forced synthesis is not. ' +
  'In selfCheck, state which answer you leaned on most and why. Answer only with the requested JSON object.';

function questionBlock(question: string, context: string): string {
  return context.trim() ? `QUESTION\n${question}\n\nCONTEXT\n${context}` : `QUESTION\n${question}`;
}

/** Phase 1: the question and context only. */
export function blindPrompt(question: string, context: string): string {
  return `${questionBlock(question, context)}\n\nGive your independent answer.`;
}

/** An answer as others see it: the structured fields only, never who wrote it (self-identifying names masked). */
export function renderAnswer(label: string, answer: PanelAnswer | CrossExamAnswer): string {
  const mask = (text: string) => maskSelfIdentification(text).text;
  const list = (items: readonly string[]) => (items.length ? items.map((c) => `  - ${mask(c)}`).join('\n') : '  (none)');
  return [
    `ANSWER ${label}`,
    `Position: ${mask(answer.position)}`,
    `Confidence: ${answer.confidence}`,
    `Key claims:\n${list(answer.keyClaims)}`,
    `Evidence:\n${list(answer.evidence)}`,
    `Reasoning: ${mask(answer.reasoning)}`,
  ].join('\n');
}

/** The text fields of an answer another model is shown. */
export const answerTexts = (answer: Pick<PanelAnswer, 'position' | 'keyClaims' | 'evidence' | 'reasoning'>): string[] => [answer.position, ...answer.keyClaims, ...answer.evidence, answer.reasoning];

/** Cross-examination: the panelist's own blind answer, and the others' under their labels in label order. */
export function crossExamPrompt(question: string, context: string, own: PanelAnswer, others: readonly { label: string; answer: PanelAnswer }[]): string {
  const shown = [...others].sort((a, b) => (a.label < b.label ? -1 : 1)).map((o) => renderAnswer(o.label, o.answer));
  return [
    questionBlock(question, context),
    `YOUR FIRST ANSWER\nPosition: ${own.position}\nConfidence: ${own.confidence}\nKey claims: ${own.keyClaims.join('; ') || '(none)'}`,
    `THE OTHER PANELISTS' ANSWERS (anonymous)\n${shown.join('\n\n')}`,
    'Cross-examine these answers: check their claims and evidence against yours. Keep your position if it holds; change it only if the evidence warrants it, not to agree. ' +
      'Set revised to true if you change your position, and influencedBy to the label of the answer that changed your mind (or null).',
  ].join('\n\n');
}

/** Arbitration: the final answers under shuffled labels, in label order. */
export function arbiterPrompt(question: string, context: string, answers: readonly { label: string; answer: PanelAnswer }[]): string {
  const shown = [...answers].sort((a, b) => (a.label < b.label ? -1 : 1)).map((o) => renderAnswer(o.label, o.answer));
  return [
    questionBlock(question, context),
    `THE PANEL'S FINAL ANSWERS (anonymous, in random order)\n${shown.join('\n\n')}`,
    'Evaluate the methodology and evidence of each answer. Return a synthesis naming the labels it rests on, or no consensus.',
  ].join('\n\n');
}

/** Prompt text the templates add around the question and answers, in characters at most (for the cost estimate). */
export const PROMPT_OVERHEAD_CHARS = 2_000;
