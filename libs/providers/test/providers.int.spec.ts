import { ConfigError } from '@agora/runtime';
import { z } from 'zod';
import { ProviderLayer, StandInServer, StandIns, costOf, providersConfigFromEnv, type ProvidersConfig, type StandInReply } from '../src/index.js';

const Answer = z.object({ position: z.string(), confidence: z.number() });
const SECRET = 'sk-test-secret-never-logged';

describe('the provider layer against stand-in servers speaking each provider wire API', () => {
  let stands: StandIns;
  let compatible: StandInServer;
  let config: ProvidersConfig;
  const env = { OPENAI_API_KEY: SECRET, ANTHROPIC_API_KEY: SECRET, GOOGLE_GENERATIVE_AI_API_KEY: SECRET, LOCAL_KEY: SECRET };

  beforeAll(async () => {
    stands = await StandIns.start();
    compatible = await StandInServer.start('openai-compatible');
    config = {
      providers: [...stands.providers, { id: 'local', kind: 'openai-compatible', baseUrl: compatible.baseUrl, apiKeyEnv: 'LOCAL_KEY' }],
      prices: {
        'openai:gpt-4.1': { inputPerMTok: 2, outputPerMTok: 8 },
        'anthropic:claude-sonnet-4-20250514': { inputPerMTok: 3, outputPerMTok: 15 },
        'google:gemini-2.5-pro': { inputPerMTok: 1.25, outputPerMTok: 10 },
        'local:llama3:8b': { inputPerMTok: 0, outputPerMTok: 0 },
      },
      currency: 'USD',
      timeoutMs: 5_000,
      maxAttempts: 3,
      backoffMs: 10,
    };
  });
  afterAll(async () => {
    await stands.close();
    await compatible.close();
  });
  beforeEach(() => {
    for (const s of [...Object.values(stands.servers), compatible]) s.requests.length = 0;
  });

  it.each([
    ['openai:gpt-4.1', 'openai'],
    ['anthropic:claude-sonnet-4-20250514', 'anthropic'],
    ['google:gemini-2.5-pro', 'google'],
  ] as const)('%s: structured output through the real adapter, with usage, cost and the full text', async (model, server) => {
    stands.servers[server].script(() => ({ json: { position: 'yes', confidence: 0.8 }, usage: { input: 1000, output: 500 } }));
    const layer = new ProviderLayer(config, env);
    const outcome = await layer.generate({ model, system: 'be brief', prompt: 'Should we?', schema: Answer, schemaName: 'answer' });
    if (!outcome.ok) throw new Error(JSON.stringify(outcome.error));
    expect(outcome.output).toEqual({ position: 'yes', confidence: 0.8 });
    expect(JSON.parse(outcome.text)).toEqual({ position: 'yes', confidence: 0.8 });
    expect(outcome.usage).toEqual({ inputTokens: 1000, outputTokens: 500 });
    expect(outcome.cost).toBeCloseTo(costOf(config.prices[model]!, outcome.usage), 9);
    expect(outcome.attempts).toBe(1);
    const [request] = stands.servers[server].requests;
    expect(request).toMatchObject({ prompt: 'Should we?', system: 'be brief', structured: true, authenticated: true });
    expect(JSON.stringify(outcome)).not.toContain(SECRET);
  });

  it('an OpenAI-compatible endpoint (a model id with ":") through the same layer', async () => {
    compatible.script((r) => ({ json: { position: `from ${r.model}`, confidence: 0.5 } }));
    const outcome = await new ProviderLayer(config, env).generate({ model: 'local:llama3:8b', prompt: 'hi', schema: Answer });
    expect(outcome).toMatchObject({ ok: true, output: { position: 'from llama3:8b' }, cost: 0, provider: 'local' });
  });

  it('plain text without a schema', async () => {
    stands.servers.openai.script(() => ({ text: 'just text' }));
    const outcome = await new ProviderLayer(config, env).generate({ model: 'openai:gpt-4.1', prompt: 'hi' });
    expect(outcome).toMatchObject({ ok: true, output: 'just text', text: 'just text' });
  });

  it('a client error is returned verbatim (status, provider message, body) and not retried', async () => {
    stands.servers.anthropic.script(() => ({ status: 400, message: 'max_tokens: must be at most 8192' }));
    const outcome = await new ProviderLayer(config, env).generate({ model: 'anthropic:claude-sonnet-4-20250514', prompt: 'x', schema: Answer });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error).toMatchObject({ kind: 'http', status: 400, retryable: false });
    expect(outcome.error.message).toContain('max_tokens: must be at most 8192');
    expect(JSON.parse(outcome.error.body!)).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: must be at most 8192' } });
    expect(outcome.cost).toBe(0);
    expect(stands.servers.anthropic.requests).toHaveLength(1);
  });

  it('a transient error (503) is retried with backoff, and the retried error is kept', async () => {
    stands.servers.google.script((_r, i) => (i === 0 ? { status: 503, message: 'The model is overloaded.' } : { json: { position: 'ok', confidence: 1 } }));
    const outcome = await new ProviderLayer(config, env).generate({ model: 'google:gemini-2.5-pro', prompt: 'x', schema: Answer });
    expect(outcome).toMatchObject({ ok: true, attempts: 2 });
    expect(outcome.retried).toEqual([expect.objectContaining({ kind: 'http', status: 503, message: expect.stringContaining('The model is overloaded.') })]);
    expect(stands.servers.google.requests).toHaveLength(2);
  });

  it('a rate limit that persists fails after the configured attempts, with the last error verbatim', async () => {
    stands.servers.openai.script(() => ({ status: 429, message: 'Rate limit reached for gpt-4.1' }));
    const outcome = await new ProviderLayer(config, env).generate({ model: 'openai:gpt-4.1', prompt: 'x', schema: Answer });
    expect(outcome).toMatchObject({ ok: false, attempts: 3, error: { kind: 'http', status: 429, retryable: true } });
    expect(stands.servers.openai.requests).toHaveLength(3);
  });

  it('a timeout ends the call (not retried: the provider may have billed it)', async () => {
    stands.servers.openai.script(() => ({ json: { position: 'late', confidence: 1 }, delayMs: 1_500 }));
    const outcome = await new ProviderLayer({ ...config, timeoutMs: 300 }, env).generate({ model: 'openai:gpt-4.1', prompt: 'x', schema: Answer });
    expect(outcome).toMatchObject({ ok: false, attempts: 1, error: { kind: 'timeout', message: 'no answer within 300 ms' } });
    expect(stands.servers.openai.requests).toHaveLength(1);
  });

  it('an answer that does not match the schema is invalid_output, its text kept and its tokens billed', async () => {
    stands.servers.openai.script(() => ({ json: { verdict: 'yes' }, usage: { input: 100, output: 10 } }));
    const outcome = await new ProviderLayer(config, env).generate({ model: 'openai:gpt-4.1', prompt: 'x', schema: Answer });
    expect(outcome).toMatchObject({ ok: false, error: { kind: 'invalid_output', text: '{"verdict":"yes"}', retryable: false }, usage: { inputTokens: 100, outputTokens: 10 } });
    expect(outcome.cost).toBeCloseTo((100 * 2 + 10 * 8) / 1e6, 9);
  });

  it('a missing API key is a config error and nothing is sent', async () => {
    const outcome = await new ProviderLayer(config, { ...env, OPENAI_API_KEY: '' }).generate({ model: 'openai:gpt-4.1', prompt: 'x' });
    expect(outcome).toMatchObject({ ok: false, attempts: 0, error: { kind: 'config', message: 'OPENAI_API_KEY is not set: provider openai cannot be called' } });
    expect(stands.servers.openai.requests).toHaveLength(0);
  });

  it('a refused connection is a network error, retried', async () => {
    const gone = await StandInServer.start('openai');
    const url = gone.baseUrl;
    await gone.close();
    const layer = new ProviderLayer({ ...config, providers: [{ id: 'openai', kind: 'openai', baseUrl: url, apiKeyEnv: 'OPENAI_API_KEY' }] }, env);
    const outcome = await layer.generate({ model: 'openai:gpt-4.1', prompt: 'x' });
    expect(outcome).toMatchObject({ ok: false, attempts: 3, error: { kind: 'network', retryable: true } });
  });

  it('check refuses an unknown provider and a model missing from the price table', () => {
    const layer = new ProviderLayer(config, env);
    expect(() => layer.check('mistral:large')).toThrow(new ConfigError('unknown provider "mistral" in model mistral:large (configured: openai, anthropic, google, local)'));
    expect(() => layer.check('openai:gpt-5')).toThrow(/no price/);
    expect(() => layer.check('gpt-4')).toThrow(/<provider>:<model>/);
    expect(layer.maxCost('openai:gpt-4.1', 300, 1000)).toBeCloseTo((150 * 2 + 1000 * 8) / 1e6, 9);
  });

  it('configuration from the environment: base URLs, more providers, prices merged over the defaults, bad settings named', () => {
    const fromEnv = providersConfigFromEnv({
      OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
      AGORA_PROVIDERS: '[{"id":"ollama","kind":"openai-compatible","baseUrl":"http://127.0.0.1:11434/v1"}]',
      AGORA_MODEL_PRICES: '{"ollama:llama3:8b":{"inputPerMTok":0,"outputPerMTok":0}}',
    });
    expect(fromEnv.providers.map((p) => p.id)).toEqual(['openai', 'anthropic', 'google', 'ollama']);
    expect(fromEnv.providers[0]!.baseUrl).toBe('http://127.0.0.1:1/v1');
    expect(fromEnv.prices['ollama:llama3:8b']).toEqual({ inputPerMTok: 0, outputPerMTok: 0 });
    expect(fromEnv.prices['openai:gpt-4.1']).toBeDefined();
    expect(() => providersConfigFromEnv({ AGORA_PROVIDERS: '[{"id":"x","kind":"openai-compatible"}]' })).toThrow(/needs a baseUrl/);
    expect(() => providersConfigFromEnv({ AGORA_MODEL_PRICES: '{"x:y":{"inputPerMTok":-1,"outputPerMTok":0}}' })).toThrow(/AGORA_MODEL_PRICES/);
    expect(() => providersConfigFromEnv({ AGORA_PROVIDER_TIMEOUT_MS: '0' })).toThrow(/AGORA_PROVIDER_TIMEOUT_MS/);
  });

  it('phase-style concurrency: three calls take the slowest one, not the sum', async () => {
    const slow = (ms: number): StandInReply => ({ json: { position: 'p', confidence: 1 }, delayMs: ms });
    stands.servers.openai.script(() => slow(400));
    stands.servers.anthropic.script(() => slow(400));
    stands.servers.google.script(() => slow(400));
    const layer = new ProviderLayer(config, env);
    const started = Date.now();
    const outcomes = await Promise.all(['openai:gpt-4.1', 'anthropic:claude-sonnet-4-20250514', 'google:gemini-2.5-pro'].map((model) => layer.generate({ model, prompt: 'x', schema: Answer })));
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(Date.now() - started).toBeLessThan(1_150);
  });
});
