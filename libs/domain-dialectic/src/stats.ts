/**
 * The dialectic's success metrics (seed 001, "Success Metrics"), computed from session records
 * alone: pure functions of the read model and of a `now` given by the caller, so the stats query,
 * the metrics exporter and a test compute the same numbers.
 *
 * The seed's targets: 90 % of circuit breakers resolved within 5 minutes, under 5 % escalated to a
 * quorum, 0 % collusion, under 10 % repeat failures, 100 % of transcripts auditable (every session
 * is its own stream: `auditSession` re-verifies it).
 *
 * Window: the sessions opened in the `windowDays` days up to `now` (both ends included).
 */
import { positiveInt, type DialecticSessionRecord, type DialecticStats, type DialecticStatus } from '@agora/contracts';
import { collusionFlags } from './history.js';
import { DAY_MS } from './selection.js';

export const DEFAULT_STATS_WINDOW_DAYS = 30;
/** The seed: "90 % circuit breakers resolved within 5 min". */
export const DEFAULT_RESOLUTION_TARGET_MS = 5 * 60_000;

const STATUSES: readonly DialecticStatus[] = ['awaiting_thesis', 'awaiting_antithesis', 'synthesis', 'awaiting_signatures', 'tie_break', 'quorum', 'awaiting_operator', 'resolved', 'stayed_paused'];

function instant(now: string | Date): number {
  const t = typeof now === 'string' ? Date.parse(now) : now.getTime();
  if (!Number.isFinite(t)) throw new RangeError(`now ${String(now)} is not a valid time`);
  return t;
}

/** Milliseconds from the pause to the resolution; null when not resolved. */
export const timeToResolutionMs = (r: DialecticSessionRecord): number | null => (r.resolved ? Date.parse(r.resolved.resolvedAt) - Date.parse(r.pausedAt) : null);

const rate = (part: number, whole: number): number | null => (whole === 0 ? null : part / whole);

/** The seed's success metrics over the sessions opened in the window (see the DialecticStats schema). */
export function dialecticStats(records: readonly DialecticSessionRecord[], now: string | Date, windowDays = DEFAULT_STATS_WINDOW_DAYS, targetMs = DEFAULT_RESOLUTION_TARGET_MS): DialecticStats {
  positiveInt(windowDays, 'windowDays');
  positiveInt(targetMs, 'targetMs');
  const to = instant(now);
  const from = to - windowDays * DAY_MS;
  const sessions = records.filter((r) => {
    const t = Date.parse(r.openedAt);
    return t >= from && t <= to;
  });
  const byStatus = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<DialecticStatus, number>;
  const decidedBy = { dialectic: 0, tie_break: 0, quorum: 0, operator: 0 };
  const audits = { sampled: 0, assigned: 0, sound: 0, unsound: 0 };
  let resolved = 0;
  let withinTarget = 0;
  let escalated = 0;
  let escalatedToQuorum = 0;
  let relapsed = 0;
  let hardLimitBlocks = 0;
  let timeouts = 0;
  let totalTime = 0;
  for (const r of sessions) {
    byStatus[r.status]++;
    if (r.escalations.length > 0) escalated++;
    if (r.escalations.some((e) => e.tier === 'quorum')) escalatedToQuorum++;
    hardLimitBlocks += r.blocked.length;
    timeouts += r.expiries.length;
    const time = timeToResolutionMs(r);
    if (r.status === 'resolved' && r.resolved && time !== null) {
      resolved++;
      decidedBy[r.resolved.resolution.decidedBy]++;
      totalTime += time;
      if (time <= targetMs) withinTarget++;
      if (r.relapse) relapsed++;
      if (r.resolved.audit.sampled) audits.sampled++;
    }
    if (r.audit?.auditor) audits.assigned++;
    if (r.audit?.verdict === 'sound') audits.sound++;
    if (r.audit?.verdict === 'unsound') audits.unsound++;
  }
  return {
    window: { from: new Date(from).toISOString(), to: new Date(to).toISOString(), days: windowDays },
    sessions: sessions.length,
    byStatus,
    resolved,
    decidedBy,
    resolvedWithinTarget: withinTarget,
    resolvedWithinTargetRate: rate(withinTarget, sessions.length),
    targetMs,
    escalated,
    escalatedToQuorum,
    escalationRate: rate(escalated, sessions.length),
    quorumEscalationRate: rate(escalatedToQuorum, sessions.length),
    relapsed,
    repeatFailureRate: rate(relapsed, resolved),
    hardLimitBlocks,
    timeouts,
    audits,
    collusionFlags: collusionFlags(records, new Date(to), { windowMs: windowDays * DAY_MS }).length,
    meanTimeToResolutionMs: resolved === 0 ? null : totalTime / resolved,
  };
}

/** Figures over the whole log (no window): what the metrics exporter publishes. Each count only grows as the log grows, except the gauges noted. */
export interface DialecticTotals {
  /** Sessions by current status (a gauge: a session moves between statuses). */
  sessionsByStatus: Record<DialecticStatus, number>;
  /** Resolved sessions by who settled them. */
  resolvedBy: { dialectic: number; tie_break: number; quorum: number; operator: number };
  /** RecoveryEscalated events, by tier. */
  escalationsByTier: { tie_break: number; quorum: number; operator: number };
  /** ResolutionBlocked events. */
  hardLimitBlocks: number;
  /** DialecticPhaseExpired events. */
  timeouts: number;
  /** RecoveryRelapsed events. */
  relapses: number;
  /** Audit verdicts. */
  audits: { sound: number; unsound: number };
  /** Pause-to-resolution times of the resolved sessions, in seconds (a histogram's observations). */
  resolutionSeconds: number[];
}

export function dialecticTotals(records: readonly DialecticSessionRecord[]): DialecticTotals {
  const totals: DialecticTotals = {
    sessionsByStatus: Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<DialecticStatus, number>,
    resolvedBy: { dialectic: 0, tie_break: 0, quorum: 0, operator: 0 },
    escalationsByTier: { tie_break: 0, quorum: 0, operator: 0 },
    hardLimitBlocks: 0,
    timeouts: 0,
    relapses: 0,
    audits: { sound: 0, unsound: 0 },
    resolutionSeconds: [],
  };
  for (const r of records) {
    totals.sessionsByStatus[r.status]++;
    for (const e of r.escalations) totals.escalationsByTier[e.tier]++;
    totals.hardLimitBlocks += r.blocked.length;
    totals.timeouts += r.expiries.length;
    if (r.relapse) totals.relapses++;
    if (r.audit?.verdict) totals.audits[r.audit.verdict]++;
    const time = timeToResolutionMs(r);
    if (r.status === 'resolved' && r.resolved && time !== null) {
      totals.resolvedBy[r.resolved.resolution.decidedBy]++;
      totals.resolutionSeconds.push(time / 1000);
    }
  }
  return totals;
}
