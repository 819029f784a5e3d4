/** The fleet's calls through the provider layer, against a stand-in speaking OpenAI's wire API: once per call id, within the budget. */
import { DEFAULT_PRICES, ProviderLayer, StandInServer } from '@agora/providers';
import { z } from 'zod';
import { unrecordedModelCalls } from '../src/index.js';

describe('model calls straight through the provider layer', () => {
  let server: StandInServer;
  let layer: ProviderLayer;
  beforeAll(async () => {
    server = await StandInServer.start('openai', () => ({ json: { answer: 'yes' }, usage: { input: 1000, output: 100 } }));
    layer = new ProviderLayer({ providers: [{ id: 'openai', kind: 'openai', baseUrl: server.baseUrl, apiKeyEnv: 'OPENAI_API_KEY' }], prices: { ...DEFAULT_PRICES }, currency: 'USD', timeoutMs: 10_000, maxAttempts: 1, backoffMs: 10 }, { OPENAI_API_KEY: 'stand-in' });
  });
  afterAll(() => server?.close());

  const request = (callId: string) => ({ callId, purpose: 'a test', model: 'openai:gpt-4.1', prompt: 'Say yes', schema: z.object({ answer: z.string() }), maxOutputTokens: 100 });

  it('calls once per call id: a repeat is answered with the first outcome, marked replayed', async () => {
    const calls = unrecordedModelCalls(layer);
    const first = await calls.call(request('a'));
    const again = await calls.call(request('a'));
    expect(first).toMatchObject({ ok: true, output: { answer: 'yes' }, replayed: false, cost: 0.0028 });
    expect(again).toMatchObject({ ok: true, output: { answer: 'yes' }, replayed: true });
    expect(server.requests).toHaveLength(1);
    await calls.call(request('b'));
    expect(server.requests).toHaveLength(2);
    expect(calls.spent()).toBeCloseTo(0.0056, 9);
  });

  it('refuses a call its worst case would take past the budget, without calling', async () => {
    const before = server.requests.length;
    // Worst case of one call: (ceil(7/3)+50) input tokens at 2 USD/MTok and 100 output tokens at 8 USD/MTok = 0.000906 USD.
    const calls = unrecordedModelCalls(layer, { budget: 0.0035 });
    expect(await calls.call(request('c'))).toMatchObject({ ok: true });
    const refused = await calls.call(request('d'));
    expect(refused).toMatchObject({ ok: false, cost: 0, error: { kind: 'config', message: expect.stringMatching(/^budget exhausted: 0.0028 spent and 0 reserved of 0.0035 USD/) } });
    expect(server.requests.length).toBe(before + 1);
    expect(await calls.call({ ...request('e'), model: 'openai:no-such-model' })).toMatchObject({ ok: false, error: { kind: 'config', message: expect.stringMatching(/no price/) } });
  });
});
