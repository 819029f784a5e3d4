import { CONSENSUS_TYPES, GetValidatorAgreement, GetVotingStats, type VotingSessionRecord } from '@agora/contracts';
import { validatorAgreement, votingStats, votingTotals } from '@agora/domain-voting';
import { ProjectionRunner, type EventSourcingLogger, type SnapshotStore, type ReadModelPositions } from '@agora/eventsourcing';
import type { EventStore } from '@agora/eventstore';
import { onQuery, type QueryHandler } from '@agora/messaging';
import { pageOf, votingSessionsProjection, type VotingSessionsModel } from '@agora/read-models';
import { Gauge, Histogram, type Registry } from 'prom-client';
import { oncePerScrape, totalsCounters } from './metrics-kit.js';

/** Buckets of `agora_voting_time_to_decision_seconds`: the seed's default timeout is 5 minutes (300 s). */
export const TIME_TO_DECISION_BUCKETS = [1, 5, 15, 30, 60, 120, 180, 300, 600, 1800, 3600];

export interface VotingMetricsOptions {
  /** The session records as of now (the live read model). */
  records: () => Iterable<VotingSessionRecord>;
}

/**
 * The voting engine's metrics (docs/decisions/0006-metrics-from-read-model-state.md): every value is computed at scrape time, in
 * `collect()`, from the voting sessions read model, never bumped per delivered event, so a replay
 * or a redelivery cannot double anything and a restart rebuilds the same values from the log.
 * Counters hold all-time totals of the log (reset() + inc(n)); they only grow because a session's
 * conclusion, an operator decision and a vote are final. Labels are statuses, consensus types,
 * decisions and escalation reasons, a handful of values each: never an id. Per-validator figures
 * are a query (`agora.qry.voting.validators.agreement`) and, labelled by validator only, the
 * calibration gauge `agora_voting_validator_votes` (calibration-metrics.ts).
 *
 * - agora_voting_sessions{status}                          gauge: sessions by current status
 * - agora_voting_sessions_awaiting_operator                gauge: escalated, no human decision yet
 * - agora_voting_concluded_sessions_total{consensus,outcome} counter: decided or expired sessions by
 *                                                          consensus and recommended decision
 * - agora_voting_escalations_total{reason}                 counter: sessions that required a human
 * - agora_voting_escalation_ratio                          gauge: HITL rate of the concluded sessions (NaN when none)
 * - agora_voting_operator_decisions_total{decision}        counter
 * - agora_voting_votes_total{decision}                     counter
 * - agora_voting_time_to_decision_seconds                  histogram: creation to decision or expiry
 */
export function registerVotingMetrics(registry: Registry, options: VotingMetricsOptions): void {
  const registers = [registry];
  // Computed once per scrape (as the tribunal metrics do).
  const totals = oncePerScrape(() => votingTotals([...options.records()]));

  new Gauge({
    name: 'agora_voting_sessions',
    help: 'Voting sessions by current status: pending (no vote yet), voting, decided, expired, cancelled',
    labelNames: ['status'] as const,
    registers,
    collect() {
      for (const [status, n] of Object.entries(totals().sessionsByStatus)) this.set({ status }, n);
    },
  });
  new Gauge({
    name: 'agora_voting_sessions_awaiting_operator',
    help: 'Decided or expired voting sessions whose recommendation requires a human (HITL) and that no operator has decided yet',
    registers,
    collect() {
      this.set(totals().awaitingOperator);
    },
  });
  new Gauge({
    name: 'agora_voting_escalation_ratio',
    help: 'Share of the concluded (decided or expired) voting sessions whose recommendation required a human (HITL rate), all time; NaN when none concluded',
    registers,
    collect() {
      this.set(totals().escalationRate);
    },
  });
  new Histogram({
    name: 'agora_voting_time_to_decision_seconds',
    help: 'Seconds from the creation of a voting session to its decision (every validator voted, or no quorum at creation) or its expiry, over every concluded session',
    buckets: TIME_TO_DECISION_BUCKETS,
    registers,
    collect() {
      this.reset();
      this.zero({}); // reset() leaves an unlabelled histogram with no series at all: keep it present, at 0
      for (const seconds of totals().timeToDecisionSeconds) this.observe(seconds);
    },
  });
  const counter = totalsCounters(registry, totals);
  counter(
    'agora_voting_concluded_sessions_total',
    `Voting sessions decided or expired, by consensus (${CONSENSUS_TYPES.join(', ')}) and outcome, the recommended decision (approve, deny, escalate)`,
    ['consensus', 'outcome'] as const,
    (c, t) => {
      for (const { consensus, decision, sessions } of t.concluded) c.inc({ consensus, outcome: decision }, sessions);
    },
  );
  counter('agora_voting_escalations_total', 'Voting sessions that required a human, by the rule that escalated them (no_quorum, split, critical_not_unanimous, low_confidence, expired, person_decides)', ['reason'] as const, (c, t) => {
    for (const [reason, n] of Object.entries(t.escalations)) c.inc({ reason }, n);
  });
  counter('agora_voting_operator_decisions_total', 'Escalated voting sessions decided by a human operator, by decision (approve, deny)', ['decision'] as const, (c, t) => {
    for (const [decision, n] of Object.entries(t.operatorDecisions)) c.inc({ decision }, n);
  });
  counter('agora_voting_votes_total', 'Validator votes received, by decision (approve, deny, abstain)', ['decision'] as const, (c, t) => {
    for (const [decision, n] of Object.entries(t.votes)) c.inc({ decision }, n);
  });
}

/** The voting part of the projections service: its read model, its queries and its metrics. */
export interface VotingProjections {
  runner: ProjectionRunner<VotingSessionsModel>;
  records(): Iterable<VotingSessionRecord>;
  /** Handlers of `agora.qry.voting.sessions.stats` and `agora.qry.voting.validators.agreement`. */
  queries: [string, QueryHandler][];
  close(): Promise<void>;
}

/** Starts the voting sessions read model (folded from the whole log, then live) and resolves once it has caught up. */
export async function startVotingProjections(store: EventStore, logger: EventSourcingLogger, snapshots?: SnapshotStore, positions?: ReadModelPositions): Promise<VotingProjections> {
  const runner = new ProjectionRunner(store, votingSessionsProjection, { logger, ...(snapshots ? { snapshots } : {}), ...(positions ? { positions } : {}) });
  await runner.start();
  const records = () => runner.model.values();
  return {
    runner,
    records,
    queries: [
      onQuery(GetVotingStats, async () => votingStats([...records()])),
      onQuery(GetValidatorAgreement, async ({ validator, limit, cursor }) => {
        const { items, nextCursor } = pageOf(validatorAgreement([...records()], validator), { key: (a) => [a.validator], directions: ['asc'] }, { limit, cursor }, (a) => a);
        return { validators: items, ...(nextCursor === undefined ? {} : { nextCursor }) };
      }),
    ],
    close: () => runner.stop(),
  };
}
