import { RecusalPolicy } from '@agora/contracts';
import { DEFAULT_CHAMBER_RULES, panelProblem, type ChamberPolicy } from '@agora/domain-chamber';
import { ConfigError, intSetting, unitSetting } from '@agora/runtime';
import { DEFAULT_PANEL, parseModelRef, type ProvidersConfig } from './config.js';
import { ProviderLayer } from './layer.js';

// The chamber's policy is read here, beside the provider layer it is checked against, rather than in
// the chamber service: `agora audit` reads it too (for a log that recorded no chamber policy).

export const DEFAULT_ARBITER = 'anthropic:claude-sonnet-4-20250514';
export const DEFAULT_FALLBACK_ARBITER = 'openai:gpt-4.1';

export const CHAMBER_POLICY_ENV_HELP = `AGORA_CHAMBER_PANEL        panel models, comma-separated <provider>:<model>, at least 3 distinct providers
                           (default ${DEFAULT_PANEL.join(',')})
AGORA_CHAMBER_ARBITER      arbiter model (default ${DEFAULT_ARBITER})
AGORA_CHAMBER_FALLBACK_ARBITER  called when the arbiter fails; "none" for none (default ${DEFAULT_FALLBACK_ARBITER})
AGORA_CHAMBER_RECUSAL      monitor, exclude_provider or rotate (default monitor: the arbiter's own-provider
                           win share is recorded and alerted on above 50 %)
AGORA_CHAMBER_ARBITER_POOL arbiters drawn from under rotate, comma-separated (default arbiter and fallback)
AGORA_CHAMBER_DIVERGENCE_THRESHOLD  answers diverge above this score, 0 to 1 (default ${DEFAULT_CHAMBER_RULES.divergenceThreshold})
AGORA_CHAMBER_CROSS_EXAMINATION  on or off: the one round for a divergent panel (default on)
AGORA_CHAMBER_MAX_OUTPUT_TOKENS  output tokens per call at most (default ${DEFAULT_CHAMBER_RULES.maxOutputTokens})
AGORA_CHAMBER_SESSIONS_PER_DAY   sessions approved per UTC day at most (default ${DEFAULT_CHAMBER_RULES.sessionsPerDay})
AGORA_CHAMBER_MONTHLY_BUDGET     spend per UTC month, in AGORA_COST_CURRENCY (default ${DEFAULT_CHAMBER_RULES.monthlyBudget})
AGORA_CHAMBER_SESSION_CEILING    most one session may cost (default ${DEFAULT_CHAMBER_RULES.sessionCeiling})
AGORA_CHAMBER_APPROVAL_TTL_MS    how long a proposal may wait for approval (default ${DEFAULT_CHAMBER_RULES.approvalTtlMs}, 24 h)
AGORA_CHAMBER_MAX_QUESTION_CHARS question size limit (default ${DEFAULT_CHAMBER_RULES.maxQuestionChars}); context: AGORA_CHAMBER_MAX_CONTEXT_CHARS
                           (default ${DEFAULT_CHAMBER_RULES.maxContextChars})`;

function models(env: NodeJS.ProcessEnv, name: string, fallback: readonly string[]): string[] {
  const raw = env[name]?.trim();
  if (!raw) return [...fallback];
  const list = raw
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);
  for (const m of list) {
    try {
      parseModelRef(m);
    } catch (error) {
      throw new ConfigError(`${name}: ${(error as Error).message}`);
    }
  }
  return list;
}

/**
 * The chamber's policy from the environment, checked against the provider layer: every configured
 * model must have a configured provider and a price (a model missing from the price table is a
 * configuration error, reported before anything starts).
 */
export function chamberPolicyFromEnv(env: NodeJS.ProcessEnv, providers: ProvidersConfig): ChamberPolicy {
  const panel = models(env, 'AGORA_CHAMBER_PANEL', DEFAULT_PANEL);
  const [arbiter] = models(env, 'AGORA_CHAMBER_ARBITER', [DEFAULT_ARBITER]);
  const fallbackRaw = env['AGORA_CHAMBER_FALLBACK_ARBITER']?.trim();
  const fallbackArbiter = fallbackRaw === 'none' ? null : (models(env, 'AGORA_CHAMBER_FALLBACK_ARBITER', [DEFAULT_FALLBACK_ARBITER])[0] ?? null);
  const recusalRaw = env['AGORA_CHAMBER_RECUSAL']?.trim() || 'monitor';
  const recusal = RecusalPolicy.safeParse(recusalRaw);
  if (!recusal.success) throw new ConfigError(`AGORA_CHAMBER_RECUSAL=${JSON.stringify(recusalRaw)} must be monitor, exclude_provider or rotate`);
  const arbiterPool = models(env, 'AGORA_CHAMBER_ARBITER_POOL', fallbackArbiter ? [arbiter!, fallbackArbiter] : [arbiter!]);
  const cross = (env['AGORA_CHAMBER_CROSS_EXAMINATION']?.trim() || 'on').toLowerCase();
  if (cross !== 'on' && cross !== 'off') throw new ConfigError(`AGORA_CHAMBER_CROSS_EXAMINATION=${JSON.stringify(cross)} must be on or off`);
  const money = (name: string, fallback: number) => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0 || value > 1_000_000) throw new ConfigError(`${name}=${JSON.stringify(raw)} must be an amount from 0 to 1,000,000`);
    return value;
  };
  const layer = new ProviderLayer(providers, {});
  for (const [what, list] of [
    ['AGORA_CHAMBER_PANEL', panel],
    ['AGORA_CHAMBER_ARBITER', [arbiter!]],
    ['AGORA_CHAMBER_FALLBACK_ARBITER', fallbackArbiter ? [fallbackArbiter] : []],
    ['AGORA_CHAMBER_ARBITER_POOL', arbiterPool],
  ] as const) {
    for (const model of list) {
      try {
        layer.check(model);
      } catch (error) {
        throw new ConfigError(`${what}: ${(error as Error).message}`);
      }
    }
  }
  const policy: ChamberPolicy = {
    panel,
    arbiter: arbiter!,
    fallbackArbiter,
    arbiterPool,
    recusal: recusal.data,
    divergenceThreshold: unitSetting(env, 'AGORA_CHAMBER_DIVERGENCE_THRESHOLD', DEFAULT_CHAMBER_RULES.divergenceThreshold),
    crossExamination: cross === 'on',
    minPanelists: DEFAULT_CHAMBER_RULES.minPanelists,
    maxOutputTokens: intSetting(env, 'AGORA_CHAMBER_MAX_OUTPUT_TOKENS', DEFAULT_CHAMBER_RULES.maxOutputTokens, { min: 64, max: 32_000, what: 'a number of tokens from 64 to 32,000' }),
    stepAttempts: DEFAULT_CHAMBER_RULES.stepAttempts,
    maxQuestionChars: intSetting(env, 'AGORA_CHAMBER_MAX_QUESTION_CHARS', DEFAULT_CHAMBER_RULES.maxQuestionChars, { min: 100, max: 100_000, what: 'a number of characters from 100 to 100,000' }),
    maxContextChars: intSetting(env, 'AGORA_CHAMBER_MAX_CONTEXT_CHARS', DEFAULT_CHAMBER_RULES.maxContextChars, { min: 0, max: 500_000, what: 'a number of characters from 0 to 500,000' }),
    approvalTtlMs: intSetting(env, 'AGORA_CHAMBER_APPROVAL_TTL_MS', DEFAULT_CHAMBER_RULES.approvalTtlMs, { min: 1_000, max: 30 * 86_400_000, what: 'a duration in ms from 1,000 to 30 days' }),
    sessionCeiling: money('AGORA_CHAMBER_SESSION_CEILING', DEFAULT_CHAMBER_RULES.sessionCeiling),
    sessionsPerDay: intSetting(env, 'AGORA_CHAMBER_SESSIONS_PER_DAY', DEFAULT_CHAMBER_RULES.sessionsPerDay, { min: 1, max: 10_000, what: 'a number of sessions from 1 to 10,000' }),
    monthlyBudget: money('AGORA_CHAMBER_MONTHLY_BUDGET', DEFAULT_CHAMBER_RULES.monthlyBudget),
    currency: providers.currency,
    providers: providers.providers.map((p) => p.id),
    prices: providers.prices,
  };
  const problem = panelProblem(policy);
  if (problem) throw new ConfigError(`AGORA_CHAMBER_RECUSAL=exclude_provider with AGORA_CHAMBER_PANEL and AGORA_CHAMBER_ARBITER: ${problem}`);
  return policy;
}
