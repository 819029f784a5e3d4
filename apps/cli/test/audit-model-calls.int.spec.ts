/**
 * `agora audit` on agents' model-call ledgers (the registry's model_calls-<agentId>@<YYYY-MM>, a
 * ledger per agent and month, the budget on model_calls-<agentId>): the ledger's commands decided
 * again (a reservation against the budget the registry carried into the month), every call attributed to its agent and budget, and what the decider
 * cannot refuse reported: an outcome that cost more than the budget left (its estimate was
 * short), and, in a log written past the command gate, an outcome recorded for a call never
 * reserved and a second outcome of a call.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandByType, type CallOutcomeRecord, type CommandResult, type Reply } from '@agora/contracts';
import { createSignedCommand, generateKeyPair, type KeyPair } from '@agora/identity';
import { startRegistryService } from '@agora/registry';
import { openServiceContext, startAll, type Running, type ServiceContext } from '@agora/runtime';
import { waitFor } from '@agora/testing';
import { auditLog } from '../src/audit/engine.js';

const keys: Record<string, KeyPair> = { root: generateKeyPair(), harbinger: generateKeyPair(), heretic: generateKeyPair() };
const answered = (cost: number): CallOutcomeRecord => ({ ok: true, text: '{"verdict":"approve"}', output: { verdict: 'approve' }, responseModel: 'gpt-4.1', finishReason: 'stop', usage: { inputTokens: 900, outputTokens: 120 }, cost, latencyMs: 700, attempts: 1, retried: [] });

let dir: string;
let context: ServiceContext;
let running: Running;

const ok = async (type: string, actor: string, payload: Record<string, unknown>): Promise<CommandResult> => {
  const reply = (await context.client.request(commandByType(type)!.subject, createSignedCommand({ type, actor, payload, secretKey: keys[actor]!.secretKey }), { timeoutMs: 10_000 })) as Reply<CommandResult>;
  if (!reply.ok) throw new Error(`${actor} ${type}: ${reply.error.code} ${reply.error.message}`);
  return reply.result;
};
const reserve = (agentId: string, callId: string, maxCost: number) => ok('ReserveModelCall', agentId, { agentId, callId, purpose: 'review proposal p-1', model: 'openai:gpt-4.1', maxCost, currency: 'USD' });
const record = (agentId: string, callId: string, outcome: CallOutcomeRecord) => ok('RecordModelCallOutcome', agentId, { agentId, callId, outcome });
const month = new Date().toISOString().slice(0, 7);
const audit = () => auditLog(context.store, { trusted: [{ agentId: 'root', publicKey: keys['root']!.publicKey, roles: ['operator'] }] });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agora-audit-model-calls-'));
  context = await openServiceContext({ store: { kind: 'embedded', directory: join(dir, 'events') }, natsUrl: undefined, dataDir: dir, operators: [{ agentId: 'root', publicKey: keys['root']!.publicKey }], maxClockSkewMs: 300_000, requestTimeoutMs: 10_000 });
  running = await startAll([() => startRegistryService(context, { logger: false })]);
  for (const agentId of ['harbinger', 'heretic']) await ok('RegisterAgent', 'root', { agentId, publicKey: keys[agentId]!.publicKey, displayName: agentId, roles: ['reviewer'] });
  await waitFor(async () => (await context.registry.agent('heretic')) !== undefined, 'the registry to know the reviewers');
  for (const agentId of ['harbinger', 'heretic']) await ok('SetModelBudget', 'root', { agentId, amount: 0.1, currency: 'USD' });
}, 30_000);

afterAll(async () => {
  await running?.close();
  await context?.close();
  await rm(dir, { recursive: true, force: true });
});

it('decides the ledgers again and attributes every call: 0 findings', async () => {
  await reserve('harbinger', 'c1', 0.01);
  await record('harbinger', 'c1', answered(0.004));
  await reserve('harbinger', 'c2', 0.01);
  await reserve('heretic', 'c1', 0.02);
  await record('heretic', 'c1', { ok: false, error: { kind: 'http', status: 429, message: 'Rate limit reached', body: '{"error":{"type":"rate_limit_exceeded"}}', retryable: true }, usage: { inputTokens: 0, outputTokens: 0 }, cost: 0, costEstimated: false, latencyMs: 50, attempts: 3, retried: [] });
  const report = await audit();
  expect(report.findings).toEqual([]);
  expect(report.protocols['model_calls']).toMatchObject({ commands: 7, findings: 0 });
  expect(report.modelCalls).toEqual([
    { caller: 'harbinger', budget: `model_calls-harbinger@${month}`, amount: 0.1, currency: 'USD', calls: 1, interrupted: 0, open: 1, spent: 0.004 },
    { caller: 'heretic', budget: `model_calls-heretic@${month}`, amount: 0.1, currency: 'USD', calls: 1, interrupted: 0, open: 0, spent: 0 },
  ]);
});

it('reports spend over the budget, an outcome with no reservation and a second outcome', async () => {
  // Accepted by the decider: the call's actual cost is what the provider billed, past its estimate and the budget.
  await record('harbinger', 'c2', answered(0.2));
  // Written past the command gate (straight into the store): what no decider would accept.
  const ledger = await context.store.readStream(`model_calls-heretic@${month}`);
  const last = ledger.at(-1)!;
  await context.store.append(`model_calls-heretic@${month}`, [
    { type: 'ModelCallRecorded', data: { agentId: 'heretic', callId: 'ghost', model: 'openai:gpt-4.1', outcome: answered(0.01), spent: 0.01, recordedAt: new Date().toISOString() }, metadata: {} },
    { type: 'ModelCallRecorded', data: { agentId: 'heretic', callId: 'c1', model: 'openai:gpt-4.1', outcome: answered(0.01), spent: 0.02, recordedAt: new Date().toISOString() }, metadata: {} },
  ], last.revision);
  const report = await audit();
  const ledgerFindings = report.findings.filter((f) => f.check === 'model_calls').map((f) => [f.streamId, f.reason]);
  expect(ledgerFindings).toEqual([
    [`model_calls-harbinger@${month}`, expect.stringMatching(/harbinger has spent 0.204 USD on models, over its budget of 0.1/)],
    [`model_calls-heretic@${month}`, expect.stringMatching(/the outcome of call ghost of heretic is recorded with no reservation/)],
    [`model_calls-heretic@${month}`, expect.stringMatching(/call c1 of heretic has a second outcome recorded/)],
  ]);
  // The events written past the gate carry no envelope either.
  expect(report.findings.filter((f) => f.check === 'envelope')).toHaveLength(2);
});
