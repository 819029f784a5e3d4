import { AgoraError, settingsStreamId, SETTINGS_OWNERS, type PolicySetting, type SettingsName } from '@agora/contracts';
import { fold } from '@agora/decider';
import { reactionCommandId, settingsDecider, settingsDigest, type SettingsEvent } from '@agora/eventsourcing';
import { StreamNotFound } from '@agora/eventstore';
import { jsonSetting } from './config.js';
import type { PingResponse } from '@agora/messaging';
import type { ServiceContext } from './context.js';
import { issueInternalCommand } from './reactor.js';
import { StartupFailure } from './startup.js';

/** How long a starting service listens for its running replicas' `$SRV.PING` answers: on NATS, and in one process. */
export const REPLICA_PING_WAIT_MS = { nats: 500, 'in-process': 20 } as const;

/** The `$SRV` metadata key under which a replica reports the digest of the settings it decides under. */
export const settingsMetadataKey = (name: SettingsName): string => `agora.settings.${name}`;

export interface RecordedSettings {
  /** The digest of the value in force (what replicas compare). */
  digest: string;
  /** For the service's `$SRV` metadata (createServiceMicroservice's `metadata`), so that a replica started later compares its own. */
  metadata: Record<string, string>;
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
 *
 * Replicas decide under one value: first the running replicas of the service are asked
 * (`$SRV.PING.<service>`, each reports its settings' digest in its metadata), and a start with
 * another value than theirs fails (StartupFailure, exit 2) naming both, before anything is recorded.
 * A setting is changed by stopping every replica, then starting them with the new value.
 * Replicas started at the same moment (none answers the other's ping yet) both read the log before
 * either records: the record is appended only on the stream as read (no deciding again on a moved
 * stream), so the one that loses the race reads again and joins when the other recorded the same
 * value, and fails as above, having recorded nothing, when it recorded another.
 */
export async function recordSettings(context: Pick<ServiceContext, 'store' | 'serviceIdentity' | 'client' | 'transport'>, name: SettingsName, settings: Record<string, unknown>, now: () => number = Date.now): Promise<RecordedSettings> {
  const streamId = settingsStreamId(name);
  const service = SETTINGS_OWNERS[name];
  const key = settingsMetadataKey(name);
  const digest = settingsDigest(settings);
  const replicas = await context.client.gather<PingResponse>(`$SRV.PING.${service}`, '', { maxWaitMs: REPLICA_PING_WAIT_MS[context.transport.transport] });
  const other = replicas.find((r) => typeof r.metadata?.[key] === 'string' && r.metadata[key] !== digest);
  const differs = (other: string, theirs: string | undefined) =>
    new StartupFailure(
      `another ${service} replica ${other} the ${name} settings ${theirs}, this one was started with ${digest}: every replica of a service must decide under the same settings. Start it with the same value, or change the value by stopping every ${service} replica, then starting them with the new one`,
    );
  if (other) throw differs(`(${other.id}) runs with`, other.metadata[key]);
  const read = async () => {
    const events = await context.store.readStream(streamId).catch((error: unknown) => {
      if (error instanceof StreamNotFound) return [];
      throw error;
    });
    return { revision: events.length - 1, inForce: fold(settingsDecider, events as unknown as SettingsEvent[]) };
  };
  const { revision, inForce } = await read();
  const metadata = { [key]: digest };
  const asHeld = (at: number, by = '') => ({ digest, metadata, recorded: false, line: `${name} settings ${digest}: as the log holds them (${streamId} revision ${at}${by})` });
  if (inForce.digest === digest) return asHeld(revision);
  try {
    const result = await issueInternalCommand(
      { streamId, decider: settingsDecider, type: 'RecordSettings', payload: { name, settings } },
      { store: context.store, as: context.serviceIdentity(SETTINGS_OWNERS[name]), commandId: reactionCommandId('settings', `${name}:${revision}:${digest}`), now: new Date(now()).toISOString(), causationId: `service-start:${name}:${digest}`, maxAttempts: 1 },
    );
    // The same record (one command id for one value at one revision), stored first by another replica.
    if (result.duplicate) return asHeld(result.revision, ', recorded by a replica started at the same moment');
  } catch (error) {
    if (!(error instanceof AgoraError && error.code === 'conflict')) throw error;
    // Another replica recorded first, between our read and our append.
    const after = await read();
    if (after.inForce.digest === digest) return asHeld(after.revision, ', recorded by a replica started at the same moment');
    throw differs('started at the same moment recorded', after.inForce.digest);
  }
  return {
    digest,
    metadata,
    recorded: true,
    line: inForce.digest === undefined ? `${name} settings ${digest}: recorded in ${streamId}` : `${name} settings ${digest}: recorded in ${streamId}, replacing ${inForce.digest} (the value this service was started with)`,
  };
}

/** A policy from its one environment variable (JSON or `@file`), parsed by its declared parser; undefined when unset; ConfigError naming what is wrong. */
export function policyFromEnv<T>(env: NodeJS.ProcessEnv, setting: PolicySetting<T>): T | undefined {
  return jsonSetting(env, setting.env, setting.parse);
}
