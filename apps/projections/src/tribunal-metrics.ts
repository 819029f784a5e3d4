import type { TribunalStats } from '@agora/contracts';
import { DEFAULT_COVERAGE_BELOW, healthBand, statsWindow, tribunalStatsFromSums, tribunalTotalsFromSums, type TribunalTotals } from '@agora/domain-tribunal';
import { proposalsTable } from '@agora/read-models';
import type { SqlExecutor } from '@agora/read-store';
import { Gauge, type Registry } from 'prom-client';
import { bucketOf, countedHistogram, oncePerScrape, totalsCounters } from './metrics-kit.js';

/** Buckets of `agora_tribunal_resolution_rounds`: the seed wants objections resolved within 2 to 3 rounds. */
export const RESOLUTION_ROUND_BUCKETS = [0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20];

export interface TribunalMetricsOptions {
  /** The read side's database, with the proposals read model's figures (proposalsTable). */
  db: Pick<SqlExecutor, 'all'>;
  /** The window of the windowed figures (challenge rate, bands), in days. */
  windowDays: number;
  /** Default: the real clock. */
  now?: () => Date;
}

interface Figures {
  stats: TribunalStats;
  totals: TribunalTotals;
}

/** The tribunal's figures as the proposals read model's tables have them now: the all-time totals and the stats of the window up to `now`. */
export async function tribunalFigures(db: Pick<SqlExecutor, 'all'>, now: Date, windowDays: number): Promise<Figures> {
  const window = statsWindow(now, windowDays);
  const [totals, windowed] = await Promise.all([proposalsTable.sums(db), proposalsTable.windowSums(db, Date.parse(window.from), Date.parse(window.to))]);
  return { stats: tribunalStatsFromSums(windowed, window), totals: tribunalTotalsFromSums(totals) };
}

/**
 * The tribunal's metrics (docs/decisions/0006-metrics-from-read-model-state.md): every value is read at scrape time, in
 * `collect()`, from the figures of the proposals read model (its sums and timed sums, kept in the
 * same transactions as the proposals), never bumped per delivered event, so a replay or a redelivery
 * cannot double anything and a restart rebuilds the same values from the log. Counters hold
 * all-time totals of the log (set by reset() + inc(n)); they only grow because the log only grows.
 * No label carries an id: labels are statuses, outcomes, decisions and stages, a handful of values each.
 *
 * The figures are computed once per scrape: the first `collect()` of a scrape computes them and
 * every other metric of the same scrape reuses them (they are dropped on the next turn of the event
 * loop, before any later scrape).
 *
 * The windowed challenge rate is NaN when no proposal submitted in the window was reviewed (0/0):
 * a comparison with NaN is false in PromQL, so no threshold rule fires on an idle tribunal, and the
 * band gauges are both 0 then.
 */
export function registerTribunalMetrics(registry: Registry, options: TribunalMetricsOptions): void {
  const now = options.now ?? (() => new Date());
  const registers = [registry];
  const figures = oncePerScrape(() => tribunalFigures(options.db, now(), options.windowDays));

  new Gauge({
    name: 'agora_tribunal_window_seconds',
    help: 'Length of the window of the windowed tribunal figures (challenge rate, health bands, window proposals), in seconds (30 days: 2592000)',
    registers,
    async collect() {
      this.set((await figures()).stats.window.days * 86_400);
    },
  });
  new Gauge({
    name: 'agora_tribunal_challenge_rate_ratio',
    help: 'Share of the proposals submitted in the window and reviewed that drew at least one objection (challenged / reviewed); NaN when none was reviewed. Seed 000: healthy 0.2 to 0.4, near 0 rubber-stamping, above 0.6 too much overhead',
    registers,
    async collect() {
      this.set((await figures()).stats.challengeRate ?? Number.NaN);
    },
  });
  new Gauge({
    name: 'agora_tribunal_window_proposals',
    help: 'Proposals submitted in the window (stage="submitted"); of those, reviewed in at least one round (stage="reviewed") and challenged by at least one objection (stage="challenged"): the terms of the challenge rate',
    labelNames: ['stage'] as const,
    registers,
    async collect() {
      const { proposals } = (await figures()).stats;
      this.set({ stage: 'submitted' }, proposals.submitted);
      this.set({ stage: 'reviewed' }, proposals.reviewed);
      this.set({ stage: 'challenged' }, proposals.challenged);
    },
  });
  new Gauge({
    name: 'agora_tribunal_rubber_stamping',
    help: 'Health band of seed 000: 1 when the challenge rate over the window is below 0.2 (the tribunal is rubber-stamping), else 0 (also 0 when nothing was reviewed)',
    registers,
    async collect() {
      this.set(healthBand((await figures()).stats.challengeRate) === 'rubber_stamping' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'agora_tribunal_overhead',
    help: 'Health band of seed 000: 1 when the challenge rate over the window is above 0.6 (coordination overhead too high), else 0 (also 0 when nothing was reviewed)',
    registers,
    async collect() {
      this.set(healthBand((await figures()).stats.challengeRate) === 'overhead' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'agora_tribunal_under_covered_proposals',
    help: `Proposals with a closed review round whose explicit reviews, over all their rounds, cover fewer than ${DEFAULT_COVERAGE_BELOW} distinct constitutions (deemed approvals do not count): seed 000's coverage measurement, all time`,
    registers,
    async collect() {
      this.set((await figures()).totals.underCovered);
    },
  });
  new Gauge({
    name: 'agora_tribunal_proposals',
    help: 'Proposals by current status (review, escalated, approved, rejected, withdrawn)',
    labelNames: ['status'] as const,
    registers,
    async collect() {
      for (const [status, n] of Object.entries((await figures()).totals.proposalsByStatus)) this.set({ status }, n);
    },
  });
  new Gauge({
    name: 'agora_tribunal_open_objections',
    help: 'Objections open now on proposals under review or escalated (an objection blocks until a revision answers it or its author withdraws it)',
    registers,
    async collect() {
      this.set((await figures()).totals.openObjections);
    },
  });
  countedHistogram(
    registry,
    'agora_tribunal_resolution_rounds',
    'Review rounds a proposal went through before its final status (approved, rejected or withdrawn), over every resolved proposal; seed 000: objections resolved within 2 to 3 rounds',
    RESOLUTION_ROUND_BUCKETS,
    async () => {
      const buckets = new Map<number, number>();
      let sum = 0;
      for (const { rounds, proposals } of (await figures()).totals.resolutionRounds) {
        const le = bucketOf(RESOLUTION_ROUND_BUCKETS, rounds);
        buckets.set(le, (buckets.get(le) ?? 0) + proposals);
        sum += rounds * proposals;
      }
      return { buckets, sum };
    },
  );
  const counter = totalsCounters(registry, async () => (await figures()).totals);
  counter('agora_tribunal_deemed_approvals_total', 'Reviews deemed approved because the reviewer stayed silent until the round deadline (ReviewDeemedApproved)', [], (c, t) => c.inc(t.deemedApprovals));
  counter('agora_tribunal_deadlocks_escalated_total', 'Proposals escalated to a human operator after too many contested rounds (ProposalEscalated, reason deadlock)', [], (c, t) => c.inc(t.deadlocksEscalated));
  counter('agora_tribunal_coverage_escalations_total', 'Proposals escalated to a human operator because too few constitutions had an eligible reviewer (ProposalEscalated, reason insufficient_coverage)', [], (c, t) =>
    c.inc(t.coverageEscalations),
  );
  counter('agora_tribunal_proceeded_despite_objections_total', 'Executions recorded for proposals that were not approved (ProceededDespiteObjections): constitutional violations on the audit trail', [], (c, t) =>
    c.inc(t.proceededDespiteObjections),
  );
  counter(
    'agora_tribunal_decisions_total',
    'Proposals that reached a final status, by outcome (approved, rejected, withdrawn) and by whom it was decided (tribunal, operator, proposer)',
    ['outcome', 'decided_by'] as const,
    (c, { decisions }) => {
      c.inc({ outcome: 'approved', decided_by: 'tribunal' }, decisions.approvedByTribunal);
      c.inc({ outcome: 'approved', decided_by: 'operator' }, decisions.approvedByOperator);
      c.inc({ outcome: 'rejected', decided_by: 'operator' }, decisions.rejected);
      c.inc({ outcome: 'withdrawn', decided_by: 'proposer' }, decisions.withdrawn);
    },
  );
  counter('agora_tribunal_operator_decisions_total', 'Escalations decided by a human operator, by decision (approve, reject, send_back)', ['decision'] as const, (c, { operatorDecisions }) => {
    for (const [decision, n] of Object.entries(operatorDecisions)) c.inc({ decision }, n);
  });
}
