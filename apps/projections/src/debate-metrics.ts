import { DEBATE_COST_BUCKETS, DEBATE_DURATION_BUCKETS, debateFiguresFromSums } from '@agora/domain-debate';
import { debatesTable } from '@agora/read-models';
import type { SqlExecutor } from '@agora/read-store';
import { Gauge, type Registry } from 'prom-client';
import { countedHistogram, oncePerScrape, totalsCounters } from './metrics-kit.js';

/** Buckets of `agora_debate_duration_seconds` and `agora_debate_cost_usd` (the debate figures count debates by them). */
export { DEBATE_COST_BUCKETS, DEBATE_DURATION_BUCKETS };

/**
 * The crux debate's metrics (docs/decisions/0006-metrics-from-read-model-state.md), read at scrape time from the debates read
 * model's sums, never bumped per delivered event. Counters are all-time totals of the log. Labels are
 * outcomes, results and intervention kinds: never an id.
 *
 * - agora_debate_open_debates                              gauge: debates not complete yet
 * - agora_debate_completed_debates_total{outcome}          counter: converged, unvalidated, unresolved
 * - agora_debate_lock_attempts_total{result}               counter: passed, failed
 * - agora_debate_first_steelmans_graded_total              counter: first steelmans of a pair that were graded
 * - agora_debate_first_steelmans_accurate_total            counter: ... graded ACCURATE
 * - agora_debate_first_time_accurate_ratio                 gauge: the two above; above 0.9 grading is too lax (NaN when none)
 * - agora_debate_moderator_interventions_total{kind}       counter: lock_prompt, forced_binary, proposed_falsifiers, orbiting, horizon_mismatch
 * - agora_debate_concessions_total                         counter
 * - agora_debate_cheap_concessions_total                   counter: concessions that left the TopClaim unchanged
 * - agora_debate_duration_seconds                          histogram: opened to completed
 * - agora_debate_cost_usd                                  histogram: recorded model cost of each completed debate
 */
export function registerDebateMetrics(registry: Registry, options: { db: Pick<SqlExecutor, 'all'> }): void {
  const registers = [registry];
  const figures = oncePerScrape(async () => debateFiguresFromSums(await debatesTable.sums(options.db)));
  new Gauge({
    name: 'agora_debate_open_debates',
    help: 'Crux debates opened and not complete yet',
    registers,
    async collect() {
      this.set((await figures()).open);
    },
  });
  new Gauge({
    name: 'agora_debate_first_time_accurate_ratio',
    help: "Share of the first steelmans of each (author, target) pair that their target graded ACCURATE, all time; seed 004: above 0.9 the grading is too lax; NaN when none graded",
    registers,
    async collect() {
      this.set((await figures()).steelmans.firstAccurateRate ?? Number.NaN);
    },
  });
  countedHistogram(registry, 'agora_debate_duration_seconds', 'Seconds from the opening of a crux debate to its completion, over every completed debate (seed 004 target: under 120)', DEBATE_DURATION_BUCKETS, async () => (await figures()).completed.durationSeconds);
  countedHistogram(registry, 'agora_debate_cost_usd', 'Model cost in US dollars recorded with the moves of each completed debate (seed 004 target: under 0.50)', DEBATE_COST_BUCKETS, async () => (await figures()).completed.costUsd);
  const counter = totalsCounters(registry, figures);
  counter('agora_debate_completed_debates_total', 'Completed crux debates by outcome: converged (a validated primary crux), unvalidated, unresolved', ['outcome'] as const, (c, f) => {
    for (const [outcome, n] of Object.entries(f.byOutcome)) c.inc({ outcome }, n);
  });
  counter('agora_debate_lock_attempts_total', 'Crux-lock attempts by result: passed, failed', ['result'] as const, (c, f) => {
    c.inc({ result: 'passed' }, f.lockAttempts.passed);
    c.inc({ result: 'failed' }, f.lockAttempts.failed);
  });
  counter('agora_debate_first_steelmans_graded_total', 'First steelmans of an (author, target) pair that their target graded', [] as const, (c, f) => c.inc(f.steelmans.firstGraded));
  counter('agora_debate_first_steelmans_accurate_total', 'First steelmans of an (author, target) pair graded ACCURATE', [] as const, (c, f) => c.inc(f.steelmans.firstAccurate));
  counter('agora_debate_moderator_interventions_total', "The moderator's interventions by kind", ['kind'] as const, (c, f) => {
    for (const [kind, n] of Object.entries(f.interventions)) c.inc({ kind }, n);
  });
  counter('agora_debate_concessions_total', 'Concessions made in the evidence stage', [] as const, (c, f) => c.inc(f.concessions.total));
  counter('agora_debate_cheap_concessions_total', "Concessions that left the conceder's TopClaim unchanged (seed 004's cheap concession)", [] as const, (c, f) => c.inc(f.concessions.cheap));
}
