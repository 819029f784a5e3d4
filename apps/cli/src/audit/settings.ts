/**
 * What `agora audit` reads from the environment: the store, the bootstrap operators, the services'
 * keys, and the policies of a log that records no settings (the log's own SettingsRecorded take
 * their place from their position on: rules.ts). The audit command loads this module only when it
 * runs (the runtime, whose settings readers it uses, brings NestJS).
 */
import { describeStore, openEventStore, sleep, StoreUnavailable, type EventStore } from '@agora/eventstore';
import { DIALECTIC_POLICY_SETTING } from '@agora/domain-dialectic';
import { TRIBUNAL_POLICY_SETTING } from '@agora/domain-tribunal';
import { chamberPolicyFromEnv, providersConfigFromEnv } from '@agora/providers';
import { breakerPolicyFromEnv, ConfigError, policyFromEnv, readOperatorKeyFile, readRuntimeConfig, resolveServiceKeyring, standaloneOperatorKeyFile, type RuntimeConfig } from '@agora/runtime';
import { UsageError } from '../command.js';
import type { AuditOptions } from './options.js';

export interface AuditedStore {
  store: EventStore;
  description: string;
  options: Pick<AuditOptions, 'trusted' | 'policies' | 'serviceKeys'>;
}

/** How long `--follow` waits for a store it cannot reach at start (a partition, a node restarting) before it gives up. */
export const FOLLOW_OPEN_WAIT_MS = 120_000;

export interface OpenAuditedStoreOptions {
  /** Tries again every 2 s for this long while the store is unavailable (default 0: fails at once). */
  waitMs?: number;
  /** Told of each failed try. */
  say?: (line: string) => void;
  /** Stops the waiting. */
  signal?: AbortSignal;
}

/** Opens the store EVENT_STORE names, with the operators, and the policies for a log that records none. Bad settings are usage errors. */
export async function openAuditedStore(env: Readonly<Record<string, string | undefined>>, wait: OpenAuditedStoreOptions = {}): Promise<AuditedStore> {
  const processEnv = env as NodeJS.ProcessEnv;
  let options: AuditedStore['options'];
  let config;
  try {
    config = readRuntimeConfig(processEnv, { natsByDefault: false });
    const tribunal = policyFromEnv(processEnv, TRIBUNAL_POLICY_SETTING);
    const dialectic = policyFromEnv(processEnv, DIALECTIC_POLICY_SETTING);
    const breakerRiskThreshold = breakerPolicyFromEnv(processEnv).riskThreshold;
    const chamber = chamberPolicyFromEnv(processEnv, providersConfigFromEnv(processEnv));
    options = {
      serviceKeys: resolveServiceKeyring(config),
      trusted: operatorsOf(config, processEnv).map((o) => ({ agentId: o.agentId, publicKey: o.publicKey, roles: ['operator'] })),
      policies: { chamber, ...(tribunal ? { tribunal } : {}), ...(dialectic ? { dialectic } : {}), breakerRiskThreshold },
    };
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message, 'audit');
    throw error;
  }
  // The audit never writes: an embedded log is read beside the process that writes it (npm start).
  const description = describeStore(config.store);
  const started = Date.now();
  for (;;) {
    try {
      return { store: await openEventStore({ ...config.store, readOnly: true }), description, options };
    } catch (error) {
      if (!(error instanceof StoreUnavailable) || wait.signal?.aborted || Date.now() - started >= (wait.waitMs ?? 0)) throw error;
      wait.say?.(`audit: ${description} is unavailable (${error.message}); trying again in 2 s, for up to ${Math.round((wait.waitMs ?? 0) / 1000)} s\n`);
      await sleep(2_000, wait.signal);
    }
  }
}

/**
 * The bootstrap operators: AGORA_OPERATOR_KEY_FILE or AGORA_OPERATOR_PUBLIC_KEY; else the key file
 * `npm start` made in the data directory when it is there (as the services' key files under
 * AGORA_SERVICE_KEYS_DIR are), so that `agora audit` after `npm start` needs no setting.
 */
function operatorsOf(config: RuntimeConfig, env: NodeJS.ProcessEnv): RuntimeConfig['operators'] {
  if (config.operators.length > 0) return config.operators;
  const file = standaloneOperatorKeyFile(config.dataDir);
  return file === undefined ? [] : [readOperatorKeyFile(file, env['AGORA_OPERATOR_ID']?.trim() || 'root')];
}
