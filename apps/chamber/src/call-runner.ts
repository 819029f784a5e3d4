import { ArbiterVerdict, CrossExamAnswer, PanelAnswer, type CallOutcomeRecord, type ChamberCallRequested, type DataOf } from '@agora/contracts';
import { DomainError } from '@agora/decider';
import { chamberStreamId, type ChamberDecider, type ChamberSessionState } from '@agora/domain-chamber';
import type { EventStore } from '@agora/eventstore';
import { interruptedRecord, outcomeRecord, type ProviderLayer } from '@agora/providers';
import type { z } from 'zod';
import { issueInternalCommand, type KeyedLock, type ServiceIdentity } from '@agora/runtime';
import { contextOfEvent, inContext } from '@agora/tracing';

type Request = DataOf<typeof ChamberCallRequested>;

const SCHEMAS: Record<Request['schema'], z.ZodType<unknown>> = { PanelAnswer, CrossExamAnswer, ArbiterVerdict };

export interface CallRunnerOptions {
  store: EventStore;
  layer: ProviderLayer;
  decider: ChamberDecider;
  locks: KeyedLock;
  as: ServiceIdentity;
  now: () => number;
  logger: { warn(message: string, ...details: unknown[]): void; log?(message: string): void };
}

/**
 * Makes the calls the log asks for: a ChamberCallRequested is already in the log when a call
 * starts, and its outcome is recorded with a command id derived from the call, so a call is made
 * at most once per request and its outcome recorded once. Calls run concurrently (a phase takes as
 * long as its slowest panelist). Only the replica that runs the chamber's reactor (its lease) makes
 * calls; it settles what a stopped holder left in flight before it starts (settleInterrupted), and
 * pausing or stopping aborts its own calls without recording them, for the next holder to settle.
 */
export class CallRunner {
  private readonly inflight = new Map<string, AbortController>();
  private closed = false;
  /** Not running the calls now: another replica holds the chamber's lease, or not started yet. */
  private paused = true;

  constructor(private readonly options: CallRunnerOptions) {}

  get callsInFlight(): number {
    return this.inflight.size;
  }

  /** Settles every call left pending by a stopped process (run before the reactor starts). Returns how many. */
  async settleInterrupted(sessions: Iterable<ChamberSessionState>): Promise<number> {
    let settled = 0;
    for (const state of sessions) {
      for (const call of state.calls) {
        if (call.status !== 'pending') continue;
        await this.record(call.request, interruptedRecord(call.request.maxCost, 'the chamber process'), `interrupted-${call.request.sessionId}-${call.request.callId}`);
        settled++;
      }
    }
    return settled;
  }

  /**
   * Starts a requested call unless it is already in flight here. With the metadata of the event
   * that requested it, the call (its GenAI span) and the recording of its outcome continue that
   * event's trace.
   */
  launch(request: Request, cause?: Readonly<Record<string, unknown>>): void {
    const key = `${request.sessionId}/${request.callId}`;
    if (this.closed || this.paused || this.inflight.has(key)) return;
    const abort = new AbortController();
    this.inflight.set(key, abort);
    void inContext(contextOfEvent(cause ?? {}), () => this.perform(request, abort.signal)).finally(() => {
      if (this.inflight.get(key) === abort) this.inflight.delete(key);
    });
  }

  /** Records that a call was never made (the session was cancelled before it started). */
  skip(request: Request, reason: string): Promise<void> {
    return this.record(request, { ok: false, error: { kind: 'aborted', message: reason, retryable: false }, usage: { inputTokens: 0, outputTokens: 0 }, cost: 0, costEstimated: false, latencyMs: 0, attempts: 0, retried: [] }, `skipped-${request.sessionId}-${request.callId}`);
  }

  private async perform(request: Request, signal: AbortSignal): Promise<void> {
    const outcome = await this.options.layer.generate<unknown>({
      model: request.model,
      system: request.system,
      prompt: request.prompt,
      schema: SCHEMAS[request.schema],
      schemaName: request.schema,
      maxOutputTokens: request.maxOutputTokens,
      signal,
    });
    if (signal.aborted || this.closed || this.paused) return;
    const record = outcomeRecord(outcome);
    this.options.logger.log?.(
      `${request.sessionId} ${request.callId} ${request.model}: ${outcome.ok ? `answered in ${outcome.latencyMs} ms, ${outcome.usage.inputTokens}+${outcome.usage.outputTokens} tokens, cost ${outcome.cost}` : `failed (${outcome.error.kind}${outcome.error.status ? ` ${outcome.error.status}` : ''}): ${outcome.error.message}`}`,
    );
    await this.record(request, record, `call-${request.sessionId}-${request.callId}`);
  }

  private async record(request: Request, outcome: CallOutcomeRecord, commandId: string): Promise<void> {
    const { store, decider, locks, as, now } = this.options;
    const streamId = chamberStreamId(request.sessionId);
    for (let attempt = 1; ; attempt++) {
      try {
        const at = new Date(now()).toISOString();
        await locks.run(streamId, () =>
          issueInternalCommand({ streamId, decider, type: 'RecordChamberCallOutcome', payload: { sessionId: request.sessionId, callId: request.callId, outcome, at } }, { store, as, commandId, now: at }),
        );
        return;
      } catch (error) {
        if (error instanceof DomainError) {
          this.options.logger.warn(`[chamber] outcome of ${request.sessionId} ${request.callId} refused (${error.code}): ${error.message}`);
          return;
        }
        if (this.closed || attempt >= 5) {
          this.options.logger.warn(`[chamber] outcome of ${request.sessionId} ${request.callId} not recorded (${(error as Error).message}); the next start settles it as interrupted`);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt));
      }
    }
  }

  /**
   * Stops making calls until `resume`: the calls in flight are aborted and their outcomes not
   * recorded (whichever replica runs the calls next settles them as interrupted). A replica that
   * loses the chamber's lease pauses; one that takes it resumes after settling.
   */
  pause(): void {
    this.paused = true;
    for (const abort of this.inflight.values()) abort.abort();
    this.inflight.clear();
  }

  resume(): void {
    if (!this.closed) this.paused = false;
  }

  /** Aborts the calls in flight for good; their outcomes are not recorded. */
  close(): void {
    this.closed = true;
    this.pause();
  }
}
