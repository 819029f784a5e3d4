import { canonicalConditions, checkHardLimits, normalizeRootCause, riskThresholdOf, sameConditions, sameRootCause } from '../src/conditions.js';
import { defineDialecticPolicy } from '../src/policy.js';
import { c, policy, threshold } from './fixtures.js';

const limits = policy.hardLimits;
const rules = (conditions: Parameters<typeof checkHardLimits>[0]) => checkHardLimits(conditions, limits).map((v) => [v.index, v.rule, v.parameter]);

describe('checkHardLimits: a structured policy, not a regex over text', () => {
  it("forbids the seed's operations", () => {
    expect(rules([c('disable_governance'), c('bypass_safety'), c('remove_monitoring'), c('unlimited_risk')])).toEqual([
      [0, 'forbidden_operation', null],
      [1, 'forbidden_operation', null],
      [2, 'forbidden_operation', null],
      [3, 'forbidden_operation', null],
    ]);
  });

  it('forbids a risk threshold above 0.90, and allows 0.90', () => {
    expect(rules([threshold(0.91)])).toEqual([[0, 'risk_threshold_above_max', 'threshold']]);
    expect(rules([threshold(0.9)])).toEqual([]);
    expect(rules([threshold(0.48), c('enable_cascade_detection')])).toEqual([]);
  });

  it('allows only the operations of the policy: renaming a forbidden operation does not get it through', () => {
    expect(rules([c('turn_off_governance')])).toEqual([[0, 'unknown_operation', null]]);
    expect(checkHardLimits([c('turn_off_governance')], limits)[0]!.message).toMatch(/is not an operation the hard-limit policy allows \(allowed: enable_cascade_detection, /);
  });

  it('checks the parameters against the operation: missing, unknown, of the wrong type, out of range', () => {
    expect(rules([c('set_risk_threshold')])).toEqual([[0, 'missing_parameter', 'threshold']]);
    expect(rules([c('set_risk_threshold', { threshold: '0.5' })])).toEqual([[0, 'invalid_parameter', 'threshold']]);
    expect(rules([c('set_risk_threshold', { threshold: 0.5, bypass: true })])).toEqual([[0, 'unknown_parameter', 'bypass']]);
    expect(rules([c('rate_limit', { max_actions_per_minute: 0 })])).toEqual([[0, 'out_of_range', 'max_actions_per_minute']]);
    expect(rules([c('set_risk_threshold', { threshold: 1.5 })])).toEqual([
      [0, 'out_of_range', 'threshold'],
      [0, 'risk_threshold_above_max', 'threshold'],
    ]);
    expect(rules([c('enable_monitoring')])).toEqual([]); // target is optional
  });

  it('refuses two different thresholds, not the same one twice', () => {
    expect(rules([threshold(0.5), threshold(0.6)])).toEqual([[1, 'conflicting_conditions', 'threshold']]);
    expect(rules([threshold(0.5), threshold(0.5)])).toEqual([]);
  });

  it('follows a stricter policy', () => {
    const strict = defineDialecticPolicy({
      hardLimits: {
        maxRiskThreshold: 0.7,
        forbiddenOperations: ['disable_governance', 'bypass_safety', 'remove_monitoring', 'unlimited_risk', 'self_modify'],
        allowedOperations: { set_risk_threshold: { parameters: { threshold: { type: 'number', min: 0, max: 1 } } }, enable_cascade_detection: {} },
      },
    }).hardLimits;
    expect(checkHardLimits([threshold(0.75), c('probation', { hours: 2 }), c('self_modify')], strict).map((v) => v.rule)).toEqual(['risk_threshold_above_max', 'unknown_operation', 'forbidden_operation']);
  });
});

describe('conditions and root causes', () => {
  it('puts conditions in canonical order, parameters sorted, exact duplicates dropped', () => {
    const a = [c('rate_limit', { max_actions_per_minute: 10 }), threshold(0.48), c('enable_monitoring', { target: 'cascade' }), threshold(0.48)];
    expect(canonicalConditions(a)).toEqual([c('enable_monitoring', { target: 'cascade' }), c('rate_limit', { max_actions_per_minute: 10 }), threshold(0.48)]);
    expect(sameConditions(a, [...a].reverse())).toBe(true);
    expect(sameConditions([threshold(0.48)], [threshold(0.49)])).toBe(false);
    expect(sameConditions([], [])).toBe(true);
  });

  it('compares root causes without case, extra whitespace or Unicode form differences', () => {
    expect(normalizeRootCause('  External   COMPLEXITY\nspike ')).toBe('external complexity spike');
    expect(sameRootCause('External complexity spike', 'external complexity spike')).toBe(true);
    expect(sameRootCause('ﬁle spike', 'file spike')).toBe(true);
    expect(sameRootCause('External complexity spike', 'Internal complexity spike')).toBe(false);
  });

  it('reads the threshold a resolution sets', () => {
    expect(riskThresholdOf([c('enable_cascade_detection'), threshold(0.48)])).toBe(0.48);
    expect(riskThresholdOf([c('enable_cascade_detection')])).toBeNull();
  });
});

describe('resume with conditions', () => {
  it('counts a resolution with fewer conditions than the policy asks (default 1) as a violation of the hard limits', () => {
    expect(checkHardLimits([], limits)).toEqual([{ index: -1, operation: 'conditions', rule: 'too_few_conditions', parameter: null, message: expect.stringMatching(/at least 1 condition/) }]);
    expect(checkHardLimits([{ operation: 'enable_cascade_detection', parameters: {} }], limits)).toEqual([]);
    const two = { ...limits, minConditions: 2 };
    expect(checkHardLimits([{ operation: 'enable_cascade_detection', parameters: {} }], two).map((v) => v.rule)).toEqual(['too_few_conditions']);
  });
});
