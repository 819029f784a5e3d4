// Model calls as GenAI spans (the OpenTelemetry semantic conventions' gen_ai.* attributes), with the
// SDK's in-memory exporter, against a stand-in server speaking the provider's real wire API.
import { useTracerProvider } from '@agora/tracing';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { ProviderLayer, StandIns, type ProvidersConfig } from '../src/index.js';

describe('model calls traced', () => {
  let stands: StandIns;
  let config: ProvidersConfig;
  const env = { OPENAI_API_KEY: 'sk-test', ANTHROPIC_API_KEY: 'sk-test', GOOGLE_GENERATIVE_AI_API_KEY: 'sk-test' };
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

  beforeAll(async () => {
    provider.register();
    useTracerProvider(provider);
    stands = await StandIns.start();
    config = { providers: stands.providers, prices: { 'anthropic:claude-sonnet-4-20250514': { inputPerMTok: 3, outputPerMTok: 15 } }, currency: 'USD', timeoutMs: 5_000, maxAttempts: 2, backoffMs: 10 };
  });
  afterAll(async () => {
    useTracerProvider(undefined);
    await provider.shutdown();
    await stands.close();
  });
  beforeEach(() => exporter.reset());

  it('a call is a client span with the model, the tokens, the cost and the finish reason, never the prompt or the answer', async () => {
    stands.servers.anthropic.script(() => ({ text: 'the secret answer', usage: { input: 1200, output: 300 } }));
    const outcome = await new ProviderLayer(config, env).generate({ model: 'anthropic:claude-sonnet-4-20250514', prompt: 'the secret prompt', maxOutputTokens: 400 });
    expect(outcome.ok).toBe(true);
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('chat claude-sonnet-4-20250514');
    expect(span?.kind).toBe(2); // client
    expect(span?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-sonnet-4-20250514',
      'gen_ai.request.max_tokens': 400,
      'gen_ai.usage.input_tokens': 1200,
      'gen_ai.usage.output_tokens': 300,
      'agora.gen_ai.cost': outcome.cost,
      'agora.gen_ai.currency': 'USD',
      'agora.gen_ai.attempts': 1,
    });
    expect(outcome.cost).toBeCloseTo((1200 * 3 + 300 * 15) / 1e6, 9);
    expect(span?.attributes['gen_ai.response.finish_reasons']).toEqual([expect.any(String)]);
    expect(JSON.stringify(span?.attributes)).not.toMatch(/secret/);
  });

  it("a provider's error marks the span as failed with its status", async () => {
    stands.servers.anthropic.script(() => ({ status: 400, message: 'max_tokens: must be at most 8192' }));
    const outcome = await new ProviderLayer(config, env).generate({ model: 'anthropic:claude-sonnet-4-20250514', prompt: 'hi' });
    expect(outcome.ok).toBe(false);
    const [span] = exporter.getFinishedSpans();
    expect(span?.status.code).toBe(2); // error
    expect(span?.attributes['error.type']).toBe('400');
  });
});
