import { settingsStreamId, SETTINGS_OWNERS, type PolicySetting, type SettingsName } from '@agora/contracts';
import { DEFAULT_BREAKER_POLICY, defineBreakerPolicy, type BreakerPolicy } from '@agora/domain-common';
import { fold } from '@agora/decider';
import { reactionCommandId, settingsDecider, settingsDigest, type SettingsEvent } from '@agora/eventsourcing';
import { StreamNotFound } from '@agora/eventstore';
import { intSetting, jsonSetting, unitSetting } from './config.js';
import type { ServiceContext } from './context.js';
import { issueInternalCommand } from './reactor.js';

export interface RecordedSettings {
  /** The digest of the value in force (what replicas compare). */
  digest: string;
  /** Whether this start recorded it (the log held another value, or none). */
  recorded: boolean;
  /** A line for the start-up log. */
  line: string;
}

/**
 * Records in the log the settings a service decides under (`settings-<name>`, signed with the
 * service's key, see libs/contracts settings.ts) when the log does not hold that value yet: at the
 * first start, and when the service starts with a value an operator changed. Starting again with
 * the value in force appends nothing. The command id names the revision it follows, so that going
 * back to an earlier value is recorded again, and replicas starting together record it once.
 */
export async function recordSettings(context: Pick<ServiceContext, 'store' | 'serviceIdentity'>, name: SettingsName, settings: Record<string, unknown>, now: () => number = Date.now): Promise<RecordedSettings> {
  const streamId = settingsStreamId(name);
  const events = await context.store.readStream(streamId).catch((error: unknown) => {
    if (error instanceof StreamNotFound) return [];
    throw error;
  });
  const inForce = fold(settingsDecider, events as unknown as SettingsEvent[]);
  const digest = settingsDigest(settings);
  if (inForce.digest === digest) return { digest, recorded: false, line: `${name} settings ${digest}: as the log holds them (${streamId} revision ${events.length - 1})` };
  const revision = events.length - 1;
  await issueInternalCommand(
    { streamId, decider: settingsDecider, type: 'RecordSettings', payload: { name, settings } },
    { store: context.store, as: context.serviceIdentity(SETTINGS_OWNERS[name]), commandId: reactionCommandId('settings', `${name}:${revision}:${digest}`), now: new Date(now()).toISOString() },
  );
  return {
    digest,
    recorded: true,
    line: inForce.digest === undefined ? `${name} settings ${digest}: recorded in ${streamId}` : `${name} settings ${digest}: recorded in ${streamId}, replacing ${inForce.digest} (the value this service was started with)`,
  };
}

/** A policy from its one environment variable (JSON or `@file`), parsed by its declared parser; undefined when unset; ConfigError naming what is wrong. */
export function policyFromEnv<T>(env: NodeJS.ProcessEnv, setting: PolicySetting<T>): T | undefined {
  return jsonSetting(env, setting.env, setting.parse);
}

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
