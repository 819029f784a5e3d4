/**
 * The LLM debaters: personas played by models through the provider layer (@agora/providers, the
 * one shared with the chamber), one move per call, in pseudo-turns (round robin; each debater
 * speaks in the thread it attends to most, by the attention scorer; a debater whose move is
 * refused is told why and tries again, up to `retries` times). Each move carries its
 * call's usage (model, cost, tokens, latency), so the debate's cost is in its log; the runner
 * also returns the wall time and the totals.
 */
import type { DebateView, Participant } from '@agora/contracts';
import type { ProviderLayer } from '@agora/providers';
import { ModelMove, movePromptOf, systemPromptOf, threadFor, toDebateMove } from './llm-context.js';
import type { DebateClient } from './scripted.js';

export interface Persona extends Participant {
  /** `<provider>:<model>`, with a price in the layer's table. */
  model: string;
}

export interface LlmDebateOptions {
  layer: ProviderLayer;
  client: DebateClient;
  debateId: string;
  /** Every move in this thread. Default: each turn, threadFor (a thread where a move is due from the debater, else the one it attends to most). */
  threadId?: string;
  personas: readonly Persona[];
  /** Turns at most (a debate that is not complete by then stops). Default 80. */
  maxTurns?: number;
  /** Attempts after a refused move, per turn. Default 2. */
  retries?: number;
  maxOutputTokens?: number;
  temperature?: number;
  /** After every accepted or refused move, and every provider failure. */
  onTurn?(turn: TurnReport): void;
}

export interface TurnReport {
  turn: number;
  agentId: string;
  threadId: string;
  model: string;
  outcome: 'accepted' | 'refused' | 'provider_error';
  kind?: string;
  detail: string;
  costUsd: number;
  latencyMs: number;
}

export interface LlmDebateResult {
  debate: DebateView;
  complete: boolean;
  turns: number;
  calls: number;
  refusals: number;
  providerErrors: number;
  costUsd: number;
  wallMs: number;
}

/** Plays the personas until the debate completes or the turns run out; provider errors are reported verbatim and count as a lost turn. */
export async function runLlmDebate(options: LlmDebateOptions): Promise<LlmDebateResult> {
  const started = performance.now();
  const retries = options.retries ?? 2;
  const totals = { calls: 0, refusals: 0, providerErrors: 0, costUsd: 0 };
  let debate = await options.client.debate(options.debateId);
  let turn = 0;
  for (; turn < (options.maxTurns ?? 80) && debate.status !== 'complete'; turn++) {
    const persona = options.personas[turn % options.personas.length]!;
    const threadId = options.threadId ?? threadFor(debate, persona.agentId);
    let refusal: string | undefined;
    for (let attempt = 0; attempt <= retries; attempt++) {
      const outcome = await options.layer.generate({
        model: persona.model,
        system: systemPromptOf(persona, debate),
        prompt: movePromptOf(debate, threadId, persona.agentId, refusal === undefined ? {} : { refusal }),
        schema: ModelMove,
        schemaName: 'debate_move',
        schemaDescription: 'One move of the debate',
        maxOutputTokens: options.maxOutputTokens ?? 800,
        ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      });
      totals.calls += 1;
      totals.costUsd += outcome.cost;
      const report = { turn, agentId: persona.agentId, threadId, model: persona.model, costUsd: outcome.cost, latencyMs: outcome.latencyMs };
      if (!outcome.ok) {
        totals.providerErrors += 1;
        options.onTurn?.({ ...report, outcome: 'provider_error', detail: `${outcome.error.kind}${outcome.error.status ? ` ${outcome.error.status}` : ''}: ${outcome.error.message}` });
        break;
      }
      const move = toDebateMove(outcome.output);
      const usage = { model: persona.model, costUsd: outcome.cost, inputTokens: outcome.usage.inputTokens, outputTokens: outcome.usage.outputTokens, latencyMs: Math.round(outcome.latencyMs) };
      const reply = await options.client.move(persona.agentId, { debateId: options.debateId, threadId, move, usage });
      if (reply.ok) {
        options.onTurn?.({ ...report, outcome: 'accepted', kind: move.kind, detail: reply.result.events.join(', ') });
        break;
      }
      totals.refusals += 1;
      refusal = `${reply.error.code}: ${reply.error.message}`;
      options.onTurn?.({ ...report, outcome: 'refused', kind: move.kind, detail: refusal });
    }
    debate = await options.client.debate(options.debateId);
  }
  return { debate, complete: debate.status === 'complete', turns: turn, ...totals, wallMs: Math.round(performance.now() - started) };
}
