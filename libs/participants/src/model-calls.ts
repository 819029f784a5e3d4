/**
 * How a participant calls a model (design decision 9): once per call id, with a budget reserved in
 * the log before the call and the outcome (text verbatim, usage, cost, latency, or the provider's
 * error verbatim) recorded after it. A call id already recorded is answered from the log, never
 * called again, so a restarted participant repeats nothing.
 */
import type { CallOutcome, CallRequest } from '@agora/providers';

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
