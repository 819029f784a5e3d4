import { AgoraError, DIALECTIC_SESSION_CATEGORY, PROPOSAL_CATEGORY, VOTING_SESSION_CATEGORY, type DialecticSessionView, type ProposalView, type VotingSessionView } from '@agora/contracts';
import type { Agora } from './client.js';
import type { AgoraEvent } from './transport.js';

export const DEFAULT_WAIT_MS = 5 * 60_000;

export interface WaitOptions {
  /** Give up (an AgoraError `timeout`) after this long; default 5 minutes. */
  timeoutMs?: number;
  /** Stop waiting (rejects with the signal's reason). */
  signal?: AbortSignal;
  /** Follow the log strictly after this position (e.g. the `position` of the command that started it); default: from now. */
  after?: string;
  /** Called with each event of the followed aggregate as it is committed. */
  onProgress?: (event: AgoraEvent) => void;
  /** Wait for the final outcome: through an escalation to a person's decision (default: return at the escalation too). */
  final?: boolean;
}

export interface WaitSpec<T> {
  /** Stream category and id of the aggregate followed. */
  category: string;
  streamId: string;
  /**
   * Reads the aggregate's view; undefined while it does not exist yet. `minPosition`: the position of
   * the event that prompted the read (or the `after` the wait started from): pass it on as the
   * query's `minPosition` (readAt), so the read model answering holds that event.
   */
  read(minPosition?: string): Promise<T | undefined>;
  /** True once the view is what the caller waits for. */
  done(view: T): boolean;
  what: string;
  /** What the last view read still waits on (`votes from sage, tally`), said when the wait gives up. */
  pending?(view: T): string | undefined;
}

/**
 * Waits on the log, not by polling: opens the event stream of the aggregate's category first,
 * then reads the view once (it may already be done), then reads it again after each of the
 * aggregate's events until `done` holds.
 */
export async function waitOnLog<T>(agora: Agora, spec: WaitSpec<T>, options: WaitOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_MS;
  const stop = new AbortController();
  let last: T | undefined;
  const read = async (minPosition?: string) => (last = await spec.read(minPosition));
  const timer = setTimeout(() => {
    const pending = last === undefined ? undefined : spec.pending?.(last);
    stop.abort(new AgoraError('timeout', `${spec.what}: nothing after ${timeoutMs} ms${pending ? `; still waiting for ${pending}` : ''}`, { timeoutMs, ...(pending ? { pending } : {}) }));
  }, timeoutMs);
  const onAbort = () => stop.abort(options.signal?.reason ?? new Error(`${spec.what}: cancelled`));
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let opened!: () => void;
  const open = new Promise<void>((resolve) => (opened = resolve));
  const events = agora.events({ categories: [spec.category], ...(options.after === undefined ? {} : { after: options.after }), signal: stop.signal, onOpen: () => opened() })[Symbol.asyncIterator]();
  try {
    let next = events.next();
    await Promise.race([open, next]);
    const aborted = () => {
      throw stop.signal.reason;
    };
    if (stop.signal.aborted) aborted();
    const first = await read(options.after);
    if (first !== undefined && spec.done(first)) return first;
    for (;;) {
      const step = await next;
      if (step.done || stop.signal.aborted) aborted();
      const event = step.value as AgoraEvent;
      if (event.streamId === spec.streamId) {
        options.onProgress?.(event);
        const view = await read(event.position);
        if (view !== undefined && spec.done(view)) return view;
      }
      next = events.next();
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    if (!stop.signal.aborted) stop.abort();
    await events.return?.(undefined).catch(() => undefined);
  }
}

/** Query options that read at least as far as `position` in the log (read your writes; none without a position). */
export function readAt(position: string | undefined): { minPosition?: string } {
  return position === undefined ? {} : { minPosition: position };
}

/** The view a query answers, or undefined while the aggregate does not exist (`not_found`); other refusals throw. */
export async function viewIfFound<T>(read: Promise<{ ok: true; result: T } | { ok: false; error: { code: string; message: string; details?: Record<string, unknown> } }>): Promise<T | undefined> {
  const reply = await read;
  if (reply.ok) return reply.result;
  if (reply.error.code === 'not_found') return undefined;
  throw new AgoraError(reply.error.code as never, reply.error.message, reply.error.details);
}

/** A proposal's verdict: approved, rejected or withdrawn (and escalated, unless `final`). */
export function waitForVerdict(agora: Agora, proposalId: string, options: WaitOptions = {}): Promise<ProposalView> {
  const finals = options.final ? ['approved', 'rejected', 'withdrawn'] : ['approved', 'rejected', 'withdrawn', 'escalated'];
  return waitOnLog<ProposalView>(
    agora,
    { category: PROPOSAL_CATEGORY, streamId: `${PROPOSAL_CATEGORY}-${proposalId}`, what: `the verdict on proposal ${proposalId}`, read: (at) => viewIfFound(agora.tryQuery('GetProposal', { proposalId }, readAt(at))), done: (p) => finals.includes(p.status) },
    options,
  );
}

/** A voting session's decision: its recommendation (or, with `final`, the final decision after a person's), or its expiry or cancellation. */
export function waitForDecision(agora: Agora, sessionId: string, options: WaitOptions = {}): Promise<VotingSessionView> {
  return waitOnLog<VotingSessionView>(
    agora,
    {
      category: VOTING_SESSION_CATEGORY,
      streamId: `${VOTING_SESSION_CATEGORY}-${sessionId}`,
      what: `the decision of voting session ${sessionId}`,
      read: (at) => viewIfFound(agora.tryQuery('GetVotingSession', { sessionId }, readAt(at))),
      done: (s) => s.status === 'expired' || s.status === 'cancelled' || (options.final ? s.finalDecision !== null : s.recommendation !== null),
      pending: votingPending,
    },
    options,
  );
}

/** Who a voting session still waits on: the validators drawn who have not voted, or a person. */
export function votingPending(s: VotingSessionView): string | undefined {
  if (s.awaitingOperator) return "a person's decision (an operator, in the console's inbox)";
  const voted = new Set(s.votes.map((v) => v.validator));
  const missing = s.validators.map((v) => v.agentId).filter((id) => !voted.has(id));
  if (missing.length === 0) return undefined;
  return `votes from ${missing.join(', ')} (drawn: ${s.validators.map((v) => v.agentId).join(', ')}; voted: ${[...voted].join(', ') || 'none'})`;
}

/** A recovery's resolution: resolved or kept paused (and waiting for an operator, unless `final`). */
export function waitForResolution(agora: Agora, sessionId: string, options: WaitOptions = {}): Promise<DialecticSessionView> {
  const finals = options.final ? ['resolved', 'stayed_paused'] : ['resolved', 'stayed_paused', 'awaiting_operator'];
  return waitOnLog<DialecticSessionView>(
    agora,
    { category: DIALECTIC_SESSION_CATEGORY, streamId: `${DIALECTIC_SESSION_CATEGORY}-${sessionId}`, what: `the resolution of recovery ${sessionId}`, read: (at) => viewIfFound(agora.tryQuery('GetDialecticSession', { sessionId }, readAt(at))), done: (s) => finals.includes(s.status) },
    options,
  );
}
