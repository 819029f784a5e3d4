import { CONSENSUS_TYPES, GetValidatorAgreement, GetVotingStats } from '@agora/contracts';
import { TIME_TO_DECISION_BUCKETS, validatorAgreementFromSums, votingStatsFromSums, votingTotalsFromSums } from '@agora/domain-voting';
import { onQuery, type QueryHandler } from '@agora/messaging';
import { pageOf, votingSessionsTable } from '@agora/read-models';
import type { SqlExecutor } from '@agora/read-store';
import { Gauge, type Registry } from 'prom-client';
import { countedHistogram, oncePerScrape, totalsCounters } from './metrics-kit.js';

/** Buckets of `agora_voting_time_to_decision_seconds` (the voting figures count sessions by them). */
export { TIME_TO_DECISION_BUCKETS };

export interface VotingMetricsOptions {
  /** The read side's database, with the voting sessions read model's sums (votingSessionsTable). */
  db: Pick<SqlExecutor, 'all'>;
}

/**
 * The voting engine's metrics (docs/decisions/0006-metrics-from-read-model-state.md): every value is read at scrape time, in
 * `collect()`, from the voting sessions read model's sums (kept with the sessions), never bumped per delivered event, so a replay
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
  const totals = oncePerScrape(async () => votingTotalsFromSums(await votingSessionsTable.sums(options.db)));

  new Gauge({
    name: 'agora_voting_sessions',
    help: 'Voting sessions by current status: pending (no vote yet), voting, decided, expired, cancelled',
    labelNames: ['status'] as const,
    registers,
    async collect() {
      for (const [status, n] of Object.entries((await totals()).sessionsByStatus)) this.set({ status }, n);
    },
  });
  new Gauge({
    name: 'agora_voting_sessions_awaiting_operator',
    help: 'Decided or expired voting sessions whose recommendation requires a human (HITL) and that no operator has decided yet',
    registers,
    async collect() {
      this.set((await totals()).awaitingOperator);
    },
  });
  new Gauge({
    name: 'agora_voting_escalation_ratio',
    help: 'Share of the concluded (decided or expired) voting sessions whose recommendation required a human (HITL rate), all time; NaN when none concluded',
    registers,
    async collect() {
      this.set((await totals()).escalationRate);
    },
  });
  countedHistogram(
    registry,
    'agora_voting_time_to_decision_seconds',
    'Seconds from the creation of a voting session to its decision (every validator voted, or no quorum at creation) or its expiry, over every concluded session',
    TIME_TO_DECISION_BUCKETS,
    async () => {
      const { buckets, sumSeconds } = (await totals()).timeToDecision;
      return { buckets, sum: sumSeconds };
    },
  );
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

/** Handlers of `agora.qry.voting.sessions.stats` and `agora.qry.voting.validators.agreement`, over the voting sessions read model's sums (a row per validator and count: as many as the fleet has, whatever the log's length). */
export function votingQueries(db: Pick<SqlExecutor, 'all'>): [string, QueryHandler][] {
  return [
    onQuery(GetVotingStats, async () => votingStatsFromSums(await votingSessionsTable.sums(db))),
    onQuery(GetValidatorAgreement, async ({ validator, limit, cursor }) => {
      const { items, nextCursor } = pageOf(validatorAgreementFromSums(await votingSessionsTable.sums(db), validator), { key: (a) => [a.validator], directions: ['asc'] }, { limit, cursor }, (a) => a);
      return { validators: items, ...(nextCursor === undefined ? {} : { nextCursor }) };
    }),
  ];
}
