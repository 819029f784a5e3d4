/**
 * From a proposal as sent to the session as recorded: defaults from the chamber's configuration,
 * the recusal policy applied, every model checked against the configured providers and the price
 * table, and the most the session can cost. Pure: the configuration comes in as data.
 */
import type { ChamberRules, PayloadOf, Panelist, ProposeChamberSession, RecusalPolicy } from '@agora/contracts';
import { DomainError } from '@agora/decider';
import { drawOf } from '@agora/domain-common';
import { PROMPT_OVERHEAD_CHARS } from './prompts.js';

export interface ModelPriceData {
  inputPerMTok: number;
  outputPerMTok: number;
}

/** The chamber's configuration as the domain reads it. */
export interface ChamberPolicy {
  panel: readonly string[];
  arbiter: string;
  fallbackArbiter: string | null;
  /** Arbiters drawn from under the `rotate` recusal policy. */
  arbiterPool: readonly string[];
  recusal: RecusalPolicy;
  divergenceThreshold: number;
  crossExamination: boolean;
  minPanelists: number;
  maxOutputTokens: number;
  stepAttempts: number;
  maxQuestionChars: number;
  maxContextChars: number;
  approvalTtlMs: number;
  sessionCeiling: number;
  sessionsPerDay: number;
  monthlyBudget: number;
  currency: string;
  /** Configured provider ids. */
  providers: readonly string[];
  /** `<provider>:<model>` -> price per million tokens. */
  prices: Readonly<Record<string, ModelPriceData>>;
}

export const DEFAULT_CHAMBER_RULES = {
  divergenceThreshold: 0.3,
  crossExamination: true,
  minPanelists: 3,
  maxOutputTokens: 1_500,
  stepAttempts: 2,
  maxQuestionChars: 4_000,
  maxContextChars: 20_000,
  approvalTtlMs: 24 * 60 * 60_000,
  sessionCeiling: 5,
  sessionsPerDay: 10,
  monthlyBudget: 100,
} as const;

/** The most one call can cost: input tokens estimated as one per 3 characters sent plus 50, output at its cap. */
export function callMaxCost(price: ModelPriceData, promptChars: number, maxOutputTokens: number): number {
  const inputTokens = Math.ceil(promptChars / 3) + 50;
  return Math.round(inputTokens * price.inputPerMTok + maxOutputTokens * price.outputPerMTok) / 1_000_000;
}

const providerOf = (model: string) => model.slice(0, model.indexOf(':'));

function checkModel(policy: ChamberPolicy, model: string, what: string): ModelPriceData {
  const provider = providerOf(model);
  if (!policy.providers.includes(provider)) throw new DomainError('invalid_command', `${what} ${model}: unknown provider ${provider} (configured: ${policy.providers.join(', ')})`, { model, reason: 'unknown_model' });
  const price = policy.prices[model];
  if (!price) throw new DomainError('invalid_command', `${what} ${model}: the price table has no price for it (AGORA_MODEL_PRICES)`, { model, reason: 'no_price' });
  return price;
}

export interface ResolvedProposal {
  panel: Panelist[];
  arbiter: { model: string; provider: string };
  fallbackArbiter: { model: string; provider: string } | null;
  excluded: { model: string; reason: string }[];
  rules: ChamberRules;
  maxCost: number;
  costCeiling: number;
  currency: string;
  approvalExpiresAt: string;
}

/** The worst case of a session: every call at its cap, each step attempted `stepAttempts` times, the fallback arbiter too. */
export function sessionMaxCost(question: string, context: string, panel: readonly string[], arbiters: readonly string[], prices: ChamberPolicy['prices'], rules: Pick<ChamberRules, 'maxOutputTokens' | 'stepAttempts' | 'crossExamination'>): number {
  const base = question.length + context.length + PROMPT_OVERHEAD_CHARS;
  const answerChars = rules.maxOutputTokens * 4;
  let total = 0;
  for (const model of panel) {
    const price = prices[model]!;
    total += callMaxCost(price, base, rules.maxOutputTokens);
    if (rules.crossExamination) total += callMaxCost(price, base + (panel.length - 1) * answerChars + answerChars, rules.maxOutputTokens);
  }
  for (const model of arbiters) total += callMaxCost(prices[model]!, base + panel.length * answerChars, rules.maxOutputTokens);
  return Math.round(total * rules.stepAttempts * 1_000_000) / 1_000_000;
}

/** The panel after recusal: under exclude_provider, without the models of the arbiter's provider. */
export function recusedPanel(wanted: readonly string[], arbiter: string, recusal: ChamberPolicy['recusal']): { panel: string[]; excluded: { model: string; reason: string }[] } {
  if (recusal !== 'exclude_provider') return { panel: [...wanted], excluded: [] };
  const panel = wanted.filter((m) => providerOf(m) !== providerOf(arbiter));
  const excluded = wanted.filter((m) => !panel.includes(m)).map((model) => ({ model, reason: `same provider as the arbiter ${arbiter} (recusal: exclude_provider)` }));
  return { panel, excluded };
}

/**
 * What makes the configured panel unusable before any proposal, in one line, or undefined: under
 * exclude_provider, the default panel without the arbiter's provider (and, with rotate, any pool
 * arbiter's) must keep 3 distinct providers, or every proposal would be refused panel_too_small.
 */
export function panelProblem(policy: Pick<ChamberPolicy, 'panel' | 'arbiter' | 'recusal'>): string | undefined {
  if (policy.recusal !== 'exclude_provider') return undefined;
  const { panel } = recusedPanel(policy.panel, policy.arbiter, policy.recusal);
  const providers = [...new Set(panel.map(providerOf))];
  if (providers.length >= 3) return undefined;
  return `recusal exclude_provider leaves the panel ${providers.length} provider${providers.length === 1 ? '' : 's'} (${providers.join(', ') || 'none'}) once the arbiter's provider ${providerOf(policy.arbiter)} is excluded, and 3 are needed: add panel models of other providers, or choose recusal monitor or rotate`;
}

/** Text length in characters as the limits count them: Unicode code points ("é" and "😀" are one each). */
export const charCount = (text: string): number => {
  let n = 0;
  for (const _ of text) n++;
  return n;
};

export function resolveProposal(payload: PayloadOf<typeof ProposeChamberSession>, policy: ChamberPolicy, now: string, seed: number): ResolvedProposal {
  const questionChars = charCount(payload.question);
  const contextChars = charCount(payload.context);
  if (questionChars > policy.maxQuestionChars) throw new DomainError('invalid_command', `the question has ${questionChars} characters, more than the limit of ${policy.maxQuestionChars}`, { reason: 'question_too_long', limit: policy.maxQuestionChars });
  if (contextChars > policy.maxContextChars) throw new DomainError('invalid_command', `the context has ${contextChars} characters, more than the limit of ${policy.maxContextChars}`, { reason: 'context_too_long', limit: policy.maxContextChars });
  const wanted = payload.panel ?? [...policy.panel];
  if (new Set(wanted).size !== wanted.length) throw new DomainError('invalid_command', 'the panel lists a model twice', { reason: 'duplicate_model' });
  for (const model of wanted) checkModel(policy, model, 'panel model');
  let arbiter = payload.arbiter ?? policy.arbiter;
  if (payload.arbiter === undefined && policy.recusal === 'rotate' && policy.arbiterPool.length > 0) {
    arbiter = policy.arbiterPool[Math.floor(drawOf(seed, 'arbiter') * policy.arbiterPool.length)]!;
  }
  checkModel(policy, arbiter, 'arbiter');
  const fallback = payload.fallbackArbiter === undefined ? policy.fallbackArbiter : payload.fallbackArbiter;
  if (fallback !== null) checkModel(policy, fallback, 'fallback arbiter');
  const { panel, excluded } = recusedPanel(wanted, arbiter, policy.recusal);
  const providers = new Set(panel.map(providerOf));
  if (providers.size < 3) {
    throw new DomainError('invalid_command', `the panel has ${providers.size} distinct provider${providers.size === 1 ? '' : 's'} (${[...providers].join(', ') || 'none'}); at least 3 are needed`, { reason: 'panel_too_small', providers: [...providers] });
  }
  const rules: ChamberRules = {
    divergenceThreshold: policy.divergenceThreshold,
    crossExamination: policy.crossExamination,
    minPanelists: policy.minPanelists,
    maxOutputTokens: policy.maxOutputTokens,
    stepAttempts: policy.stepAttempts,
    recusal: policy.recusal,
  };
  const costCeiling = payload.costCeiling ?? policy.sessionCeiling;
  if (costCeiling > policy.sessionCeiling) throw new DomainError('invalid_command', `a cost ceiling of ${costCeiling} ${policy.currency} is above the per-session ceiling of ${policy.sessionCeiling} ${policy.currency}`, { reason: 'ceiling_too_high' });
  const maxCost = sessionMaxCost(payload.question, payload.context, panel, fallback === null ? [arbiter] : [arbiter, fallback], policy.prices, rules);
  if (maxCost > costCeiling) {
    throw new DomainError('invalid_command', `the session could cost up to ${maxCost} ${policy.currency}, more than its ceiling of ${costCeiling} ${policy.currency} (shorten the question or context, or lower maxOutputTokens)`, { reason: 'over_ceiling', maxCost, costCeiling });
  }
  return {
    panel: panel.map((model, index) => ({ index, model, provider: providerOf(model) })),
    arbiter: { model: arbiter, provider: providerOf(arbiter) },
    fallbackArbiter: fallback === null ? null : { model: fallback, provider: providerOf(fallback) },
    excluded,
    rules,
    maxCost,
    costCeiling,
    currency: policy.currency,
    approvalExpiresAt: new Date(Date.parse(now) + policy.approvalTtlMs).toISOString(),
  };
}
