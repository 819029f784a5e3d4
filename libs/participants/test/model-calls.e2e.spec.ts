/**
 * A participant's model calls in the log (design decision 9), as an operator runs it: Agora's
 * standalone process, the participant in processes of its own (an Agora client over the gateway,
 * recordedModelCalls over the provider layer), the model a stand-in speaking OpenAI's wire API.
 * A call is reserved against the agent's budget, made, and recorded; a restarted participant
 * asking for the same call id gets the recorded outcome without a second request; a participant
 * SIGKILLed mid-call leaves a reservation that the next start settles as interrupted, at its maximum
 * cost, without calling again; a call over the budget is refused before any request. The log ends
 * audited by `agora audit`: 0 findings, every call attributed to its agent and budget.
 */
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair } from '@agora/identity';
import { StandIns } from '@agora/providers';
import { Agora } from '@agora/sdk';
import { runToCompletion, startAgoraProcess, waitFor, type AgoraProcess } from '@agora/testing';

const CALLER = 'libs/participants/test/support/call-model.ts';
const MODEL = 'openai:gpt-4.1';

describe("a participant's model calls, reserved and recorded in the log (e2e)", () => {
  let dir: string;
  let agora: AgoraProcess;
  let url: string;
  let root: Agora;
  let stands: StandIns;
  const keyFile = (agentId: string) => join(dir, `${agentId}.key.json`);
  /** The participant's settings: the gateway, its key, the call, and the providers pointed at the stand-ins. */
  const env = (agentId: string, callId: string, prompt: string) => ({
    ...stands.env,
    AGORA_PROVIDER_TIMEOUT_MS: '600000',
    AGORA_PROVIDER_MAX_ATTEMPTS: '1',
    AGORA_URL: url,
    AGENT_KEY_FILE: keyFile(agentId),
    CALL_ID: callId,
    CALL_MODEL: MODEL,
    CALL_PROMPT: prompt,
  });
  const openai = () => stands.servers.openai.requests;

  /** One participant process making one call: its last line, parsed. */
  async function callOnce(agentId: string, callId: string, prompt = 'Proposal p-1: ship the SDK on Friday.') {
    const run = await runToCompletion(CALLER, [], env(agentId, callId, prompt), 120_000);
    const outcome = /^outcome (.*)$/m.exec(run.stdout)?.[1];
    const refused = /^refused (\S+) (\{.*?\}) /m.exec(run.stdout);
    return { code: run.code, outcome: outcome === undefined ? undefined : (JSON.parse(outcome) as Record<string, unknown>), refused: refused ? { code: refused[1], details: JSON.parse(refused[2]!) as Record<string, unknown> } : undefined, output: run.stdout + run.stderr };
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-model-calls-e2e-'));
    stands = await StandIns.start((request) =>
      /hang/.test(request.prompt) ? { json: { verdict: 'approve', reasoning: 'too late' }, delayMs: 600_000 } : { json: { verdict: 'object', reasoning: 'Friday deploys have no rollback owner' }, usage: { input: 420, output: 35 } },
    );
    agora = await startAgoraProcess('apps/standalone/src/main.ts', 'agora', { AGORA_DATA_DIR: join(dir, 'data'), PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0' });
    url = /gateway listening on (http:\/\/[^\s]+) /.exec(agora.output())![1]!;
    root = await Agora.connect({ url, signer: { keyFile: join(dir, 'data', 'operator.key.json') } });
    for (const agentId of ['harbinger', 'zealot', 'heretic']) {
      const key = generateKeyPair();
      writeFileSync(keyFile(agentId), JSON.stringify({ agentId, ...key }), { mode: 0o600 });
      await root.send('RegisterAgent', { agentId, publicKey: key.publicKey, displayName: agentId, roles: ['reviewer'], constitutions: ['risk'], specializations: [], trustScore: 500 });
    }
    await root.send('SetModelBudget', { agentId: 'harbinger', amount: 0.05, currency: 'USD' });
    await root.send('SetModelBudget', { agentId: 'zealot', amount: 0.0005, currency: 'USD', note: 'less than one call' });
  }, 120_000);

  afterAll(async () => {
    await root?.close();
    await agora?.stop();
    await stands?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('reserves the call, makes it once against the stand-in, records its outcome; a restarted participant gets it from the log', async () => {
    const first = await callOnce('harbinger', 'review-p-1-r1');
    expect(first).toMatchObject({ code: 0, outcome: { ok: true, replayed: false, output: { verdict: 'object', reasoning: 'Friday deploys have no rollback owner' }, usage: { inputTokens: 420, outputTokens: 35 } } });
    expect(openai()).toHaveLength(1);
    const call = await root.query('GetModelCall', { agentId: 'harbinger', callId: 'review-p-1-r1' });
    expect(call).toMatchObject({ status: 'completed', model: MODEL, purpose: 'review proposal p-1 round 1', outcome: { ok: true, text: JSON.stringify({ verdict: 'object', reasoning: 'Friday deploys have no rollback owner' }), cost: first.outcome!['cost'] } });
    expect(call.maxCost).toBeGreaterThanOrEqual(call.outcome!.cost);

    // A new process, a new client, the same call id: the recorded outcome, no second request.
    const again = await callOnce('harbinger', 'review-p-1-r1');
    expect(again).toMatchObject({ code: 0, outcome: { ok: true, replayed: true, output: first.outcome!['output'], cost: first.outcome!['cost'], text: first.outcome!['text'] } });
    expect(openai()).toHaveLength(1);
  }, 240_000);

  it('a participant SIGKILLed mid-call: the next start settles the call as interrupted at its maximum cost and calls nothing again', async () => {
    const hanging = await startAgoraProcess(CALLER, 'participant', env('harbinger', 'review-p-2-r1', 'Proposal p-2: hang on'));
    await waitFor(async () => openai().length === 2, 'the call to reach the stand-in', 60_000);
    const reserved = await root.query('GetModelCall', { agentId: 'harbinger', callId: 'review-p-2-r1' });
    expect(reserved).toMatchObject({ status: 'reserved', outcome: null });
    await hanging.kill();

    const restarted = await callOnce('harbinger', 'review-p-2-r1', 'Proposal p-2: hang on');
    expect(restarted).toMatchObject({ code: 0, outcome: { ok: false, replayed: true, cost: reserved.maxCost, error: { kind: 'interrupted', message: expect.stringMatching(/^the test participant stopped while this call was in flight/) } } });
    expect(openai()).toHaveLength(2);
    const ledger = await root.query('GetModelLedger', { agentId: 'harbinger' });
    expect(ledger.ledger).toMatchObject({ calls: { total: 2, completed: 1, interrupted: 1, reserved: 0 }, reserved: 0 });
    expect(ledger.ledger.spent).toBeCloseTo(ledger.calls.reduce((sum, c) => sum + c.outcome!.cost, 0), 6);
    expect(ledger.calls.map((c) => [c.callId, c.status])).toEqual([
      ['review-p-1-r1', 'completed'],
      ['review-p-2-r1', 'interrupted'],
    ]);
  }, 240_000);

  it('refuses a call over the budget, or with no budget, before any request to the provider', async () => {
    const over = await callOnce('zealot', 'review-p-1-r1');
    expect(over).toMatchObject({ code: 2, refused: { code: 'illegal_state', details: { reason: 'over_budget', budget: 0.0005 } } });
    const none = await callOnce('heretic', 'review-p-1-r1');
    expect(none).toMatchObject({ code: 2, refused: { code: 'illegal_state', details: { reason: 'no_budget' } } });
    expect(openai()).toHaveLength(2);
    expect((await root.query('GetModelLedger', { agentId: 'zealot' })).ledger).toMatchObject({ spent: 0, reserved: 0, calls: { total: 0 } });
  }, 240_000);

  it('leaves a log that agora audit verifies, every model call attributed to its agent and budget', async () => {
    await root.close();
    await agora.stop();
    const audit = await runToCompletion('apps/cli/src/main.ts', ['audit', '--workers', '0'], { AGORA_DATA_DIR: join(dir, 'data'), AGORA_OPERATOR_KEY_FILE: join(dir, 'data', 'operator.key.json') }, 120_000);
    expect({ code: audit.code, findings: audit.stdout.split('\n').filter((l) => /@\d+ \(position/.test(l)) }).toEqual({ code: 0, findings: [] });
    expect(audit.stdout).toMatch(/^ {2}harbinger +model_calls-harbinger@\d{4}-\d{2} {2}2 {2}1 {2}0 {2}[0-9.]+ \/ 0\.05 USD$/m);
    expect(audit.stdout).toMatch(/^ {2}model_calls +\d+ +\d+ +0$/m);
  }, 150_000);
});
