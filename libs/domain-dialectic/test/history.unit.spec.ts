import type { DialecticSessionRecord } from '@agora/contracts';
import { collusionFlags, recoveryCandidates, reviewerOutcomes, sessionHistory, trackRecord, trackRecordOf, type SessionHistory } from '../src/history.js';
import { AGENT, at, converging, expire, HOUR, inSynthesis, opened, play, proposedPayload, REVIEWER, sign, stateOf, thesis } from './fixtures.js';

/** critical_agent's recovery, resolved at T0 + 230 s by both parties' signatures. */
const resolved = (): DialecticSessionRecord => {
  const h = converging();
  const payload = proposedPayload(h);
  return stateOf(play(h, sign(AGENT, payload, at(200)), sign(REVIEWER, payload, at(230))));
};
/** A record as if another pair had run it, opened `seconds` after T0. */
const review = (agentId: string, reviewer: string, seconds = 0): DialecticSessionRecord => ({ ...resolved(), sessionId: `${agentId}-p1`, agentId, reviewer, openedAt: at(seconds) });

describe('reviewerOutcomes and trackRecord', () => {
  it('counts a signed resolution as a success once the relapse window (24 h) passed without a relapse; pending until then', () => {
    expect(reviewerOutcomes([resolved()], at(HOUR))).toEqual([{ reviewer: REVIEWER, agentId: AGENT, sessionId: 'critical_agent-p1', outcome: 'pending', reason: 'within_window', at: at(230) }]);
    expect(reviewerOutcomes([resolved()], at(230 + 24 * HOUR))).toEqual([{ reviewer: REVIEWER, agentId: AGENT, sessionId: 'critical_agent-p1', outcome: 'success', reason: 'resolved', at: at(230 + 24 * HOUR) }]);
  });

  it('counts a relapse, an unsound audit, and a deadline the reviewer let pass as failures', () => {
    const relapsed = { ...resolved(), relapse: { pause: 2, risk: 0.7, relapsedAt: at(2 * HOUR), afterMs: 1 } };
    const unsound = { ...resolved(), audit: { auditor: 'auditor_c', selection: null, noCandidate: false, verdict: 'unsound' as const, reasoning: 'no', assignedAt: at(300), submittedAt: at(400) } };
    const silent = stateOf(play(opened(), thesis(at(60)), expire(at(60 + 2 * HOUR))));
    expect(reviewerOutcomes([relapsed, unsound, silent], at(100 * HOUR)).map((o) => [o.outcome, o.reason])).toEqual([
      ['failure', 'relapsed'],
      ['failure', 'unsound_audit'],
      ['failure', 'timed_out'],
    ]);
  });

  it('gives no outcome to a session that is still open, or settled without the reviewer', () => {
    expect(reviewerOutcomes([stateOf(inSynthesis())], at(100 * HOUR))).toEqual([]);
  });

  it("makes a reviewer's track record: successful / settled, pending not counted", () => {
    expect(trackRecord([{ outcome: 'success' }, { outcome: 'failure' }, { outcome: 'pending' }, { outcome: 'success' }])).toEqual({ reviews: 3, successful: 2, score: 2 / 3 });
    expect(trackRecord([])).toEqual({ reviews: 0, successful: 0, score: null });
    expect(trackRecordOf([resolved(), review('other', REVIEWER)], REVIEWER, at(100 * HOUR))).toEqual({ reviews: 2, successful: 2, score: 1 });
  });
});

describe('collusionFlags', () => {
  it('flags a pair that review each other repeatedly (both directions, 3 reviews), in id order', () => {
    const records = [review('alice', 'bob', 0), review('bob', 'alice', 10), review('alice', 'bob', 20), review('carol', 'dave', 0), review('carol', 'dave', 10), review('carol', 'dave', 20)];
    expect(collusionFlags(records, at(HOUR))).toEqual([{ agents: ['alice', 'bob'], reviews: 3, firstToSecond: 1, secondToFirst: 2 }]);
  });

  it('does not flag two mutual reviews, nor reviews outside the window', () => {
    expect(collusionFlags([review('alice', 'bob'), review('bob', 'alice')], at(HOUR))).toEqual([]);
    const old = [review('alice', 'bob', -40 * 24 * HOUR), review('bob', 'alice', 10), review('alice', 'bob', 20)];
    expect(collusionFlags(old, at(HOUR))).toEqual([]);
    expect(collusionFlags(old, at(HOUR), { windowMs: 60 * 24 * HOUR * 1000 })).toHaveLength(1);
  });
});

describe('recoveryCandidates', () => {
  it("builds each candidate from the registry's agent and the history of recoveries", () => {
    const records = [resolved(), review('bob', 'alice', 0), review('alice', 'bob', 10), review('bob', 'alice', 20)];
    const agents = [
      { agentId: REVIEWER, status: 'active', risk: 0.1, health: 0.9, specializations: ['security'], breaker: { state: 'closed' as const, lastReportAt: at(-60) } },
      { agentId: 'alice', status: 'active', risk: 0.2, health: 0.8, specializations: [], breaker: { state: 'open' as const, lastReportAt: null } },
    ];
    const [b, alice] = recoveryCandidates(agents, records, AGENT, at(100 * HOUR));
    expect(b).toEqual({
      agentId: REVIEWER,
      status: 'active',
      paused: false,
      risk: 0.1,
      health: 0.9,
      lastReportAt: at(-60),
      trackRecord: { reviews: 1, successful: 1 },
      expertise: ['security', 'cascade'],
      lastReviewedAgentAt: at(0),
      collusionFlagged: false,
    });
    expect(alice).toMatchObject({ paused: true, lastReviewedAgentAt: null, collusionFlagged: false });
    const [forBob] = recoveryCandidates([agents[1]!], records, 'bob', at(100 * HOUR));
    expect(forBob).toMatchObject({ collusionFlagged: true, lastReviewedAgentAt: at(20) });
    // The sessions' histories (what a read model keeps without the transcripts) weigh the same, through JSON as a table holds them.
    const histories = records.map((r) => JSON.parse(JSON.stringify(sessionHistory(r))) as SessionHistory);
    expect(recoveryCandidates(agents, histories, AGENT, at(100 * HOUR))).toEqual(recoveryCandidates(agents, records, AGENT, at(100 * HOUR)));
    expect(recoveryCandidates([agents[1]!], histories, 'bob', at(100 * HOUR))).toEqual([forBob]);
  });
});
