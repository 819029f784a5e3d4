/**
 * Agents' model-call ledgers per agent and month (model_calls-<agentId>@<YYYY-MM>): the budget an
 * operator set holds every month from then on, the month's spend starts at 0, an outcome goes to
 * the month its call was reserved in, and a ledger of a log written before ledgers were monthly
 * (one model_calls-<agentId> with the budget and the calls) is still read and settled.
 * Last month's ledger and the old ledger are written straight into the store, as those logs have them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetModelCall, GetModelLedger, type CallOutcomeRecord, type ModelCallView } from '@agora/contracts';
import { ledgerMonth, monthBefore } from '@agora/domain-registry';
import { openServiceContext, startAll, type Running, type ServiceContext } from '@agora/runtime';
import { agentsOn, embeddedAgora, waitFor } from '@agora/testing';
import { startRegistryService } from '../src/registry-service.js';

const answered = (cost: number): CallOutcomeRecord => ({ ok: true, text: 'approve', output: 'approve', responseModel: 'gpt-4.1', finishReason: 'stop', usage: { inputTokens: 900, outputTokens: 120 }, cost, latencyMs: 700, attempts: 1, retried: [] });
const month = ledgerMonth(new Date().toISOString());
const lastMonth = monthBefore(month);
const lastMonthAt = `${lastMonth}-15T10:00:00.000Z`;

let dir: string;
let context: ServiceContext;
let running: Running;
const agents = agentsOn(() => context.client);
const { ok, send, query } = agents;

const reserve = (agentId: string, callId: string, maxCost: number) => send(agentId, 'ReserveModelCall', { agentId, callId, purpose: 'review proposal p-1', model: 'openai:gpt-4.1', maxCost, currency: 'USD' });
const record = (agentId: string, callId: string, cost: number) => ok(agentId, 'RecordModelCallOutcome', { agentId, callId, outcome: answered(cost) });
const register = async (agentId: string) => {
  await ok('root', 'RegisterAgent', { agentId, publicKey: agents.key(agentId).publicKey, displayName: agentId, roles: ['reviewer'] });
  await waitFor(async () => (await context.registry.agent(agentId)) !== undefined, `the registry to know ${agentId}`);
};
const ledgerOf = (agentId: string, asked?: string) => query<{ ledger: Record<string, unknown>; calls: ModelCallView[] }>(GetModelLedger.subject, { agentId, ...(asked ? { month: asked } : {}) });
const eventsOf = async (streamId: string) => (await context.store.readStream(streamId)).map((e) => e.type);
const budgetSet = (agentId: string, amount: number) => ({ type: 'ModelBudgetSet', data: { agentId, amount, currency: 'USD', previous: null, note: null, setBy: 'root', setAt: lastMonthAt }, metadata: {} });
const reservedEvent = (agentId: string, callId: string, maxCost: number) => ({
  type: 'ModelCallReserved',
  data: { agentId, callId, purpose: 'review proposal p-0', model: 'openai:gpt-4.1', maxCost, currency: 'USD', budget: 0.1, committed: maxCost, reservedAt: lastMonthAt },
  metadata: {},
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agora-model-ledger-months-'));
  context = await openServiceContext(embeddedAgora(dir, { agentId: 'root', publicKey: agents.key('root').publicKey }));
  running = await startAll([() => startRegistryService(context, { logger: false })]);
  for (const agentId of ['harbinger', 'heretic', 'harbinger-old']) await register(agentId);
}, 30_000);

afterAll(async () => {
  await running?.close();
  await context?.close();
  await rm(dir, { recursive: true, force: true });
});

it("keeps the budget on the agent's stream and the month's calls on the month's, the budget copied in by the first reservation", async () => {
  await ok('root', 'SetModelBudget', { agentId: 'harbinger', amount: 0.1, currency: 'USD' });
  expect((await reserve('harbinger', 'c1', 0.04)).ok).toBe(true);
  await record('harbinger', 'c1', 0.01);
  expect(await eventsOf('model_calls-harbinger')).toEqual(['ModelBudgetSet']);
  expect(await eventsOf(`model_calls-harbinger@${month}`)).toEqual(['ModelBudgetSet', 'ModelCallReserved', 'ModelCallRecorded']);
  // A change of the budget reaches the month's ledger with the next reservation.
  await ok('root', 'SetModelBudget', { agentId: 'harbinger', amount: 0.2, currency: 'USD' });
  expect((await ledgerOf('harbinger')).ledger).toMatchObject({ month, budget: { amount: 0.1 }, spent: 0.01 });
  expect((await reserve('harbinger', 'c2', 0.15)).ok).toBe(true);
  expect(await eventsOf(`model_calls-harbinger@${month}`)).toEqual(['ModelBudgetSet', 'ModelCallReserved', 'ModelCallRecorded', 'ModelBudgetSet', 'ModelCallReserved']);
  expect((await ledgerOf('harbinger')).ledger).toMatchObject({ month, budget: { amount: 0.2 }, spent: 0.01, reserved: 0.15, remaining: 0.04, calls: { total: 2 } });
  const over = await reserve('harbinger', 'c3', 0.05);
  expect(over).toMatchObject({ ok: false, error: { code: 'illegal_state', details: { reason: 'over_budget', spent: 0.01, reserved: 0.15 } } });
  // The currency cannot move under this month's calls.
  expect(await send('root', 'SetModelBudget', { agentId: 'harbinger', amount: 0.2, currency: 'EUR' })).toMatchObject({ ok: false, error: { code: 'illegal_state', message: expect.stringMatching(/reserved in USD/) } });
});

it("starts each month at 0 under the same budget, and records a call's outcome in the month it was reserved in", async () => {
  // Last month, heretic's budget was committed in full by a call still without an outcome.
  await context.store.append(`model_calls-heretic@${lastMonth}`, [budgetSet('heretic', 0.1), reservedEvent('heretic', 'late', 0.1)], 'no_stream');
  await ok('root', 'SetModelBudget', { agentId: 'heretic', amount: 0.1, currency: 'USD' });
  expect(await reserve('heretic', 'now', 0.08)).toMatchObject({ ok: true, result: { streamId: `model_calls-heretic@${month}` } });
  expect(await query<ModelCallView>(GetModelCall.subject, { agentId: 'heretic', callId: 'late' })).toMatchObject({ status: 'reserved', maxCost: 0.1 });
  expect(await record('heretic', 'late', 0.09)).toMatchObject({ streamId: `model_calls-heretic@${lastMonth}` });
  expect((await ledgerOf('heretic', lastMonth)).ledger).toMatchObject({ month: lastMonth, spent: 0.09, reserved: 0, calls: { total: 1, completed: 1 } });
  expect((await ledgerOf('heretic')).ledger).toMatchObject({ month, spent: 0, reserved: 0.08, calls: { total: 1, reserved: 1 } });
});

it('reads and settles the one ledger of a log written before ledgers were monthly; its calls count for the month they were reserved in', async () => {
  const old = 'model_calls-harbinger-old';
  await context.store.append(old, [budgetSet('harbinger-old', 0.1), reservedEvent('harbinger-old', 'then', 0.03)], 'no_stream');
  expect(await query<ModelCallView>(GetModelCall.subject, { agentId: 'harbinger-old', callId: 'then' })).toMatchObject({ status: 'reserved' });
  expect(await record('harbinger-old', 'then', 0.02)).toMatchObject({ streamId: old });
  expect((await ledgerOf('harbinger-old', lastMonth)).ledger).toMatchObject({ budget: { amount: 0.1 }, spent: 0.02, calls: { total: 1, completed: 1 } });
  // Its budget holds for this month's ledger.
  expect(await reserve('harbinger-old', 'new', 0.1)).toMatchObject({ ok: true, result: { streamId: `model_calls-harbinger-old@${month}` } });
  expect(await eventsOf(old)).toEqual(['ModelBudgetSet', 'ModelCallReserved', 'ModelCallRecorded']);
});
