import type { DebateView } from '@agora/contracts';
import { debateFigures } from '@agora/domain-debate';
import { ProjectionRunner, type EventSourcingLogger, type SnapshotStore, type ReadModelPositions } from '@agora/eventsourcing';
import type { EventStore } from '@agora/eventstore';
import { debatesProjection, type DebatesModel } from '@agora/read-models';
import { Gauge, type Registry } from 'prom-client';
import { oncePerScrape, scrapedHistograms, totalsCounters } from './metrics-kit.js';

/** Buckets of `agora_debate_duration_seconds`: the seed's target is under 2 minutes per debate. */
export const DEBATE_DURATION_BUCKETS = [10, 30, 60, 120, 300, 600, 1800, 3600, 21600, 86400];
/** Buckets of `agora_debate_cost_usd`: the seed's target is under $0.50 per debate. */
export const DEBATE_COST_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5];

/**
 * The crux debate's metrics (docs/decisions/0006-metrics-from-read-model-state.md), computed at scrape time from the debates read
 * model, never bumped per delivered event. Counters are all-time totals of the log. Labels are
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
export function registerDebateMetrics(registry: Registry, options: { records: () => Iterable<DebateView> }): void {
  const registers = [registry];
  const figures = oncePerScrape(() => debateFigures(options.records()));
  new Gauge({
    name: 'agora_debate_open_debates',
    help: 'Crux debates opened and not complete yet',
    registers,
    collect() {
      this.set(figures().open);
    },
  });
  new Gauge({
    name: 'agora_debate_first_time_accurate_ratio',
    help: "Share of the first steelmans of each (author, target) pair that their target graded ACCURATE, all time; seed 004: above 0.9 the grading is too lax; NaN when none graded",
    registers,
    collect() {
      this.set(figures().steelmans.firstAccurateRate ?? Number.NaN);
    },
  });
  const histogram = scrapedHistograms(registry);
  histogram('agora_debate_duration_seconds', 'Seconds from the opening of a crux debate to its completion, over every completed debate (seed 004 target: under 120)', DEBATE_DURATION_BUCKETS, () => figures().completed.durationsSeconds);
  histogram('agora_debate_cost_usd', 'Model cost in US dollars recorded with the moves of each completed debate (seed 004 target: under 0.50)', DEBATE_COST_BUCKETS, () => figures().completed.costsUsd);
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

/** The debate part of the projections service: its read model and its metrics. */
export interface DebateProjections {
  runner: ProjectionRunner<DebatesModel>;
  records(): Iterable<DebateView>;
  close(): Promise<void>;
}

export async function startDebateProjections(store: EventStore, logger: EventSourcingLogger, snapshots?: SnapshotStore, positions?: ReadModelPositions): Promise<DebateProjections> {
  const runner = new ProjectionRunner(store, debatesProjection, { logger, ...(snapshots ? { snapshots } : {}), ...(positions ? { positions } : {}) });
  await runner.start();
  return { runner, records: () => runner.model.values(), close: () => runner.stop() };
}
