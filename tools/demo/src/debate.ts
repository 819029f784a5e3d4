import type { Reply } from '@agora/contracts';
import { playScript, runLlmDebate, type DebateClient, type Persona } from '@agora/debate';
import { EXAMPLE_PARTICIPANTS, EXAMPLE_TOPIC, exampleScript } from '@agora/domain-debate';
import { recordedModelCalls } from '@agora/participants';
import { ProviderLayer, providersConfigFromEnv } from '@agora/providers';
import { until, type Fleet } from './fleet.js';

type Say = (line: string) => void;

/** Each debater's model budget when personas are played by models (AGORA_DEBATE_BUDGET overrides), in the price table's currency. */
const DEFAULT_DEBATER_BUDGET = 1;

/** The models the personas use when keys are set: the first provider with a key, cheapest first (AGORA_DEBATE_MODELS overrides: "saylor=openai:gpt-4.1,hayes=anthropic:..."). */
const CANDIDATES: Record<string, string> = { GOOGLE_GENERATIVE_AI_API_KEY: 'google:gemini-2.5-flash', OPENAI_API_KEY: 'openai:gpt-4.1', ANTHROPIC_API_KEY: 'anthropic:claude-sonnet-4-20250514' };

export function personasFromEnv(env: NodeJS.ProcessEnv): Persona[] | undefined {
  const override = env['AGORA_DEBATE_MODELS']?.trim();
  const chosen = new Map<string, string>();
  if (override) {
    for (const pair of override.split(',')) {
      const [agent, model] = pair.split('=').map((s) => s.trim());
      if (agent && model) chosen.set(agent, model);
    }
  }
  const fallback = Object.entries(CANDIDATES).find(([key]) => env[key])?.[1];
  if (!override && !fallback) return undefined;
  return EXAMPLE_PARTICIPANTS.map((p) => ({ ...p, model: chosen.get(p.agentId) ?? fallback ?? 'openai:gpt-4.1' }));
}

/**
 * The debate seed's test debate ("Bitcoin is digital gold", Saylor against Hayes) against a running
 * Agora: scripted moves by default; personas played by models through the provider layer when a
 * provider key is set. Prints every stage transition as it happens and the final ThreadCrux.
 */
export async function debateDemo(fleet: Fleet, say: Say, options: { run: string; consoleUrl: string; env: NodeJS.ProcessEnv }): Promise<void> {
  await fleet.enlist({ saylor: { roles: ['debater'] }, hayes: { roles: ['debater'] } });
  const debateId = `btc-gold-${options.run}`;
  const client: DebateClient = {
    move: (agentId, payload) => fleet.send(agentId, 'PostDebateMove', payload) as Promise<Reply<{ events: string[] }>>,
    debate: (id) => fleet.query('GetDebate', { debateId: id }),
  };
  await fleet.must('saylor', 'OpenDebate', { debateId, topic: EXAMPLE_TOPIC, participants: EXAMPLE_PARTICIPANTS });
  say(`\ndebate ${debateId} opened: "${EXAMPLE_TOPIC}", ${EXAMPLE_PARTICIPANTS.map((p) => p.agentId).join(' vs ')}`);
  say(`watch it live: ${options.consoleUrl}/debate/${debateId}\n`);
  let stage = 'DISCOVERY';
  let locks = 0;
  const report = async () => {
    const t = (await client.debate(debateId)).threads[0]!;
    for (const a of t.lockAttempts.slice(locks)) say(`  lock attempt ${a.attempt}: ${a.passed ? 'locked' : `failed (${a.failed.join(', ')})`}`);
    locks = t.lockAttempts.length;
    if (t.stage !== stage) say(`stage ${stage} -> ${(stage = t.stage)}`);
  };
  say(`stage ${stage}`);
  const personas = personasFromEnv(options.env);
  if (personas) {
    say(`personas played by models: ${personas.map((p) => `${p.agentId} on ${p.model}`).join(', ')}`);
    // Each debater's calls are reserved against its own model budget and recorded in its ledger.
    const layer = new ProviderLayer(providersConfigFromEnv(options.env), options.env);
    const budget = Number(options.env['AGORA_DEBATE_BUDGET'] ?? DEFAULT_DEBATER_BUDGET);
    for (const p of personas) await fleet.must(fleet.operatorId, 'SetModelBudget', { agentId: p.agentId, amount: budget, currency: layer.currency, note: 'the debate demo' });
    say(`model budget: ${budget} ${layer.currency} per debater`);
    const calls = new Map(personas.map((p) => [p.agentId, recordedModelCalls(fleet.clientOf(p.agentId), layer)]));
    const result = await runLlmDebate({
      calls: (agentId) => calls.get(agentId)!,
      client,
      debateId,
      personas,
      onTurn: (t) => {
        say(`  ${t.agentId} ${t.kind ?? ''} ${t.outcome}${t.outcome === 'accepted' ? '' : `: ${t.detail}`}`);
        void report();
      },
    });
    if (result.stopped) say(`stopped: ${result.stopped}`);
    say(`\n${result.turns} turns, ${result.calls} model calls, ${result.refusals} refused moves, cost $${result.costUsd.toFixed(4)}, ${(result.wallMs / 1000).toFixed(1)} s (the seed's targets: under $0.50 and 2 minutes)`);
    if (!result.complete) say(`the debate did not complete in ${result.turns} turns`);
  } else {
    say('scripted moves (set OPENAI_API_KEY, ANTHROPIC_API_KEY or GOOGLE_GENERATIVE_AI_API_KEY for personas played by models)');
    await playScript(client, debateId, exampleScript(), async (step) => {
      say(`  ${step.agentId} ${typeof step.move === 'function' ? step.move(await client.debate(debateId)).kind : step.move.kind}`);
      await report();
    });
  }
  const done = await until('the debate to complete', async () => {
    const d = await client.debate(debateId);
    return d.status === 'complete' ? d : undefined;
  });
  await report();
  const t = done.threads[0]!;
  say(`\noutcome: ${done.outcome}; moderator interventions: ${t.interventions.map((i) => i.kind).join(', ') || 'none'}; cheap concessions: ${t.concessions.filter((c) => !c.topClaimChanged).length}`);
  say('final ThreadCrux:');
  say(JSON.stringify({ crux: done.threads.find((x) => x.threadId === done.primaryThreadId)?.crux ?? t.crux }, null, 2));
}
