import { intSetting, portSetting } from '@agora/runtime';
import { DEFAULT_CHECKPOINT_EVERY, DEFAULT_CHECKPOINT_INTERVAL_MS } from './log-checkpoints.js';
import { DEFAULT_METRICS_HOST, DEFAULT_METRICS_PORT, type ProjectionsServiceOptions } from './projections-service.js';

/** METRICS_PORT and METRICS_HOST (default 9464) are listed with the settings every process shares. */
export const PROJECTIONS_ENV_HELP = `AGORA_TRIBUNAL_WINDOW_DAYS window of the tribunal stats and windowed metrics, in days (default 30, 1 to 365)
AGORA_CHAMBER_MIN_SAMPLE   arbitrated chamber sessions in the window before the arbiter's own-provider win
                           share is reported (default 10)
AGORA_CHECKPOINT_EVERY     a signed checkpoint of the whole log (stream audit-log) after this many
                           commits (default ${DEFAULT_CHECKPOINT_EVERY})
AGORA_CHECKPOINT_INTERVAL_MS  ... or at least this often while commits come in (default ${DEFAULT_CHECKPOINT_INTERVAL_MS})`;

export type ProjectionsSettings = Required<Pick<ProjectionsServiceOptions, 'metricsPort' | 'metricsHost' | 'windowDays' | 'chamberMinSample' | 'checkpointEvery' | 'checkpointIntervalMs'>>;

/** The projections settings of PROJECTIONS_ENV_HELP; throws ConfigError naming a bad one. */
export function readProjectionsSettings(env: NodeJS.ProcessEnv): ProjectionsSettings {
  return {
    metricsPort: portSetting(env, 'METRICS_PORT', DEFAULT_METRICS_PORT),
    metricsHost: env['METRICS_HOST']?.trim() || DEFAULT_METRICS_HOST,
    windowDays: intSetting(env, 'AGORA_TRIBUNAL_WINDOW_DAYS', 30, { min: 1, max: 365, what: 'a whole number of days (1 to 365)' }),
    chamberMinSample: intSetting(env, 'AGORA_CHAMBER_MIN_SAMPLE', 10, { min: 1, max: 10_000, what: 'a number of sessions from 1 to 10,000' }),
    checkpointEvery: intSetting(env, 'AGORA_CHECKPOINT_EVERY', DEFAULT_CHECKPOINT_EVERY, { min: 1, what: 'a positive whole number of commits' }),
    checkpointIntervalMs: intSetting(env, 'AGORA_CHECKPOINT_INTERVAL_MS', DEFAULT_CHECKPOINT_INTERVAL_MS, { min: 100, what: 'a whole number of milliseconds, at least 100' }),
  };
}
