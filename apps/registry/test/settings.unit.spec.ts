import { ConfigError } from '@agora/runtime';
import { registryOptionsFromEnv } from '../src/registry-service.js';

describe('registry settings from the environment', () => {
  it('reads the breaker threshold (default 0.60) and the trust penalty, refusing bad values by name', () => {
    expect(registryOptionsFromEnv({})).toEqual({ trustPenaltyProceeded: 100, breakerRiskThreshold: 0.6 });
    expect(registryOptionsFromEnv({ AGORA_BREAKER_RISK_THRESHOLD: '0.5', AGORA_TRUST_PENALTY_PROCEEDED: '0' })).toEqual({ trustPenaltyProceeded: 0, breakerRiskThreshold: 0.5 });
    for (const bad of ['1.5', '-0.1', 'high', 'NaN']) {
      expect(() => registryOptionsFromEnv({ AGORA_BREAKER_RISK_THRESHOLD: bad })).toThrow(ConfigError);
      expect(() => registryOptionsFromEnv({ AGORA_BREAKER_RISK_THRESHOLD: bad })).toThrow(/AGORA_BREAKER_RISK_THRESHOLD/);
    }
  });
});
