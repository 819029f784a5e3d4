import { ChamberStatus, GetChamberStats } from '@agora/contracts';
import { chamberStats, type ChamberRecord, type MonthLedger } from '@agora/domain-chamber';
import { ProjectionRunner, type EventSourcingLogger, type SnapshotStore, type ReadModelPositions } from '@agora/eventsourcing';
import type { EventStore } from '@agora/eventstore';
import { onQuery, type QueryHandler } from '@agora/messaging';
import { chamberFiguresProjection, type ChamberFiguresModel } from '@agora/read-models';
import { Gauge, Histogram, type Registry } from 'prom-client';
import { oncePerScrape, scrapedHistograms, totalsCounters } from './metrics-kit.js';

export const SESSION_COST_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10];
export const WALL_TIME_BUCKETS = [5, 15, 30, 60, 120, 300, 600, 1800];
export const CALL_LATENCY_BUCKETS = [0.5, 1, 2, 5, 10, 20, 30, 60, 120];
export const DEFAULT_CHAMBER_MIN_SAMPLE = 10;

export interface ChamberMetricsOptions {
  model: () => ChamberFiguresModel;
  windowDays: number;
  /** Arbitrated sessions needed before the own-provider win share is a number (NaN below). */
  minSample: number;
}

/**
 * The chamber's metrics (seed 003 and the figures no peer publishes), computed at scrape time from
 * the chamber figures read model, never bumped per delivered event. Labels are statuses, outcomes,
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
  const figures = oncePerScrape(() => {
    const model = options.model();
    const records = [...model.sessions.values()];
    const month = new Date().toISOString().slice(0, 7);
    const today = new Date().toISOString().slice(0, 10);
    return { records, today, ledger: model.ledgers.get(month), all: chamberStats(records, new Date(0), 365_000, options.minSample), window: chamberStats(records, new Date(), options.windowDays, options.minSample) };
  });

  new Gauge({
    name: 'agora_chamber_sessions',
    help: 'Chamber sessions by current status (awaiting_approval, rejected, expired, blind, cross_exam, arbitration, consensus, no_consensus, failed, cancelled)',
    labelNames: ['status'] as const,
    registers,
    collect() {
      this.reset();
      // Every status, 0 when no session has it: "none waiting" is a figure, not a missing series.
      const byStatus = figures().all.sessionsByStatus;
      for (const status of ChamberStatus.options) this.set({ status }, byStatus[status] ?? 0);
    },
  });
  const ratio = (name: string, help: string, value: () => number | null) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(value() ?? Number.NaN);
      },
    });
  ratio('agora_chamber_no_consensus_ratio', `Share of the sessions proposed in the last ${options.windowDays} days and concluded that ended in no consensus; NaN when none`, () => figures().window.noConsensusRate);
  ratio('agora_chamber_divergence_ratio', `Share of the blind phases of the last ${options.windowDays} days that diverged beyond the threshold; NaN when none`, () => figures().window.divergenceRate);
  ratio('agora_chamber_cross_examination_ratio', `Share of the blind phases of the last ${options.windowDays} days followed by a cross-examination; NaN when none`, () => figures().window.crossExamRate);
  ratio(
    'agora_chamber_arbiter_own_provider_win_ratio',
    `Share of the consensus syntheses of the last ${options.windowDays} days resting on the answer of the arbiter's own provider; NaN under ${options.minSample} sessions. Above 0.5: re-evaluate the arbiter (seed 003)`,
    () => figures().window.ownProviderWinShare,
  );
  ratio('agora_chamber_arbiter_own_provider_sample', `Consensus syntheses of the last ${options.windowDays} days counted in the own-provider win share`, () => figures().window.ownProviderSample);
  ratio('agora_chamber_lift_ratio', `Share of the consensus outcomes of the last ${options.windowDays} days whose position differs from the blind phase-1 majority; NaN when none`, () => figures().window.lift);
  new Gauge({
    name: 'agora_chamber_month_cost',
    help: "This month's chamber spend (kind=spent: settled sessions; reserved: sessions not yet settled; budget: the monthly budget), in the configured currency",
    labelNames: ['kind', 'currency'] as const,
    registers,
    collect() {
      this.reset();
      const ledger: MonthLedger | undefined = figures().ledger;
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
    collect() {
      this.reset();
      const { ledger, today } = figures();
      if (!ledger) return;
      this.set({ kind: 'reserved' }, Object.values(ledger.entries).filter((e) => e.day === today).length);
      this.set({ kind: 'limit' }, ledger.sessionsPerDay);
    },
  });
  const scraped = scrapedHistograms(registry);
  const histogram = (name: string, help: string, buckets: number[], values: (records: ChamberRecord[]) => number[]) => scraped(name, help, buckets, () => values(figures().records));
  const concluded = (r: ChamberRecord) => r.concludedAt !== null;
  histogram('agora_chamber_session_cost', 'Cost of each concluded chamber session, in the configured currency', SESSION_COST_BUCKETS, (rs) => rs.filter(concluded).map((r) => r.cost));
  histogram('agora_chamber_session_wall_time_seconds', 'Seconds from the approval of a chamber session to its outcome', WALL_TIME_BUCKETS, (rs) => rs.filter((r) => r.wallTimeMs !== null).map((r) => r.wallTimeMs! / 1000));
  new Histogram({
    name: 'agora_chamber_call_latency_seconds',
    help: 'Latency of each model call the chamber made, by provider (retries included)',
    labelNames: ['provider'] as const,
    buckets: CALL_LATENCY_BUCKETS,
    registers,
    collect() {
      this.reset();
      for (const r of figures().records) for (const c of r.calls) if (c.errorKind !== 'interrupted') this.observe({ provider: c.provider }, c.latencyMs / 1000);
    },
  });
  const counter = totalsCounters(registry, figures);
  counter('agora_chamber_sessions_concluded_total', 'Chamber sessions concluded, by outcome: consensus, no_consensus, failed, cancelled', ['outcome'] as const, (c, f) => {
    for (const outcome of ['consensus', 'no_consensus', 'failed', 'cancelled']) c.inc({ outcome }, f.all.sessionsByStatus[outcome] ?? 0);
  });
  counter('agora_chamber_calls_total', 'Model calls the chamber made, by provider and result (ok or error)', ['provider', 'result'] as const, (c, f) => {
    for (const r of f.records) for (const call of r.calls) c.inc({ provider: call.provider, result: call.ok ? 'ok' : 'error' });
  });
  counter('agora_chamber_call_errors_total', 'Failed model calls, by provider and kind (http, timeout, network, invalid_output, config, aborted, interrupted)', ['provider', 'kind'] as const, (c, f) => {
    for (const r of f.records) for (const call of r.calls) if (!call.ok) c.inc({ provider: call.provider, kind: call.errorKind ?? 'unknown' });
  });
  counter('agora_chamber_conformity_changes_total', 'Panelists that abandoned their blind position toward the blind majority in cross-examination', [] as const, (c, f) => c.inc(f.all.conformityChanges));
  counter('agora_chamber_conformity_abandoned_chosen_total', 'Of the positions abandoned toward the majority, those the arbiter or the human later chose', [] as const, (c, f) => c.inc(f.all.conformityAbandonedChosen));
  counter('agora_chamber_self_identification_masked_total', 'Panel answers that named their own model or provider, masked before the other panelists and the arbiter saw them, by provider', ['provider'] as const, (c, f) => {
    for (const r of f.records) for (const [provider, n] of Object.entries(r.selfIdentified ?? {})) c.inc({ provider }, n);
  });
}

export interface ChamberProjections {
  runner: ProjectionRunner<ChamberFiguresModel>;
  /** The handler of `agora.qry.chamber.stats`. */
  queries(windowDays: number, minSample: number): [string, QueryHandler][];
  close(): Promise<void>;
}

/** Starts the chamber figures read model (folded from the whole log, then live) and resolves once it has caught up. */
export async function startChamberProjections(store: EventStore, logger: EventSourcingLogger, snapshots?: SnapshotStore, positions?: ReadModelPositions): Promise<ChamberProjections> {
  const runner = new ProjectionRunner(store, chamberFiguresProjection, { logger, ...(snapshots ? { snapshots } : {}), ...(positions ? { positions } : {}) });
  await runner.start();
  return {
    runner,
    queries: (windowDays, minSample) => [onQuery(GetChamberStats, async ({ windowDays: days }) => chamberStats(runner.model.sessions.values(), new Date(), days ?? windowDays, minSample))],
    close: () => runner.stop(),
  };
}
