/**
 * What `agora audit` reads from the environment: the store, the bootstrap operators, the services'
 * keys and policies. The audit command loads this module only when it runs (it brings the services'
 * settings readers, and with them NestJS).
 */
import { describeStore, openEventStore, type EventStore } from '@agora/eventstore';
import { chamberPolicyFromEnv } from '@agora/chamber';
import { dialecticPolicyFromEnv } from '@agora/dialectic';
import { providersConfigFromEnv } from '@agora/providers';
import { tribunalPolicyFromEnv } from '@agora/proposal';
import { registryOptionsFromEnv } from '@agora/registry';
import { ConfigError, readRuntimeConfig, resolveServiceKeyring } from '@agora/runtime';
import { UsageError } from '../command.js';
import type { AuditOptions } from './engine.js';

export interface AuditedStore {
  store: EventStore;
  description: string;
  options: Pick<AuditOptions, 'trusted' | 'policies' | 'serviceKeys'>;
}

/** Opens the store EVENT_STORE names, with the operators and policies the services run under. Bad settings are usage errors. */
export async function openAuditedStore(env: Readonly<Record<string, string | undefined>>): Promise<AuditedStore> {
  const processEnv = env as NodeJS.ProcessEnv;
  let options: AuditedStore['options'];
  let config;
  try {
    config = readRuntimeConfig(processEnv, { natsByDefault: false });
    const tribunal = tribunalPolicyFromEnv(processEnv);
    const dialectic = dialecticPolicyFromEnv(processEnv);
    const { breakerRiskThreshold } = registryOptionsFromEnv(processEnv);
    const chamber = chamberPolicyFromEnv(processEnv, providersConfigFromEnv(processEnv));
    options = {
      serviceKeys: resolveServiceKeyring(config),
      trusted: config.operators.map((o) => ({ agentId: o.agentId, publicKey: o.publicKey, roles: ['operator'] })),
      policies: { chamber, ...(tribunal ? { tribunal } : {}), ...(dialectic ? { dialectic } : {}), ...(breakerRiskThreshold === undefined ? {} : { breakerRiskThreshold }) },
    };
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message, 'audit');
    throw error;
  }
  const store = await openEventStore(config.store);
  return { store, description: describeStore(config.store), options };
}

