/**
 * The chamber service over a real store and the in-process transport, its calls made by the
 * production provider adapters pointed by base URL at stand-in servers that speak the OpenAI,
 * Anthropic and Gemini wire APIs. Operators and a pipeline agent send signed commands through the
 * gate; the transcript, the ledger and the stand-ins' own request logs are checked.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApproveChamberSession,
  GetChamberBudget,
  GetChamberStats,
  GetChamberSession,
  ProposeChamberSession,
  RecordChamberCallOutcome,
  RecordChamberFollowUp,
  RejectChamberSession,
  SettleChamberBudget,
  type ChamberSessionView,
  type CommandDefinition,
  type CommandResult,
  type Reply,
} from '@agora/contracts';
import { budgetDecider, budgetStreamId, monthOf } from '@agora/domain-chamber';
import { agentDecider, agentStreamId, type AgentCommand } from '@agora/domain-registry';
import { proposalDecider, proposalStreamId, type ProposalCommand } from '@agora/domain-tribunal';
import { createSignedCommand, generateKeyPair, type KeyPair } from '@agora/identity';
import { chamberPolicyFromEnv, type ProvidersConfig, providersConfigFromEnv, StandIns } from '@agora/providers';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test only: the chamber's metrics come from the projections service, wired here as standalone mode wires them.
import { startProjectionsService, type RunningProjections } from '@agora/projections';
import { FileCheckpointStore, handleCommand } from '@agora/eventsourcing';
import { JetStreamLeaseRegister, Leases, openServiceContext, ProcessMetrics, type RuntimeConfig, type ServiceContext } from '@agora/runtime';
import { embeddedAgora, startNatsServer, waitFor } from '@agora/testing';
import { connect } from '@nats-io/transport-node';
import { panelScript, phaseOf, startChamberService, type RunningChamber } from '../src/index.js';

const SECRET = 'sk-chamber-test-secret-0123456789';
const QUESTION = 'Should we enter market X this year?';

describe('chamber service with provider stand-ins (in-process transport, embedded store)', () => {
  let dir: string;
  let stands: StandIns;
  let providers: ProvidersConfig;
  let context: ServiceContext;
  let chamber: RunningChamber;
  let projections: RunningProjections;
  const keys: Record<string, KeyPair> = { root: generateKeyPair(), pipeline: generateKeyPair() };
  const keyEnv = { OPENAI_API_KEY: SECRET, ANTHROPIC_API_KEY: SECRET, GOOGLE_GENERATIVE_AI_API_KEY: SECRET };
  const policyEnv = { AGORA_CHAMBER_SESSIONS_PER_DAY: '100', AGORA_CHAMBER_MONTHLY_BUDGET: '100' };

  const send = <T = CommandResult>(definition: CommandDefinition, actor: string, payload: Record<string, unknown>): Promise<Reply<T>> =>
    context.client.request<T>(definition.subject, createSignedCommand({ type: definition.type, actor, payload, secretKey: keys[actor]!.secretKey }), { timeoutMs: 10_000 });
  const view = async (sessionId: string) => {
    const reply = await context.client.request<ChamberSessionView>(GetChamberSession.subject, { sessionId }, { timeoutMs: 10_000 });
    if (!reply.ok) throw new Error(JSON.stringify(reply.error));
    return reply.result;
  };
  const until = async (sessionId: string, done: (v: ChamberSessionView) => boolean, what: string, timeoutMs = 20_000) => {
    let last: ChamberSessionView | undefined;
    await waitFor(async () => done((last = await view(sessionId))), `${what} (${sessionId})`, timeoutMs);
    return last!;
  };
  const requestsOf = (sessionId: string) => stands.requests.filter((r) => r.prompt.includes(sessionId));
  const propose = (extra: Record<string, unknown> = {}, actor = 'pipeline') => {
    const sessionId = randomUUID();
    // The session id in the context lets each test pick its own requests out of the stand-ins' logs.
    return { sessionId, reply: send(ProposeChamberSession, actor, { sessionId, question: QUESTION, context: `Revenue is flat. (session ${sessionId})`, rationale: 'A wrong call costs a year', ...extra }) };
  };
  const run = async (extra: Record<string, unknown> = {}) => {
    const { sessionId, reply } = propose(extra);
    expect(await reply).toMatchObject({ ok: true, result: { events: ['ChamberSessionProposed'] } });
    expect(await send(ApproveChamberSession, 'root', { sessionId })).toMatchObject({ ok: true });
    return sessionId;
  };
  const concluded = (sessionId: string) => until(sessionId, (v) => ['consensus', 'no_consensus', 'failed'].includes(v.summary.status) && v.summary.pendingCalls === 0, 'an outcome');
  const eventsOf = (v: ChamberSessionView, type: string) => v.transcript.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);

  const start = async () => {
    chamber = await startChamberService(context, { logger: false, providers, env: keyEnv, policy: chamberPolicyFromEnv(policyEnv, providers) });
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-chamber-'));
    stands = await StandIns.start();
    providers = { ...providersConfigFromEnv({ ...stands.env, AGORA_PROVIDER_BACKOFF_MS: '10', AGORA_PROVIDER_TIMEOUT_MS: '10000' }) };
    const config: RuntimeConfig = embeddedAgora(dir, { agentId: 'root', publicKey: keys['root']!.publicKey });
    context = await openServiceContext(config);
    const now = new Date().toISOString();
    const register: AgentCommand = { type: 'RegisterAgent', context: { actor: 'root', actorRoles: ['operator'], now, commandId: randomUUID() }, payload: { agentId: 'pipeline', publicKey: keys['pipeline']!.publicKey, displayName: 'pipeline', roles: ['executive'], constitutions: [], specializations: [], trustScore: 500, health: 1, risk: 0 } };
    await handleCommand({ store: context.store, decider: agentDecider, streamId: agentStreamId('pipeline'), command: register, metadata: { commandId: register.context.commandId, commandType: 'RegisterAgent', actor: 'root', issuedAt: now } });
    await waitFor(async () => (await context.registry.agent('pipeline')) !== undefined, 'the registry to know the pipeline agent');
    await start();
    projections = await startProjectionsService(context, { metricsPort: 0, metricsHost: '127.0.0.1', logger: false, chamberMinSample: 3 });
  }, 30_000);

  afterAll(async () => {
    await projections?.close();
    await chamber?.close();
    await context?.close();
    await stands?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('consensus in the blind phase: phase-1 calls concurrent, every prompt and response verbatim in the transcript, cost settled once in the ledger', async () => {
    stands.script(panelScript({ blind: { openai: 'Yes, enter', anthropic: 'yes, enter', google: 'Yes — enter' }, delayMs: 400 }));
    const sessionId = await run();
    const v = await concluded(sessionId);
    expect(v.summary).toMatchObject({ status: 'consensus', outcome: 'consensus', pendingCalls: 0 });
    const requests = requestsOf(sessionId);
    expect(requests.map(phaseOf)).toEqual(['blind', 'blind', 'blind', 'arbiter']);
    const blindTimes = requests.slice(0, 3).map((r) => r.receivedAt);
    expect(Math.max(...blindTimes) - Math.min(...blindTimes)).toBeLessThan(350); // all three sent before the first answered (400 ms)
    const types = v.transcript.map((e) => e.type);
    expect(types.slice(0, 5)).toEqual(['ChamberSessionProposed', 'ChamberSessionApproved', 'ChamberCallRequested', 'ChamberCallRequested', 'ChamberCallRequested']);
    expect(types.at(-1)).toBe('ChamberSessionConcluded');
    // verbatim: what the stand-ins received is what the log says was sent; what they answered is in the log
    const sent = eventsOf(v, 'ChamberCallRequested');
    for (const request of requests) expect(sent.some((s) => s['prompt'] === request.prompt && s['system'] === request.system)).toBe(true);
    const completed = eventsOf(v, 'ChamberCallCompleted');
    expect(completed).toHaveLength(4);
    for (const c of completed) expect(JSON.parse(c['text'] as string)).toEqual(c['output']);
    const outcome = eventsOf(v, 'ChamberSessionConcluded')[0]!;
    expect(outcome).toMatchObject({ outcome: 'consensus', position: 'yes enter', blindMajority: { position: 'yes enter', count: 3, of: 3 }, changedFromBlindMajority: false, ownProviderWin: true });
    const cost = completed.reduce((s, c) => s + (c['cost'] as number), 0);
    expect(v.summary.cost).toBeCloseTo(cost, 6);
    expect(JSON.stringify(v)).not.toContain(SECRET);
    await waitFor(async () => {
      const budget = await context.client.request<{ spent: number }>(GetChamberBudget.subject, {}, { timeoutMs: 5_000 });
      return budget.ok && budget.result.spent >= cost - 1e-6;
    }, 'the ledger to settle the session');
    const ledger = await context.store.readStream(budgetStreamId(monthOf(new Date().toISOString())));
    const settled = ledger.filter((e) => e.type === 'ChamberBudgetSettled' && (e.data as { sessionId: string }).sessionId === sessionId);
    expect(settled).toHaveLength(1);
    expect((settled[0]!.data as { actual: number }).actual).toBeCloseTo(cost, 6);
    expect(await send(RecordChamberFollowUp, 'root', { sessionId, decision: 'accepted', reason: 'matches our data' })).toMatchObject({ ok: true, result: { events: ['ChamberFollowUpRecorded'] } });
  });

  it('divergence, one cross-examination round, a position change recorded, then consensus', async () => {
    stands.script(panelScript({ blind: { openai: 'yes', anthropic: 'yes', google: 'no' }, cross: { google: 'yes' } }));
    const sessionId = await run();
    const v = await concluded(sessionId);
    expect(requestsOf(sessionId).map(phaseOf)).toEqual(['blind', 'blind', 'blind', 'cross_exam', 'cross_exam', 'cross_exam', 'arbiter']);
    for (const r of requestsOf(sessionId).filter((x) => phaseOf(x) !== 'blind')) expect(r.prompt).not.toMatch(/gpt|claude|gemini|openai|anthropic|google/i);
    expect(eventsOf(v, 'ChamberDivergenceMeasured').map((d) => (d['divergence'] as { divergent: boolean }).divergent)).toEqual([true, false]);
    expect(eventsOf(v, 'ChamberPositionChanged')).toEqual([expect.objectContaining({ panelist: 2, from: 'no', to: 'yes', towardBlindMajority: true })]);
    expect(v.summary.outcome).toBe('consensus');
  });

  it('a split that stays split: the arbiter forcing a synthesis is refused, no_consensus with its text kept', async () => {
    stands.script(panelScript({ blind: { openai: 'yes', anthropic: 'no', google: 'wait a year' }, forceConsensus: true }));
    const sessionId = await run();
    const v = await concluded(sessionId);
    const outcome = eventsOf(v, 'ChamberSessionConcluded')[0]!;
    expect(outcome).toMatchObject({ outcome: 'no_consensus', forcedSynthesisRefused: true, blindMajority: null });
    expect(outcome['arbiterText']).toContain('"verdict":"consensus"');
    expect(outcome['reason']).toMatch(/forced synthesis refused/);
  });

  it("one provider failing: its error verbatim (status, provider body) in the outcome, and no synthesis on 2 answers", async () => {
    stands.script(panelScript({ blind: { openai: 'yes', anthropic: 'yes', google: 'yes' }, override: (r) => (r.kind === 'google' ? { status: 400, message: 'API key not valid. Please pass a valid API key.' } : undefined) }));
    const sessionId = await run();
    const v = await concluded(sessionId);
    const outcome = eventsOf(v, 'ChamberSessionConcluded')[0]!;
    expect(outcome).toMatchObject({ outcome: 'failed', answered: 2, synthesis: null });
    const [error] = outcome['errors'] as { provider: string; error: { status: number; message: string; body: string } }[];
    expect(error).toMatchObject({ provider: 'google', error: { status: 400, message: expect.stringContaining('API key not valid') } });
    expect(JSON.parse(error!.error.body)).toEqual({ error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT' } });
    expect(requestsOf(sessionId).filter((r) => phaseOf(r) === 'arbiter')).toEqual([]);
  });

  it('the arbiter failing over to the fallback arbiter', async () => {
    stands.script(panelScript({ blind: { openai: 'yes', anthropic: 'yes', google: 'yes' }, override: (r, phase) => (phase === 'arbiter' && r.kind === 'anthropic' ? { status: 529, message: 'Overloaded' } : undefined) }));
    const sessionId = await run();
    const v = await concluded(sessionId);
    expect(eventsOf(v, 'ChamberSessionConcluded')[0]).toMatchObject({ outcome: 'consensus', arbiter: { model: 'openai:gpt-4.1', fallback: true }, ownProviderWin: true });
    const failed = eventsOf(v, 'ChamberCallFailed')[0]!;
    expect(failed).toMatchObject({ provider: 'anthropic', error: { kind: 'http', status: 529, message: expect.stringContaining('Overloaded') } });
    expect(failed['attempts']).toBe(3); // 529 is transient: retried by the layer before the fallback
  });

  it('no approval: nothing is called; a non-operator cannot approve; a rejection closes it', async () => {
    stands.script(panelScript({ blind: { openai: 'yes', anthropic: 'yes', google: 'yes' } }));
    const { sessionId, reply } = propose();
    expect(await reply).toMatchObject({ ok: true });
    expect(await send(ApproveChamberSession, 'pipeline', { sessionId })).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await view(sessionId)).summary.status).toBe('awaiting_approval');
    expect(await send(RejectChamberSession, 'root', { sessionId, reason: 'not now' })).toMatchObject({ ok: true });
    expect((await view(sessionId)).summary.status).toBe('rejected');
    expect(requestsOf(sessionId)).toEqual([]);
  });

  it.each([
    ['a question over the size limit', { question: 'x'.repeat(4001) }, /more than the limit of 4000/],
    ['a panel of fewer than 3 distinct providers', { panel: ['openai:gpt-4.1', 'openai:gpt-4o', 'google:gemini-2.5-pro'] }, /2 distinct providers/],
    ['an unknown model', { panel: ['openai:gpt-4.1', 'mistral:large', 'google:gemini-2.5-pro'] }, /unknown provider mistral/],
    ['a model missing from the price table', { panel: ['openai:gpt-5', 'anthropic:claude-sonnet-4-20250514', 'google:gemini-2.5-pro'] }, /no price/],
  ])('bad input refused with a clear code, nothing recorded or called: %s', async (_what, extra, message) => {
    const before = stands.requests.length;
    const { sessionId, reply } = propose(extra);
    const answer = await reply;
    expect(answer).toMatchObject({ ok: false, error: { code: 'invalid_command' } });
    if (!answer.ok) expect(answer.error.message).toMatch(message);
    const got = await context.client.request(GetChamberSession.subject, { sessionId }, { timeoutMs: 5_000 });
    expect(got).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(stands.requests.length).toBe(before);
  });

  it('exclude_provider with the default three-provider panel is refused at start, in one line', () => {
    expect(() => chamberPolicyFromEnv({ AGORA_CHAMBER_RECUSAL: 'exclude_provider' }, providers)).toThrow(
      /^AGORA_CHAMBER_RECUSAL=exclude_provider .*leaves the panel 2 providers \(openai, google\) once the arbiter's provider anthropic is excluded, and 3 are needed[^\n]*$/,
    );
    expect(chamberPolicyFromEnv({ AGORA_CHAMBER_RECUSAL: 'rotate' }, providers).recusal).toBe('rotate');
  });

  it("the chamber's own commands are refused to everyone else, operators included (service_only)", async () => {
    const { sessionId, reply } = propose();
    expect(await reply).toMatchObject({ ok: true });
    const forged = await send(RecordChamberCallOutcome, 'root', { sessionId, callId: 'blind-p0-a1', at: new Date().toISOString(), outcome: { ok: false, error: { kind: 'http', message: 'x', retryable: false }, usage: { inputTokens: 0, outputTokens: 0 }, cost: 0, costEstimated: false, latencyMs: 0, attempts: 1, retried: [] } });
    expect(forged).toMatchObject({ ok: false, error: { code: 'service_only' } });
    expect(await send(SettleChamberBudget, 'root', { month: '2026-01', sessionId, actual: 0 })).toMatchObject({ ok: false, error: { code: 'service_only' } });
    expect((await view(sessionId)).transcript.map((e) => e.type)).toEqual(['ChamberSessionProposed']);
  });

  it('a restart mid-phase makes no recorded call again: interrupted calls are settled once (at their maximum cost) and retried; cost counted once', async () => {
    let release = false;
    stands.script(panelScript({ blind: { openai: 'yes', anthropic: 'yes', google: 'yes' }, override: (_r, phase) => (phase === 'blind' && !release ? { json: {}, delayMs: 60_000 } : undefined) }));
    const { sessionId, reply } = propose();
    expect(await reply).toMatchObject({ ok: true });
    expect(await send(ApproveChamberSession, 'root', { sessionId })).toMatchObject({ ok: true });
    await waitFor(() => requestsOf(sessionId).length === 3, 'the three blind calls to be in flight');
    await chamber.close();
    release = true;
    await start();
    expect(chamber.interruptedAtStart).toBe(3);
    const v = await concluded(sessionId);
    const requests = requestsOf(sessionId);
    expect(requests.map(phaseOf)).toEqual(['blind', 'blind', 'blind', 'blind', 'blind', 'blind', 'arbiter']);
    const failed = eventsOf(v, 'ChamberCallFailed');
    expect(failed.map((f) => (f['error'] as { kind: string }).kind)).toEqual(['interrupted', 'interrupted', 'interrupted']);
    expect(failed.every((f) => f['costEstimated'] === true && (f['cost'] as number) > 0)).toBe(true);
    const requested = eventsOf(v, 'ChamberCallRequested').map((r) => r['callId']);
    expect(new Set(requested).size).toBe(requested.length);
    const settledCalls = [...eventsOf(v, 'ChamberCallCompleted'), ...failed];
    expect(settledCalls).toHaveLength(7);
    const total = settledCalls.reduce((s, c) => s + (c['cost'] as number), 0);
    expect(v.summary.cost).toBeCloseTo(total, 6);
    expect(v.summary.outcome).toBe('consensus');
  }, 40_000);

  it('the budget exhausted: approval refused with a clear error, nothing reserved, nothing called', async () => {
    const month = monthOf(new Date().toISOString());
    const now = new Date().toISOString();
    const budget = await context.client.request<{ remaining: number }>(GetChamberBudget.subject, {}, { timeoutMs: 5_000 });
    if (!budget.ok) throw new Error(JSON.stringify(budget.error));
    // Another consumer of the month's budget leaves less than a session needs.
    const filler = { type: 'ReserveChamberBudget' as const, payload: { month, sessionId: 'filler', amount: Math.round((budget.result.remaining - 0.001) * 1e6) / 1e6, day: '1999-01-01', limits: { sessionsPerDay: 100, monthlyBudget: 100, currency: 'USD' } }, context: { now, actor: 'service:chamber', actorRoles: ['operator'], commandId: randomUUID() } };
    await handleCommand({ store: context.store, decider: budgetDecider, streamId: budgetStreamId(month), command: filler, metadata: { commandId: filler.context.commandId, commandType: filler.type, actor: 'service:chamber', issuedAt: now } });
    stands.script(panelScript({ blind: { openai: 'yes', anthropic: 'yes', google: 'yes' } }));
    const { sessionId, reply } = propose();
    expect(await reply).toMatchObject({ ok: true });
    const refused = await send(ApproveChamberSession, 'root', { sessionId });
    expect(refused).toMatchObject({ ok: false, error: { code: 'illegal_state', details: { reason: 'budget_exhausted' } } });
    if (!refused.ok) expect(refused.error.message).toMatch(/monthly budget exhausted: .* of 100 USD .*nothing was called/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await view(sessionId)).summary.status).toBe('awaiting_approval');
    expect(requestsOf(sessionId)).toEqual([]);
    const ledger = await context.store.readStream(budgetStreamId(month));
    expect(ledger.some((e) => (e.data as { sessionId: string }).sessionId === sessionId)).toBe(false);
  });

  it('a tribunal deadlock attaches a consultation linked to the proposal, awaiting approval: nothing called', async () => {
    const before = stands.requests.length;
    const proposalId = `p-${randomUUID()}`;
    const now = new Date().toISOString();
    const submit: ProposalCommand = { type: 'SubmitProposal', context: { actor: 'pipeline', actorRoles: ['executive'], now, commandId: randomUUID() }, payload: { proposalId, title: 'Ship Space-OS in three weeks', body: 'Week 1: bounties. Week 2: demo. Week 3: distribution.', problem: 'Space-OS needs users', evidence: [], proposalClass: 'default' } } as ProposalCommand;
    const submitted = await handleCommand({ store: context.store, decider: proposalDecider, streamId: proposalStreamId(proposalId), command: submit, metadata: { commandId: submit.context.commandId, commandType: 'SubmitProposal', actor: 'pipeline', issuedAt: now } });
    // The escalation as the tribunal records it after its reviewers deadlock.
    await context.store.append(proposalStreamId(proposalId), [{ type: 'ProposalEscalated', data: { proposalId, escalation: 1, reason: 'deadlock', revision: 0, round: 3, contestedRounds: 3, openObjections: [], uncovered: [], escalatedAt: now }, metadata: { actor: 'service:tribunal' } }], submitted.revision);
    const sessionId = `deadlock-${proposalId}-e1`;
    await waitFor(async () => (await context.client.request(GetChamberSession.subject, { sessionId }, { timeoutMs: 5_000 })).ok, `the consultation ${sessionId}`);
    const v = await view(sessionId);
    expect(v.summary.status).toBe('awaiting_approval');
    expect(v.summary).toMatchObject({ proposedBy: 'service:chamber', link: { kind: 'proposal', id: proposalId } });
    expect(v.summary.question).toContain('Ship Space-OS in three weeks');
    expect(eventsOf(v, 'ChamberSessionProposed')[0]!['context']).toContain('Week 3: distribution.');
    expect(stands.requests.length).toBe(before);
    expect(await send(RejectChamberSession, 'root', { sessionId, reason: 'decided without the panel' })).toMatchObject({ ok: true });
  });

  it("cancels a deadlock's consultation as moot once an operator decides the escalation without it: it leaves the inbox", async () => {
    const proposalId = `p-${randomUUID()}`;
    const now = new Date().toISOString();
    const submit: ProposalCommand = { type: 'SubmitProposal', context: { actor: 'pipeline', actorRoles: ['executive'], now, commandId: randomUUID() }, payload: { proposalId, title: 'Rewrite billing in Rust', body: 'Start on Monday.', problem: 'Race conditions', evidence: [], proposalClass: 'default' } } as ProposalCommand;
    const submitted = await handleCommand({ store: context.store, decider: proposalDecider, streamId: proposalStreamId(proposalId), command: submit, metadata: { commandId: submit.context.commandId, commandType: 'SubmitProposal', actor: 'pipeline', issuedAt: now } });
    const escalated = await context.store.append(proposalStreamId(proposalId), [{ type: 'ProposalEscalated', data: { proposalId, escalation: 1, reason: 'deadlock', revision: 0, round: 3, contestedRounds: 3, openObjections: [], uncovered: [], escalatedAt: now }, metadata: { actor: 'service:tribunal' } }], submitted.revision);
    const sessionId = `deadlock-${proposalId}-e1`;
    await waitFor(async () => (await context.client.request(GetChamberSession.subject, { sessionId }, { timeoutMs: 5_000 })).ok, `the consultation ${sessionId}`);
    // The operator rejects the proposal from the inbox without approving the consultation.
    await context.store.append(proposalStreamId(proposalId), [{ type: 'EscalationDecided', data: { proposalId, escalation: 1, decision: 'reject', operator: 'root', reason: 'not this quarter', openObjections: [], decidedAt: now }, metadata: { actor: 'root' } }], escalated.nextExpectedRevision);
    await waitFor(async () => (await view(sessionId)).summary.status === 'cancelled', `the consultation ${sessionId} to be cancelled`);
    const cancelled = eventsOf(await view(sessionId), 'ChamberSessionCancelled')[0]!;
    expect(cancelled).toMatchObject({ cancelledBy: 'service:chamber', reason: `moot: root decided the escalation of proposal ${proposalId} (reject) without the panel` });
  });

  it('metrics: sessions by outcome, provider calls and errors, spend against budget, and the arbiter own-provider win share behind the conflict-of-interest alert', async () => {
    const value = (text: string, series: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    let text = '';
    await waitFor(async () => {
      text = await (await fetch(projections.metricsUrl)).text();
      return (value(text, 'agora_chamber_sessions_concluded_total{outcome="consensus"}') ?? 0) >= 4;
    }, 'the projections to count the sessions');
    expect(value(text, 'agora_chamber_sessions_concluded_total{outcome="failed"}')).toBe(1);
    expect(value(text, 'agora_chamber_sessions_concluded_total{outcome="no_consensus"}')).toBe(1);
    expect(value(text, 'agora_chamber_sessions{status="rejected"}')).toBe(2);
    expect(value(text, 'agora_chamber_call_errors_total{provider="google",kind="http"}')).toBe(1);
    expect(value(text, 'agora_chamber_call_errors_total{provider="anthropic",kind="interrupted"}')).toBe(1);
    expect(value(text, 'agora_chamber_calls_total{provider="openai",result="ok"}')).toBeGreaterThan(5);
    // blind phases measured: 5 (the failed one never had 3 answers); divergent: the cross-examined one and the split
    expect(value(text, 'agora_chamber_divergence_ratio')).toBeCloseTo(2 / 5, 3);
    expect(value(text, 'agora_chamber_cross_examination_ratio')).toBeCloseTo(2 / 5, 3);
    expect(value(text, 'agora_chamber_month_cost{kind="budget",currency="USD"}')).toBe(100);
    // Every consensus here rests on all three answers, the anthropic arbiter's own provider's among them
    // (and the fallback openai arbiter's): the share is 1, above the alert's 0.5.
    const share = value(text, 'agora_chamber_arbiter_own_provider_win_ratio')!;
    expect(value(text, 'agora_chamber_arbiter_own_provider_sample')).toBeGreaterThanOrEqual(3);
    expect(share).toBeGreaterThan(0.5);
    expect(text).toContain('agora_chamber_session_cost_bucket');
    const stats = await context.client.request<Record<string, unknown>>(GetChamberStats.subject, {}, { timeoutMs: 5_000 });
    expect(stats).toMatchObject({ ok: true, result: { ownProviderWinShare: share, divergenceRate: 0.4, conformityChanges: 1, minSample: 3 } });
    expect(text).toContain('agora_chamber_call_latency_seconds_bucket{le="0.5",provider="google"}');
  });

  it("replicas: a second chamber leaves the holder's calls in flight alone, takes the calls over when the holder goes, settles them once, and the session concludes", async () => {
    // Leases in a private NATS server's JetStream, as replicas on NATS share them; each replica its own checkpoints.
    const nats = await startNatsServer();
    const connection = await connect({ servers: nats.url });
    const replica = async (name: string) => {
      const leases = new Leases(await JetStreamLeaseRegister.open(connection), { ttlMs: 1_000, holder: name, log: () => undefined, logger: { warn: () => undefined } });
      const own: ServiceContext = { ...context, leases, checkpoints: new FileCheckpointStore(join(dir, `checkpoints-${name}`)), metrics: new ProcessMetrics({ defaultMetrics: false }) };
      // A larger monthly budget: the budget test before this one spent the month's 100.
      return startChamberService(own, { logger: false, providers, env: keyEnv, policy: chamberPolicyFromEnv({ ...policyEnv, AGORA_CHAMBER_MONTHLY_BUDGET: '1000' }, providers) });
    };
    await chamber.close();
    let release = false;
    stands.script(panelScript({ blind: { openai: 'yes', anthropic: 'yes', google: 'yes' }, override: (_r, phase) => (phase === 'blind' && !release ? { json: {}, delayMs: 60_000 } : undefined) }));
    const holder = await replica('a');
    try {
      const sessionId = await run();
      await waitFor(() => requestsOf(sessionId).length === 3, 'the holder to make the three blind calls');
      const standby = await replica('b');
      chamber = standby;
      // The standby settles nothing of the live holder's: no call of the session failed, none repeated.
      expect(standby.interruptedAtStart).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(eventsOf(await view(sessionId), 'ChamberCallFailed')).toEqual([]);
      expect(requestsOf(sessionId)).toHaveLength(3);
      // The holder goes (its lease released): the standby takes the calls, settles the three once, and retries them.
      release = true;
      await holder.close();
      await waitFor(() => standby.interruptedAtStart === 3, 'the standby to take the calls over', 10_000);
      const v = await concluded(sessionId);
      expect(eventsOf(v, 'ChamberCallFailed').map((f) => (f['error'] as { kind: string }).kind)).toEqual(['interrupted', 'interrupted', 'interrupted']);
      expect(requestsOf(sessionId).map(phaseOf)).toEqual(['blind', 'blind', 'blind', 'blind', 'blind', 'blind', 'arbiter']);
      expect(v.summary.outcome).toBe('consensus');
    } finally {
      await holder.close().catch(() => undefined);
      await connection.close();
      await nats.stop();
    }
  }, 60_000);
});
