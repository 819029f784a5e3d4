import { DialecticPolicy, type DialecticPolicyInput, type PolicySetting } from '@agora/contracts';

export type { DialecticPolicy, DialecticPolicyInput, DialecticRules, HardLimitPolicy } from '@agora/contracts';

function parsed<T>(what: string, result: { success: true; data: T } | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } }): T {
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.map(String).join('.') || '(policy)'}: ${i.message}`);
  throw new TypeError(`invalid ${what}: ${problems.join('; ')}`);
}

/**
 * A dialectic policy from configuration, defaults filled in (see the DialecticPolicy schema): the
 * seed's deadlines (thesis 1 h, antithesis 2 h, each synthesis round 1 h, signatures 1 h, the
 * whole dialectic 6 h), 5 synthesis rounds, the seed's authority weights (health 40 %, track record
 * 30 %, expertise 20 %, freshness 10 %) and exclusions (risk at or above 0.40, reviewed the agent
 * within 24 h), both escalation tiers enabled (tie-break 2 h, quorum of 5 in 1 h), the seed's hard
 * limits, a 24 h relapse window and a 10 % audit sample. Throws a TypeError naming every offending
 * setting: weights that do not add up to 1, a seed hard limit removed or loosened.
 */
export function defineDialecticPolicy(input: DialecticPolicyInput = {}): DialecticPolicy {
  return parsed('dialectic policy', DialecticPolicy.safeParse(input));
}

export const DEFAULT_DIALECTIC_POLICY: DialecticPolicy = defineDialecticPolicy();

/** AGORA_DIALECTIC_POLICY: read by the dialectic service, recorded in the log as the `dialectic` settings. */
export const DIALECTIC_POLICY_SETTING: PolicySetting<DialecticPolicy> = {
  name: 'dialectic',
  env: 'AGORA_DIALECTIC_POLICY',
  parse: (input) => defineDialecticPolicy(input as DialecticPolicyInput),
  help: `AGORA_DIALECTIC_POLICY     the dialectic policy as JSON, or @<file> holding it, e.g.
                           {"thesisTimeoutMs":3600000,"antithesisTimeoutMs":7200000,"maxSynthesisRounds":5,
                            "escalation":{"quorumSize":5},"hardLimits":{"maxRiskThreshold":0.9}}
                           (default: the seed's; see DialecticPolicy in libs/contracts)`,
};
