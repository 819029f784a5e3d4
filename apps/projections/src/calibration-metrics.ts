import { GetReviewerCalibration } from '@agora/contracts';
import { calibrationFromSums, outcomeCountsFromSums } from '@agora/domain-tribunal';
import { validatorAgreementFromSums } from '@agora/domain-voting';
import { onQuery, type QueryHandler } from '@agora/messaging';
import { pageOf, proposalsTable, votingSessionsTable } from '@agora/read-models';
import type { SqlExecutor } from '@agora/read-store';
import { Gauge, type Registry } from 'prom-client';
import { oncePerScrape, totalsCounters } from './metrics-kit.js';

export interface CalibrationMetricsOptions {
  /** The read side's database, with the sums of the proposals and voting sessions read models (proposalsTable, votingSessionsTable). */
  db: Pick<SqlExecutor, 'all'>;
}

/**
 * The calibration figures (docs/metrics.md, "Calibration"): how each reviewer's verdicts, under each
 * constitution, compare with the reported outcomes of the proposals, and how each validator's votes
 * compare with its sessions' final decisions. Read at scrape time from the proposals read model's
 * sums (one row per reviewer, constitution and count) and the voting sessions read model's
 * (docs/decisions/0006-metrics-from-read-model-state.md), once per scrape.
 *
 * Labels: `reviewer` and `validator` are agent ids, `constitution` a constitution. They are the one
 * exception to "no id as a label", and a bounded one: one series per reviewer and constitution it
 * reviewed under (per validator), so the series grow with the fleet's reviewers and validators (tens),
 * never with proposals, sessions or votes. The per-proposal detail stays in the queries.
 *
 * Objection fates and vote agreement move (an objection pending today is upheld tomorrow), so those
 * are gauges; only the outcome reports, final once made, are a counter.
 */
export function registerCalibrationMetrics(registry: Registry, options: CalibrationMetricsOptions): void {
  const registers = [registry];
  const figures = oncePerScrape(async () => {
    const [sums, voting] = await Promise.all([proposalsTable.sums(options.db), votingSessionsTable.sums(options.db)]);
    return { reviewers: calibrationFromSums(sums), outcomes: outcomeCountsFromSums(sums), validators: validatorAgreementFromSums(voting) };
  });

  new Gauge({
    name: 'agora_tribunal_reviewer_verdicts',
    help: 'Reviews by reviewer, constitution and verdict: approve and object (explicit, every round), deemed (approved by silence at a deadline)',
    labelNames: ['reviewer', 'constitution', 'verdict'] as const,
    registers,
    async collect() {
      const { reviewers } = await figures();
      this.reset();
      for (const r of reviewers) {
        this.set({ reviewer: r.reviewer, constitution: r.constitution, verdict: 'approve' }, r.approvals);
        this.set({ reviewer: r.reviewer, constitution: r.constitution, verdict: 'object' }, r.objections);
        this.set({ reviewer: r.reviewer, constitution: r.constitution, verdict: 'deemed' }, r.deemedApprovals);
      }
    },
  });
  new Gauge({
    name: 'agora_tribunal_reviewer_objections',
    help: 'Objections by reviewer, constitution and fate: upheld_by_revision (a revision answered it), else by the reported outcome of its proposal: upheld_by_outcome (failed), not_upheld (worked), pending (none yet). The four sum to the objections raised',
    labelNames: ['reviewer', 'constitution', 'fate'] as const,
    registers,
    async collect() {
      const { reviewers } = await figures();
      this.reset();
      for (const r of reviewers) {
        const labels = { reviewer: r.reviewer, constitution: r.constitution };
        this.set({ ...labels, fate: 'upheld_by_revision' }, r.upheldByRevision);
        this.set({ ...labels, fate: 'upheld_by_outcome' }, r.upheldByOutcome);
        this.set({ ...labels, fate: 'not_upheld' }, r.notUpheld);
        this.set({ ...labels, fate: 'pending' }, r.pending);
      }
    },
  });
  new Gauge({
    name: 'agora_tribunal_reviewer_final_verdicts',
    help: "Proposals with a reported outcome, by reviewer, constitution, the reviewer's final explicit verdict on it (approve, object) and the outcome (worked, failed): verdict=\"approve\",outcome=\"failed\" counts approvals of proposals that failed",
    labelNames: ['reviewer', 'constitution', 'verdict', 'outcome'] as const,
    registers,
    async collect() {
      const { reviewers } = await figures();
      this.reset();
      for (const r of reviewers) {
        const labels = { reviewer: r.reviewer, constitution: r.constitution };
        this.set({ ...labels, verdict: 'approve', outcome: 'worked' }, r.approvalsWorked);
        this.set({ ...labels, verdict: 'approve', outcome: 'failed' }, r.approvalsFailed);
        this.set({ ...labels, verdict: 'object', outcome: 'worked' }, r.objectionsWorked);
        this.set({ ...labels, verdict: 'object', outcome: 'failed' }, r.objectionsFailed);
      }
    },
  });
  new Gauge({
    name: 'agora_tribunal_executed_proposals',
    help: 'Proposals whose execution is recorded (RecordExecution), with or without a reported outcome',
    registers,
    async collect() {
      this.set((await figures()).outcomes.executed);
    },
  });
  totalsCounters(registry, figures)('agora_tribunal_outcomes_total', 'Outcome reports of executed proposals (OutcomeReported), by outcome (worked, failed); a report is final', ['outcome'] as const, (c, { outcomes }) => {
    c.inc({ outcome: 'worked' }, outcomes.worked);
    c.inc({ outcome: 'failed' }, outcomes.failed);
  });
  new Gauge({
    name: 'agora_voting_validator_votes',
    help: "Votes by validator and agreement with the session's final decision (the operator's when a human decided): agreed, disagreed, abstained (abstain votes), undecided (approve or deny on a session with no final decision yet)",
    labelNames: ['validator', 'agreement'] as const,
    registers,
    async collect() {
      const { validators } = await figures();
      this.reset();
      for (const v of validators) {
        this.set({ validator: v.validator, agreement: 'agreed' }, v.agreed);
        this.set({ validator: v.validator, agreement: 'disagreed' }, v.disagreed);
        this.set({ validator: v.validator, agreement: 'abstained' }, v.abstain);
        this.set({ validator: v.validator, agreement: 'undecided' }, v.votes - v.abstain - v.agreed - v.disagreed);
      }
    },
  });
}

/** The handler of `agora.qry.tribunal.calibration`, over the proposals read model's sums (a row per reviewer and constitution: as many as the fleet has, whatever the log's length). */
export function calibrationQuery(db: Pick<SqlExecutor, 'all'>): [string, QueryHandler] {
  return onQuery(GetReviewerCalibration, async ({ reviewer, constitution, limit, cursor }) => {
    const sums = await proposalsTable.sums(db);
    const { items, nextCursor } = pageOf(calibrationFromSums(sums, { reviewer, constitution }), { key: (r) => [r.reviewer, r.constitution], directions: ['asc', 'asc'] }, { limit, cursor }, (r) => r);
    return { outcomes: outcomeCountsFromSums(sums), reviewers: items, ...(nextCursor === undefined ? {} : { nextCursor }) };
  });
}
