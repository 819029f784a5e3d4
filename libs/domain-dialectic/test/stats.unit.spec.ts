import type { DialecticSessionRecord } from '@agora/contracts';
import { dialecticStats, dialecticTotals } from '../src/stats.js';
import { AGENT, at, converging, deadlocked, decideRecovery, escalate, HOUR, inSynthesis, play, proposedPayload, REVIEWER, sign, stateOf, synthesis, T0, threshold, tieBreak, assignTieBreaker, quorumResult } from './fixtures.js';
import { resolutionPayload } from '../src/resolution.js';

const quick = (): DialecticSessionRecord => {
  const h = converging();
  const payload = proposedPayload(h);
  return stateOf(play(h, sign(AGENT, payload, at(200)), sign(REVIEWER, payload, at(230))));
};
const byOperator = (): DialecticSessionRecord => {
  const h = play(inSynthesis(), escalate('root', at(150), true));
  const payload = resolutionPayload({ sessionId: 'critical_agent-p1', agentId: AGENT, reviewer: REVIEWER, pause: 1, rootCause: 'spike', conditions: [threshold(0.5)], decidedBy: 'operator', escalation: 1, decider: 'root' });
  return stateOf(play(h, decideRecovery('resume', at(HOUR), payload)));
};
const viaQuorum = (): DialecticSessionRecord => stateOf(play(deadlocked(), assignTieBreaker(1, at(430)), tieBreak(1, 'neither', at(500)), quorumResult(2, 'deny', at(800))));
const blocked = (): DialecticSessionRecord => {
  const unsafe = { proposedConditions: [threshold(0.95)] };
  return stateOf(play(inSynthesis(), synthesis(1, AGENT, at(150), unsafe), synthesis(2, REVIEWER, at(180), unsafe)));
};
const relapsed = (): DialecticSessionRecord => ({ ...quick(), relapse: { pause: 2, risk: 0.7, relapsedAt: at(HOUR), afterMs: 1 } });

describe('dialecticStats', () => {
  it("measures the seed's success metrics over the sessions opened in the window", () => {
    const stats = dialecticStats([quick(), byOperator(), viaQuorum(), blocked(), relapsed()], at(2 * HOUR), 30);
    expect(stats).toEqual({
      window: { from: new Date(Date.parse(T0) + 2 * HOUR * 1000 - 30 * 86_400_000).toISOString(), to: at(2 * HOUR), days: 30 },
      sessions: 5,
      byStatus: { awaiting_thesis: 0, awaiting_antithesis: 0, synthesis: 0, awaiting_signatures: 0, tie_break: 0, quorum: 0, awaiting_operator: 2, resolved: 3, stayed_paused: 0 },
      resolved: 3,
      decidedBy: { dialectic: 2, tie_break: 0, quorum: 0, operator: 1 },
      resolvedWithinTarget: 2,
      resolvedWithinTargetRate: 2 / 5,
      targetMs: 300_000,
      escalated: 3,
      escalatedToQuorum: 1,
      escalationRate: 3 / 5,
      quorumEscalationRate: 1 / 5,
      relapsed: 1,
      repeatFailureRate: 1 / 3,
      hardLimitBlocks: 1,
      timeouts: 0,
      audits: { sampled: 0, assigned: 0, sound: 0, unsound: 0 },
      collusionFlags: 0,
      meanTimeToResolutionMs: (230_000 + 230_000 + HOUR * 1000) / 3,
    });
  });

  it('leaves out sessions opened outside the window, and has no rates without sessions', () => {
    const old = { ...quick(), openedAt: at(-31 * 24 * HOUR) };
    const stats = dialecticStats([old], at(0), 30);
    expect(stats).toMatchObject({ sessions: 0, resolvedWithinTargetRate: null, escalationRate: null, repeatFailureRate: null, meanTimeToResolutionMs: null });
    expect(() => dialecticStats([], at(0), 0)).toThrow(/windowDays/);
  });
});

describe('dialecticTotals', () => {
  it('counts over the whole log for the metrics exporter', () => {
    const totals = dialecticTotals([quick(), byOperator(), viaQuorum(), blocked()]);
    expect(totals).toEqual({
      sessionsByStatus: { awaiting_thesis: 0, awaiting_antithesis: 0, synthesis: 0, awaiting_signatures: 0, tie_break: 0, quorum: 0, awaiting_operator: 2, resolved: 2, stayed_paused: 0 },
      resolvedBy: { dialectic: 1, tie_break: 0, quorum: 0, operator: 1 },
      escalationsByTier: { tie_break: 1, quorum: 1, operator: 3 },
      hardLimitBlocks: 1,
      timeouts: 0,
      relapses: 0,
      audits: { sound: 0, unsound: 0 },
      // 230 s and an hour
      timeToResolution: {
        buckets: new Map([
          [300, 1],
          [HOUR, 1],
        ]),
        sumSeconds: 230 + HOUR,
      },
      // both resolutions are signed and verify
      resolutions: { resolved: 2, unverifiable: 0 },
    });
  });
});
