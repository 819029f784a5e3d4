import { ConfigError } from '@agora/runtime';
import { registryOptionsFromEnv } from '../src/registry-service.js';

describe('registry settings from the environment', () => {
  it('reads the breaker threshold (default 0.60) and the trust penalty, refusing bad values by name', () => {
    expect(registryOptionsFromEnv({})).toEqual({ trustPenaltyProceeded: 100, breakerRiskThreshold: 0.6, probationRiskMargin: 0.1, probationReportIntervalMs: 3_600_000, healthReportMinChange: 0.05, healthReportSampleMs: 60_000 });
    expect(registryOptionsFromEnv({ AGORA_BREAKER_RISK_THRESHOLD: '0.5', AGORA_TRUST_PENALTY_PROCEEDED: '0' })).toMatchObject({ trustPenaltyProceeded: 0, breakerRiskThreshold: 0.5 });
    expect(registryOptionsFromEnv({ AGORA_PROBATION_RISK_MARGIN: '0.2', AGORA_PROBATION_REPORT_INTERVAL_MS: '60000' })).toMatchObject({ probationRiskMargin: 0.2, probationReportIntervalMs: 60_000 });
    expect(() => registryOptionsFromEnv({ AGORA_PROBATION_REPORT_INTERVAL_MS: '10' })).toThrow(/AGORA_PROBATION_REPORT_INTERVAL_MS/);
    expect(registryOptionsFromEnv({ AGORA_HEALTH_REPORT_MIN_CHANGE: '0', AGORA_HEALTH_REPORT_SAMPLE_MS: '5000' })).toMatchObject({ healthReportMinChange: 0, healthReportSampleMs: 5000 });
    expect(() => registryOptionsFromEnv({ AGORA_HEALTH_REPORT_MIN_CHANGE: '2' })).toThrow(/AGORA_HEALTH_REPORT_MIN_CHANGE/);
    expect(() => registryOptionsFromEnv({ AGORA_HEALTH_REPORT_SAMPLE_MS: '-1' })).toThrow(/AGORA_HEALTH_REPORT_SAMPLE_MS/);
    for (const bad of ['1.5', '-0.1', 'high', 'NaN']) {
      expect(() => registryOptionsFromEnv({ AGORA_BREAKER_RISK_THRESHOLD: bad })).toThrow(ConfigError);
      expect(() => registryOptionsFromEnv({ AGORA_BREAKER_RISK_THRESHOLD: bad })).toThrow(/AGORA_BREAKER_RISK_THRESHOLD/);
    }
  });
});
