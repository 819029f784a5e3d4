/**
 * The LLM runner plays the seed's two personas through the protocol via the provider layer, against
 * stand-in servers speaking OpenAI's and Anthropic's real wire APIs (one persona on each): per-move
 * prompts with the stage-aware context, structured output, round-robin turns, a refused move
 * retried with the refusal in the prompt, and the cost and wall time of the debate recorded.
 */
import { DEFAULT_PRICES, ProviderLayer, StandIns, type ProvidersConfig } from '@agora/providers';
import { runLlmDebate, type TurnReport } from '../src/llm-runner.js';
import type { DebateClient } from '../src/scripted.js';
import { personaModel } from './support/persona-model.js';
import { startHarness, type Harness } from './support/harness.js';

describe('the LLM debaters against stand-in providers', () => {
  let h: Harness;
  let stands: StandIns;
  beforeAll(async () => {
    h = await startHarness();
    stands = await StandIns.start();
  }, 30_000);
  afterAll(async () => {
    await stands?.close();
    await h?.close();
  });

  /** Saylor on OpenAI's wire API and Hayes on Anthropic's, both played by the persona stand-in. */
  async function play(debateId: string, [saylor, hayes]: [string, string], maxTurns?: number) {
    const model = personaModel();
    stands.script(model);
    const config: ProvidersConfig = { providers: stands.providers, prices: { ...DEFAULT_PRICES }, currency: 'USD', timeoutMs: 10_000, maxAttempts: 2, backoffMs: 10 };
    const turns: TurnReport[] = [];
    const result = await runLlmDebate({
      calls: h.calls(new ProviderLayer(config, stands.env)),
      client: h.client,
      debateId,
      personas: [
        { agentId: 'saylor', persona: saylor, model: 'openai:gpt-4.1' },
        { agentId: 'hayes', persona: hayes, model: 'anthropic:claude-sonnet-4-20250514' },
      ],
      ...(maxTurns === undefined ? {} : { maxTurns }),
      onTurn: (t) => turns.push(t),
    });
    return { result, turns };
  }

  it("plays the seed's debate to a validated crux, with its cost and wall time", async () => {
    await h.open('llm-debate');
    const { result, turns } = await play('llm-debate', ['Michael Saylor: Bitcoin maximalist', 'Arthur Hayes: macro trader']);
    expect(result.complete).toBe(true);
    expect(result.debate).toMatchObject({ status: 'complete', outcome: 'converged' });
    const thread = result.debate.threads[0]!;
    expect(thread.crux).toMatchObject({ validated: true, positions: { saylor: { side: 'YES' }, hayes: { side: 'NO' } } });
    expect(thread.lockAttempts.length).toBeGreaterThanOrEqual(2); // the INCOMPLETE grade held the first lock back
    expect(thread.steelmans.find((s) => s.target === 'hayes')!.grade).toBe('INCOMPLETE');

    // Round robin: the accepted moves alternate between the personas, each on its own provider's wire API.
    const accepted = turns.filter((t) => t.outcome === 'accepted');
    expect(accepted.map((t) => t.agentId).slice(0, 6)).toEqual(['saylor', 'hayes', 'saylor', 'hayes', 'saylor', 'hayes']);
    expect(stands.servers.openai.requests.length).toBeGreaterThan(10);
    expect(stands.servers.anthropic.requests.length).toBeGreaterThan(10);
    expect(stands.servers.google.requests).toHaveLength(0);
    expect(stands.requests.every((r) => r.structured && r.authenticated)).toBe(true);

    // The refused CHALLENGE in DISCOVERY: reported, and the retry's prompt carries the refusal.
    expect(turns[0]).toMatchObject({ agentId: 'saylor', outcome: 'refused', kind: 'CHALLENGE', detail: expect.stringMatching(/^illegal_state: CHALLENGE refused in stage DISCOVERY/) });
    expect(result.refusals).toBe(1);
    expect(stands.servers.openai.requests[1]!.prompt).toMatch(/Your previous answer was refused: illegal_state: CHALLENGE refused in stage DISCOVERY/);
    // The stage-aware context: stage, budget, allowed moves, the gate's needs, what is due.
    const lockPrompt = stands.requests.find((r) => /Stage: CRUX_LOCK/.test(r.prompt))!.prompt;
    expect(lockPrompt).toMatch(/Moves allowed now: COMMIT, STEELMAN, GRADE_STEELMAN, DECLARE_FALSIFIER, ACCEPT_FALSIFIER, CLAIM, QUESTION, PROPOSE_THREAD\./);
    expect(lockPrompt).toMatch(/The gate still needs: commitments: .*/);
    expect(lockPrompt).toMatch(/Due from you now, most pressing first: COMMIT/);
    expect(lockPrompt).toMatch(/- DECLARE_FALSIFIER: What evidence would change your mind\?/);

    // Cost: every call priced from the table, recorded with the moves in the log; wall time measured.
    expect(result.calls).toBe(stands.requests.length);
    expect(result.costUsd).toBeGreaterThan(0);
    const acceptedCost = accepted.reduce((sum, t) => sum + t.costUsd, 0);
    expect(result.debate.usage.costUsd).toBeCloseTo(acceptedCost, 9);
    expect(result.debate.usage.calls).toBe(accepted.length);
    expect(result.wallMs).toBeGreaterThan(0);
    expect(result.wallMs).toBeLessThan(120_000);
  }, 120_000);

  it("records every call in the debater's ledger; a runner restarted after a call, before its move, gets that call from the log", async () => {
    await h.open('llm-restart');
    const model = personaModel();
    stands.script(model);
    const config: ProvidersConfig = { providers: stands.providers, prices: { ...DEFAULT_PRICES }, currency: 'USD', timeoutMs: 10_000, maxAttempts: 2, backoffMs: 10 };
    const personas = [
      { agentId: 'saylor', persona: 'Michael Saylor: Bitcoin maximalist', model: 'openai:gpt-4.1' },
      { agentId: 'hayes', persona: 'Arthur Hayes: macro trader', model: 'anthropic:claude-sonnet-4-20250514' },
    ];
    const before = stands.requests.length;
    // The first runner stops (its process dies) after its first call, before the move is sent.
    const dying: DebateClient = { debate: (id) => h.client.debate(id), move: () => Promise.reject(new Error('the runner died before its move')) };
    await expect(runLlmDebate({ calls: h.calls(new ProviderLayer(config, stands.env)), client: dying, debateId: 'llm-restart', personas, maxTurns: 1 })).rejects.toThrow('died before its move');
    expect(stands.requests.length).toBe(before + 1);
    const first = stands.requests.at(-1)!;

    // A new runner (new clients, new layer): its first call is the same call id at the same revision, answered from the ledger.
    const turns: TurnReport[] = [];
    const result = await runLlmDebate({ calls: h.calls(new ProviderLayer(config, stands.env)), client: h.client, debateId: 'llm-restart', personas, maxTurns: 4, onTurn: (t) => turns.push(t) });
    expect(result.replayed).toBe(1);
    expect(turns[0]).toMatchObject({ agentId: 'saylor', replayed: true });
    expect(stands.requests.length).toBe(before + 1 + result.calls);
    expect(stands.requests.slice(before + 1).some((r) => r.prompt === first.prompt && r.system === first.system)).toBe(false);

    // The ledgers hold each call once, reserved then recorded, with its cost; the debate's usage counts the accepted moves.
    const ledgers = (await Promise.all(['saylor', 'hayes'].map((a) => h.context.store.readStream(`model_calls-${a}@${new Date().toISOString().slice(0, 7)}`)))).flat();
    const reserved = new Set(ledgers.filter((e) => e.type === 'ModelCallReserved' && (e.data as { purpose: string }).purpose.startsWith('debate llm-restart ')).map((e) => (e.data as { callId: string }).callId));
    const recorded = ledgers.filter((e) => e.type === 'ModelCallRecorded' && reserved.has((e.data as { callId: string }).callId));
    expect(reserved.size).toBe(1 + result.calls);
    expect(recorded).toHaveLength(reserved.size);
    expect(recorded.reduce((sum, e) => sum + (e.data as { outcome: { cost: number } }).outcome.cost, 0)).toBeGreaterThan(0);
  }, 120_000);

  it('a debate of several threads: a thread spawned on a second bite, the debaters led by attention, duplicate threads merged, then coalitions and common ground', async () => {
    await h.open('multi-debate', [
      { threadId: 'main', topic: 'Bitcoin is digital gold' },
      { threadId: 'reserve', topic: 'Bitcoin as a treasury reserve asset for companies' },
    ]);
    const move = (agentId: string, threadId: string, m: Record<string, unknown>) => h.client.move(agentId, { debateId: 'multi-debate', threadId, move: m });
    // The second bite: hayes proposes a sub-dispute, and it spawns only once saylor seconds it.
    expect(await move('hayes', 'main', { kind: 'PROPOSE_THREAD', topic: 'Will spot ETF flows decide the Bitcoin price?', text: 'Flows, not scarcity, set the price.' })).toMatchObject({ ok: true, result: { events: ['DebateMessagePosted', 'ThreadSpawnProposed'] } });
    expect(await move('hayes', 'main', { kind: 'SECOND_THREAD', proposalSeq: 1, text: 'me again' })).toMatchObject({ ok: false, error: { code: 'illegal_state' } });
    expect(await move('saylor', 'main', { kind: 'SECOND_THREAD', proposalSeq: 1, text: 'Take it up.' })).toMatchObject({ ok: true, result: { events: ['DebateMessagePosted', 'ThreadSpawned'] } });
    // A topic that duplicates an open thread is refused, naming it.
    expect(await move('saylor', 'main', { kind: 'PROPOSE_THREAD', topic: 'Bitcoin as a treasury reserve asset', text: 'x' })).toMatchObject({ ok: false, error: { code: 'invalid_command', details: { threadId: 'reserve' } } });

    const { result, turns } = await play('multi-debate', ['Michael Saylor: Bitcoin maximalist, treasury reserve', 'Arthur Hayes: macro trader, ETF flows and liquidity'], 400);
    expect(result.complete).toBe(true);
    const d = result.debate;
    expect(d.threads.map((t) => [t.threadId, t.parentThreadId])).toEqual([['main', null], ['reserve', null], ['main-s1', 'main']]);
    // The stand-in models propose the same question in every thread: the first thread to accept it keeps it, the others merge into it.
    const merged = d.threads.filter((t) => t.mergedInto !== null);
    const kept = d.threads.filter((t) => t.mergedInto === null);
    expect(merged.length).toBeGreaterThanOrEqual(1);
    expect(kept).toHaveLength(1);
    expect(merged.every((t) => t.mergedInto === kept[0]!.threadId)).toBe(true);
    expect(kept[0]).toMatchObject({ stage: 'CONVERGED', crux: { validated: true } });
    expect(d).toMatchObject({ status: 'complete', outcome: 'converged', primaryThreadId: kept[0]!.threadId });
    // Attention led the debaters: they spoke in more than one thread.
    expect(new Set(turns.filter((t) => t.outcome === 'accepted').map((t) => t.threadId)).size).toBeGreaterThanOrEqual(2);
    // After the debate: opponents form no coalition; the log's DebateCompleted says so, with the common ground.
    const events = await h.context.store.readStream('debate-multi-debate');
    const completed = events.find((e) => e.type === 'DebateCompleted')!.data as { coalitions: unknown[]; commonGround: { agreedQuestions: unknown[]; sharedMetrics: unknown[] } };
    expect(completed.coalitions).toEqual([]);
    expect(completed.commonGround).toMatchObject({ agreedQuestions: [] });
    expect(events.filter((e) => e.type === 'ThreadsMerged')).toHaveLength(merged.length);
  }, 180_000);
});
