import { ChamberStatus, GetChamberStats } from '@agora/contracts';
import { CALL_LATENCY_BUCKETS, chamberStatsFromSums, chamberTotalsFromSums, chamberWindowFrom, SESSION_COST_BUCKETS, WALL_TIME_BUCKETS, type ChamberStats, type MonthLedger } from '@agora/domain-chamber';
import { onQuery, type QueryHandler } from '@agora/messaging';
import { chamberLedgersTable, chamberRecordsTable } from '@agora/read-models';
import type { SqlExecutor } from '@agora/read-store';
import { Gauge, type Registry } from 'prom-client';
import { countedHistogram, oncePerScrape, totalsCounters } from './metrics-kit.js';

export { CALL_LATENCY_BUCKETS, SESSION_COST_BUCKETS, WALL_TIME_BUCKETS };
export const DEFAULT_CHAMBER_MIN_SAMPLE = 10;

/** The chamber's stats over the `windowDays` days before `now`: sessions by status from the chamber records' sums, the rest from their timed sums. */
export async function chamberStatsAt(db: Pick<SqlExecutor, 'all'>, now: Date, windowDays: number, minSample: number): Promise<ChamberStats> {
  const [all, window] = await Promise.all([chamberRecordsTable.sums(db), chamberRecordsTable.windowSums(db, chamberWindowFrom(now, windowDays), Number.MAX_SAFE_INTEGER)]);
  return chamberStatsFromSums(all, window, windowDays, minSample);
}

export interface ChamberMetricsOptions {
  /** The read side's database, with the chamber records' sums (chamberRecordsTable) and the months' ledgers (chamberLedgersTable). */
  db: Pick<SqlExecutor, 'all'>;
  windowDays: number;
  /** Arbitrated sessions needed before the own-provider win share is a number (NaN below). */
  minSample: number;
}

/**
 * The chamber's metrics (seed 003 and the figures no peer publishes), read at scrape time from the
 * chamber records' sums and timed sums and the month's ledger row, never bumped per delivered event. Labels are statuses, outcomes,
 * providers and error kinds: never a session id.
 *
 * - agora_chamber_sessions{status}                          gauge: sessions by current status
 * - agora_chamber_sessions_concluded_total{outcome}         counter: consensus, no_consensus, failed, cancelled
 * - agora_chamber_no_consensus_ratio                        gauge (window): no_consensus / concluded
 * - agora_chamber_divergence_ratio                          gauge (window): blind phases that diverged
 * - agora_chamber_cross_examination_ratio                   gauge (window): sessions cross-examined
 * - agora_chamber_month_cost{kind,currency}                 gauge: this month's spent, reserved and budget
 * - agora_chamber_day_sessions{kind}                        gauge: sessions reserved today (UTC), and the daily limit
 * - agora_chamber_session_cost                              histogram: cost of each concluded session
 * - agora_chamber_session_wall_time_seconds                 histogram: approval to outcome
 * - agora_chamber_calls_total{provider,result}              counter: calls by provider, ok or error
 * - agora_chamber_call_errors_total{provider,kind}          counter: http, timeout, network, invalid_output, interrupted...
 * - agora_chamber_call_latency_seconds{provider}            histogram: latency of each call
 * - agora_chamber_arbiter_own_provider_win_ratio            gauge (window): syntheses resting on the arbiter's own provider (NaN under the minimum sample)
 * - agora_chamber_arbiter_own_provider_sample               gauge (window): arbitrated consensus sessions counted
 * - agora_chamber_lift_ratio                                gauge (window): consensus outcomes that differ from the blind majority
 * - agora_chamber_conformity_changes_total                  counter: positions abandoned toward the blind majority
 * - agora_chamber_conformity_abandoned_chosen_total         counter: of those, abandoned positions the arbiter or the human later chose
 * - agora_chamber_self_identification_masked_total{provider} counter: panel answers that named their own model or provider (masked for the others)
 */
export function registerChamberMetrics(registry: Registry, options: ChamberMetricsOptions): void {
  const registers = [registry];
  const figures = oncePerScrape(async () => {
    const now = new Date();
    const [sums, window, ledger] = await Promise.all([chamberRecordsTable.sums(options.db), chamberStatsAt(options.db, now, options.windowDays, options.minSample), chamberLedgersTable.get(options.db, now.toISOString().slice(0, 7))]);
    return { today: now.toISOString().slice(0, 10), ledger, all: chamberTotalsFromSums(sums), window };
  });

  new Gauge({
    name: 'agora_chamber_sessions',
    help: 'Chamber sessions by current status (awaiting_approval, rejected, expired, blind, cross_exam, arbitration, consensus, no_consensus, failed, cancelled)',
    labelNames: ['status'] as const,
    registers,
    async collect() {
      // Every status, 0 when no session has it: "none waiting" is a figure, not a missing series.
      const byStatus = (await figures()).all.sessionsByStatus;
      this.reset();
      for (const status of ChamberStatus.options) this.set({ status }, byStatus[status] ?? 0);
    },
  });
  const ratio = (name: string, help: string, value: (window: ChamberStats) => number | null) =>
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        this.set(value((await figures()).window) ?? Number.NaN);
      },
    });
  ratio('agora_chamber_no_consensus_ratio', `Share of the sessions proposed in the last ${options.windowDays} days and concluded that ended in no consensus; NaN when none`, (w) => w.noConsensusRate);
  ratio('agora_chamber_divergence_ratio', `Share of the blind phases of the last ${options.windowDays} days that diverged beyond the threshold; NaN when none`, (w) => w.divergenceRate);
  ratio('agora_chamber_cross_examination_ratio', `Share of the blind phases of the last ${options.windowDays} days followed by a cross-examination; NaN when none`, (w) => w.crossExamRate);
  ratio(
    'agora_chamber_arbiter_own_provider_win_ratio',
    `Share of the consensus syntheses of the last ${options.windowDays} days resting on the answer of the arbiter's own provider; NaN under ${options.minSample} sessions. Above 0.5: re-evaluate the arbiter (seed 003)`,
    (w) => w.ownProviderWinShare,
  );
  ratio('agora_chamber_arbiter_own_provider_sample', `Consensus syntheses of the last ${options.windowDays} days counted in the own-provider win share`, (w) => w.ownProviderSample);
  ratio('agora_chamber_lift_ratio', `Share of the consensus outcomes of the last ${options.windowDays} days whose position differs from the blind phase-1 majority; NaN when none`, (w) => w.lift);
  new Gauge({
    name: 'agora_chamber_month_cost',
    help: "This month's chamber spend (kind=spent: settled sessions; reserved: sessions not yet settled; budget: the monthly budget), in the configured currency",
    labelNames: ['kind', 'currency'] as const,
    registers,
    async collect() {
      const ledger: MonthLedger | undefined = (await figures()).ledger;
      this.reset();
      if (!ledger) return;
      this.set({ kind: 'spent', currency: ledger.currency }, ledger.spent);
      this.set({ kind: 'reserved', currency: ledger.currency }, ledger.reserved);
      this.set({ kind: 'budget', currency: ledger.currency }, ledger.monthlyBudget);
    },
  });
  new Gauge({
    name: 'agora_chamber_day_sessions',
    help: "Chamber sessions of today (UTC) in the month's ledger (kind=reserved: every session that passed the budget check today; limit: the daily session limit, AGORA_CHAMBER_SESSIONS_PER_DAY)",
    labelNames: ['kind'] as const,
    registers,
    async collect() {
      const { ledger, today } = await figures();
      this.reset();
      if (!ledger) return;
      this.set({ kind: 'reserved' }, Object.values(ledger.entries).filter((e) => e.day === today).length);
      this.set({ kind: 'limit' }, ledger.sessionsPerDay);
    },
  });
  countedHistogram(registry, 'agora_chamber_session_cost', 'Cost of each concluded chamber session, in the configured currency', SESSION_COST_BUCKETS, async () => (await figures()).all.sessionCost);
  countedHistogram(registry, 'agora_chamber_session_wall_time_seconds', 'Seconds from the approval of a chamber session to its outcome', WALL_TIME_BUCKETS, async () => (await figures()).all.wallTime);
  countedHistogram(registry, 'agora_chamber_call_latency_seconds', 'Latency of each model call the chamber made, by provider (retries included)', CALL_LATENCY_BUCKETS, async () =>
    (await figures()).all.callLatency.map(({ provider, seconds }) => ({ ...seconds, labels: { provider } })),
  );
  const counter = totalsCounters(registry, figures);
  counter('agora_chamber_sessions_concluded_total', 'Chamber sessions concluded, by outcome: consensus, no_consensus, failed, cancelled', ['outcome'] as const, (c, f) => {
    for (const outcome of ['consensus', 'no_consensus', 'failed', 'cancelled']) c.inc({ outcome }, f.all.sessionsByStatus[outcome] ?? 0);
  });
  counter('agora_chamber_calls_total', 'Model calls the chamber made, by provider and result (ok or error)', ['provider', 'result'] as const, (c, f) => {
    for (const { provider, result, calls } of f.all.calls) c.inc({ provider, result }, calls);
  });
  counter('agora_chamber_call_errors_total', 'Failed model calls, by provider and kind (http, timeout, network, invalid_output, config, aborted, interrupted)', ['provider', 'kind'] as const, (c, f) => {
    for (const { provider, kind, calls } of f.all.callErrors) c.inc({ provider, kind }, calls);
  });
  counter('agora_chamber_conformity_changes_total', 'Panelists that abandoned their blind position toward the blind majority in cross-examination', [] as const, (c, f) => c.inc(f.all.conformityChanges));
  counter('agora_chamber_conformity_abandoned_chosen_total', 'Of the positions abandoned toward the majority, those the arbiter or the human later chose', [] as const, (c, f) => c.inc(f.all.conformityAbandonedChosen));
  counter('agora_chamber_self_identification_masked_total', 'Panel answers that named their own model or provider, masked before the other panelists and the arbiter saw them, by provider', ['provider'] as const, (c, f) => {
    for (const { provider, answers } of f.all.selfIdentified) c.inc({ provider }, answers);
  });
}

/** The handler of `agora.qry.chamber.stats`, over the chamber records' sums. */
export function chamberQueries(db: Pick<SqlExecutor, 'all'>, windowDays: number, minSample: number): [string, QueryHandler][] {
  return [onQuery(GetChamberStats, async ({ windowDays: days }) => chamberStatsAt(db, new Date(), days ?? windowDays, minSample))];
}
