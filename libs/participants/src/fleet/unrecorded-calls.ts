/**
 * Model calls made straight through the provider layer, without a record in the log: at most once
 * per call id in this process, and within the agent's budget as far as this process has spent it.
 * A stop-gap until the recorded calls (a reservation in the log before each call, the outcome after
 * it) are wired in its place: the fleet takes its calls from a factory, so that is one line.
 */
import type { CallOutcome, ProviderLayer } from '@agora/providers';
import type { ModelCallOutcome, ModelCallRequest, ModelCalls } from '../model-calls.js';

export function unrecordedModelCalls(layer: ProviderLayer, options: { budget?: number | undefined } = {}): ModelCalls & { spent(): number } {
  const made = new Map<string, Promise<CallOutcome<unknown>>>();
  let spent = 0;
  let reserved = 0;
  return {
    spent: () => spent,
    async call<T>(request: ModelCallRequest<T>): Promise<ModelCallOutcome<T>> {
      const earlier = made.get(request.callId);
      if (earlier) return { ...((await earlier) as CallOutcome<T>), replayed: true };
      const { callId, purpose: _purpose, ...call } = request;
      const model = typeof call.model === 'string' ? call.model : `${call.model.provider}:${call.model.model}`;
      const refused = (message: string): ModelCallOutcome<T> => ({ ok: false, model, provider: model.split(':')[0]!, attempts: 0, latencyMs: 0, usage: { inputTokens: 0, outputTokens: 0 }, cost: 0, retried: [], error: { kind: 'config', message, retryable: false }, replayed: false });
      let max = 0;
      try {
        if (options.budget !== undefined) max = layer.maxCost(call.model, (call.system?.length ?? 0) + call.prompt.length, call.maxOutputTokens ?? 4096);
      } catch (error) {
        return refused((error as Error).message);
      }
      if (options.budget !== undefined && spent + reserved + max > options.budget) {
        return refused(`budget exhausted: ${spent} spent and ${reserved} reserved of ${options.budget} ${layer.currency}; this call may cost up to ${max}`);
      }
      reserved += max;
      const pending = layer.generate<T>(call).finally(() => (reserved -= max));
      made.set(callId, pending);
      const outcome = (await pending) as CallOutcome<T>;
      spent += outcome.cost;
      return { ...outcome, replayed: false };
    },
  };
}
