/**
 * Conditions are structured operations (`{operation, parameters}`), and the hard limits are a
 * policy over them (safety limits written as regex over free text are easy to get
 * around): an allow-list of operations with typed, bounded parameters, the seed's forbidden
 * operations, and the seed's ceiling on a risk threshold (0.90).
 */
import { SET_RISK_THRESHOLD, type Condition, type HardLimitPolicy, type HardLimitViolation, type ParameterSpec } from '@agora/contracts';
import { canonicalJson } from '@agora/identity';
import { canonicalConditions } from './resolution-text.js';

export type { Condition, HardLimitViolation } from '@agora/contracts';
export { canonicalConditions } from './resolution-text.js';

const codeUnitOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The same set of conditions, in any order. */
export function sameConditions(a: readonly Condition[], b: readonly Condition[]): boolean {
  return canonicalJson(canonicalConditions(a)) === canonicalJson(canonicalConditions(b));
}

/** A root cause for comparison: Unicode NFKC, whitespace collapsed, trimmed, lower case. */
export function normalizeRootCause(text: string): string {
  return text.normalize('NFKC').replace(/\s+/gu, ' ').trim().toLowerCase();
}

export const sameRootCause = (a: string, b: string): boolean => normalizeRootCause(a) === normalizeRootCause(b);

/** The threshold a `set_risk_threshold` condition gives the agent, or null when none does (the last one wins; the hard limits refuse two different ones). */
export function riskThresholdOf(conditions: readonly Condition[]): number | null {
  let threshold: number | null = null;
  for (const c of conditions) {
    const value = c.parameters['threshold'];
    if (c.operation === SET_RISK_THRESHOLD && typeof value === 'number') threshold = value;
  }
  return threshold;
}

function checkParameter(name: string, spec: ParameterSpec, value: Condition['parameters'][string]): { rule: HardLimitViolation['rule']; message: string } | null {
  if (typeof value !== spec.type) return { rule: 'invalid_parameter', message: `${name} must be a ${spec.type}, got ${JSON.stringify(value)}` };
  if (spec.type === 'number') {
    const n = value as number;
    if (spec.min !== undefined && n < spec.min) return { rule: 'out_of_range', message: `${name} ${n} is below its minimum ${spec.min}` };
    if (spec.max !== undefined && n > spec.max) return { rule: 'out_of_range', message: `${name} ${n} is above its maximum ${spec.max}` };
  }
  if (spec.type === 'string' && spec.maxLength !== undefined && (value as string).length > spec.maxLength) {
    return { rule: 'out_of_range', message: `${name} is longer than ${spec.maxLength} characters` };
  }
  return null;
}

/**
 * Every hard limit the conditions break, in condition order (empty: safe). Rules:
 * - `forbidden_operation`: the seed's disable_governance, bypass_safety, remove_monitoring,
 *   unlimited_risk, and any other operation the policy forbids;
 * - `unknown_operation`: an operation the policy does not allow (an allow-list: renaming a
 *   forbidden operation does not get it through);
 * - `risk_threshold_above_max`: a set_risk_threshold above maxRiskThreshold (the seed: 0.90);
 * - `missing_parameter`, `unknown_parameter`, `invalid_parameter` (wrong type), `out_of_range`:
 *   the parameters against the operation's specification;
 * - `conflicting_conditions`: two set_risk_threshold with different thresholds.
 */
export function checkHardLimits(conditions: readonly Condition[], policy: HardLimitPolicy): HardLimitViolation[] {
  const violations: HardLimitViolation[] = [];
  const add = (index: number, operation: string, rule: HardLimitViolation['rule'], parameter: string | null, message: string): void => {
    violations.push({ index, operation, rule, parameter, message });
  };
  const forbidden = new Set(policy.forbiddenOperations);
  // "Resume with conditions": a resolution needs at least minConditions of them (rules recorded before the setting existed ask for none).
  const minConditions = policy.minConditions ?? 0;
  if (conditions.length < minConditions) {
    add(-1, 'conditions', 'too_few_conditions', null, `a resolution needs at least ${minConditions} condition${minConditions === 1 ? '' : 's'} (the agent resumes with conditions); it has ${conditions.length}`);
  }
  let threshold: { index: number; value: number } | null = null;

  conditions.forEach((c, index) => {
    const op = c.operation;
    if (forbidden.has(op)) {
      add(index, op, 'forbidden_operation', null, `${op} is forbidden by the hard limits`);
      return;
    }
    const spec = Object.hasOwn(policy.allowedOperations, op) ? policy.allowedOperations[op] : undefined;
    if (!spec) {
      add(index, op, 'unknown_operation', null, `${op} is not an operation the hard-limit policy allows (allowed: ${Object.keys(policy.allowedOperations).sort(codeUnitOrder).join(', ')})`);
      return;
    }
    for (const name of Object.keys(c.parameters).sort(codeUnitOrder)) {
      if (!Object.hasOwn(spec.parameters, name)) add(index, op, 'unknown_parameter', name, `${op} takes no parameter ${name}`);
    }
    for (const [name, paramSpec] of Object.entries(spec.parameters).sort(([a], [b]) => codeUnitOrder(a, b))) {
      if (!Object.hasOwn(c.parameters, name)) {
        if (paramSpec.required) add(index, op, 'missing_parameter', name, `${op} needs the parameter ${name}`);
        continue;
      }
      const problem = checkParameter(name, paramSpec, c.parameters[name]!);
      if (problem) add(index, op, problem.rule, name, `${op}: ${problem.message}`);
    }
    const value = c.parameters['threshold'];
    if (op === SET_RISK_THRESHOLD && typeof value === 'number') {
      if (value > policy.maxRiskThreshold) add(index, op, 'risk_threshold_above_max', 'threshold', `a risk threshold of ${value} is above the hard limit ${policy.maxRiskThreshold}`);
      if (threshold !== null && threshold.value !== value) {
        add(index, op, 'conflicting_conditions', 'threshold', `${op} sets ${value} where condition ${threshold.index} sets ${threshold.value}`);
      }
      threshold ??= { index, value };
    }
  });
  return violations;
}
