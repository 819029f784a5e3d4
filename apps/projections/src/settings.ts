import { intSetting, portSetting } from '@agora/runtime';
import { DEFAULT_METRICS_HOST, DEFAULT_METRICS_PORT, type ProjectionsServiceOptions } from './projections-service.js';

export const PROJECTIONS_ENV_HELP = `METRICS_PORT               HTTP port of /metrics and /health (default ${DEFAULT_METRICS_PORT}; 0 picks a free one)
METRICS_HOST               address the HTTP endpoint binds (default ${DEFAULT_METRICS_HOST})
AGORA_TRIBUNAL_WINDOW_DAYS window of the tribunal stats and windowed metrics, in days (default 30, 1 to 365)`;

export type ProjectionsSettings = Required<Pick<ProjectionsServiceOptions, 'metricsPort' | 'metricsHost' | 'windowDays'>>;

/** The projections settings of PROJECTIONS_ENV_HELP; throws ConfigError naming a bad one. */
export function readProjectionsSettings(env: NodeJS.ProcessEnv): ProjectionsSettings {
  return {
    metricsPort: portSetting(env, 'METRICS_PORT', DEFAULT_METRICS_PORT),
    metricsHost: env['METRICS_HOST']?.trim() || DEFAULT_METRICS_HOST,
    windowDays: intSetting(env, 'AGORA_TRIBUNAL_WINDOW_DAYS', 30, { min: 1, max: 365, what: 'a whole number of days (1 to 365)' }),
  };
}
