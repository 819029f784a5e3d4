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
import { addSum, addSums, daysWindow, sumOf, sumsOf, sumsUnder, TimedSums, windowSums, type Sums, type TimedSum } from '@agora/decider';
import { collusionFlagsFromSums, reviewerSums, reviewerTimedSums, reviewPairTimedSums } from './history.js';
import { verifyResolutionSignature } from './resolution.js';

export const DEFAULT_STATS_WINDOW_DAYS = 30;
/** The seed: "90 % circuit breakers resolved within 5 min". */
export const DEFAULT_RESOLUTION_TARGET_MS = 5 * 60_000;

const STATUSES: readonly DialecticStatus[] = ['awaiting_thesis', 'awaiting_antithesis', 'synthesis', 'awaiting_signatures', 'tie_break', 'quorum', 'awaiting_operator', 'resolved', 'stayed_paused'];

/** Milliseconds from the pause to the resolution; null when not resolved. */
export const timeToResolutionMs = (r: DialecticSessionRecord): number | null => (r.resolved ? Date.parse(r.resolved.resolvedAt) - Date.parse(r.pausedAt) : null);

const rate = (part: number, whole: number): number | null => (whole === 0 ? null : part / whole);

/** Buckets (upper bounds, seconds) of the time from a pause to its resolution: the seed's target is 5 minutes (300 s); a whole dialectic may take 6 h. */
export const TIME_TO_RESOLUTION_BUCKETS = [30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400];

/**
 * What one session adds to the windowed figures, all at the instant it was opened (the window is
 * the sessions opened in it): its status, escalations, blocks and timeouts, its resolution (by
 * whom, how long after the pause, within `targetMs` or not, relapsed), its audit, and the pair of
 * agents its review joins (collusionFlagsFromSums).
 */
export function dialecticTimedSums(r: DialecticSessionRecord, targetMs = DEFAULT_RESOLUTION_TARGET_MS): TimedSum[] {
  const timed = new TimedSums();
  const at = r.openedAt;
  timed.add(at, 1, 'sessions');
  timed.add(at, 1, 'status', r.status);
  if (r.escalations.length > 0) timed.add(at, 1, 'escalated');
  if (r.escalations.some((e) => e.tier === 'quorum')) timed.add(at, 1, 'escalated_to_quorum');
  timed.add(at, r.blocked.length, 'hard_limit_blocks');
  timed.add(at, r.expiries.length, 'timeouts');
  const time = timeToResolutionMs(r);
  if (r.status === 'resolved' && r.resolved && time !== null) {
    timed.add(at, 1, 'resolved');
    timed.add(at, 1, 'decided_by', r.resolved.resolution.decidedBy);
    timed.add(at, time, 'resolution_ms');
    if (time <= targetMs) timed.add(at, 1, 'within_target');
    if (r.relapse) timed.add(at, 1, 'relapsed');
    if (r.resolved.audit.sampled) timed.add(at, 1, 'audits', 'sampled');
  }
  if (r.audit?.auditor) timed.add(at, 1, 'audits', 'assigned');
  if (r.audit?.verdict) timed.add(at, 1, 'audits', r.audit.verdict);
  timed.items.push(...reviewPairTimedSums(r), ...reviewerTimedSums(r));
  return timed.items;
}

/** The seed's success metrics over the sessions opened in the window (see the DialecticStats schema). */
export function dialecticStats(records: readonly DialecticSessionRecord[], now: string | Date, windowDays = DEFAULT_STATS_WINDOW_DAYS, targetMs = DEFAULT_RESOLUTION_TARGET_MS): DialecticStats {
  positiveInt(targetMs, 'targetMs');
  const window = dialecticWindow(now, windowDays);
  return dialecticStatsFromSums(windowSums(records, (r) => dialecticTimedSums(r, targetMs), Date.parse(window.from), Date.parse(window.to)), window, targetMs);
}

/** The window of `windowDays` days up to `now`, both ends included. */
export function dialecticWindow(now: string | Date, windowDays = DEFAULT_STATS_WINDOW_DAYS): DialecticStats['window'] {
  positiveInt(windowDays, 'windowDays');
  return daysWindow(now, windowDays);
}

/** The DialecticStats of the sums of dialecticTimedSums (made with the same `targetMs`) over a window. */
export function dialecticStatsFromSums(sums: ReadonlyMap<string, number>, window: DialecticStats['window'], targetMs = DEFAULT_RESOLUTION_TARGET_MS): DialecticStats {
  const sessions = sumOf(sums, 'sessions');
  const resolved = sumOf(sums, 'resolved');
  const withinTarget = sumOf(sums, 'within_target');
  const escalated = sumOf(sums, 'escalated');
  const escalatedToQuorum = sumOf(sums, 'escalated_to_quorum');
  const relapsed = sumOf(sums, 'relapsed');
  const decidedBy = (d: string) => sumOf(sums, 'decided_by', d);
  const audits = (a: string) => sumOf(sums, 'audits', a);
  return {
    window,
    sessions,
    byStatus: Object.fromEntries(STATUSES.map((st) => [st, sumOf(sums, 'status', st)])) as Record<DialecticStatus, number>,
    resolved,
    decidedBy: { dialectic: decidedBy('dialectic'), tie_break: decidedBy('tie_break'), quorum: decidedBy('quorum'), operator: decidedBy('operator') },
    resolvedWithinTarget: withinTarget,
    resolvedWithinTargetRate: rate(withinTarget, sessions),
    targetMs,
    escalated,
    escalatedToQuorum,
    escalationRate: rate(escalated, sessions),
    quorumEscalationRate: rate(escalatedToQuorum, sessions),
    relapsed,
    repeatFailureRate: rate(relapsed, resolved),
    hardLimitBlocks: sumOf(sums, 'hard_limit_blocks'),
    timeouts: sumOf(sums, 'timeouts'),
    audits: { sampled: audits('sampled'), assigned: audits('assigned'), sound: audits('sound'), unsound: audits('unsound') },
    collusionFlags: collusionFlagsFromSums(sums).length,
    meanTimeToResolutionMs: resolved === 0 ? null : sumOf(sums, 'resolution_ms') / resolved,
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
  /** Pause-to-resolution times of the resolved sessions: how many fell in each bucket of TIME_TO_RESOLUTION_BUCKETS (by upper bound in seconds, Infinity past the last), and their sum in seconds. */
  timeToResolution: { buckets: Map<number, number>; sumSeconds: number };
  /** Sessions with a resolution, and of those the ones whose resolution does not verify from the record alone (verifiableResolution). */
  resolutions: { resolved: number; unverifiable: number };
}

/**
 * Whether a resolved session's resolution verifies from its record alone: every signature verifies
 * the canonical payload (verifyResolutionSignature); a resolution settled by the parties, a
 * tie-breaker or an operator carries at least one signature; one settled by a quorum names the
 * voting session whose signed votes decided it. Undefined when the session has no resolution.
 */
export function verifiableResolution(r: DialecticSessionRecord): boolean | undefined {
  const resolution = r.resolved;
  if (!resolution) return undefined;
  const signed = resolution.signatures.every((signature) => verifyResolutionSignature(resolution.resolution, signature));
  const vouched = resolution.resolution.decidedBy === 'quorum' ? r.escalations.some((e) => e.tier === 'quorum' && e.votingSessionId !== null && e.quorumResult?.approved === true) : resolution.signatures.length > 0;
  return signed && vouched;
}

/** What one session adds to the all-time totals (dialecticTotalsFromSums). */
export function dialecticSessionSums(r: DialecticSessionRecord): Sums {
  const sums: Sums = new Map();
  addSum(sums, 1, 'status', r.status);
  for (const e of r.escalations) addSum(sums, 1, 'escalations', e.tier);
  addSum(sums, r.blocked.length, 'hard_limit_blocks');
  addSum(sums, r.expiries.length, 'timeouts');
  if (r.relapse) addSum(sums, 1, 'relapses');
  if (r.audit?.verdict) addSum(sums, 1, 'audits', r.audit.verdict);
  const time = timeToResolutionMs(r);
  if (r.status === 'resolved' && r.resolved && time !== null) {
    addSum(sums, 1, 'resolved_by', r.resolved.resolution.decidedBy);
    addSum(sums, time, 'resolution_ms');
    addSum(sums, 1, 'time_to_resolution', TIME_TO_RESOLUTION_BUCKETS.find((le) => time <= le * 1000) ?? 'Infinity');
  }
  const verifiable = verifiableResolution(r);
  if (verifiable !== undefined) {
    addSum(sums, 1, 'resolutions');
    if (!verifiable) addSum(sums, 1, 'unverifiable_resolutions');
  }
  // What a draw of candidates weighs (recoveryCandidatesFrom).
  addSums(sums, reviewerSums(r));
  return sums;
}

export function dialecticTotals(records: readonly DialecticSessionRecord[]): DialecticTotals {
  return dialecticTotalsFromSums(sumsOf(records, dialecticSessionSums));
}

/** The DialecticTotals of the sums of dialecticSessionSums. */
export function dialecticTotalsFromSums(sums: ReadonlyMap<string, number>): DialecticTotals {
  const by = (figure: string, key: string) => sumOf(sums, figure, key);
  return {
    sessionsByStatus: Object.fromEntries(STATUSES.map((st) => [st, by('status', st)])) as Record<DialecticStatus, number>,
    resolvedBy: { dialectic: by('resolved_by', 'dialectic'), tie_break: by('resolved_by', 'tie_break'), quorum: by('resolved_by', 'quorum'), operator: by('resolved_by', 'operator') },
    escalationsByTier: { tie_break: by('escalations', 'tie_break'), quorum: by('escalations', 'quorum'), operator: by('escalations', 'operator') },
    hardLimitBlocks: sumOf(sums, 'hard_limit_blocks'),
    timeouts: sumOf(sums, 'timeouts'),
    relapses: sumOf(sums, 'relapses'),
    audits: { sound: by('audits', 'sound'), unsound: by('audits', 'unsound') },
    timeToResolution: { buckets: new Map(sumsUnder(sums, 'time_to_resolution').map(([[le], n]) => [Number(le), n])), sumSeconds: sumOf(sums, 'resolution_ms') / 1000 },
    resolutions: { resolved: sumOf(sums, 'resolutions'), unverifiable: sumOf(sums, 'unverifiable_resolutions') },
  };
}
