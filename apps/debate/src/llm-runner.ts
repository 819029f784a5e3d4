/**
 * The LLM debaters: personas played by models through the provider layer (@agora/providers, the
 * one shared with the chamber), one move per call, in pseudo-turns (round robin; each debater
 * speaks in the thread it attends to most, by the attention scorer; a debater whose move is
 * refused is told why and tries again, up to `retries` times). Every call goes through the
 * debater's own model-call ledger (`ModelCalls`, @agora/participants' recordedModelCalls): reserved
 * against its budget before, recorded after, under a call id derived from the debate's revision,
 * so a restarted runner replays what was called at that revision and calls nothing twice. Each
 * move also carries its call's usage (model, cost, tokens, latency), so the debate's cost is in its
 * log; the runner returns the wall time and the totals.
 */
import { AgoraError, type DebateView, type Participant } from '@agora/contracts';
import { attentionOf, threadsSeenBy } from '@agora/domain-debate';
import type { ModelCallOutcome, ModelCalls } from '@agora/participants';
import { uuidV5 } from '@agora/sdk';
import type { z } from 'zod';
import { ModelMove, movePromptOf, obligationsOf, systemPromptOf, toDebateMove } from './llm-context.js';
import type { DebateClient } from './scripted.js';

export interface Persona extends Participant {
  /** `<provider>:<model>`, with a price in the layer's table. */
  model: string;
}

export interface LlmDebateOptions {
  /** Each debater's model calls, signed as that debater (recordedModelCalls over its own Agora client). */
  calls(agentId: string): ModelCalls;
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
  /** not_reserved: the debater's ledger refused the call (no budget, or over it): the debate stops there. */
  outcome: 'accepted' | 'refused' | 'provider_error' | 'not_reserved';
  kind?: string;
  detail: string;
  costUsd: number;
  latencyMs: number;
  /** The call's outcome came from the log (a call made before a restart), not from the provider now. */
  replayed?: boolean;
}

export interface LlmDebateResult {
  debate: DebateView;
  complete: boolean;
  turns: number;
  /** Calls made now (not those answered from the log). */
  calls: number;
  /** Calls answered from the log: made before a restart, at the same revision of the debate. */
  replayed: number;
  refusals: number;
  providerErrors: number;
  costUsd: number;
  wallMs: number;
  /** Why the runner stopped before the debate completed or the turns ran out (a refused reservation), if it did. */
  stopped?: string;
}

/** Namespace of the debaters' call ids (UUIDv5). */
const DEBATE_CALLS_NAMESPACE = '3f9a7c52-1d84-4b6e-a0c3-5e2f8d9b7a14';

/**
 * The id of a debater's n-th call at one revision of the debate (n counts its attempts there:
 * refused moves and provider errors write nothing, so the revision stays): a runner restarted at
 * that revision asks for the same ids in the same order, and the ledger answers them from the log.
 */
export function debateCallId(debateId: string, agentId: string, threadId: string, revision: number, n: number): string {
  return uuidV5(`debate:${debateId}:${agentId}:${threadId}:${revision}:${n}`, DEBATE_CALLS_NAMESPACE);
}

/**
 * Where a debater speaks this turn: the first thread, by its attention, in which a move is due from
 * it (the others wait on it there); else the thread it attends to most (threadsSeenBy).
 */
export function threadFor(d: DebateView, agentId: string): string {
  const seen = threadsSeenBy(d, agentId);
  const open = attentionOf(d, agentId)
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score)
    .map((s) => d.threads.find((t) => t.threadId === s.threadId)!);
  const owed = open.find((t) => obligationsOf(d, t, agentId).length > 0);
  return owed?.threadId ?? seen[0] ?? d.threads[0]!.threadId;
}

/** Plays the personas until the debate completes or the turns run out; provider errors are reported verbatim and count as a lost turn. */
export async function runLlmDebate(options: LlmDebateOptions): Promise<LlmDebateResult> {
  const started = performance.now();
  const retries = options.retries ?? 2;
  const totals = { calls: 0, replayed: 0, refusals: 0, providerErrors: 0, costUsd: 0 };
  /** Calls asked for per debater, thread and revision (the n of debateCallId). */
  const asked = new Map<string, number>();
  let stopped: string | undefined;
  let debate = await options.client.debate(options.debateId);
  let turn = 0;
  for (; turn < (options.maxTurns ?? 80) && debate.status !== 'complete' && stopped === undefined; turn++) {
    const persona = options.personas[turn % options.personas.length]!;
    const threadId = options.threadId ?? threadFor(debate, persona.agentId);
    let refusal: string | undefined;
    for (let attempt = 0; attempt <= retries; attempt++) {
      const key = `${persona.agentId}/${threadId}/${debate.streamRevision}`;
      const n = asked.get(key) ?? 0;
      asked.set(key, n + 1);
      const request = {
        callId: debateCallId(options.debateId, persona.agentId, threadId, debate.streamRevision, n),
        purpose: `debate ${options.debateId} thread ${threadId} move`,
        model: persona.model,
        system: systemPromptOf(persona, debate),
        prompt: movePromptOf(debate, threadId, persona.agentId, refusal === undefined ? {} : { refusal }),
        schema: ModelMove,
        schemaName: 'debate_move',
        schemaDescription: 'One move of the debate',
        maxOutputTokens: options.maxOutputTokens ?? 800,
        ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      };
      let outcome: ModelCallOutcome<z.infer<typeof ModelMove>>;
      try {
        outcome = await options.calls(persona.agentId).call(request);
      } catch (error) {
        if (!(error instanceof AgoraError)) throw error;
        stopped = `${persona.agentId}'s call was not reserved: ${error.code}: ${error.message}`;
        options.onTurn?.({ turn, agentId: persona.agentId, threadId, model: persona.model, outcome: 'not_reserved', detail: stopped, costUsd: 0, latencyMs: 0 });
        break;
      }
      if (outcome.replayed) totals.replayed += 1;
      else {
        totals.calls += 1;
        totals.costUsd += outcome.cost;
      }
      const report = { turn, agentId: persona.agentId, threadId, model: persona.model, costUsd: outcome.cost, latencyMs: outcome.latencyMs, ...(outcome.replayed ? { replayed: true } : {}) };
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
  return { debate, complete: debate.status === 'complete', turns: turn, ...totals, wallMs: Math.round(performance.now() - started), ...(stopped === undefined ? {} : { stopped }) };
}
