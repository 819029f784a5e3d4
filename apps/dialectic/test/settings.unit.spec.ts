import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_DIALECTIC_POLICY, DIALECTIC_POLICY_SETTING } from '@agora/domain-dialectic';
import { ConfigError, policyFromEnv } from '@agora/runtime';

const dialecticPolicyFromEnv = (env: NodeJS.ProcessEnv) => policyFromEnv(env, DIALECTIC_POLICY_SETTING);

describe('the dialectic policy from AGORA_DIALECTIC_POLICY', () => {
  it('is absent when unset or blank (the service keeps the seed policy)', () => {
    expect(dialecticPolicyFromEnv({})).toBeUndefined();
    expect(dialecticPolicyFromEnv({ AGORA_DIALECTIC_POLICY: '  ' })).toBeUndefined();
  });

  it('reads JSON, filling in the defaults', () => {
    const policy = dialecticPolicyFromEnv({ AGORA_DIALECTIC_POLICY: '{"antithesisTimeoutMs":5000,"escalation":{"quorumSize":3}}' });
    expect(policy).toEqual({ ...DEFAULT_DIALECTIC_POLICY, antithesisTimeoutMs: 5000, escalation: { ...DEFAULT_DIALECTIC_POLICY.escalation, quorumSize: 3 } });
  });

  it('reads @file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agora-dialectic-policy-'));
    try {
      const file = join(dir, 'policy.json');
      writeFileSync(file, JSON.stringify({ maxSynthesisRounds: 3, hardLimits: { maxRiskThreshold: 0.8 } }));
      expect(dialecticPolicyFromEnv({ AGORA_DIALECTIC_POLICY: `@${file}` })).toMatchObject({ maxSynthesisRounds: 3, hardLimits: { maxRiskThreshold: 0.8 }, thesisTimeoutMs: DEFAULT_DIALECTIC_POLICY.thesisTimeoutMs });
      const missing = () => dialecticPolicyFromEnv({ AGORA_DIALECTIC_POLICY: `@${join(dir, 'missing.json')}` });
      expect(missing).toThrow(ConfigError);
      expect(missing).toThrow(/^AGORA_DIALECTIC_POLICY: cannot read .*missing\.json/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses text that is not JSON, naming the setting', () => {
    const bad = () => dialecticPolicyFromEnv({ AGORA_DIALECTIC_POLICY: '{antithesisTimeoutMs: 5000' });
    expect(bad).toThrow(ConfigError);
    expect(bad).toThrow('AGORA_DIALECTIC_POLICY is not JSON');
  });

  it('refuses an invalid policy, naming the setting and what is wrong', () => {
    const cases: [unknown, RegExp][] = [
      [{ antithesisTimeoutMs: 10 }, /antithesisTimeoutMs/],
      [{ hardLimits: { maxRiskThreshold: 0.95 } }, /maxRiskThreshold/],
      [{ selection: { weights: { health: 0.5, trackRecord: 0.5, expertise: 0.5, freshness: 0 } } }, /add up to 1/],
      [{ bogus: true }, /bogus/],
    ];
    for (const [input, problem] of cases) {
      const bad = () => dialecticPolicyFromEnv({ AGORA_DIALECTIC_POLICY: JSON.stringify(input) });
      expect(bad).toThrow(ConfigError);
      expect(bad).toThrow(/^AGORA_DIALECTIC_POLICY: invalid dialectic policy/);
      expect(bad).toThrow(problem);
    }
  });
});
