/**
 * The circuit breaker's settings, read by the registry (which trips it) and by `agora audit` for a
 * log that recorded no breaker policy: here, not in the registry service, so that the audit reads
 * them without importing a service.
 */
import { DEFAULT_BREAKER_POLICY, defineBreakerPolicy, type BreakerPolicy } from '@agora/domain-common';
import { intSetting, unitSetting } from './config.js';

/** The circuit breaker's policy from AGORA_BREAKER_RISK_THRESHOLD and the probation and health-report settings (REGISTRY_ENV_HELP); ConfigError naming a bad one. */
export function breakerPolicyFromEnv(env: NodeJS.ProcessEnv): BreakerPolicy {
  const d = DEFAULT_BREAKER_POLICY;
  return defineBreakerPolicy({
    riskThreshold: unitSetting(env, 'AGORA_BREAKER_RISK_THRESHOLD', d.riskThreshold, 'a risk from 0 to 1'),
    probationRiskMargin: unitSetting(env, 'AGORA_PROBATION_RISK_MARGIN', d.probationRiskMargin, 'a risk margin from 0 to 1'),
    probationReportIntervalMs: intSetting(env, 'AGORA_PROBATION_REPORT_INTERVAL_MS', d.probationReportIntervalMs, { min: 1000, max: 86_400_000, what: 'a number of milliseconds, 1000 to 86400000' }),
    reportMinChange: unitSetting(env, 'AGORA_HEALTH_REPORT_MIN_CHANGE', d.reportMinChange, 'a change of health or risk from 0 to 1 (0 = record every report)'),
    reportSampleMs: intSetting(env, 'AGORA_HEALTH_REPORT_SAMPLE_MS', d.reportSampleMs, { min: 0, max: 86_400_000, what: 'a number of milliseconds, 0 to 86400000 (0 = record every report)' }),
  });
}
