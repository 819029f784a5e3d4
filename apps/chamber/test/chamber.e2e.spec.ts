// The chamber as an operator runs it: the registry and the chamber as separate processes over a NATS
// server of the test's own, the log in JetStream, the panel's providers pointed by base URL at
// stand-in servers (real HTTP servers speaking the OpenAI, Anthropic and Gemini wire APIs) run by
// the test. Every process is SIGKILLed in the middle of the blind phase and again in the middle of
// the cross-examination: no call whose outcome was recorded is made again, each interrupted call
// is settled once and made once more, and the cost is counted once in the ledger.
import { randomUUID } from 'node:crypto';
import { ApproveChamberSession, GetChamberSession, ProposeChamberSession, type ChamberSessionView } from '@agora/contracts';
import { budgetStreamId, chamberStreamId, monthOf } from '@agora/domain-chamber';
import { openJetStreamEventStore, type EventStore } from '@agora/eventstore';
import { StandIns } from '@agora/providers';
import { runToCompletion, startServiceFleet, waitFor, type CommandRef, type ServiceFleet } from '@agora/testing';
import { panelScript, phaseOf } from '../src/stand-in-panel.js';

const SERVICES = ['registry', 'chamber'] as const;

describe('the chamber over separate processes (e2e)', () => {
  let fleet: ServiceFleet;
  let stands: StandIns;
  let store: EventStore;
  let hold: 'blind' | 'cross_exam' | null = 'blind';

  const send = (actor: string, definition: CommandRef, payload: Record<string, unknown>) => fleet.send(actor, definition, payload);
  const view = (sessionId: string) => fleet.query<ChamberSessionView>(GetChamberSession.subject, { sessionId }, { timeoutMs: 5_000 });
  /** Every process, again after a SIGKILL. */
  const startAll = () => Promise.all(SERVICES.map((service) => fleet.start(service)));

  beforeAll(async () => {
    fleet = await startServiceFleet({ label: 'chamber', env: () => ({ AGORA_PROVIDER_BACKOFF_MS: '50', ...stands.env }) });
    store = await openJetStreamEventStore({ servers: fleet.nats.url, streamName: fleet.log.streamName, subjectPrefix: fleet.log.subjectPrefix });
    // Blind: two against one (divergent), so one cross-examination round follows; the third comes round.
    const script = panelScript({ blind: { openai: 'harden it', anthropic: 'harden it', google: 'rewrite it' }, cross: { google: 'harden it' } });
    stands = await StandIns.start((request, index) => (hold !== null && phaseOf(request) === hold ? { json: {}, delayMs: 120_000 } : script(request, index)));
    await startAll();
    await fleet.register({ pipeline: { roles: ['executive'], trustScore: 500 } });
  }, 180_000);

  afterAll(async () => {
    await store?.close();
    await fleet?.stop();
    await stands?.close();
  }, 60_000);

  it('a SIGKILL of every process mid-blind-phase and again mid-cross-examination: no recorded call repeated, interrupted ones settled once and retried, cost counted once', async () => {
    const sessionId = randomUUID();
    await waitFor(async () => (await send('pipeline', ProposeChamberSession, { sessionId, question: 'Rewrite billing in Rust this quarter?', context: 'Three incidents last quarter.', rationale: 'costly either way' })).ok, 'the proposal (once the chamber knows the pipeline agent)', 20_000);
    expect(await send('root', ApproveChamberSession, { sessionId })).toMatchObject({ ok: true });

    const phaseRequests = (phase: string) => stands.requests.filter((r) => phaseOf(r) === phase && r.prompt.includes('Three incidents'));
    await waitFor(() => phaseRequests('blind').length === 3, 'the three blind calls to be in flight', 20_000);
    await Promise.all([...fleet.processes.values()].map((p) => p.kill()));
    hold = 'cross_exam';
    await startAll();
    // The restarted chamber settles them once it holds the calls (the dead holder's lease lapses first).
    await waitFor(() => /3 interrupted call\(s\) settled on taking the chamber's calls/.test(fleet.processes.get('chamber')!.output()), 'the interrupted calls to be settled', 30_000);

    await waitFor(() => phaseRequests('cross_exam').length === 3, 'the three cross-examination calls to be in flight', 30_000);
    await Promise.all([...fleet.processes.values()].map((p) => p.kill()));
    hold = null;
    await startAll();
    // The restarted chamber settles them once it holds the calls (the dead holder's lease lapses first).
    await waitFor(() => /3 interrupted call\(s\) settled on taking the chamber's calls/.test(fleet.processes.get('chamber')!.output()), 'the interrupted calls to be settled', 30_000);

    let final: ChamberSessionView | undefined;
    await waitFor(async () => ((final = await view(sessionId)).summary.outcome !== null && final.summary.pendingCalls === 0), 'the outcome', 30_000);
    expect(final!.summary.outcome).toBe('consensus');

    // Each blind and cross-examination call was made twice (once interrupted, once again), the arbiter once.
    expect(phaseRequests('blind')).toHaveLength(6);
    expect(phaseRequests('cross_exam')).toHaveLength(6);
    expect(phaseRequests('arbiter')).toHaveLength(1);
    const events = await store.readStream(chamberStreamId(sessionId));
    const requested = events.filter((e) => e.type === 'ChamberCallRequested').map((e) => (e.data as { callId: string }).callId);
    expect(new Set(requested).size).toBe(requested.length);
    expect(requested).toHaveLength(13);
    const settled = events.filter((e) => e.type === 'ChamberCallCompleted' || e.type === 'ChamberCallFailed');
    expect(settled.map((e) => (e.data as { callId: string }).callId).sort()).toEqual([...requested].sort());
    const interrupted = settled.filter((e) => e.type === 'ChamberCallFailed');
    expect(interrupted.map((e) => (e.data as { error: { kind: string } }).error.kind)).toEqual(Array(6).fill('interrupted'));
    // Everything the chamber appended on its own behalf is signed by its service key.
    for (const e of settled) expect(e.metadata).toMatchObject({ actor: 'service:chamber', signature: expect.any(String) });
    const cost = settled.reduce((s, e) => s + (e.data as { cost: number }).cost, 0);
    expect(final!.summary.cost).toBeCloseTo(cost, 6);
    let ledgerSettled: { actual: number }[] = [];
    await waitFor(async () => {
      const ledger = await store.readStream(budgetStreamId(monthOf(new Date().toISOString())));
      ledgerSettled = ledger.filter((e) => e.type === 'ChamberBudgetSettled' && (e.data as { sessionId: string }).sessionId === sessionId).map((e) => e.data as { actual: number });
      return ledgerSettled.length > 0;
    }, 'the ledger to settle the session', 15_000);
    expect(ledgerSettled).toHaveLength(1);
    expect(ledgerSettled[0]!.actual).toBeCloseTo(cost, 6);
  }, 240_000);

  it('stops with exit code 2 naming the setting when a configured model has no price; --help lists the chamber settings', async () => {
    const run = (args: string[], extra: Record<string, string>) => runToCompletion('apps/chamber/src/main.ts', args, { ...fleet.env('chamber'), ...extra });
    const [unpriced, help] = await Promise.all([run([], { AGORA_CHAMBER_PANEL: 'openai:gpt-4.1,anthropic:claude-sonnet-4-20250514,google:gemini-9' }), run(['--help'], {})]);
    expect(unpriced.code).toBe(2);
    expect(unpriced.stderr).toMatch(/^agora-chamber: AGORA_CHAMBER_PANEL: model google:gemini-9 has no price in the price table/);
    expect(help.code).toBe(0);
    for (const setting of ['AGORA_CHAMBER_PANEL', 'AGORA_CHAMBER_MONTHLY_BUDGET', 'AGORA_CHAMBER_SESSIONS_PER_DAY', 'AGORA_MODEL_PRICES', 'OPENAI_API_KEY', 'ANTHROPIC_BASE_URL']) expect(help.stdout).toMatch(new RegExp(`^\\s+${setting}\\b`, 'm'));
  }, 60_000);
});
