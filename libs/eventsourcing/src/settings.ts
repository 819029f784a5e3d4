import { createHash } from 'node:crypto';
import { SETTINGS_CATEGORY, SETTINGS_OWNERS, SettingsName, type DataOf, type PayloadOf, type RecordSettings, type SettingsRecorded } from '@agora/contracts';
import { DomainError, type Command, type Decider, type DomainEvent } from '@agora/decider';
import { canonicalJson } from '@agora/identity';

/**
 * The settings a decider reads, recorded in the log (`settings-<name>`, see libs/contracts
 * settings.ts): a service records the value it starts with when the log does not hold it yet, and
 * the audit folds these events as it reads the log, so that each command is decided again under
 * the settings in force at its position.
 */

export type SettingsCommand = Command<'RecordSettings', PayloadOf<typeof RecordSettings>>;
export type SettingsEvent = DomainEvent<'SettingsRecorded', DataOf<typeof SettingsRecorded>>;

/** One `settings-<name>` stream: the value in force and its digest (absent before the first record). */
export interface SettingsState {
  settings: Record<string, unknown> | undefined;
  digest: string | undefined;
}

/** A short, stable digest of a settings value (sha256 of its canonical JSON, 16 hex digits): what replicas compare. */
export function settingsDigest(settings: Readonly<Record<string, unknown>>): string {
  return createHash('sha256').update(canonicalJson(settings)).digest('hex').slice(0, 16);
}

/**
 * The rules of a settings stream: only the service that reads a setting records it
 * (SETTINGS_OWNERS), and recording the value already in force appends nothing.
 */
export const settingsDecider: Decider<SettingsCommand, SettingsEvent, SettingsState> = {
  initialState: () => ({ settings: undefined, digest: undefined }),
  evolve: (_state, event) => ({ settings: event.data.settings, digest: settingsDigest(event.data.settings) }),
  decide: (command, state) => {
    const { name, settings } = command.payload;
    const owner = `service:${SETTINGS_OWNERS[name]}`;
    if (command.context.actor !== owner) throw new DomainError('forbidden', `the ${name} settings are recorded by ${owner} alone, not ${command.context.actor}`, { name });
    if (state.digest === settingsDigest(settings)) return [];
    return [{ type: 'SettingsRecorded', data: { name, settings, recordedAt: command.context.now } }];
  },
};

/** The settings in force at a position of the log, by name: a small value an audit folds and may keep (resume from). */
export type SettingsInForce = Readonly<Partial<Record<SettingsName, { settings: Record<string, unknown>; digest: string; position: string }>>>;

export const NO_SETTINGS: SettingsInForce = {};

/** The settings in force after `event` (unchanged by an event of another category). */
export function foldSettings(inForce: SettingsInForce, event: { streamId: string; type: string; data: unknown; position: string }): SettingsInForce {
  if (event.type !== 'SettingsRecorded' || !event.streamId.startsWith(`${SETTINGS_CATEGORY}-`)) return inForce;
  const data = event.data as DataOf<typeof SettingsRecorded>;
  const name = SettingsName.safeParse(data.name);
  if (!name.success) return inForce;
  return { ...inForce, [name.data]: { settings: data.settings, digest: settingsDigest(data.settings), position: event.position } };
}
