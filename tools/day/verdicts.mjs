// The assertions of `npm run day`, each a pure function of what the run recorded: the ledger of
// commands and decisions (drivers.mjs), the log read back, the fault windows (schedule.mjs), the
// series read from Prometheus (observe.mjs) and the final audit. Each returns { name, ok, detail };
// one that cannot be judged on a run this short says so (ok: true, skipped: why).

/** Seconds after a fault has settled that still count as its window (the rates' windows, a client's reconnect). */
export const AFTER_FAULT_MS = 30_000;

const within = (windows, t, afterMs = AFTER_FAULT_MS) => windows.some((w) => t >= w.startedAt && t <= w.settledAt + afterMs);
const pct = (values, p) => {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
export const percentile = pct;

/**
 * The log against the ledger: every acknowledged command that wrote events has them in the log, and
 * no more than one commit of them: as many as its reply named, on one stream at consecutive revisions.
 */
export function commandsKept(commands, events) {
  const byCommand = new Map();
  const reserved = new Map();
  for (const e of events) {
    const id = e.metadata?.['commandId'];
    if (id === undefined) continue;
    // The command id's reservation is written with the command's events, on a stream of its own.
    if (e.type === 'CommandIdReserved') {
      reserved.set(id, (reserved.get(id) ?? 0) + 1);
      continue;
    }
    if (!byCommand.has(id)) byCommand.set(id, []);
    byCommand.get(id).push(e);
  }
  const oneCommit = (list, expected) => {
    if (expected > 0 && list.length !== expected) return false;
    const revisions = list.map((e) => e.revision).sort((a, b) => a - b);
    return new Set(list.map((e) => e.streamId)).size === 1 && revisions.every((r, i) => i === 0 || r === revisions[i - 1] + 1);
  };
  const acked = commands.filter((c) => c.ackedAt !== undefined);
  // A reply that does not name its events (an A2A task's) wrote some when it names a position and is no repeat.
  const wrote = (c) => (c.events === undefined ? c.position !== undefined && !c.duplicate : c.events > 0) || c.duplicate;
  const lost = acked.filter((c) => wrote(c) && !byCommand.has(c.commandId));
  const twice = acked.filter((c) => (reserved.get(c.commandId) ?? 0) > 1 || (byCommand.has(c.commandId) && !oneCommit(byCommand.get(c.commandId), c.events ?? 0)));
  const list = (cs) => cs.slice(0, 3).map((c) => `${c.type} ${c.commandId}: ${(byCommand.get(c.commandId) ?? []).map((e) => `${e.type}@${e.revision}`).join(' ')}`).join('; ');
  return [
    { name: 'no acknowledged command lost', ok: lost.length === 0, detail: `${acked.length} acknowledged, ${lost.length} with no event in the log${lost.length ? ` (${list(lost)})` : ''}` },
    { name: 'no command applied twice', ok: twice.length === 0, detail: `${twice.length} commands whose events are not one commit of what their reply named${twice.length ? ` (${list(twice)})` : ''}` },
  ];
}

/** Decisive events by aggregate: each at most once. */
const DECISIVE = {
  ReviewRoundClosed: (e) => `${e.streamId}#${e.data?.round}`,
  ProposalApproved: (e) => `${e.streamId}:verdict`,
  ProposalRejected: (e) => `${e.streamId}:verdict`,
  VotingSessionDecided: (e) => e.streamId,
  RecoveryResolved: (e) => e.streamId,
  DebateCompleted: (e) => e.streamId,
  ChamberSessionConcluded: (e) => e.streamId,
};

export function decidedOnce(events) {
  const counts = new Map();
  for (const e of events) {
    const key = DECISIVE[e.type]?.(e);
    if (key !== undefined) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const twice = [...counts.entries()].filter(([, n]) => n > 1);
  return { name: 'every aggregate decided at most once', ok: twice.length === 0, detail: `${counts.size} decisions in the log, ${twice.length} made more than once${twice.length ? ` (${twice.slice(0, 3).map(([k]) => k).join(', ')})` : ''}` };
}

/** No `unavailable` outside a fault window; in one, no command refused for more than 15 s. */
export function refusalsInWindows(commands, refusals, windows) {
  const outside = refusals.filter((r) => r.code === 'unavailable' && !within(windows, r.at));
  const long = commands.filter((c) => c.refusedFor > 15_000);
  return [
    { name: "no command answered 'unavailable' outside a fault window", ok: outside.length === 0, detail: `${refusals.filter((r) => r.code === 'unavailable').length} 'unavailable' answers, ${outside.length} outside a fault window${outside.length ? ` (first at ${new Date(outside[0].at).toISOString()}, ${outside[0].type})` : ''}` },
    { name: 'no command refused for more than 15 s', ok: long.length === 0, detail: `longest from a command's first refusal to its acknowledgement ${(Math.max(0, ...commands.map((c) => c.refusedFor)) / 1000).toFixed(1)} s${long.length ? `; ${long.length} over 15 s (${long.slice(0, 3).map((c) => `${c.type} ${(c.refusedFor / 1000).toFixed(1)} s`).join(', ')})` : ''}` },
  ];
}

/** The audit: clean at the end, and never more than 5 s behind outside a fault window. */
export function auditKept(final, lagSeries, windows, follower = { findings: [], stops: [] }) {
  const points = lagSeries.flatMap((s) => s.points);
  const behind = points.filter(([t, v]) => v > 5 && !within(windows, t));
  const worst = behind.reduce((m, [, v]) => Math.max(m, v), 0);
  const strayStops = follower.stops.filter((s) => !within(windows, s.at));
  return [
    { name: 'the audit clean at the end', ok: final.code === 0, detail: `agora audit of the whole log: exit ${final.code}${final.report ? `, ${final.report.findings?.length ?? 0} findings` : ''}` },
    { name: 'the following audit found nothing', ok: follower.findings.length === 0, detail: `${follower.findings.length} findings${follower.findings.length ? `: ${follower.findings.slice(0, 2).join(' | ')}` : ''}` },
    { name: 'the following audit stopped only in a fault window', ok: strayStops.length === 0, detail: `stopped ${follower.stops.length} times (each started again from its state)${follower.stops.length ? `: ${follower.stops.map((s) => s.why).join(' | ')}` : ''}; ${strayStops.length} outside a fault window` },
    { name: 'the audit never more than 5 s behind outside a fault window', ok: points.length > 0 && behind.length === 0, detail: points.length === 0 ? 'no sample of agora_audit_lag_seconds' : `${points.length} samples; ${behind.length} over 5 s outside a fault window${behind.length ? ` (worst ${worst.toFixed(1)} s)` : ''}; worst in all ${Math.max(...points.map(([, v]) => v)).toFixed(1)} s` },
  ];
}

/** The windows the drift checks compare: minutes 10-20 against the last 10 (runs of 30 minutes or more). */
function driftWindows(t0, t1) {
  const minute = 60_000;
  if (t1 - t0 < 30 * minute) return undefined;
  return { warm: t0 + 10 * minute, early: [t0 + 10 * minute, t0 + 20 * minute], late: [t1 - 10 * minute, t1] };
}

/** RSS of every process from minute 10 to the end: at most 20 % more. */
export function memoryKept(rss, t0, t1) {
  const w = driftWindows(t0, t1);
  if (!w) return { name: 'RSS grows at most 20 % after the first 10 minutes', ok: true, skipped: 'the run is shorter than 30 minutes', detail: 'not judged: the run is shorter than 30 minutes' };
  const growth = rss
    .map((s) => {
      const after = s.points.filter(([t]) => t >= w.warm);
      // Processes restarted by a fault start again from nothing: judged from their last start on.
      if (after.length < 2) return undefined;
      const first = pct(after.slice(0, 5).map(([, v]) => v), 50);
      const last = pct(after.slice(-5).map(([, v]) => v), 50);
      return { name: s.name, from: first, to: last, growth: last / first - 1 };
    })
    .filter(Boolean);
  const over = growth.filter((g) => g.growth > 0.2);
  const top = [...growth].sort((a, b) => b.growth - a.growth)[0];
  return { name: 'RSS grows at most 20 % after the first 10 minutes', ok: over.length === 0, detail: `${growth.length} processes; most: ${top ? `${top.name} ${top.from.toFixed(0)} to ${top.to.toFixed(0)} MiB (${(top.growth * 100).toFixed(1)} %)` : 'none'}${over.length ? `; over 20 %: ${over.map((g) => g.name).join(', ')}` : ''}` };
}

/** Decision latency p99 of the last 10 minutes at most 1.2x that of minutes 10-20. */
export function latencyKept(decisions, t0, t1) {
  const w = driftWindows(t0, t1);
  const name = 'decision latency p99 of the last 10 minutes at most 1.2x that of minutes 10-20';
  if (!w) return { name, ok: true, skipped: 'the run is shorter than 30 minutes', detail: 'not judged: the run is shorter than 30 minutes' };
  const of = ([from, to]) => decisions.filter((d) => d.decidedAt >= from && d.decidedAt < to && d.outcome !== 'none').map((d) => d.decidedAt - d.askedAt);
  const early = pct(of(w.early), 99);
  const late = pct(of(w.late), 99);
  if (early === undefined || late === undefined) return { name, ok: false, detail: `no decisions in ${early === undefined ? 'minutes 10-20' : 'the last 10 minutes'}` };
  return { name, ok: late <= early * 1.2, detail: `p99 ${(early / 1000).toFixed(1)} s in minutes 10-20, ${(late / 1000).toFixed(1)} s in the last 10 (${(late / early).toFixed(2)}x)` };
}

/** The rule groups of deploy/prometheus/agora-rules.yml whose alerts are about the platform (the others watch the protocols' outcomes). */
export const PLATFORM_GROUPS = ['agora-platform', 'agora-audit'];

/**
 * Alerts: every platform alert that fired began in a fault window (its condition pending from within one), and
 * each fault that stops a scraped process (a replica, the gateway) raised AgoraProcessDown (pending:
 * it fires after 2 minutes down, longer than these faults last).
 */
export function alertsKept(spans, windows) {
  const firing = spans.filter((s) => s.state === 'firing' && PLATFORM_GROUPS.includes(s.group));
  const pendingStart = (s) => Math.min(s.from, ...spans.filter((p) => p.state === 'pending' && p.alert === s.alert && p.to <= s.from + 1 && p.to >= s.from - 3_600_000).map((p) => p.from));
  const stray = firing.filter((s) => !within(windows, pendingStart(s), 5 * 60_000));
  const stopping = windows.filter((w) => w.kind === 'replica' || w.kind === 'gateway');
  const missed = stopping.filter((w) => !spans.some((s) => s.alert === 'AgoraProcessDown' && s.labels.process === (w.kind === 'gateway' ? 'gateway' : w.variant) && s.from >= w.startedAt && s.from <= w.settledAt + AFTER_FAULT_MS));
  return [
    { name: 'every platform alert that fired began in a fault window', ok: stray.length === 0, detail: `${firing.length} platform alerts fired (${[...new Set(firing.map((s) => s.alert))].join(', ') || 'none'}); ${stray.length} outside a fault window${stray.length ? ` (${stray.map((s) => `${s.alert} at ${new Date(s.from).toISOString()}`).join(', ')})` : ''}` },
    { name: 'each fault that stops a process raised AgoraProcessDown', ok: missed.length === 0, detail: stopping.length === 0 ? 'no such fault in this run' : `${stopping.length - missed.length} of ${stopping.length}${missed.length ? `; none for ${missed.map((w) => w.what).join('; ')}` : ''}` },
  ];
}

/** Every way into Agora the run drives (the SDK, MCP, A2A, the tool-call proxy) had something decided through it. */
export function waysKept(decisions, ways) {
  const decided = (via) => decisions.filter((d) => d.via === via && d.outcome !== 'none').length;
  const idle = ways.filter((via) => decided(via) === 0);
  return { name: 'every way in had a decision', ok: idle.length === 0, detail: `${ways.map((via) => `${via} ${decided(via)}`).join(', ')}${idle.length ? `; nothing decided through ${idle.join(', ')}` : ''}` };
}
