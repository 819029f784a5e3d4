import { z } from 'zod';
import { Timestamp } from '../common.js';
import { defineCommand, defineEvent, type ServiceName } from '../define.js';

/**
 * The settings a decider reads, in the log: each is one stream `settings-<name>`, recorded signed by
 * the one service that reads it when it starts with a value the log does not hold yet (an operator
 * changes a setting by starting the service with the new value). The audit decides each command
 * again under the settings in force at its position, never under the auditor's environment.
 */
export const SETTINGS_CATEGORY = 'settings';

/** Which service reads (and so records) each setting. */
export const SETTINGS_OWNERS = {
  /** AGORA_TRIBUNAL_POLICY: the proposal service decides SubmitProposal under it. */
  tribunal: 'proposal',
  /** AGORA_DIALECTIC_POLICY. */
  dialectic: 'dialectic',
  /** AGORA_BREAKER_RISK_THRESHOLD and the probation and health-report settings of the registry. */
  breaker: 'registry',
  /** AGORA_CHAMBER_* and the providers' models and prices the chamber's decider checks. */
  chamber: 'chamber',
} as const satisfies Record<string, ServiceName>;

export const SettingsName = z.enum(Object.keys(SETTINGS_OWNERS) as [keyof typeof SETTINGS_OWNERS, ...(keyof typeof SETTINGS_OWNERS)[]]);
export type SettingsName = z.infer<typeof SettingsName>;

export const settingsStreamId = (name: SettingsName): string => `${SETTINGS_CATEGORY}-${name}`;

const recorded = {
  name: SettingsName.describe('Which setting: tribunal, dialectic, breaker or chamber'),
  settings: z.record(z.string(), z.unknown()).describe('The whole value in force from here on, defaults filled in, as the service parsed it (its own policy schema: TribunalPolicy, DialecticPolicy, BreakerPolicy, the chamber policy)'),
};

export const RecordSettings = defineCommand({
  type: 'RecordSettings',
  service: 'registry',
  aggregate: 'settings',
  verb: 'record',
  // Service-only: each service records the settings it reads, signed with its key, at start, and
  // appends it itself (issueInternalCommand): no request travels on its subject, which sits under the
  // registry (the keeper of what the deployment is configured with) and is answered `service_only`.
  roles: [],
  issuers: [...new Set(Object.values(SETTINGS_OWNERS))],
  summary: 'Record the settings a service decides under (at start, when the log does not hold that value yet): from here on the audit decides under them',
  payload: z.object(recorded).strict(),
});

export const SettingsRecorded = defineEvent({
  type: 'SettingsRecorded',
  category: SETTINGS_CATEGORY,
  summary: 'The settings a service decides under from this position on (the whole value, defaults filled in)',
  data: z.object({ ...recorded, recordedAt: Timestamp }).strict(),
});

/**
 * A policy a service reads from one environment variable (JSON, or `@<file>` holding it), declared
 * once beside the rules it configures (the domain library): the service, the standalone process
 * and the audit (for a log that records no settings) read it with runtime's `policyFromEnv`.
 */
export interface PolicySetting<T> {
  name: SettingsName;
  env: string;
  /** The one parser: defaults filled in; throws naming every offending field. */
  parse(input: unknown): T;
  /** The variable's lines for `--help`. */
  help: string;
}
