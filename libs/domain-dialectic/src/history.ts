/**
 * What the history of recoveries says about reviewers (seed 001, Phase 3: "track record
 * persistence + history", "collusion pattern detection"), computed from session records alone:
 * pure functions of the read model and of a `now` given by the caller, so the service (building
 * the candidates of a draw), the stats query and a test compute the same figures.
 */
import type { CollusionFlag, DialecticSessionRecord, RecoveryCandidate } from '@agora/contracts';
import { addSum, sumOf, sumsOf, sumsUnder, TimedSums, windowSums, type Sums, type TimedSum } from '@agora/decider';

/**
 * What the history of recoveries weighs (track records, collusion, who reviewed whom and when): the
 * parts of a session record the functions here read, without its transcript. A whole record is one.
 */
export type SessionHistory = Pick<DialecticSessionRecord, 'sessionId' | 'agentId' | 'reviewer' | 'openedAt' | 'tags' | 'expiries' | 'resolved' | 'relapse' | 'audit'> & { rules: Pick<DialecticSessionRecord['rules'], 'relapseWindowMs'> };

/** A session's history (see SessionHistory), as a read model keeps it beside the whole record. */
export function sessionHistory(r: DialecticSessionRecord): SessionHistory {
  return { sessionId: r.sessionId, agentId: r.agentId, reviewer: r.reviewer, openedAt: r.openedAt, tags: r.tags, expiries: r.expiries, resolved: r.resolved, relapse: r.relapse, audit: r.audit, rules: { relapseWindowMs: r.rules.relapseWindowMs } };
}
import { DAY_MS } from './selection.js';

export type ReviewOutcomeKind = 'success' | 'failure' | 'pending';

export interface ReviewOutcome {
  reviewer: string;
  agentId: string;
  sessionId: string;
  outcome: ReviewOutcomeKind;
  /** resolved: no relapse within the window; relapsed; unsound_audit; timed_out: the reviewer let a deadline pass; within_window: too early to say. */
  reason: 'resolved' | 'relapsed' | 'unsound_audit' | 'timed_out' | 'within_window';
  /** When the outcome was settled (or, pending, when the resolution was). */
  at: string;
}

/**
 * The outcome of every review in the records (sessions with a reviewer), as of `now`:
 * - the reviewer let one of its deadlines pass: failure (an unresponsive reviewer is no help);
 * - a resolution the reviewer signed: failure when the agent relapsed within the session's
 *   relapseWindowMs or an audit found it unsound, success once the window passed without either,
 *   pending until then;
 * - anything else (the session escalated past the reviewer, or is still open): no outcome.
 */
export function reviewerOutcomes(records: readonly SessionHistory[], now: string | Date): ReviewOutcome[] {
  const t = typeof now === 'string' ? Date.parse(now) : now.getTime();
  const outcomes: ReviewOutcome[] = [];
  for (const r of records) {
    const reviewer = r.reviewer;
    if (reviewer === null) continue;
    const base = { reviewer, agentId: r.agentId, sessionId: r.sessionId };
    const late = r.expiries.find((x) => x.late.includes(reviewer));
    if (late) {
      outcomes.push({ ...base, outcome: 'failure', reason: 'timed_out', at: late.expiredAt });
      continue;
    }
    const resolved = r.resolved;
    if (!resolved || !resolved.signatures.some((s) => s.signer === reviewer && s.role === 'reviewer')) continue;
    if (r.relapse) outcomes.push({ ...base, outcome: 'failure', reason: 'relapsed', at: r.relapse.relapsedAt });
    else if (r.audit?.verdict === 'unsound') outcomes.push({ ...base, outcome: 'failure', reason: 'unsound_audit', at: r.audit.submittedAt ?? resolved.resolvedAt });
    else {
      const settledAt = Date.parse(resolved.resolvedAt) + r.rules.relapseWindowMs;
      if (t >= settledAt) outcomes.push({ ...base, outcome: 'success', reason: 'resolved', at: new Date(settledAt).toISOString() });
      else outcomes.push({ ...base, outcome: 'pending', reason: 'within_window', at: resolved.resolvedAt });
    }
  }
  return outcomes;
}

export interface TrackRecord {
  /** Settled reviews (pending ones are not counted yet). */
  reviews: number;
  successful: number;
  /** successful / reviews; null without settled reviews (the authority score then uses 0.5). */
  score: number | null;
}

/** The track record of a list of outcomes (of one reviewer). */
export function trackRecord(outcomes: readonly Pick<ReviewOutcome, 'outcome'>[]): TrackRecord {
  const settled = outcomes.filter((o) => o.outcome !== 'pending');
  const successful = settled.filter((o) => o.outcome === 'success').length;
  return { reviews: settled.length, successful, score: settled.length === 0 ? null : successful / settled.length };
}

/** One reviewer's track record from the records. */
export const trackRecordOf = (records: readonly SessionHistory[], reviewer: string, now: string | Date): TrackRecord =>
  trackRecord(reviewerOutcomes(records, now).filter((o) => o.reviewer === reviewer));

export interface CollusionOptions {
  /** Sessions opened within this window before `now` count. Default 30 days. */
  windowMs?: number;
  /** Reviews between the two, both directions together, from which a mutual pair is flagged. Default 3. */
  minReviews?: number;
}

export const DEFAULT_COLLUSION_WINDOW_MS = 30 * DAY_MS;
export const DEFAULT_COLLUSION_MIN_REVIEWS = 3;

/**
 * What one session adds to the collusion figures, at the instant it was opened: the pair of agents
 * its review joins (in id order), and which of the two reviewed the other. Nothing for a session
 * without a reviewer or reviewed by the agent itself.
 */
export function reviewPairTimedSums(r: Pick<SessionHistory, 'agentId' | 'reviewer' | 'openedAt'>): TimedSum[] {
  if (r.reviewer === null || r.reviewer === r.agentId) return [];
  const [first, second] = r.reviewer < r.agentId ? [r.reviewer, r.agentId] : [r.agentId, r.reviewer];
  return new TimedSums().add(r.openedAt, 1, 'review_pair', first, second, r.reviewer === first ? 'first_to_second' : 'second_to_first').items;
}

/** The pairs flagged by the sums of reviewPairTimedSums over a window: both directions, at least `minReviews` reviews together; in id order. */
export function collusionFlagsFromSums(sums: ReadonlyMap<string, number>, minReviews = DEFAULT_COLLUSION_MIN_REVIEWS): CollusionFlag[] {
  const pairs = new Map<string, CollusionFlag>();
  for (const [[first, second, direction], n] of sumsUnder(sums, 'review_pair')) {
    const agents = [String(first), String(second)] as [string, string];
    const key = agents.join('\n');
    const flag = pairs.get(key) ?? { agents, reviews: 0, firstToSecond: 0, secondToFirst: 0 };
    flag.reviews += n;
    if (direction === 'first_to_second') flag.firstToSecond += n;
    else flag.secondToFirst += n;
    pairs.set(key, flag);
  }
  return [...pairs.values()]
    .filter((f) => f.firstToSecond > 0 && f.secondToFirst > 0 && f.reviews >= minReviews)
    .sort((a, b) => (a.agents.join('\n') < b.agents.join('\n') ? -1 : 1));
}

/**
 * Pairs of agents that review each other repeatedly: A reviewed B and B reviewed A (both
 * directions), at least `minReviews` times together, in sessions opened in the window. In id order.
 */
export function collusionFlags(records: readonly SessionHistory[], now: string | Date, options: CollusionOptions = {}): CollusionFlag[] {
  const { from, to } = collusionWindow(now, options);
  return collusionFlagsFromSums(windowSums(records, reviewPairTimedSums, from, to), options.minReviews ?? DEFAULT_COLLUSION_MIN_REVIEWS);
}

/** What the registry says of an agent that may be drawn (an AgentView with its breaker fits). */
export interface CandidateAgent {
  agentId: string;
  status: string;
  risk: number;
  health: number;
  specializations: readonly string[];
  breaker?: { state: 'open' | 'closed'; lastReportAt: string | null } | null;
}

/**
 * What one session adds to its reviewer's all-time figures: a failure (it let a deadline pass, the
 * agent relapsed, or an audit found the resolution unsound), a success to come (a resolution it
 * signed, settled once the relapse window passes without either: see reviewerTimedSums), and each of
 * the session's tags (its expertise). As reviewerOutcomes judges; nothing without a reviewer.
 */
export function reviewerSums(r: SessionHistory): Sums {
  const sums: Sums = new Map();
  const reviewer = r.reviewer;
  if (reviewer === null) return sums;
  for (const tag of new Set(r.tags)) addSum(sums, 1, 'reviewed_tag', reviewer, tag);
  const outcome = settledOutcome(r, reviewer);
  if (outcome) addSum(sums, 1, outcome === 'failure' ? 'reviewer_failures' : 'reviewer_successes', reviewer);
  return sums;
}

/** When a success of reviewerSums settles: at the end of the relapse window (a draw before it does not count it yet). */
export function reviewerTimedSums(r: SessionHistory): TimedSum[] {
  const reviewer = r.reviewer;
  if (reviewer === null || settledOutcome(r, reviewer) !== 'success') return [];
  return new TimedSums().add(new Date(Date.parse(r.resolved!.resolvedAt) + r.rules.relapseWindowMs).toISOString(), 1, 'reviewer_settles', reviewer).items;
}

/** reviewerOutcomes' verdict on one session, whatever the time: a success is one once its window has passed. */
function settledOutcome(r: SessionHistory, reviewer: string): 'failure' | 'success' | undefined {
  if (r.expiries.some((x) => x.late.includes(reviewer))) return 'failure';
  if (!r.resolved?.signatures.some((s) => s.signer === reviewer && s.role === 'reviewer')) return undefined;
  return r.relapse || r.audit?.verdict === 'unsound' ? 'failure' : 'success';
}

/**
 * What a draw weighs, as a read model keeps it whatever the length of the history: the all-time sums
 * of reviewerSums, the sums of reviewerTimedSums still to settle after the draw's instant, the sums
 * of reviewPairTimedSums in the collusion window before it, and when each reviewer last reviewed the
 * agent to recover.
 */
export interface DrawFigures {
  sums: ReadonlyMap<string, number>;
  unsettled: ReadonlyMap<string, number>;
  collusionWindow: ReadonlyMap<string, number>;
  lastReviewed: ReadonlyMap<string, string>;
}

/** The collusion window of a draw at `now`: from, to in milliseconds, both included. */
export function collusionWindow(now: string | Date, options: CollusionOptions = {}): { from: number; to: number } {
  const to = typeof now === 'string' ? Date.parse(now) : now.getTime();
  return { from: to - (options.windowMs ?? DEFAULT_COLLUSION_WINDOW_MS), to };
}

/** A draw's figures from the session records (what the read model's tables add up, see DrawFigures). */
export function drawFigures(records: readonly SessionHistory[], agentId: string, now: string | Date, collusion: CollusionOptions = {}): DrawFigures {
  const t = typeof now === 'string' ? Date.parse(now) : now.getTime();
  const { from, to } = collusionWindow(now, collusion);
  const lastReviewed = new Map<string, string>();
  for (const r of records) {
    if (r.reviewer === null || r.agentId !== agentId) continue;
    const seen = lastReviewed.get(r.reviewer);
    if (seen === undefined || Date.parse(r.openedAt) > Date.parse(seen)) lastReviewed.set(r.reviewer, r.openedAt);
  }
  return {
    sums: sumsOf(records, reviewerSums),
    unsettled: windowSums(records, reviewerTimedSums, t + 1, Number.MAX_SAFE_INTEGER),
    collusionWindow: windowSums(records, reviewPairTimedSums, from, to),
    lastReviewed,
  };
}

/**
 * The candidates of a draw for the recovery of `agentId`, from the registry's agents and the
 * session records: track record, expertise (the tags of the sessions it reviewed, and its
 * specializations), when it last reviewed this agent, and whether the pair is flagged for collusion.
 */
export function recoveryCandidates(agents: readonly CandidateAgent[], records: readonly SessionHistory[], agentId: string, now: string | Date, collusion: CollusionOptions = {}): RecoveryCandidate[] {
  return recoveryCandidatesFrom(agents, drawFigures(records, agentId, now, collusion), agentId, collusion);
}

/** recoveryCandidates from a draw's figures (a read model's, or drawFigures'): its cost is the agents', not the history's. */
export function recoveryCandidatesFrom(agents: readonly CandidateAgent[], figures: DrawFigures, agentId: string, collusion: CollusionOptions = {}): RecoveryCandidate[] {
  const flags = collusionFlagsFromSums(figures.collusionWindow, collusion.minReviews ?? DEFAULT_COLLUSION_MIN_REVIEWS);
  const tagsOf = new Map<string, string[]>();
  for (const [[reviewer, tag]] of sumsUnder(figures.sums, 'reviewed_tag')) (tagsOf.get(String(reviewer)) ?? tagsOf.set(String(reviewer), []).get(String(reviewer))!).push(String(tag));
  return agents.map((a) => {
    const failures = sumOf(figures.sums, 'reviewer_failures', a.agentId);
    const successful = sumOf(figures.sums, 'reviewer_successes', a.agentId) - sumOf(figures.unsettled, 'reviewer_settles', a.agentId);
    const expertise = [...new Set([...a.specializations, ...(tagsOf.get(a.agentId) ?? []).sort()])].filter((t) => /^[a-z][a-z0-9_-]{0,31}$/.test(t)).slice(0, 64);
    return {
      agentId: a.agentId,
      status: a.status,
      paused: a.breaker?.state === 'open',
      risk: a.risk,
      health: a.health,
      lastReportAt: a.breaker?.lastReportAt ?? null,
      trackRecord: { reviews: failures + successful, successful },
      expertise,
      lastReviewedAgentAt: figures.lastReviewed.get(a.agentId) ?? null,
      collusionFlagged: flags.some((f) => f.agents.includes(a.agentId) && f.agents.includes(agentId)),
    };
  });
}
