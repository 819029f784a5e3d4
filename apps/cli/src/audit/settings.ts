/**
 * What `agora audit` reads from the environment: the store, the bootstrap operators, the services'
 * keys, and the policies of a log that records no settings (the log's own SettingsRecorded take
 * their place from their position on: rules.ts). The audit command loads this module only when it
 * runs (the chamber's settings reader brings NestJS).
 */
import { describeStore, openEventStore, type EventStore } from '@agora/eventstore';
import { chamberPolicyFromEnv } from '@agora/chamber';
import { DIALECTIC_POLICY_SETTING } from '@agora/domain-dialectic';
import { TRIBUNAL_POLICY_SETTING } from '@agora/domain-tribunal';
import { providersConfigFromEnv } from '@agora/providers';
import { breakerPolicyFromEnv, ConfigError, policyFromEnv, readRuntimeConfig, resolveServiceKeyring } from '@agora/runtime';
import { UsageError } from '../command.js';
import type { AuditOptions } from './engine.js';

export interface AuditedStore {
  store: EventStore;
  description: string;
  options: Pick<AuditOptions, 'trusted' | 'policies' | 'serviceKeys'>;
}

/** Opens the store EVENT_STORE names, with the operators, and the policies for a log that records none. Bad settings are usage errors. */
export async function openAuditedStore(env: Readonly<Record<string, string | undefined>>): Promise<AuditedStore> {
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
      trusted: config.operators.map((o) => ({ agentId: o.agentId, publicKey: o.publicKey, roles: ['operator'] })),
      policies: { chamber, ...(tribunal ? { tribunal } : {}), ...(dialectic ? { dialectic } : {}), breakerRiskThreshold },
    };
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message, 'audit');
    throw error;
  }
  const store = await openEventStore(config.store);
  return { store, description: describeStore(config.store), options };
}

