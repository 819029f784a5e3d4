import { GetDialecticStats, ListCollusionFlags, type DialecticStats } from '@agora/contracts';
import { collusionFlagsFromSums, dialecticStatsFromSums, dialecticTotalsFromSums, dialecticWindow, TIME_TO_RESOLUTION_BUCKETS } from '@agora/domain-dialectic';
import { onQuery, type QueryHandler } from '@agora/messaging';
import { dialecticSessionsTable, pageOf } from '@agora/read-models';
import type { SqlExecutor } from '@agora/read-store';
import { Gauge, type Registry } from 'prom-client';
import { countedHistogram, oncePerScrape, totalsCounters } from './metrics-kit.js';

/** Buckets of `agora_dialectic_time_to_resolution_seconds` (the dialectic's figures count sessions by them). */
export { TIME_TO_RESOLUTION_BUCKETS };

/** The dialectic's stats over the `windowDays` days up to `now`, from the recovery sessions read model's timed sums. */
export async function dialecticStatsAt(db: Pick<SqlExecutor, 'all'>, now: Date, windowDays: number): Promise<DialecticStats> {
  const window = dialecticWindow(now, windowDays);
  return dialecticStatsFromSums(await dialecticSessionsTable.windowSums(db, Date.parse(window.from), Date.parse(window.to)), window);
}

export interface DialecticMetricsOptions {
  /** The read side's database, with the recovery sessions read model's sums (dialecticSessionsTable). */
  db: Pick<SqlExecutor, 'all'>;
  /** Window of the seed's success-metric gauges, in days. */
  windowDays: number;
}

/**
 * The dialectic's metrics (docs/decisions/0006-metrics-from-read-model-state.md), read at scrape time from the recovery
 * sessions read model's sums and timed sums, never bumped per delivered event. Counters hold all-time totals of the log
 * (reset() + inc(n)); the seed's success metrics are gauges over the sessions opened in the window.
 * Labels are statuses, tiers, deciders and verdicts: never an id (per-pair collusion flags are a
 * query, `agora.qry.dialectic.collusion`).
 *
 * - agora_dialectic_sessions{status}                       gauge: recovery sessions by current status
 * - agora_dialectic_resolved_sessions_total{decided_by}    counter: dialectic, tie_break, quorum, operator
 * - agora_dialectic_escalations_total{tier}                counter: tie_break, quorum, operator
 * - agora_dialectic_hard_limit_blocks_total                counter: resolutions the hard limits blocked
 * - agora_dialectic_phase_timeouts_total                   counter: deadlines that passed
 * - agora_dialectic_relapses_total                         counter: resumed agents paused again within the window
 * - agora_dialectic_audits_total{verdict}                  counter: sound, unsound
 * - agora_dialectic_time_to_resolution_seconds             histogram: pause to resolution
 * - agora_dialectic_resolved_within_target_ratio           gauge (window): seed target 90 % within 5 min
 * - agora_dialectic_escalation_ratio                       gauge (window): sessions escalated at least once
 * - agora_dialectic_quorum_escalation_ratio                gauge (window): seed target under 5 %
 * - agora_dialectic_repeat_failure_ratio                   gauge (window): seed target under 10 %
 * - agora_dialectic_collusion_flags                        gauge (window): pairs flagged; seed target 0
 * - agora_dialectic_window_sessions{stage}                 gauge (window): opened, resolved, resolved_within_target (the terms of the ratios)
 * - agora_dialectic_verifiable_resolutions_ratio           gauge: resolutions whose signatures verify (seed: 100 %), all time
 * - agora_dialectic_unverifiable_resolutions               gauge: resolutions that do not verify, all time; 0 is the target
 * The ratios are NaN while their denominator is 0.
 */
export function registerDialecticMetrics(registry: Registry, options: DialecticMetricsOptions): void {
  const registers = [registry];
  const figures = oncePerScrape(async () => {
    const [sums, stats] = await Promise.all([dialecticSessionsTable.sums(options.db), dialecticStatsAt(options.db, new Date(), options.windowDays)]);
    return { totals: dialecticTotalsFromSums(sums), stats };
  });
  const totals = async () => (await figures()).totals;
  const stats = async () => (await figures()).stats;

  new Gauge({
    name: 'agora_dialectic_sessions',
    help: 'Recovery sessions by current status (awaiting_thesis, awaiting_antithesis, synthesis, awaiting_signatures, tie_break, quorum, awaiting_operator, resolved, stayed_paused)',
    labelNames: ['status'] as const,
    registers,
    async collect() {
      for (const [status, n] of Object.entries((await totals()).sessionsByStatus)) this.set({ status }, n);
    },
  });
  const ratio = (name: string, help: string, value: (s: DialecticStats) => number | null) =>
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        this.set(value(await stats()) ?? Number.NaN);
      },
    });
  ratio('agora_dialectic_resolved_within_target_ratio', `Share of the recovery sessions opened in the last ${options.windowDays} days resolved within 5 minutes of the pause (the seed wants 0.9); NaN when none`, (s) => s.resolvedWithinTargetRate);
  ratio('agora_dialectic_escalation_ratio', `Share of the recovery sessions opened in the last ${options.windowDays} days that escalated at least once; NaN when none`, (s) => s.escalationRate);
  ratio('agora_dialectic_quorum_escalation_ratio', `Share of the recovery sessions opened in the last ${options.windowDays} days that went to a validator quorum (the seed wants under 0.05); NaN when none`, (s) => s.quorumEscalationRate);
  ratio('agora_dialectic_repeat_failure_ratio', `Share of the recoveries resolved in the last ${options.windowDays} days whose agent relapsed within the relapse window (the seed wants under 0.1); NaN when none resolved`, (s) => s.repeatFailureRate);
  ratio('agora_dialectic_collusion_flags', `Pairs of agents that reviewed each other repeatedly in the last ${options.windowDays} days (the seed wants 0)`, (s) => s.collusionFlags);
  new Gauge({
    name: 'agora_dialectic_window_sessions',
    help: `Recovery sessions opened in the last ${options.windowDays} days (stage="opened"); of those, resolved (stage="resolved") and resolved within 5 minutes of the pause (stage="resolved_within_target"): the terms of the windowed ratios`,
    labelNames: ['stage'] as const,
    registers,
    async collect() {
      const s = await stats();
      this.set({ stage: 'opened' }, s.sessions);
      this.set({ stage: 'resolved' }, s.resolved);
      this.set({ stage: 'resolved_within_target' }, s.resolvedWithinTarget);
    },
  });
  const verifiable = async () => (await totals()).resolutions;
  new Gauge({
    name: 'agora_dialectic_verifiable_resolutions_ratio',
    help: 'Share of the resolved recoveries whose resolution verifies from the record alone (every signature verifies the canonical payload, and a dialectic, tie-break or operator resolution is signed; a quorum resolution names its voting session), all time; the seed wants 1; NaN when none resolved',
    registers,
    async collect() {
      const { resolved, unverifiable } = await verifiable();
      this.set(resolved === 0 ? Number.NaN : (resolved - unverifiable) / resolved);
    },
  });
  new Gauge({
    name: 'agora_dialectic_unverifiable_resolutions',
    help: 'Resolved recoveries whose resolution does not verify from the record alone (a signature that does not verify, or none where one is due), all time; the seed wants 0',
    registers,
    async collect() {
      this.set((await verifiable()).unverifiable);
    },
  });
  countedHistogram(registry, 'agora_dialectic_time_to_resolution_seconds', 'Seconds from the pause of an agent to the resolution of its recovery, over every resolved session', TIME_TO_RESOLUTION_BUCKETS, async () => {
    const { buckets, sumSeconds } = (await totals()).timeToResolution;
    return { buckets, sum: sumSeconds };
  });
  const counter = totalsCounters(registry, totals);
  counter('agora_dialectic_resolved_sessions_total', 'Recoveries resolved (the agent resumed), by who settled them: dialectic, tie_break, quorum, operator', ['decided_by'] as const, (c, t) => {
    for (const [decidedBy, n] of Object.entries(t.resolvedBy)) c.inc({ decided_by: decidedBy }, n);
  });
  counter('agora_dialectic_escalations_total', 'Recovery escalations, by tier: tie_break, quorum, operator', ['tier'] as const, (c, t) => {
    for (const [tier, n] of Object.entries(t.escalationsByTier)) c.inc({ tier }, n);
  });
  counter('agora_dialectic_hard_limit_blocks_total', 'Resolutions the hard limits blocked (the agent stays paused)', [] as const, (c, t) => c.inc(t.hardLimitBlocks));
  counter('agora_dialectic_phase_timeouts_total', 'Dialectic deadlines that passed before the phase was done', [] as const, (c, t) => c.inc(t.timeouts));
  counter('agora_dialectic_relapses_total', 'Resumed agents paused again within the relapse window of their recovery', [] as const, (c, t) => c.inc(t.relapses));
  counter('agora_dialectic_audits_total', 'Audit verdicts on sampled resolutions: sound, unsound', ['verdict'] as const, (c, t) => {
    for (const [verdict, n] of Object.entries(t.audits)) c.inc({ verdict }, n);
  });
}

/** Handlers of `agora.qry.dialectic.stats` and `agora.qry.dialectic.collusion`, over the recovery sessions read model's timed sums (what a window holds, summed over an index on time). */
export function dialecticQueries(db: Pick<SqlExecutor, 'all'>, windowDays: number): [string, QueryHandler][] {
  return [
    onQuery(GetDialecticStats, async ({ windowDays: days }) => dialecticStatsAt(db, new Date(), days ?? windowDays)),
    onQuery(ListCollusionFlags, async ({ windowDays: days, limit, cursor }) => {
      const window = dialecticWindow(new Date(), days ?? windowDays);
      const flags = collusionFlagsFromSums(await dialecticSessionsTable.windowSums(db, Date.parse(window.from), Date.parse(window.to)));
      const { items, nextCursor } = pageOf(flags, { key: (f) => f.agents, directions: ['asc', 'asc'] }, { limit, cursor }, (f) => f);
      return { flags: items, ...(nextCursor === undefined ? {} : { nextCursor }) };
    }),
  ];
}
