// The seed's getStats(), the totals the metrics exporter publishes, and per-validator agreement,
// over session records made by the decider.
import { VotingStats, type VotingSessionRecord } from '@agora/contracts';
import { validatorAgreement, votingStats, votingTotals } from '../src/stats.js';
import { at, cancel, create, created, decide, expire, play, stateOf, vote, votesOf } from './fixtures.js';

const as = (sessionId: string, record: VotingSessionRecord): VotingSessionRecord => ({ ...record, sessionId, requestId: sessionId });
const unweighted = () => created({ config: { weightByTrustScore: false } });

/** Six sessions, one in each situation. */
function fleet(): VotingSessionRecord[] {
  return [
    as('a-unanimous', stateOf(play(created(), ...votesOf(['approve', 'approve', 'approve', 'approve', 'approve'])))),
    as('b-split', stateOf(play(unweighted(), ...votesOf(['approve', 'deny', 'approve', 'deny', 'abstain']), decide('deny', 'not now')))),
    as('c-expired', stateOf(play(created(), vote('ops_bot', 'approve'), expire(at(300))))),
    as('d-cancelled', stateOf(play(created(), vote('risk_bot', 'deny'), cancel('withdrawn')))),
    as('e-pending', stateOf(created())),
    as('f-no-quorum', stateOf(play([], create({ payload: { criteria: { minTrustScore: 850, excludeAgents: [], preferredSpecializations: [] } } })))),
  ];
}

describe('statistics', () => {
  it("computes the seed's getStats(): sessions by status, consensus breakdown, escalation rate, average voting time", () => {
    const stats = votingStats(fleet());
    expect(VotingStats.parse(stats)).toEqual(stats);
    expect(stats).toEqual({
      totalSessions: 6,
      pendingSessions: 1,
      decidedSessions: 3,
      expiredSessions: 1,
      cancelledSessions: 1,
      awaitingOperator: 2,
      consensusBreakdown: { unanimous_approve: 1, unanimous_deny: 0, majority_approve: 0, majority_deny: 0, split: 1, no_quorum: 2 },
      recommendations: { approve: 1, deny: 0, escalate: 3 },
      operatorDecisions: { approve: 0, deny: 1 },
      escalationRate: 0.75,
      // decided: a and b after 14 s, f at once; the expired one does not count
      averageVotingTime: 28_000 / 3,
    });
    expect(votingStats([])).toMatchObject({ totalSessions: 0, escalationRate: null, averageVotingTime: null, consensusBreakdown: { split: 0 } });
  });

  it('totals what the metrics publish: every consensus × decision, escalations by rule, votes, times to decision', () => {
    const totals = votingTotals(fleet());
    expect(totals.sessionsByStatus).toEqual({ pending: 1, voting: 0, decided: 3, expired: 1, cancelled: 1 });
    expect(totals.awaitingOperator).toBe(2);
    expect(totals.concluded).toHaveLength(18);
    expect(totals.concluded.filter((c) => c.sessions > 0)).toEqual([
      { consensus: 'unanimous_approve', decision: 'approve', sessions: 1 },
      { consensus: 'split', decision: 'escalate', sessions: 1 },
      { consensus: 'no_quorum', decision: 'escalate', sessions: 2 },
    ]);
    expect(totals.escalations).toEqual({ no_quorum: 2, split: 1, critical_not_unanimous: 0, low_confidence: 0, expired: 0, person_decides: 0 });
    expect(totals.operatorDecisions).toEqual({ approve: 0, deny: 1 });
    expect(totals.votes).toEqual({ approve: 8, deny: 3, abstain: 1 });
    expect(totals.escalationRate).toBe(0.75);
    // 14 s, 14 s, 300 s (the timeout) and 0 s (no quorum at creation)
    expect(totals.timeToDecision).toEqual({
      buckets: new Map([
        [15, 2],
        [300, 1],
        [1, 1],
      ]),
      sumSeconds: 328,
    });
    expect(votingTotals([]).escalationRate).toBeNaN();
  });

  it("measures each validator's agreement with the final decision (the operator's when a human decided)", () => {
    expect(validatorAgreement(fleet())).toEqual([
      { validator: 'compliance_bot', votes: 2, approve: 1, deny: 1, abstain: 0, agreed: 2, disagreed: 0, agreementRate: 1 },
      { validator: 'ethics_bot', votes: 2, approve: 1, deny: 0, abstain: 1, agreed: 1, disagreed: 0, agreementRate: 1 },
      { validator: 'ops_bot', votes: 3, approve: 3, deny: 0, abstain: 0, agreed: 1, disagreed: 1, agreementRate: 0.5 },
      { validator: 'risk_bot', votes: 3, approve: 1, deny: 2, abstain: 0, agreed: 2, disagreed: 0, agreementRate: 1 },
      { validator: 'security_bot', votes: 2, approve: 2, deny: 0, abstain: 0, agreed: 1, disagreed: 1, agreementRate: 0.5 },
    ]);
    expect(validatorAgreement(fleet(), 'ops_bot')).toHaveLength(1);
    expect(validatorAgreement(fleet(), 'nobody')).toEqual([]);
  });
});
