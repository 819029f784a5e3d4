/**
 * recordedModelCalls in one process, against the registry over the in-process transport and an
 * embedded store (real store, real command gate), the model a stand-in speaking Anthropic's wire
 * API: one call id asked for twice at once is called once; a recorded structured answer that no
 * longer fits the request's schema comes back as invalid_output, not as an invented value; a call
 * without a budget refused before any request.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandByType, type CommandResult, type Reply } from '@agora/contracts';
import { createSignedCommand, generateKeyPair } from '@agora/identity';
import { DEFAULT_PRICES, ProviderLayer, StandInServer } from '@agora/providers';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test only: the registry that keeps the ledgers, as standalone mode wires it.
import { startRegistryService } from '@agora/registry';
import { openServiceContext, startAll, type Running, type ServiceContext } from '@agora/runtime';
import { Agora, MessagingTransport } from '@agora/sdk';
import { embeddedAgora, waitFor } from '@agora/testing';
import { z } from 'zod';
import { recordedModelCalls } from '../src/index.js';

const MODEL = 'anthropic:claude-sonnet-4-20250514';
const Vote = z.object({ decision: z.enum(['approve', 'deny']), confidence: z.number() }).strict();

describe('recordedModelCalls in one process (int)', () => {
  let dir: string;
  let context: ServiceContext;
  let running: Running;
  let stand: StandInServer;
  let release: () => void = () => undefined;
  const root = generateKeyPair();
  const aegis = generateKeyPair();

  const send = (type: string, payload: Record<string, unknown>) =>
    context.client.request(commandByType(type)!.subject, createSignedCommand({ type, actor: 'root', payload, secretKey: root.secretKey }), { timeoutMs: 10_000 }) as Promise<Reply<CommandResult>>;
  const layer = () => new ProviderLayer({ providers: [{ id: 'anthropic', kind: 'anthropic', baseUrl: stand.baseUrl, apiKeyEnv: 'ANTHROPIC_API_KEY' }], prices: { ...DEFAULT_PRICES }, currency: 'USD', timeoutMs: 30_000, maxAttempts: 1, backoffMs: 10 }, { ANTHROPIC_API_KEY: 'stand-in' });
  const calls = () => recordedModelCalls(Agora.over(new MessagingTransport(context.client), { signer: { secretKey: aegis.secretKey, agentId: 'aegis' } }), layer());

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-model-calls-int-'));
    context = await openServiceContext(embeddedAgora(dir, { agentId: 'root', publicKey: root.publicKey }));
    running = await startAll([() => startRegistryService(context, { logger: false })]);
    const gate = new Promise<void>((resolve) => (release = resolve));
    stand = await StandInServer.start('anthropic', async (request) => {
      if (/slow/.test(request.prompt)) await gate;
      return { json: { decision: 'approve', confidence: 0.8 }, usage: { input: 300, output: 20 } };
    });
    expect(await send('RegisterAgent', { agentId: 'aegis', publicKey: aegis.publicKey, displayName: 'Aegis', roles: ['validator'], specializations: ['security'] })).toMatchObject({ ok: true });
    await waitFor(async () => (await context.registry.agent('aegis')) !== undefined, 'the registry to know aegis');
  }, 60_000);

  afterAll(async () => {
    release();
    await stand?.close();
    await running?.close();
    await context?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('refuses a call with no budget before any request', async () => {
    await expect(calls().call({ callId: 'vote-0', purpose: 'vote on deploy-1', model: MODEL, prompt: 'deploy 4.2?', schema: Vote, maxOutputTokens: 100 })).rejects.toMatchObject({ code: 'illegal_state', details: { reason: 'no_budget' } });
    expect(stand.requests).toHaveLength(0);
    expect(await send('SetModelBudget', { agentId: 'aegis', amount: 1, currency: 'USD' })).toMatchObject({ ok: true });
  });

  it('calls a call id asked for twice at once only once', async () => {
    const ledger = calls();
    const request = { callId: 'vote-1', purpose: 'vote on deploy-1', model: MODEL, prompt: 'slow: deploy 4.2?', schema: Vote, maxOutputTokens: 100 };
    const first = ledger.call(request);
    const second = ledger.call(request);
    await waitFor(async () => stand.requests.length === 1, 'the call to reach the stand-in');
    release();
    const [a, b] = await Promise.all([first, second]);
    expect(a).toMatchObject({ ok: true, replayed: false, output: { decision: 'approve', confidence: 0.8 } });
    expect(b).toMatchObject({ ok: true, replayed: true, output: { decision: 'approve', confidence: 0.8 } });
    expect(stand.requests).toHaveLength(1);
    const view = await context.client.request('agora.qry.registry.model_calls.get', { agentId: 'aegis', callId: 'vote-1' }, { timeoutMs: 10_000 });
    expect(view).toMatchObject({ ok: true, result: { status: 'completed', outcome: { ok: true, usage: { inputTokens: 300, outputTokens: 20 } } } });
  });

  it('parses a recorded answer again with the schema of the request: one that no longer fits is invalid_output, never an invented value', async () => {
    const Strict = z.object({ decision: z.enum(['approve', 'deny']), confidence: z.number(), reasoning: z.string() }).strict();
    const again = await calls().call({ callId: 'vote-1', purpose: 'vote on deploy-1', model: MODEL, prompt: 'deploy 4.2?', schema: Strict, maxOutputTokens: 100 });
    expect(again).toMatchObject({ ok: false, replayed: true, error: { kind: 'invalid_output', text: JSON.stringify({ decision: 'approve', confidence: 0.8 }) } });
    const text = await calls().call({ callId: 'vote-1', purpose: 'vote on deploy-1', model: MODEL, prompt: 'deploy 4.2?', maxOutputTokens: 100 });
    expect(text).toMatchObject({ ok: true, replayed: true, output: JSON.stringify({ decision: 'approve', confidence: 0.8 }) });
    expect(stand.requests).toHaveLength(1);
  });
});
