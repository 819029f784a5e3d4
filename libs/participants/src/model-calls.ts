/**
 * How a participant calls a model (design decision 9): once per call id, with a budget reserved in
 * the log before the call and the outcome (text verbatim, usage, cost, latency, or the provider's
 * error verbatim) recorded after it. A call id already recorded is answered from the log, never
 * called again, so a restarted participant repeats nothing.
 */
import { AgoraError, type CallOutcomeRecord, type CommandResult, type ModelCallView, type Reply } from '@agora/contracts';
import { interruptedRecord, modelRefText, outcomeRecord, type CallOutcome, type CallRequest, type ProviderLayer } from '@agora/providers';
import { replyError, uuidV5, type Agora, type CommandInput } from '@agora/sdk';
import { z } from 'zod';

/** What a participant asks for: the provider layer's request, named by a call id derived from the event that caused it. */
export interface ModelCallRequest<T> extends CallRequest<T> {
  /** Deterministic: the same triggering event and attempt always give the same id. */
  callId: string;
  /** What the call is for, in a few words (`review proposal p-1 round 2`): shown in the log and the audit. */
  purpose: string;
}

/** The outcome, and whether it came from the log (`replayed`) rather than a call made now. */
export type ModelCallOutcome<T> = CallOutcome<T> & { replayed: boolean };

export interface ModelCalls {
  call<T>(request: ModelCallRequest<T>): Promise<ModelCallOutcome<T>>;
}

export interface RecordedModelCallsOptions {
  /** Output tokens at most of a request that sets none: the call's maximum cost, reserved before it, counts them. Default 1,024. */
  defaultMaxOutputTokens?: number;
  /** Names the process in the message of a call it settles as interrupted (default `the participant's process`). */
  processName?: string;
  /** Attempts at sending a reservation or an outcome through a timeout or an unavailable service (same command id each time). Default 4. */
  sendAttempts?: number;
  /** After each call made now, and each answered from the log. */
  onCall?(request: ModelCallRequest<unknown>, outcome: ModelCallOutcome<unknown>): void;
}

export const DEFAULT_MAX_OUTPUT_TOKENS = 1024;

/** Namespace of the command ids of the ledger commands a participant sends (UUIDv5). */
const LEDGER_NAMESPACE = '8d6f2c1a-3b5e-4f70-9a2d-6c4e8b1f0a37';
const RETRYABLE = new Set(['timeout', 'unavailable', 'conflict']);

/**
 * The participant's model calls, each one recorded in its ledger (the registry's `model_calls-<agentId>@<YYYY-MM>`, a month's):
 * - the call id is looked up first (GetModelCall). Recorded: its outcome is returned from the log
 *   (`replayed: true`; a structured output is parsed again from the recorded text with the
 *   request's schema) and the provider is not called. Reserved with no outcome (the process was
 *   killed mid-call): it is settled now as `interrupted` at its maximum cost, and that failure is
 *   returned (`replayed: true`); the provider is not called again under that id;
 * - otherwise the call is reserved (ReserveModelCall, its maximum cost from `layer.maxCost`), made
 *   (`layer.generate`), and its outcome recorded (RecordModelCallOutcome) before it is returned.
 *
 * Throws, before anything is called: the layer's ConfigError (a model with no provider or price),
 * or the AgoraError of a refused reservation (`illegal_state`: no budget, over the budget, call id
 * taken; `details.reason` says which). Throws after the call when its outcome could not be
 * recorded (the next start settles it as interrupted): an outcome the log does not hold is never
 * handed to the participant. The client must sign as the agent whose ledger it is; one process per
 * agent makes its calls (a second one would settle the first one's calls in flight as interrupted).
 */
export function recordedModelCalls(agora: Agora, layer: ProviderLayer, options: RecordedModelCallsOptions = {}): ModelCalls {
  const agentId = agora.agentId;
  if (agentId === undefined) throw new TypeError('recordedModelCalls: the Agora client has no signer (its agent reserves and records its own calls)');
  const attempts = options.sendAttempts ?? 4;
  const processName = options.processName ?? "the participant's process";

  async function send<N extends 'ReserveModelCall' | 'RecordModelCallOutcome'>(type: N, payload: CommandInput<N>, commandName: string): Promise<CommandResult> {
    const commandId = uuidV5(`${commandName}:${agentId}:${(payload as { callId: string }).callId}`, LEDGER_NAMESPACE);
    let reply: Reply<CommandResult> | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      reply = await agora.trySend(type, payload, { commandId });
      if (reply.ok || !RETRYABLE.has(reply.error.code)) break;
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
    }
    if (!reply!.ok) throw replyError(reply!.error);
    return reply!.result;
  }

  async function recorded(callId: string): Promise<ModelCallView | undefined> {
    const reply = await agora.tryQuery('GetModelCall', { agentId: agentId!, callId });
    if (reply.ok) return reply.result;
    if (reply.error.code === 'not_found') return undefined;
    throw replyError(reply.error);
  }

  async function settle<T>(request: ModelCallRequest<T>, view: ModelCallView): Promise<ModelCallOutcome<T>> {
    try {
      await send('RecordModelCallOutcome', { agentId: agentId!, callId: view.callId, outcome: interruptedRecord(view.maxCost, processName) }, 'interrupted');
    } catch (error) {
      // Recorded meanwhile (by a process still running after all): that outcome stands.
      if (!(error instanceof AgoraError && error.code === 'illegal_state')) throw error;
    }
    const settled = await recorded(view.callId);
    if (!settled?.outcome) throw new AgoraError('internal', `call ${view.callId} of ${agentId} is still without an outcome after it was settled`);
    return replay(request, settled.model, settled.outcome);
  }

  async function call<T>(request: ModelCallRequest<T>): Promise<ModelCallOutcome<T>> {
    const known = await recorded(request.callId);
    if (known) return known.outcome ? replay(request, known.model, known.outcome) : settle(request, known);
    const model = typeof request.model === 'string' ? request.model : modelRefText(request.model);
    const maxOutputTokens = request.maxOutputTokens ?? options.defaultMaxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
    const maxCost = layer.maxCost(model, promptChars(request), maxOutputTokens);
    await send('ReserveModelCall', { agentId: agentId!, callId: request.callId, purpose: request.purpose, model, maxCost, currency: layer.currency }, 'reserve');
    const made = await layer.generate<T>({ ...request, maxOutputTokens });
    await send('RecordModelCallOutcome', { agentId: agentId!, callId: request.callId, outcome: outcomeRecord(made as CallOutcome<unknown>) }, 'record');
    return { ...made, replayed: false };
  }

  // A call id asked for again while its call is in flight here waits for that call (and gets its outcome, replayed)
  // instead of finding its reservation without an outcome and settling it as interrupted.
  const inFlight = new Map<string, Promise<ModelCallOutcome<unknown>>>();
  return {
    async call<T>(request: ModelCallRequest<T>): Promise<ModelCallOutcome<T>> {
      const running = inFlight.get(request.callId);
      if (running) return { ...((await running) as ModelCallOutcome<T>), replayed: true };
      const started = call(request);
      inFlight.set(request.callId, started);
      try {
        const outcome = await started;
        options.onCall?.(request as ModelCallRequest<unknown>, outcome);
        return outcome;
      } finally {
        inFlight.delete(request.callId);
      }
    },
  };
}

/** Characters sent with a request (system, prompt, the output's JSON schema): what its input tokens are estimated from. */
function promptChars(request: CallRequest<unknown>): number {
  let chars = (request.system?.length ?? 0) + request.prompt.length;
  if (request.schema) {
    try {
      chars += JSON.stringify(z.toJSONSchema(request.schema)).length;
    } catch {
      // A schema with no JSON form (a transform): the provider is sent what the SDK makes of it; the estimate goes without.
    }
  }
  return chars;
}

/** A recorded outcome as the provider layer returns one, marked replayed. */
export function replay<T>(request: Pick<CallRequest<T>, 'schema'>, model: string, record: CallOutcomeRecord): ModelCallOutcome<T> {
  const provider = model.slice(0, model.indexOf(':'));
  const common = { model, provider, attempts: record.attempts, latencyMs: record.latencyMs, usage: record.usage, cost: record.cost, retried: record.retried, replayed: true };
  if (!record.ok) return { ok: false, ...common, error: record.error };
  const success = { ok: true as const, ...common, text: record.text, responseModel: record.responseModel ?? undefined, finishReason: record.finishReason };
  if (!request.schema) return { ...success, output: record.text as T };
  let parsed: ReturnType<z.ZodType<T>['safeParse']> | undefined;
  try {
    parsed = request.schema.safeParse(JSON.parse(record.text));
  } catch {
    parsed = undefined;
  }
  if (parsed?.success) return { ...success, output: parsed.data };
  const reason = parsed ? (parsed.error.issues[0]?.message ?? 'it does not match the schema') : 'it is not JSON';
  return { ok: false, ...common, error: { kind: 'invalid_output', message: `the recorded answer does not fit the request's schema: ${reason}`, text: record.text, retryable: false } };
}
