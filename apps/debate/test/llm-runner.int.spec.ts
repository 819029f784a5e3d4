/**
 * The LLM runner plays the seed's two personas through the protocol via the provider layer, against
 * stand-in servers speaking OpenAI's and Anthropic's real wire APIs (one persona on each): per-move
 * prompts with the stage-aware context, structured output, round-robin turns, a refused move
 * retried with the refusal in the prompt, and the cost and wall time of the debate recorded.
 */
import { DEFAULT_PRICES, ProviderLayer, StandIns, type ProvidersConfig } from '@agora/providers';
import { runLlmDebate, type TurnReport } from '../src/llm-runner.js';
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

  it("plays the seed's debate to a validated crux, with its cost and wall time", async () => {
    const model = personaModel();
    stands.script(model);
    const config: ProvidersConfig = { providers: stands.providers, prices: { ...DEFAULT_PRICES }, currency: 'USD', timeoutMs: 10_000, maxAttempts: 2, backoffMs: 10 };
    const layer = new ProviderLayer(config, stands.env);
    await h.open('llm-debate');
    const turns: TurnReport[] = [];
    const result = await runLlmDebate({
      layer,
      client: h.client,
      debateId: 'llm-debate',
      personas: [
        { agentId: 'saylor', persona: 'Michael Saylor: Bitcoin maximalist', model: 'openai:gpt-4.1' },
        { agentId: 'hayes', persona: 'Arthur Hayes: macro trader', model: 'anthropic:claude-sonnet-4-20250514' },
      ],
      onTurn: (t) => turns.push(t),
    });
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
    expect(lockPrompt).toMatch(/Moves allowed now: COMMIT, STEELMAN, GRADE_STEELMAN, DECLARE_FALSIFIER, ACCEPT_FALSIFIER, CLAIM, QUESTION\./);
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
});
