/**
 * The chamber's figures (seed 003 and the figures no peer publishes): a compact record per session
 * folded from its events, the month's ledger, and the statistics over them. Pure: the projections
 * service folds the log into these and computes the metrics at scrape time.
 */
import { CrossExamAnswer, PanelAnswer, type ChamberStatus } from '@agora/contracts';
import { addSum, sumOf, sumsOf, sumsUnder, TimedSums, windowSums, type Sums, type TimedSum } from '@agora/decider';
import { answerTexts } from './prompts.js';
import { selfIdentifies } from './self-identification.js';
import { normalizeText } from './divergence.js';
import type { BudgetEvent, ChamberEvent } from './events.js';

export interface ChamberCallFigure {
  provider: string;
  ok: boolean;
  latencyMs: number;
  errorKind: string | null;
}

export interface ChamberRecord {
  sessionId: string;
  status: ChamberStatus;
  proposedAt: string;
  approvedAt: string | null;
  concludedAt: string | null;
  arbiterProvider: string | null;
  ownProviderWin: boolean | null;
  blindDivergent: boolean | null;
  crossExamined: boolean;
  cost: number;
  wallTimeMs: number | null;
  blindMajority: string | null;
  position: string | null;
  changedFromBlindMajority: boolean | null;
  /** Positions abandoned toward the blind majority in cross-examination (normalized). */
  conformed: string[];
  positionChanges: number;
  followUp: { decision: 'accepted' | 'overridden'; position: string | null } | null;
  calls: ChamberCallFigure[];
  /** Panel answers (blind and cross-examination) that named their own model or provider, by provider: masked before others saw them. */
  selfIdentified?: Record<string, number>;
}

/** Folds one event into a session's record (undefined before its proposal). */
export function evolveChamberRecord(record: ChamberRecord | undefined, event: ChamberEvent): ChamberRecord | undefined {
  if (event.type === 'ChamberSessionProposed') {
    const d = event.data;
    return { sessionId: d.sessionId, status: 'awaiting_approval', proposedAt: d.proposedAt, approvedAt: null, concludedAt: null, arbiterProvider: null, ownProviderWin: null, blindDivergent: null, crossExamined: false, cost: 0, wallTimeMs: null, blindMajority: null, position: null, changedFromBlindMajority: null, conformed: [], positionChanges: 0, followUp: null, calls: [] };
  }
  if (!record) return undefined;
  const r = { ...record };
  switch (event.type) {
    case 'ChamberSessionApproved':
      return { ...r, status: 'blind', approvedAt: event.data.approvedAt };
    case 'ChamberSessionRejected':
      return { ...r, status: 'rejected' };
    case 'ChamberApprovalExpired':
      return { ...r, status: 'expired' };
    case 'ChamberSessionCancelled':
      return { ...r, status: 'cancelled' };
    case 'ChamberCallRequested':
      if (r.status === 'blind' || r.status === 'cross_exam' || r.status === 'arbitration') r.status = event.data.step === 'blind' ? 'blind' : event.data.step === 'cross_exam' ? 'cross_exam' : 'arbitration';
      if (event.data.step === 'cross_exam') r.crossExamined = true;
      return r;
    case 'ChamberCallCompleted': {
      const d = event.data;
      const next = { ...r, cost: money(r.cost + d.cost), calls: [...r.calls, { provider: d.provider, ok: true, latencyMs: d.latencyMs, errorKind: null }] };
      const answer = (d.step === 'blind' ? PanelAnswer : CrossExamAnswer).safeParse(d.output);
      if (d.step !== 'arbiter' && answer.success && selfIdentifies(answerTexts(answer.data))) {
        next.selfIdentified = { ...(r.selfIdentified ?? {}), [d.provider]: (r.selfIdentified?.[d.provider] ?? 0) + 1 };
      }
      return next;
    }
    case 'ChamberCallFailed':
      return { ...r, cost: money(r.cost + event.data.cost), calls: [...r.calls, { provider: event.data.provider, ok: false, latencyMs: event.data.latencyMs, errorKind: event.data.error.kind }] };
    case 'ChamberDivergenceMeasured':
      if (event.data.divergence.stage === 'blind') return { ...r, blindDivergent: event.data.divergence.divergent, blindMajority: event.data.divergence.majority?.position ?? null };
      return r;
    case 'ChamberPositionChanged':
      return { ...r, positionChanges: r.positionChanges + 1, conformed: event.data.towardBlindMajority ? [...r.conformed, event.data.from] : r.conformed };
    case 'ChamberSessionConcluded': {
      const d = event.data;
      return { ...r, status: d.outcome, concludedAt: d.concludedAt, arbiterProvider: d.arbiter?.provider ?? null, ownProviderWin: d.ownProviderWin, wallTimeMs: d.wallTimeMs, position: d.position, changedFromBlindMajority: d.changedFromBlindMajority };
    }
    case 'ChamberFollowUpRecorded':
      return { ...r, followUp: { decision: event.data.decision, position: event.data.position === null ? null : normalizeText(event.data.position) } };
    default:
      return r;
  }
}

const money = (x: number) => Math.round(x * 1_000_000) / 1_000_000;

export interface MonthLedger {
  month: string;
  spent: number;
  reserved: number;
  monthlyBudget: number;
  currency: string;
  /** The daily session limit of the last reservation (0 before any). */
  sessionsPerDay: number;
  /** Per session: day, reserved, actual once settled. */
  entries: Record<string, { day: string; reserved: number; actual: number | null }>;
}

export function evolveLedger(ledger: MonthLedger | undefined, event: BudgetEvent): MonthLedger {
  const d = event.data;
  const l: MonthLedger = ledger ? { ...ledger, entries: { ...ledger.entries } } : { month: d.month, spent: 0, reserved: 0, monthlyBudget: 0, currency: 'USD', sessionsPerDay: 0, entries: {} };
  if (event.type === 'ChamberBudgetReserved') {
    l.entries[event.data.sessionId] = { day: event.data.day, reserved: event.data.amount, actual: null };
    l.monthlyBudget = event.data.limits.monthlyBudget;
    l.currency = event.data.limits.currency;
    l.sessionsPerDay = event.data.limits.sessionsPerDay;
  } else {
    const entry = l.entries[d.sessionId];
    if (entry) l.entries[d.sessionId] = { ...entry, actual: event.data.actual };
  }
  const entries = Object.values(l.entries);
  l.spent = money(entries.reduce((s, e) => s + (e.actual ?? 0), 0));
  l.reserved = money(entries.reduce((s, e) => s + (e.actual === null ? e.reserved : 0), 0));
  return l;
}

export interface ChamberStats {
  windowDays: number;
  sessionsByStatus: Record<string, number>;
  concluded: number;
  noConsensusRate: number | null;
  divergenceRate: number | null;
  crossExamRate: number | null;
  /** Share of arbitrated consensus sessions whose synthesis rests on the arbiter's own provider; null under minSample. */
  ownProviderWinShare: number | null;
  ownProviderSample: number;
  minSample: number;
  /** Share of consensus outcomes that differ from the blind majority. */
  lift: number | null;
  liftSample: number;
  /** Position changes toward the blind majority. */
  conformityChanges: number;
  /** Of those, how many abandoned the position the arbiter or the human later chose. */
  conformityAbandonedChosen: number;
  costTotal: number;
}

const share = (n: number, of: number) => (of === 0 ? null : Math.round((n / of) * 10_000) / 10_000);

/** Buckets (upper bounds) of the cost of a concluded session, in the configured currency. */
export const SESSION_COST_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10];
/** Buckets (upper bounds) of a session's wall time, approval to outcome, in seconds. */
export const WALL_TIME_BUCKETS = [5, 15, 30, 60, 120, 300, 600, 1800];
/** Buckets (upper bounds) of a model call's latency, in seconds. */
export const CALL_LATENCY_BUCKETS = [0.5, 1, 2, 5, 10, 20, 30, 60, 120];

/** Amounts are kept in millionths (the ledger rounds them so), so their sums are whole numbers. */
const MICRO = 1_000_000;
const micros = (amount: number) => Math.round(amount * MICRO);
const bucketOf = (buckets: readonly number[], value: number, scale: number) => buckets.find((le) => value <= Math.round(le * scale)) ?? 'Infinity';

/** Positions a session's panelists abandoned toward the blind majority that the arbiter or the human later chose. */
const abandonedChosen = (r: ChamberRecord) => r.conformed.filter((from) => from === r.position || (r.followUp?.position ?? null) === from).length;

/**
 * What one session adds to the all-time figures (chamberTotalsFromSums): its status, its calls by
 * provider (result, error kind, latency by bucket), its conformity, its masked self-identifications,
 * and its cost and wall time by bucket.
 */
export function chamberRecordSums(r: ChamberRecord): Sums {
  const sums: Sums = new Map();
  addSum(sums, 1, 'status', r.status);
  for (const c of r.calls) {
    addSum(sums, 1, 'calls', c.provider, c.ok ? 'ok' : 'error');
    if (!c.ok) addSum(sums, 1, 'call_errors', c.provider, c.errorKind ?? 'unknown');
    if (c.errorKind === 'interrupted') continue;
    const ms = Math.round(c.latencyMs);
    addSum(sums, 1, 'call_latency', c.provider, bucketOf(CALL_LATENCY_BUCKETS, ms, 1000));
    addSum(sums, ms, 'call_latency_ms', c.provider);
  }
  addSum(sums, r.conformed.length, 'conformity_changes');
  addSum(sums, abandonedChosen(r), 'conformity_abandoned_chosen');
  for (const [provider, n] of Object.entries(r.selfIdentified ?? {})) addSum(sums, n, 'self_identified', provider);
  if (r.concludedAt !== null) {
    addSum(sums, 1, 'session_cost', bucketOf(SESSION_COST_BUCKETS, micros(r.cost), MICRO));
    addSum(sums, micros(r.cost), 'session_cost_micro');
  }
  if (r.wallTimeMs !== null) {
    const ms = Math.round(r.wallTimeMs);
    addSum(sums, 1, 'wall_time', bucketOf(WALL_TIME_BUCKETS, ms, 1000));
    addSum(sums, ms, 'wall_time_ms');
  }
  return sums;
}

/** Observations counted by bucket (upper bound, Infinity past the last) and their sum, in the histogram's unit. */
export interface ChamberBucketCounts {
  buckets: Map<number, number>;
  sum: number;
}

export interface ChamberTotals {
  sessionsByStatus: Record<string, number>;
  calls: { provider: string; result: 'ok' | 'error'; calls: number }[];
  callErrors: { provider: string; kind: string; calls: number }[];
  /** Call latency by provider, in seconds. */
  callLatency: { provider: string; seconds: ChamberBucketCounts }[];
  conformityChanges: number;
  conformityAbandonedChosen: number;
  selfIdentified: { provider: string; answers: number }[];
  sessionCost: ChamberBucketCounts;
  /** In seconds. */
  wallTime: ChamberBucketCounts;
}

/** The all-time figures from the sums of chamberRecordSums. */
export function chamberTotalsFromSums(sums: ReadonlyMap<string, number>): ChamberTotals {
  const counts = (rest: (string | number)[][], values: number[], sum: number): ChamberBucketCounts => ({ buckets: new Map(rest.map(([le], i) => [Number(le), values[i]!])), sum });
  const under = (...parts: string[]) => sumsUnder(sums, ...parts);
  const latency = new Map<string, [(string | number)[][], number[]]>();
  for (const [[provider, le], n] of under('call_latency')) {
    const entry = latency.get(String(provider)) ?? [[], []];
    entry[0].push([le!]);
    entry[1].push(n);
    latency.set(String(provider), entry);
  }
  const cost = under('session_cost');
  const wall = under('wall_time');
  return {
    sessionsByStatus: Object.fromEntries(under('status').map(([[status], n]) => [String(status), n])),
    calls: under('calls').map(([[provider, result], calls]) => ({ provider: String(provider), result: result as 'ok' | 'error', calls })),
    callErrors: under('call_errors').map(([[provider, kind], calls]) => ({ provider: String(provider), kind: String(kind), calls })),
    callLatency: [...latency].map(([provider, [rest, values]]) => ({ provider, seconds: counts(rest, values, sumOf(sums, 'call_latency_ms', provider) / 1000) })),
    conformityChanges: sumOf(sums, 'conformity_changes'),
    conformityAbandonedChosen: sumOf(sums, 'conformity_abandoned_chosen'),
    selfIdentified: under('self_identified').map(([[provider], answers]) => ({ provider: String(provider), answers })),
    sessionCost: counts(cost.map(([rest]) => rest), cost.map(([, n]) => n), sumOf(sums, 'session_cost_micro') / MICRO),
    wallTime: counts(wall.map(([rest]) => rest), wall.map(([, n]) => n), sumOf(sums, 'wall_time_ms') / 1000),
  };
}

/** What one session adds to the windowed figures, all at the instant it was proposed (the window is the sessions proposed in it). */
export function chamberTimedSums(r: ChamberRecord): TimedSum[] {
  const timed = new TimedSums();
  const at = r.proposedAt;
  timed.add(at, micros(r.cost), 'cost_micro');
  if (r.status === 'consensus' || r.status === 'no_consensus' || r.status === 'failed') timed.add(at, 1, 'concluded');
  if (r.status === 'no_consensus') timed.add(at, 1, 'no_consensus');
  if (r.blindDivergent !== null) {
    timed.add(at, 1, 'measured');
    if (r.blindDivergent) timed.add(at, 1, 'divergent');
    if (r.crossExamined) timed.add(at, 1, 'cross_examined');
  }
  if (r.ownProviderWin !== null) {
    timed.add(at, 1, 'own_sample');
    if (r.ownProviderWin) timed.add(at, 1, 'own_wins');
  }
  if (r.changedFromBlindMajority !== null) {
    timed.add(at, 1, 'lift_sample');
    if (r.changedFromBlindMajority) timed.add(at, 1, 'lifted');
  }
  timed.add(at, r.conformed.length, 'conformity_changes');
  timed.add(at, abandonedChosen(r), 'conformity_abandoned_chosen');
  return timed.items;
}

/** The start of the window of `windowDays` days before `now` (the window has no end: a session proposed later than `now` counts too). */
export const chamberWindowFrom = (now: Date, windowDays: number): number => now.getTime() - windowDays * 86_400_000;

/** The figures over the sessions proposed in the window (own-provider share and lift over those concluded in it). */
export function chamberStats(records: Iterable<ChamberRecord>, now: Date, windowDays: number, minSample: number): ChamberStats {
  const all = [...records];
  return chamberStatsFromSums(sumsOf(all, chamberRecordSums), windowSums(all, chamberTimedSums, chamberWindowFrom(now, windowDays), Number.MAX_SAFE_INTEGER), windowDays, minSample);
}

/** ChamberStats from the all-time sums of chamberRecordSums (sessions by status) and the window's sums of chamberTimedSums. */
export function chamberStatsFromSums(all: ReadonlyMap<string, number>, window: ReadonlyMap<string, number>, windowDays: number, minSample: number): ChamberStats {
  const n = (figure: string) => sumOf(window, figure);
  const ownSample = n('own_sample');
  return {
    windowDays,
    sessionsByStatus: chamberTotalsFromSums(all).sessionsByStatus,
    concluded: n('concluded'),
    noConsensusRate: share(n('no_consensus'), n('concluded')),
    divergenceRate: share(n('divergent'), n('measured')),
    crossExamRate: share(n('cross_examined'), n('measured')),
    ownProviderWinShare: ownSample >= minSample ? share(n('own_wins'), ownSample) : null,
    ownProviderSample: ownSample,
    minSample,
    lift: share(n('lifted'), n('lift_sample')),
    liftSample: n('lift_sample'),
    conformityChanges: n('conformity_changes'),
    conformityAbandonedChosen: n('conformity_abandoned_chosen'),
    costTotal: money(n('cost_micro') / MICRO),
  };
}
