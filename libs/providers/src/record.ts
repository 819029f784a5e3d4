import type { CallOutcomeRecord } from '@agora/contracts';
import type { CallOutcome } from './layer.js';

/**
 * A provider outcome as the log records it (CallOutcomeRecord): the text verbatim, usage, cost,
 * latency, or the provider's error verbatim. The API key never appears in it: the layer never returns it.
 * The chamber's calls and an agent's ledger record it alike.
 */
export function outcomeRecord(outcome: CallOutcome<unknown>): CallOutcomeRecord {
  if (outcome.ok) {
    return { ok: true, text: outcome.text, output: outcome.output, responseModel: outcome.responseModel ?? null, finishReason: outcome.finishReason, usage: outcome.usage, cost: outcome.cost, latencyMs: outcome.latencyMs, attempts: outcome.attempts, retried: outcome.retried };
  }
  return { ok: false, error: outcome.error, usage: outcome.usage, cost: outcome.cost, costEstimated: false, latencyMs: outcome.latencyMs, attempts: outcome.attempts, retried: outcome.retried };
}

/**
 * An interrupted call, settled: the process that made it stopped before its outcome was recorded,
 * so whether the provider answered (and billed) is unknown. It is recorded failed (kind
 * `interrupted`) at its maximum cost (the reservation's own estimate of it), once: the budget
 * counts the interrupted call at most at what it could have cost, never twice, and the call is
 * never made again under the same id. `who` names the process in the message.
 */
export function interruptedRecord(maxCost: number, who = 'the process'): CallOutcomeRecord {
  return {
    ok: false,
    error: { kind: 'interrupted', message: `${who} stopped while this call was in flight; its answer, if any, was lost (counted at its maximum cost)`, retryable: true },
    usage: { inputTokens: 0, outputTokens: 0 },
    cost: maxCost,
    costEstimated: true,
    latencyMs: 0,
    attempts: 0,
    retried: [],
  };
}
