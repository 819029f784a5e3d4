/**
 * The chamber's figures (seed 003 and the figures no peer publishes): a compact record per session
 * folded from its events, the month's ledger, and the statistics over them. Pure: the projections
 * service folds the log into these and computes the metrics at scrape time.
 */
import { CrossExamAnswer, PanelAnswer, type ChamberStatus } from '@agora/contracts';
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

/** The figures over the sessions proposed in the window (own-provider share and lift over those concluded in it). */
export function chamberStats(records: Iterable<ChamberRecord>, now: Date, windowDays: number, minSample: number): ChamberStats {
  const since = new Date(now.getTime() - windowDays * 86_400_000).toISOString();
  const sessionsByStatus: Record<string, number> = {};
  let concluded = 0;
  let noConsensus = 0;
  let measured = 0;
  let divergent = 0;
  let crossExamined = 0;
  let ownSample = 0;
  let ownWins = 0;
  let liftSample = 0;
  let lifted = 0;
  let conformityChanges = 0;
  let abandonedChosen = 0;
  let costTotal = 0;
  for (const r of records) {
    sessionsByStatus[r.status] = (sessionsByStatus[r.status] ?? 0) + 1;
    if (r.proposedAt < since) continue;
    costTotal += r.cost;
    if (r.status === 'consensus' || r.status === 'no_consensus' || r.status === 'failed') {
      concluded++;
      if (r.status === 'no_consensus') noConsensus++;
    }
    if (r.blindDivergent !== null) {
      measured++;
      if (r.blindDivergent) divergent++;
      if (r.crossExamined) crossExamined++;
    }
    if (r.ownProviderWin !== null) {
      ownSample++;
      if (r.ownProviderWin) ownWins++;
    }
    if (r.changedFromBlindMajority !== null) {
      liftSample++;
      if (r.changedFromBlindMajority) lifted++;
    }
    conformityChanges += r.conformed.length;
    for (const from of r.conformed) if (from === r.position || (r.followUp?.position ?? null) === from) abandonedChosen++;
  }
  return {
    windowDays,
    sessionsByStatus,
    concluded,
    noConsensusRate: share(noConsensus, concluded),
    divergenceRate: share(divergent, measured),
    crossExamRate: share(crossExamined, measured),
    ownProviderWinShare: ownSample >= minSample ? share(ownWins, ownSample) : null,
    ownProviderSample: ownSample,
    minSample,
    lift: share(lifted, liftSample),
    liftSample,
    conformityChanges,
    conformityAbandonedChosen: abandonedChosen,
    costTotal: money(costTotal),
  };
}
