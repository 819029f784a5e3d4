import { CHAMBER_POLICY_ENV_HELP, PROVIDERS_ENV_HELP } from '@agora/providers';
import { ConfigError } from '@agora/runtime';
import { CHAMBER_TRIBUNAL_ENV_HELP } from './tribunal-hook.js';

/** Everything the chamber process reads: its policy (read by @agora/providers' chamberPolicyFromEnv), its tribunal hook and the providers. */
export const CHAMBER_ENV_HELP = `${CHAMBER_POLICY_ENV_HELP}
${CHAMBER_TRIBUNAL_ENV_HELP}
${PROVIDERS_ENV_HELP}`;

/** AGORA_CHAMBER_TRIBUNAL_DEADLOCKS: on (default) or off. */
export function consultOnDeadlockFromEnv(env: NodeJS.ProcessEnv): boolean {
  const raw = (env['AGORA_CHAMBER_TRIBUNAL_DEADLOCKS']?.trim() || 'on').toLowerCase();
  if (raw !== 'on' && raw !== 'off') throw new ConfigError(`AGORA_CHAMBER_TRIBUNAL_DEADLOCKS=${JSON.stringify(raw)} must be on or off`);
  return raw === 'on';
}
