import { ConfigError, intSetting, jsonSetting } from '@agora/runtime';
import { z } from 'zod';

/** The wire APIs the layer speaks (each through its Vercel AI SDK provider package). */
export const PROVIDER_KINDS = ['openai', 'anthropic', 'google', 'openai-compatible'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/**
 * One provider endpoint. `id` names it in model references (`<id>:<model>`) and in the log; the
 * API key is read from the environment variable `apiKeyEnv` at call time and never stored.
 */
export interface ProviderEndpoint {
  id: string;
  kind: ProviderKind;
  /** Base URL of the API (the SDK's default when unset; OpenAI-compatible endpoints need one). */
  baseUrl?: string | undefined;
  /** Environment variable holding the API key (a keyless endpoint, e.g. a local Ollama: unset). */
  apiKeyEnv?: string | undefined;
}

/** Price of a model in the configured currency, per million tokens. */
export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
}

export interface ProvidersConfig {
  providers: ProviderEndpoint[];
  /** Price per model, keyed by model reference `<provider id>:<model>`. A model without a price cannot be called. */
  prices: Record<string, ModelPrice>;
  /** Currency of every price and cost (default USD). */
  currency: string;
  /** Timeout of one attempt, ms (default 60,000). */
  timeoutMs: number;
  /** Attempts per call, the first included (default 3); only transient errors are retried. */
  maxAttempts: number;
  /** Backoff before the second attempt, ms; doubled each further attempt (default 1,000), or the provider's retry-after when longer (at most 30 s). */
  backoffMs: number;
}

/** A model as `<provider id>:<model id>`; the model id may itself contain ':' (e.g. `ollama:llama3:8b`). */
export interface ModelRef {
  provider: string;
  model: string;
}

export const MODEL_REF_PATTERN = /^[a-z0-9][a-z0-9_-]{0,39}:[^\s]{1,200}$/;

export function parseModelRef(ref: string): ModelRef {
  if (!MODEL_REF_PATTERN.test(ref)) throw new ConfigError(`model ${JSON.stringify(ref)} must be written <provider>:<model>, e.g. openai:gpt-4.1`);
  const at = ref.indexOf(':');
  return { provider: ref.slice(0, at), model: ref.slice(at + 1) };
}

export function modelRefText(ref: ModelRef): string {
  return `${ref.provider}:${ref.model}`;
}

/** The three providers of the default panel, their usual keys, and the SDKs' default base URLs. */
export const DEFAULT_PROVIDERS: readonly ProviderEndpoint[] = [
  { id: 'openai', kind: 'openai', apiKeyEnv: 'OPENAI_API_KEY' },
  { id: 'anthropic', kind: 'anthropic', apiKeyEnv: 'ANTHROPIC_API_KEY' },
  { id: 'google', kind: 'google', apiKeyEnv: 'GOOGLE_GENERATIVE_AI_API_KEY' },
];

/** The default panel: one model of each of three distinct providers. */
export const DEFAULT_PANEL: readonly string[] = ['openai:gpt-4.1', 'anthropic:claude-sonnet-4-20250514', 'google:gemini-2.5-pro'];

/** List prices (USD per million tokens) of the default models; override or extend with AGORA_MODEL_PRICES. */
export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = {
  'openai:gpt-4.1': { inputPerMTok: 2, outputPerMTok: 8 },
  'openai:gpt-4o': { inputPerMTok: 2.5, outputPerMTok: 10 },
  'anthropic:claude-sonnet-4-20250514': { inputPerMTok: 3, outputPerMTok: 15 },
  'anthropic:claude-opus-4-20250514': { inputPerMTok: 15, outputPerMTok: 75 },
  'google:gemini-2.5-pro': { inputPerMTok: 1.25, outputPerMTok: 10 },
  'google:gemini-2.5-flash': { inputPerMTok: 0.3, outputPerMTok: 2.5 },
};

export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_ATTEMPTS = 3;
export const DEFAULT_BACKOFF_MS = 1_000;

/** Base URL overrides of the default providers, by environment variable. */
const BASE_URL_ENV: Record<string, string> = { openai: 'OPENAI_BASE_URL', anthropic: 'ANTHROPIC_BASE_URL', google: 'GOOGLE_GENERATIVE_AI_BASE_URL' };

export const PROVIDERS_ENV_HELP = `OPENAI_API_KEY             key of the openai provider (read at call time, never logged or stored)
ANTHROPIC_API_KEY          key of the anthropic provider
GOOGLE_GENERATIVE_AI_API_KEY  key of the google provider
OPENAI_BASE_URL            base URL of the openai provider (default the SDK's, https://api.openai.com/v1)
ANTHROPIC_BASE_URL         base URL of the anthropic provider (default https://api.anthropic.com/v1)
GOOGLE_GENERATIVE_AI_BASE_URL  base URL of the google provider (default .../v1beta)
AGORA_PROVIDERS            more providers, JSON (inline or @file): [{"id":"ollama","kind":"openai-compatible",
                           "baseUrl":"http://localhost:11434/v1","apiKeyEnv":"OLLAMA_API_KEY"}]; kinds: ${PROVIDER_KINDS.join(', ')}
AGORA_MODEL_PRICES         prices per million tokens, JSON (inline or @file), merged over the defaults:
                           {"ollama:llama3:8b":{"inputPerMTok":0,"outputPerMTok":0}}; a model without a price
                           cannot be used
AGORA_COST_CURRENCY        currency of prices, costs and budgets (default USD)
AGORA_PROVIDER_TIMEOUT_MS  timeout of one provider call attempt (default ${DEFAULT_TIMEOUT_MS})
AGORA_PROVIDER_MAX_ATTEMPTS  attempts per call, transient errors only (429, 408, 409, 5xx, connection
                           refused/reset) are retried (default ${DEFAULT_MAX_ATTEMPTS})
AGORA_PROVIDER_BACKOFF_MS  backoff before the first retry, doubled after (default ${DEFAULT_BACKOFF_MS})`;

const Endpoint = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'a provider id is lowercase letters, digits, _ and -'),
  kind: z.enum(PROVIDER_KINDS),
  baseUrl: z.url().optional(),
  apiKeyEnv: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/, 'apiKeyEnv names an environment variable')
    .optional(),
});
const Price = z.strictObject({ inputPerMTok: z.number().nonnegative(), outputPerMTok: z.number().nonnegative() });

function parseWith<T>(schema: z.ZodType<T>): (input: unknown) => T {
  return (input) => {
    const parsed = schema.safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(`${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
    }
    return parsed.data;
  };
}

/** Checks a configuration: distinct provider ids, an OpenAI-compatible endpoint with a base URL, well-formed prices. Throws ConfigError. */
export function checkProvidersConfig(config: ProvidersConfig): ProvidersConfig {
  const ids = new Set<string>();
  for (const p of config.providers) {
    if (ids.has(p.id)) throw new ConfigError(`provider ${p.id} is configured twice`);
    ids.add(p.id);
    if (p.kind === 'openai-compatible' && !p.baseUrl) throw new ConfigError(`provider ${p.id} (openai-compatible) needs a baseUrl`);
  }
  for (const [ref, price] of Object.entries(config.prices)) {
    parseModelRef(ref);
    if (!(price.inputPerMTok >= 0 && price.outputPerMTok >= 0)) throw new ConfigError(`price of ${ref} must be non-negative numbers`);
  }
  if (!/^[A-Z]{3}$/.test(config.currency)) throw new ConfigError(`currency ${JSON.stringify(config.currency)} must be a three-letter code such as USD`);
  return config;
}

/** The provider configuration from the environment (see PROVIDERS_ENV_HELP). Throws ConfigError naming the bad setting. */
export function providersConfigFromEnv(env: NodeJS.ProcessEnv): ProvidersConfig {
  const providers: ProviderEndpoint[] = DEFAULT_PROVIDERS.map((p) => {
    const baseUrl = env[BASE_URL_ENV[p.id] ?? '']?.trim();
    return baseUrl ? { ...p, baseUrl } : { ...p };
  });
  const extra = jsonSetting(env, 'AGORA_PROVIDERS', parseWith(z.array(Endpoint).max(50))) ?? [];
  for (const p of extra) {
    const at = providers.findIndex((q) => q.id === p.id);
    if (at >= 0) providers[at] = p;
    else providers.push(p);
  }
  const prices = { ...DEFAULT_PRICES, ...(jsonSetting(env, 'AGORA_MODEL_PRICES', parseWith(z.record(z.string(), Price))) ?? {}) };
  return checkProvidersConfig({
    providers,
    prices,
    currency: env['AGORA_COST_CURRENCY']?.trim() || 'USD',
    timeoutMs: intSetting(env, 'AGORA_PROVIDER_TIMEOUT_MS', DEFAULT_TIMEOUT_MS, { min: 100, max: 3_600_000, what: 'a timeout in ms from 100 to 3,600,000' }),
    maxAttempts: intSetting(env, 'AGORA_PROVIDER_MAX_ATTEMPTS', DEFAULT_MAX_ATTEMPTS, { min: 1, max: 10, what: 'a number of attempts from 1 to 10' }),
    backoffMs: intSetting(env, 'AGORA_PROVIDER_BACKOFF_MS', DEFAULT_BACKOFF_MS, { min: 0, max: 60_000, what: 'a backoff in ms from 0 to 60,000' }),
  });
}
