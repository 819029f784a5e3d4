import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { ConfigError } from '@agora/runtime';
import { failed, inSpan, SpanKind, tracingOn } from '@agora/tracing';
import { APICallError, generateText, NoObjectGeneratedError, Output, type LanguageModel, type LanguageModelUsage } from 'ai';
import type { z } from 'zod';
import { modelRefText, parseModelRef, type ModelPrice, type ModelRef, type ProviderEndpoint, type ProvidersConfig } from './config.js';

/** Tokens of one call (0 when the provider did not say). */
export interface CallUsage {
  inputTokens: number;
  outputTokens: number;
}

/**
 * A provider's error, as the provider gave it: the HTTP status and the body verbatim (truncated
 * to 8,000 characters), with the SDK's message (for HTTP errors, the provider's own message).
 * - `http`: the provider answered with an error status.
 * - `timeout`: no answer within the timeout (not retried: the provider may have done, and billed, the work).
 * - `network`: no connection, or it broke (retried).
 * - `invalid_output`: an answer that is not the structured output asked for (its text kept, its tokens billed).
 * - `config`: the call could not be made (no API key in the environment, unknown provider).
 * - `aborted`: the caller cancelled it.
 * - `interrupted`: only in an outcome read back from the log: the process that made the call stopped
 *   before recording its outcome (see `interruptedRecord`).
 */
export interface ProviderError {
  kind: 'http' | 'timeout' | 'network' | 'invalid_output' | 'config' | 'aborted' | 'interrupted';
  message: string;
  status?: number;
  body?: string;
  /** The text the model produced, for invalid_output. */
  text?: string;
  retryable: boolean;
}

interface CallCommon {
  /** `<provider>:<model>` as configured. */
  model: string;
  provider: string;
  /** Attempts made (1 + retries). */
  attempts: number;
  /** From the first attempt's start to the outcome, retries and backoff included. */
  latencyMs: number;
  usage: CallUsage;
  /** In the configured currency, from the price table; 0 for a call that produced nothing billable. */
  cost: number;
  /** Errors of the attempts that were retried, in order (verbatim). */
  retried: ProviderError[];
}

export interface CallSuccess<T> extends CallCommon {
  ok: true;
  /** The full text the model returned (for structured output, the JSON text), verbatim. */
  text: string;
  /** The structured output, checked against the schema (the text when no schema was given). */
  output: T;
  /** The model id the provider says answered (may be more precise than the one asked for). */
  responseModel: string | undefined;
  finishReason: string;
}

export interface CallFailure extends CallCommon {
  ok: false;
  error: ProviderError;
}

export type CallOutcome<T> = CallSuccess<T> | CallFailure;

export interface CallRequest<T> {
  /** `<provider>:<model>` or a ModelRef. */
  model: string | ModelRef;
  system?: string;
  prompt: string;
  /** Structured output: the answer must match it (the SDK's output schema, sent as the provider's JSON-schema response format). */
  schema?: z.ZodType<T>;
  /** Name and description of the structured output (some providers pass them on). */
  schemaName?: string;
  schemaDescription?: string;
  maxOutputTokens?: number;
  temperature?: number;
  /** Overrides the configured timeout of one attempt. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Where the layer sleeps between attempts and reads the clock (tests may shorten them). */
export interface LayerClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

const realClock: LayerClock = {
  now: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    }),
};

const MAX_BODY_CHARS = 8_000;
const MAX_RETRY_AFTER_MS = 30_000;

/** Cost of a call's tokens at a price, rounded to a millionth of the currency unit. */
export function costOf(price: ModelPrice, usage: CallUsage): number {
  return Math.round(usage.inputTokens * price.inputPerMTok + usage.outputTokens * price.outputPerMTok) / 1_000_000;
}

/**
 * The provider layer: one way to call a model, shared by the chamber and the debate runner.
 * Each call is a side effect with a cost; the caller records the request before `generate` and
 * the outcome after it. `generate` never throws for a provider's failure: it returns a
 * `CallFailure` with the error verbatim.
 */
export class ProviderLayer {
  private readonly endpoints: Map<string, ProviderEndpoint>;
  private readonly clock: LayerClock;

  constructor(
    readonly config: ProvidersConfig,
    private readonly env: NodeJS.ProcessEnv = process.env,
    clock: LayerClock = realClock,
  ) {
    this.endpoints = new Map(config.providers.map((p) => [p.id, p]));
    this.clock = clock;
  }

  get currency(): string {
    return this.config.currency;
  }

  /** The endpoint of a provider id (undefined if none is configured). */
  endpoint(provider: string): ProviderEndpoint | undefined {
    return this.endpoints.get(provider);
  }

  /**
   * Checks that a model can be called: a configured provider and a price. Throws ConfigError
   * (`unknown provider`, `no price`) so a caller refuses before anything is called or spent.
   */
  check(model: string | ModelRef): { ref: ModelRef; endpoint: ProviderEndpoint; price: ModelPrice } {
    const ref = typeof model === 'string' ? parseModelRef(model) : model;
    const endpoint = this.endpoints.get(ref.provider);
    if (!endpoint) throw new ConfigError(`unknown provider ${JSON.stringify(ref.provider)} in model ${modelRefText(ref)} (configured: ${[...this.endpoints.keys()].join(', ')})`);
    const price = this.config.prices[modelRefText(ref)];
    if (!price) throw new ConfigError(`model ${modelRefText(ref)} has no price in the price table (AGORA_MODEL_PRICES)`);
    return { ref, endpoint, price };
  }

  /** The price of a model (throws ConfigError as `check`). */
  price(model: string | ModelRef): ModelPrice {
    return this.check(model).price;
  }

  /** The most a call can cost: its input tokens estimated from the characters sent (one token per 3 characters, plus 50), its output at most maxOutputTokens. */
  maxCost(model: string | ModelRef, promptChars: number, maxOutputTokens: number): number {
    return costOf(this.price(model), { inputTokens: Math.ceil(promptChars / 3) + 50, outputTokens: maxOutputTokens });
  }

  /** Whether the endpoint's API key is in the environment (the value itself is never returned). */
  hasKey(provider: string): boolean {
    const endpoint = this.endpoints.get(provider);
    if (!endpoint) return false;
    return !endpoint.apiKeyEnv || Boolean(this.env[endpoint.apiKeyEnv]);
  }

  private languageModel(ref: ModelRef, endpoint: ProviderEndpoint): LanguageModel {
    const apiKey = endpoint.apiKeyEnv ? this.env[endpoint.apiKeyEnv] : undefined;
    if (endpoint.apiKeyEnv && !apiKey) throw new ConfigError(`${endpoint.apiKeyEnv} is not set: provider ${endpoint.id} cannot be called`);
    const baseURL = endpoint.baseUrl;
    switch (endpoint.kind) {
      case 'openai':
        // Chat completions, the wire API every OpenAI-compatible server also speaks.
        return createOpenAI({ apiKey, ...(baseURL ? { baseURL } : {}) }).chat(ref.model);
      case 'anthropic':
        return createAnthropic({ apiKey, ...(baseURL ? { baseURL } : {}) })(ref.model);
      case 'google':
        return createGoogleGenerativeAI({ apiKey, ...(baseURL ? { baseURL } : {}) })(ref.model);
      case 'openai-compatible':
        return createOpenAICompatible({ name: endpoint.id, baseURL: baseURL!, ...(apiKey ? { apiKey } : {}), supportsStructuredOutputs: true })(ref.model);
    }
  }

  /**
   * Calls a model once (with retries on transient errors) and returns its outcome; never throws for
   * a provider's failure. With tracing on, the call is a GenAI client span (`chat <model>`, the
   * gen_ai.* semantic-convention attributes: provider, model asked for and answering, tokens,
   * finish reason, error type; `agora.gen_ai.cost` in `agora.gen_ai.currency`, attempts): never
   * the prompt or the answer.
   */
  generate<T = string>(request: CallRequest<T>): Promise<CallOutcome<T>> {
    if (!tracingOn()) return this.call(request);
    const asked = typeof request.model === 'string' ? request.model : modelRefText(request.model);
    const model = asked.includes(':') ? asked.slice(asked.indexOf(':') + 1) : asked;
    const attributes = { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': model, ...(request.maxOutputTokens === undefined ? {} : { 'gen_ai.request.max_tokens': request.maxOutputTokens }), ...(request.temperature === undefined ? {} : { 'gen_ai.request.temperature': request.temperature }) };
    return inSpan(`chat ${model}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      const outcome = await this.call(request);
      span?.setAttributes({
        'gen_ai.provider.name': outcome.provider,
        'gen_ai.usage.input_tokens': outcome.usage.inputTokens,
        'gen_ai.usage.output_tokens': outcome.usage.outputTokens,
        'agora.gen_ai.cost': outcome.cost,
        'agora.gen_ai.currency': this.currency,
        'agora.gen_ai.attempts': outcome.attempts,
        'agora.gen_ai.latency_ms': outcome.latencyMs,
      });
      if (outcome.ok) {
        span?.setAttribute('gen_ai.response.finish_reasons', [outcome.finishReason]);
        if (outcome.responseModel !== undefined) span?.setAttribute('gen_ai.response.model', outcome.responseModel);
      } else {
        failed(span, outcome.error.status === undefined ? outcome.error.kind : String(outcome.error.status));
      }
      return outcome;
    });
  }

  private async call<T>(request: CallRequest<T>): Promise<CallOutcome<T>> {
    const started = this.clock.now();
    const refText = typeof request.model === 'string' ? request.model : modelRefText(request.model);
    const zero = { inputTokens: 0, outputTokens: 0 };
    let resolved: ReturnType<ProviderLayer['check']>;
    let model: LanguageModel;
    try {
      resolved = this.check(request.model);
      model = this.languageModel(resolved.ref, resolved.endpoint);
    } catch (error) {
      const ref = refText.includes(':') ? refText.slice(0, refText.indexOf(':')) : refText;
      return { ok: false, model: refText, provider: ref, attempts: 0, latencyMs: 0, usage: zero, cost: 0, retried: [], error: { kind: 'config', message: (error as Error).message, retryable: false } };
    }
    const { ref, price } = resolved;
    const retried: ProviderError[] = [];
    const common = () => ({ model: modelRefText(ref), provider: ref.provider, attempts: retried.length + 1, latencyMs: Math.round(this.clock.now() - started), retried: [...retried] });
    for (let attempt = 1; ; attempt++) {
      const timeoutMs = request.timeoutMs ?? this.config.timeoutMs;
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
      try {
        const result = await generateText({
          model,
          ...(request.system === undefined ? {} : { system: request.system }),
          prompt: request.prompt,
          ...(request.schema ? { output: Output.object({ schema: request.schema, ...(request.schemaName ? { name: request.schemaName } : {}), ...(request.schemaDescription ? { description: request.schemaDescription } : {}) }) } : {}),
          ...(request.maxOutputTokens === undefined ? {} : { maxOutputTokens: request.maxOutputTokens }),
          ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
          maxRetries: 0,
          abortSignal: signal,
        });
        const usage = usageOf(result.usage);
        return {
          ok: true,
          ...common(),
          usage,
          cost: costOf(price, usage),
          text: result.text,
          output: (request.schema ? result.output : result.text) as T,
          responseModel: result.response?.modelId,
          finishReason: String(result.finishReason),
        };
      } catch (thrown) {
        const error = providerError(thrown, timeout.aborted, request.signal?.aborted ?? false, timeoutMs);
        const usage = NoObjectGeneratedError.isInstance(thrown) && thrown.usage ? usageOf(thrown.usage) : zero;
        if (!error.retryable || attempt >= this.config.maxAttempts) {
          return { ok: false, ...common(), usage, cost: costOf(price, usage), error };
        }
        retried.push(error);
        await this.clock.sleep(backoff(this.config.backoffMs, attempt, thrown), request.signal);
        if (request.signal?.aborted) return { ok: false, ...common(), usage: zero, cost: 0, error: { kind: 'aborted', message: 'the call was cancelled', retryable: false } };
      }
    }
  }
}

function usageOf(usage: LanguageModelUsage): CallUsage {
  return { inputTokens: usage.inputTokens ?? 0, outputTokens: usage.outputTokens ?? 0 };
}

function truncated(body: string | undefined): string | undefined {
  if (body === undefined) return undefined;
  return body.length > MAX_BODY_CHARS ? `${body.slice(0, MAX_BODY_CHARS)}…(${body.length - MAX_BODY_CHARS} more characters)` : body;
}

const TRANSIENT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);

function causeCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The error as recorded: verbatim from the provider, classified transient or not. */
export function providerError(thrown: unknown, timedOut: boolean, aborted: boolean, timeoutMs: number): ProviderError {
  if (aborted) return { kind: 'aborted', message: 'the call was cancelled', retryable: false };
  if (timedOut) return { kind: 'timeout', message: `no answer within ${timeoutMs} ms`, retryable: false };
  if (APICallError.isInstance(thrown)) {
    if (thrown.statusCode === undefined) {
      const code = causeCode(thrown.cause);
      return { kind: 'network', message: code ? `${thrown.message} (${code})` : thrown.message, retryable: code === undefined || TRANSIENT_CODES.has(code) };
    }
    const status = thrown.statusCode;
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    const body = truncated(thrown.responseBody);
    return { kind: 'http', status, message: thrown.message, ...(body === undefined ? {} : { body }), retryable };
  }
  if (NoObjectGeneratedError.isInstance(thrown)) {
    const text = truncated(thrown.text);
    return { kind: 'invalid_output', message: thrown.message, ...(text === undefined ? {} : { text }), retryable: false };
  }
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  const code = causeCode(thrown);
  if (code && TRANSIENT_CODES.has(code)) return { kind: 'network', message: `${message} (${code})`, retryable: true };
  return { kind: 'network', message, retryable: false };
}

function backoff(baseMs: number, attempt: number, thrown: unknown): number {
  const exponential = baseMs * 2 ** (attempt - 1);
  if (APICallError.isInstance(thrown)) {
    const header = thrown.responseHeaders?.['retry-after'];
    const seconds = header === undefined ? NaN : Number(header);
    if (Number.isFinite(seconds) && seconds > 0) return Math.min(Math.max(exponential, seconds * 1000), MAX_RETRY_AFTER_MS);
  }
  return Math.min(exponential, MAX_RETRY_AFTER_MS);
}
