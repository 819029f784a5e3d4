import { DEFAULT_ALLOWED_OPERATIONS } from '@agora/contracts';
import { DEFAULT_DIALECTIC_POLICY, defineDialecticPolicy } from '../src/policy.js';

const HOUR_MS = 3_600_000;

describe('dialectic policy', () => {
  it("defaults to the seed: its deadlines, 5 rounds, its authority weights and exclusions, both tiers, its hard limits, a 10 % audit", () => {
    const { hardLimits, ...rest } = DEFAULT_DIALECTIC_POLICY;
    expect(rest).toEqual({
      thesisTimeoutMs: HOUR_MS,
      antithesisTimeoutMs: 2 * HOUR_MS,
      synthesisRoundTimeoutMs: HOUR_MS,
      signatureTimeoutMs: HOUR_MS,
      sessionTimeoutMs: 6 * HOUR_MS,
      maxSynthesisRounds: 5,
      selection: { weights: { health: 0.4, trackRecord: 0.3, expertise: 0.2, freshness: 0.1 }, maxReviewerRisk: 0.4, recentReviewWindowMs: 24 * HOUR_MS, freshnessWindowMs: 24 * HOUR_MS },
      escalation: { tieBreak: true, quorum: true, tieBreakTimeoutMs: 2 * HOUR_MS, quorumTimeoutMs: HOUR_MS, quorumSize: 5 },
      relapseWindowMs: 24 * HOUR_MS,
      auditRate: 0.1,
    });
    expect(hardLimits.forbiddenOperations).toEqual(['disable_governance', 'bypass_safety', 'remove_monitoring', 'unlimited_risk']);
    expect(hardLimits.maxRiskThreshold).toBe(0.9);
    expect(Object.keys(hardLimits.allowedOperations).sort()).toEqual(Object.keys(DEFAULT_ALLOWED_OPERATIONS).sort());
    expect(hardLimits.allowedOperations['set_risk_threshold']).toEqual({ summary: expect.any(String), parameters: { threshold: { type: 'number', required: true, min: 0, max: 1 } } });
  });

  it('takes other deadlines, tiers and rates', () => {
    const p = defineDialecticPolicy({ synthesisRoundTimeoutMs: 30 * 60_000, escalation: { quorum: false }, auditRate: 0.25 });
    expect(p.synthesisRoundTimeoutMs).toBe(1_800_000);
    expect(p.escalation).toMatchObject({ tieBreak: true, quorum: false, quorumSize: 5 });
    expect(p.auditRate).toBe(0.25);
  });

  it("refuses weights that do not add up to 1, and a seed hard limit removed or loosened", () => {
    expect(() => defineDialecticPolicy({ selection: { weights: { health: 0.5, trackRecord: 0.3, expertise: 0.2, freshness: 0.1 } } })).toThrow(/selection.weights: the weights must add up to 1/);
    expect(() => defineDialecticPolicy({ hardLimits: { forbiddenOperations: ['disable_governance'] } })).toThrow(/bypass_safety is a hard limit of the seed and must stay forbidden/);
    expect(() => defineDialecticPolicy({ hardLimits: { maxRiskThreshold: 0.95 } })).toThrow(/maxRiskThreshold may not exceed 0.9/);
    expect(() => defineDialecticPolicy({ hardLimits: { allowedOperations: { unlimited_risk: {} } } })).toThrow(/unlimited_risk is forbidden and cannot be allowed/);
    expect(() => defineDialecticPolicy({ maxSynthesisRounds: 1 })).toThrow(/maxSynthesisRounds/);
    expect(() => defineDialecticPolicy({ auditRate: 2 })).toThrow(/auditRate/);
  });
});
