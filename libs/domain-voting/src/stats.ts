/**
 * The voting engine's figures (the seed's getStats(), the projections' metrics, per-validator
 * agreement), computed from session records alone: pure functions of the read model, so the stats
 * query, the metrics exporter and a test all compute the same numbers from the same records.
 *
 * Every figure is over the whole log (no window). "Concluded" sessions are those decided or
 * expired: they have a consensus and a recommendation.
 */
import {
  CONSENSUS_TYPES,
  type ConsensusType,
  type EscalationReason,
  type RecommendedDecision,
  type ValidatorAgreement,
  type VoteDecision,
  type VotingSessionRecord,
  type VotingSessionStatus,
  type VotingStats,
} from '@agora/contracts';
import { addSum, sumOf, sumsOf, sumsUnder, type Sums } from '@agora/decider';

const ms = (t: string): number => Date.parse(t);

export const isConcluded = (s: VotingSessionRecord): boolean => s.status === 'decided' || s.status === 'expired';

/** Milliseconds from creation to decision or expiry; undefined while not concluded. */
export function timeToDecisionMs(s: VotingSessionRecord): number | undefined {
  if (!isConcluded(s) || s.concludedAt === null) return undefined;
  return Math.max(0, ms(s.concludedAt) - ms(s.createdAt));
}

const zeroByConsensus = (): Record<ConsensusType, number> => Object.fromEntries(CONSENSUS_TYPES.map((c) => [c, 0])) as Record<ConsensusType, number>;

/** Buckets (upper bounds, seconds) of the time from a session's creation to its decision or expiry: the seed's default timeout is 5 minutes (300 s). */
export const TIME_TO_DECISION_BUCKETS = [1, 5, 15, 30, 60, 120, 180, 300, 600, 1800, 3600];

/**
 * What one session adds to the voting figures (votingStats, votingTotals and validatorAgreement
 * read them from the sums): its status, whether it awaits an operator, its operator decision, its
 * votes by decision and by validator with their agreement, and once concluded its consensus,
 * recommendation, escalation and time to decision (in milliseconds, and by bucket).
 */
export function votingSessionSums(s: VotingSessionRecord): Sums {
  const sums: Sums = new Map();
  addSum(sums, 1, 'status', s.status);
  if (s.awaitingOperator) addSum(sums, 1, 'awaiting_operator');
  if (s.resolution) addSum(sums, 1, 'operator', s.resolution.decision);
  for (const v of s.votes) {
    addSum(sums, 1, 'votes', v.decision);
    addSum(sums, 1, 'validator', v.validator, 'votes');
    addSum(sums, 1, 'validator', v.validator, v.decision);
    if (v.decision === 'abstain' || s.finalDecision === null) continue;
    addSum(sums, 1, 'validator', v.validator, v.decision === s.finalDecision ? 'agreed' : 'disagreed');
  }
  const r = s.recommendation;
  if (!isConcluded(s) || !r) return sums;
  addSum(sums, 1, 'concluded', r.consensus, r.decision);
  if (r.requiresHitl) {
    addSum(sums, 1, 'escalated');
    if (r.escalationReason) addSum(sums, 1, 'escalation', r.escalationReason);
  }
  const ms = timeToDecisionMs(s) ?? 0;
  addSum(sums, ms, 'time_to_decision_ms');
  addSum(sums, 1, 'time_to_decision', TIME_TO_DECISION_BUCKETS.find((le) => ms <= le * 1000) ?? 'Infinity');
  if (s.status === 'decided') {
    addSum(sums, 1, 'decided');
    addSum(sums, ms, 'decided_ms');
  }
  return sums;
}

/**
 * The seed's getStats() over every session:
 * - `pendingSessions`: collecting votes (pending or voting);
 * - `consensusBreakdown`, `recommendations`: over the concluded (decided or expired) sessions;
 * - `escalationRate`: concluded sessions whose recommendation required a human, over the concluded; null when none;
 * - `averageVotingTime`: mean ms from creation to decision of the `decided` sessions (those decided
 *   at once for lack of a quorum count with 0; expired sessions, which always took the timeout, do
 *   not count); null when none.
 */
export function votingStats(records: readonly VotingSessionRecord[]): VotingStats {
  return votingStatsFromSums(sumsOf(records, votingSessionSums));
}

/** votingStats from the sums of votingSessionSums. */
export function votingStatsFromSums(sums: ReadonlyMap<string, number>): VotingStats {
  const status = (st: VotingSessionStatus) => sumOf(sums, 'status', st);
  const consensusBreakdown = zeroByConsensus();
  const recommendations = { approve: 0, deny: 0, escalate: 0 };
  let concludedCount = 0;
  for (const [[consensus, decision], n] of sumsUnder(sums, 'concluded')) {
    consensusBreakdown[consensus as ConsensusType] += n;
    recommendations[decision as RecommendedDecision] += n;
    concludedCount += n;
  }
  const decided = sumOf(sums, 'decided');
  return {
    totalSessions: VOTING_SESSION_STATUSES.reduce((n, st) => n + status(st), 0),
    pendingSessions: status('pending') + status('voting'),
    decidedSessions: status('decided'),
    expiredSessions: status('expired'),
    cancelledSessions: status('cancelled'),
    awaitingOperator: sumOf(sums, 'awaiting_operator'),
    consensusBreakdown,
    recommendations,
    operatorDecisions: { approve: sumOf(sums, 'operator', 'approve'), deny: sumOf(sums, 'operator', 'deny') },
    escalationRate: concludedCount === 0 ? null : sumOf(sums, 'escalated') / concludedCount,
    averageVotingTime: decided === 0 ? null : sumOf(sums, 'decided_ms') / decided,
  };
}

const VOTING_SESSION_STATUSES: readonly VotingSessionStatus[] = ['pending', 'voting', 'decided', 'expired', 'cancelled'];

/** Figures over every record that the metrics exporter publishes. */
export interface VotingTotals {
  sessionsByStatus: Record<VotingSessionStatus, number>;
  awaitingOperator: number;
  /** Concluded sessions by consensus and recommended decision (every combination, zeros included). */
  concluded: { consensus: ConsensusType; decision: RecommendedDecision; sessions: number }[];
  /** Concluded sessions that required a human, by the rule that escalated them. */
  escalations: Record<EscalationReason, number>;
  operatorDecisions: { approve: number; deny: number };
  votes: Record<VoteDecision, number>;
  /** Concluded sessions that required a human, over the concluded ones; NaN when none concluded. */
  escalationRate: number;
  /** Time from creation to decision or expiry of every concluded session: how many fell in each bucket of TIME_TO_DECISION_BUCKETS (by upper bound in seconds, Infinity past the last), and their sum in seconds. */
  timeToDecision: { buckets: Map<number, number>; sumSeconds: number };
}

/**
 * Totals over every record, all time. The counts of concluded sessions, escalations, operator
 * decisions and votes only grow as the log grows (a conclusion is final, events are never
 * removed), so the exporter may publish them as counters rebuilt from the log at every start.
 */
export function votingTotals(records: readonly VotingSessionRecord[]): VotingTotals {
  return votingTotalsFromSums(sumsOf(records, votingSessionSums));
}

/** votingTotals from the sums of votingSessionSums. */
export function votingTotalsFromSums(sums: ReadonlyMap<string, number>): VotingTotals {
  const escalations: Record<EscalationReason, number> = { no_quorum: 0, split: 0, critical_not_unanimous: 0, low_confidence: 0, expired: 0, person_decides: 0 };
  for (const [[reason], n] of sumsUnder(sums, 'escalation')) escalations[reason as EscalationReason] += n;
  const decisions: RecommendedDecision[] = ['approve', 'deny', 'escalate'];
  const concluded = CONSENSUS_TYPES.flatMap((consensus) => decisions.map((decision) => ({ consensus, decision, sessions: sumOf(sums, 'concluded', consensus, decision) })));
  const concludedCount = concluded.reduce((n, c) => n + c.sessions, 0);
  return {
    sessionsByStatus: Object.fromEntries(VOTING_SESSION_STATUSES.map((st) => [st, sumOf(sums, 'status', st)])) as Record<VotingSessionStatus, number>,
    awaitingOperator: sumOf(sums, 'awaiting_operator'),
    concluded,
    escalations,
    operatorDecisions: { approve: sumOf(sums, 'operator', 'approve'), deny: sumOf(sums, 'operator', 'deny') },
    votes: { approve: sumOf(sums, 'votes', 'approve'), deny: sumOf(sums, 'votes', 'deny'), abstain: sumOf(sums, 'votes', 'abstain') },
    escalationRate: concludedCount === 0 ? Number.NaN : sumOf(sums, 'escalated') / concludedCount,
    timeToDecision: {
      buckets: new Map(sumsUnder(sums, 'time_to_decision').map(([[le], n]) => [Number(le), n])),
      sumSeconds: sumOf(sums, 'time_to_decision_ms') / 1000,
    },
  };
}

/**
 * Per validator, how often its vote agreed with the final decision of the session: the
 * recommendation's (approve or deny), or the operator's when the session escalated and a human
 * decided. Abstentions and votes on sessions without a final decision (still voting, waiting for
 * a human, cancelled) are counted as votes but neither agree nor disagree. Sorted by validator id;
 * only `validator` when given.
 */
export function validatorAgreement(records: readonly VotingSessionRecord[], validator?: string): ValidatorAgreement[] {
  return validatorAgreementFromSums(sumsOf(records, votingSessionSums), validator);
}

/** validatorAgreement from the sums of votingSessionSums. */
export function validatorAgreementFromSums(sums: ReadonlyMap<string, number>, validator?: string): ValidatorAgreement[] {
  const byValidator = new Map<string, ValidatorAgreement>();
  for (const [[id, field], n] of sumsUnder(sums, 'validator')) {
    if (typeof id !== 'string' || (validator !== undefined && id !== validator)) continue;
    let a = byValidator.get(id);
    if (!a) byValidator.set(id, (a = { validator: id, votes: 0, approve: 0, deny: 0, abstain: 0, agreed: 0, disagreed: 0, agreementRate: null }));
    a[field as 'votes' | VoteDecision | 'agreed' | 'disagreed'] += n;
  }
  return [...byValidator.values()]
    .map((a) => ({ ...a, agreementRate: a.agreed + a.disagreed === 0 ? null : a.agreed / (a.agreed + a.disagreed) }))
    .sort((a, b) => (a.validator < b.validator ? -1 : a.validator > b.validator ? 1 : 0));
}
