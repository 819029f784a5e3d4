/**
 * A debater (seed 004) played by a model, in every thread of the debates it takes part in: after
 * each message of a transcript, when its turn has come (round robin over the debaters, the
 * moderator's messages aside), it asks its model for one move with the debate runner's stage-aware
 * context (debate-context.ts), in the thread where a move is due from it (else the one it attends to
 * most), and posts it with the call's usage. A move the debate refuses is asked again with the
 * refusal, up to `retries` times; an answer that does not fit the move schema is retried once. With no
 * move that fits, the debater lets its turn pass (the debate has no abstention; its moderator and
 * budgets keep it moving).
 */
import type { DebateView } from '@agora/contracts';
import { onDebateTurn, uuidV5, type Agora, type RoleLoop, type RoleLoopOptions } from '@agora/sdk';
import { ModelMove, movePromptOf, systemPromptOf, threadFor, toDebateMove } from './debate-context.js';
import { callModel, type ParticipantSettings } from './participant.js';

/** Whose turn it is: the debater after the author of the last move (the moderator's messages aside); the first debater to open. */
export function debaterDue(debate: DebateView): string | undefined {
  const order = debate.participants.map((p) => p.agentId);
  const last = debate.messages.filter((m) => m.kind !== 'MODERATOR' && order.includes(m.agentId)).at(-1);
  if (!last) return order[0];
  return order[(order.indexOf(last.agentId) + 1) % order.length];
}

/** Plays this agent's turns in its debates, with its model. */
export function runDebater(agora: Agora, settings: ParticipantSettings & { retries?: number }, options: RoleLoopOptions = {}): RoleLoop {
  const me = settings.agentId;
  const retries = settings.retries ?? 2;
  return onDebateTurn(
    agora,
    async ({ debate, event }) => {
      if (debaterDue(debate) !== me) return undefined;
      const persona = debate.participants.find((p) => p.agentId === me)!;
      const turn = debate.messages.length;
      const threadId = threadFor(debate, me);
      let calls = 0;
      let cost = 0;
      let refusal: string | undefined;
      let invalid = 0;
      const report = (outcome: 'acted' | 'silent', what: string, error?: string) =>
        settings.report?.({ agent: me, role: 'debater', outcome, what, model: settings.model, calls, cost: Math.round(cost * 1e6) / 1e6, ...(error === undefined ? {} : { error }) });
      for (let attempt = 0; attempt <= retries; attempt++) {
        const outcome = await callModel(settings.calls, {
          callId: uuidV5(`debate:${debate.debateId}:${turn}:${me}:${attempt}`),
          purpose: `move ${turn} of debate ${debate.debateId} (${threadId})${attempt > 0 ? ' (retry)' : ''}`,
          model: settings.model,
          system: systemPromptOf(persona, debate),
          prompt: movePromptOf(debate, threadId, me, refusal === undefined ? {} : { refusal }),
          schema: ModelMove,
          schemaName: 'debate_move',
          maxOutputTokens: settings.maxOutputTokens ?? 800,
          ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
        });
        if ('refused' in outcome) {
          report('silent', `no move ${turn} in ${debate.debateId}`, outcome.refused);
          return undefined;
        }
        calls += 1;
        cost += outcome.cost;
        if (!outcome.ok) {
          const error = `${outcome.error.kind}${outcome.error.status === undefined ? '' : ` ${outcome.error.status}`}: ${outcome.error.message}`;
          if (outcome.error.kind === 'invalid_output' && ++invalid < 2) {
            refusal = `your answer did not fit the move schema (${error})`;
            continue;
          }
          report('silent', `no move ${turn} in ${debate.debateId}`, error);
          return undefined;
        }
        const move = toDebateMove(outcome.output);
        const usage = { model: settings.model, costUsd: outcome.cost, inputTokens: outcome.usage.inputTokens, outputTokens: outcome.usage.outputTokens, latencyMs: Math.round(outcome.latencyMs) };
        const reply = await agora.trySend('PostDebateMove', { debateId: debate.debateId, threadId, move, usage }, { commandId: uuidV5(`debater:${me}:${debate.debateId}:${turn}:${attempt}`), causationId: event.id });
        if (reply.ok || reply.error.code === 'command_id_reused') {
          report('acted', `${move.kind} in ${debate.debateId} (${threadId})`);
          return undefined;
        }
        refusal = `${reply.error.code}: ${reply.error.message}`;
      }
      report('silent', `no move ${turn} in ${debate.debateId}: every attempt was refused`, refusal);
      return undefined;
    },
    options,
  );
}
