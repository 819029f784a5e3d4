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

const ms = (t: string): number => Date.parse(t);

export const isConcluded = (s: VotingSessionRecord): boolean => s.status === 'decided' || s.status === 'expired';

/** Milliseconds from creation to decision or expiry; undefined while not concluded. */
export function timeToDecisionMs(s: VotingSessionRecord): number | undefined {
  if (!isConcluded(s) || s.concludedAt === null) return undefined;
  return Math.max(0, ms(s.concludedAt) - ms(s.createdAt));
}

const zeroByConsensus = (): Record<ConsensusType, number> => Object.fromEntries(CONSENSUS_TYPES.map((c) => [c, 0])) as Record<ConsensusType, number>;

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
  const byStatus = (...statuses: VotingSessionStatus[]) => records.filter((s) => statuses.includes(s.status)).length;
  const consensusBreakdown = zeroByConsensus();
  const recommendations = { approve: 0, deny: 0, escalate: 0 };
  const operatorDecisions = { approve: 0, deny: 0 };
  let concludedCount = 0;
  let escalated = 0;
  let decidedTime = 0;
  let decidedCount = 0;
  for (const s of records) {
    if (s.resolution) operatorDecisions[s.resolution.decision]++;
    if (!isConcluded(s) || !s.recommendation) continue;
    concludedCount++;
    consensusBreakdown[s.recommendation.consensus]++;
    recommendations[s.recommendation.decision]++;
    if (s.recommendation.requiresHitl) escalated++;
    if (s.status === 'decided') {
      decidedCount++;
      decidedTime += timeToDecisionMs(s) ?? 0;
    }
  }
  return {
    totalSessions: records.length,
    pendingSessions: byStatus('pending', 'voting'),
    decidedSessions: byStatus('decided'),
    expiredSessions: byStatus('expired'),
    cancelledSessions: byStatus('cancelled'),
    awaitingOperator: records.filter((s) => s.awaitingOperator).length,
    consensusBreakdown,
    recommendations,
    operatorDecisions,
    escalationRate: concludedCount === 0 ? null : escalated / concludedCount,
    averageVotingTime: decidedCount === 0 ? null : decidedTime / decidedCount,
  };
}

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
  /** Seconds from creation to decision or expiry of every concluded session, in record order. */
  timeToDecisionSeconds: number[];
}

/**
 * Totals over every record, all time. The counts of concluded sessions, escalations, operator
 * decisions and votes only grow as the log grows (a conclusion is final, events are never
 * removed), so the exporter may publish them as counters rebuilt from the log at every start.
 */
export function votingTotals(records: readonly VotingSessionRecord[]): VotingTotals {
  const sessionsByStatus: Record<VotingSessionStatus, number> = { pending: 0, voting: 0, decided: 0, expired: 0, cancelled: 0 };
  const escalations: Record<EscalationReason, number> = { no_quorum: 0, split: 0, critical_not_unanimous: 0, low_confidence: 0, expired: 0, person_decides: 0 };
  const operatorDecisions = { approve: 0, deny: 0 };
  const votes: Record<VoteDecision, number> = { approve: 0, deny: 0, abstain: 0 };
  const concluded = new Map<string, number>();
  const timeToDecisionSeconds: number[] = [];
  let concludedCount = 0;
  let escalated = 0;
  let awaitingOperator = 0;
  for (const s of records) {
    sessionsByStatus[s.status]++;
    if (s.awaitingOperator) awaitingOperator++;
    if (s.resolution) operatorDecisions[s.resolution.decision]++;
    for (const v of s.votes) votes[v.decision]++;
    const r = s.recommendation;
    if (!isConcluded(s) || !r) continue;
    concludedCount++;
    const key = `${r.consensus}|${r.decision}`;
    concluded.set(key, (concluded.get(key) ?? 0) + 1);
    if (r.requiresHitl) {
      escalated++;
      if (r.escalationReason) escalations[r.escalationReason]++;
    }
    timeToDecisionSeconds.push((timeToDecisionMs(s) ?? 0) / 1000);
  }
  const decisions: RecommendedDecision[] = ['approve', 'deny', 'escalate'];
  return {
    sessionsByStatus,
    awaitingOperator,
    concluded: CONSENSUS_TYPES.flatMap((consensus) => decisions.map((decision) => ({ consensus, decision, sessions: concluded.get(`${consensus}|${decision}`) ?? 0 }))),
    escalations,
    operatorDecisions,
    votes,
    escalationRate: concludedCount === 0 ? Number.NaN : escalated / concludedCount,
    timeToDecisionSeconds,
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
  const byValidator = new Map<string, ValidatorAgreement>();
  for (const s of records) {
    for (const v of s.votes) {
      if (validator !== undefined && v.validator !== validator) continue;
      let a = byValidator.get(v.validator);
      if (!a) byValidator.set(v.validator, (a = { validator: v.validator, votes: 0, approve: 0, deny: 0, abstain: 0, agreed: 0, disagreed: 0, agreementRate: null }));
      a.votes++;
      a[v.decision]++;
      if (v.decision === 'abstain' || s.finalDecision === null) continue;
      if (v.decision === s.finalDecision) a.agreed++;
      else a.disagreed++;
    }
  }
  return [...byValidator.values()]
    .map((a) => ({ ...a, agreementRate: a.agreed + a.disagreed === 0 ? null : a.agreed / (a.agreed + a.disagreed) }))
    .sort((a, b) => (a.validator < b.validator ? -1 : a.validator > b.validator ? 1 : 0));
}
