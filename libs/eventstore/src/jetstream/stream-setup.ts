import {
  DiscardPolicy,
  type JetStreamManager,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
  type StreamInfo,
} from '@nats-io/jetstream';
import { headers, nanos, PermissionViolationError, RequestError, type NatsConnection } from '@nats-io/nats-core';
import { randomUUID } from 'node:crypto';
import { sleep } from '../catch-up.js';
import { stagesBatchesInMemory, type AtomicAppends } from './append-mode.js';
import { IMPOSSIBLE_SEQ } from './stream-state.js';

export interface StreamSetup {
  streamName: string;
  subjectPrefix: string;
  replicas: number;
  duplicateWindowMs: number;
  /**
   * On a server that takes atomic batches (2.12+): `true`, the stream is created, or updated, with
   * `allow_atomic`; `auto`, only a stream whose batches the server stages in memory (append-mode.ts).
   */
  atomicBatches?: AtomicAppends;
}

/** JetStream's "stream name already in use" (another process created it with another config meanwhile). */
const STREAM_NAME_IN_USE = 10058;

/**
 * What the adapter relies on, enforced on an existing stream too: a log that keeps every
 * message (no per-subject limit, no rollups, no deletes or purges that would punch holes in
 * the history), direct gets, a dedup window at least as long as asked, and at least the
 * replicas asked for.
 * Limits an operator may have set on purpose (max_age, max_bytes, max_msgs) are only set when
 * the stream is created.
 */
function requiredConfig(setup: StreamSetup, actual?: StreamConfig): Partial<StreamConfig> {
  // The replicas the stream will have: those asked for, or more an operator chose.
  const shape = { num_replicas: Math.max(setup.replicas, actual?.num_replicas ?? 1), storage: actual?.storage ?? StorageType.File };
  const atomic = setup.atomicBatches === true || (setup.atomicBatches === 'auto' && stagesBatchesInMemory(shape));
  return {
    subjects: [`${setup.subjectPrefix}.>`],
    max_msgs_per_subject: -1,
    allow_direct: true,
    allow_rollup_hdrs: false,
    deny_delete: true,
    deny_purge: true,
    discard: DiscardPolicy.Old,
    duplicate_window: nanos(setup.duplicateWindowMs),
    num_replicas: setup.replicas,
    ...(atomic ? { allow_atomic: true } : {}),
  };
}

function creationConfig(setup: StreamSetup): Partial<StreamConfig> & { name: string } {
  return {
    ...requiredConfig(setup),
    name: setup.streamName,
    description: 'Agora event store: one message per commit on <prefix>.<streamId>',
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    max_age: 0,
    max_msgs: -1,
    max_bytes: -1,
    max_msg_size: -1,
  };
}

/** The fields of `required` that `actual` does not satisfy. */
function drift(actual: StreamConfig, required: Partial<StreamConfig>): Partial<StreamConfig> {
  const out: Partial<StreamConfig> = {};
  const subject = required.subjects![0]!;
  if (!actual.subjects?.includes(subject)) out.subjects = [...(actual.subjects ?? []), subject];
  if ((actual.duplicate_window ?? 0) < required.duplicate_window!) out.duplicate_window = required.duplicate_window!;
  // The server leaves out flags that are false.
  for (const key of ['allow_direct', 'allow_rollup_hdrs', 'deny_delete', 'deny_purge'] as const) {
    if ((actual[key] ?? false) !== required[key]) Object.assign(out, { [key]: required[key] });
  }
  // Asked for only where the server takes it; a stream without it is served with two appends per command.
  if (required.allow_atomic && !actual.allow_atomic) out.allow_atomic = true;
  for (const key of ['max_msgs_per_subject', 'discard'] as const) {
    if (actual[key] !== required[key]) Object.assign(out, { [key]: required[key] });
  }
  // Raise the replication factor if asked, never lower one an operator chose.
  if ((actual.num_replicas ?? 1) < required.num_replicas!) out.num_replicas = required.num_replicas!;
  return out;
}

/** What setUpStream did: created the stream, updated a drifted one, or found it as needed. */
export type StreamSetupAction = 'created' | 'updated' | 'unchanged';

/** Creates the stream, or brings an existing one up to what the adapter needs. Returns its info and what it did. */
export async function setUpStream(jsm: JetStreamManager, setup: StreamSetup): Promise<{ info: StreamInfo; action: StreamSetupAction }> {
  for (let attempt = 1; ; attempt++) {
    const info = await streamInfo(jsm, setup.streamName);
    if (info === undefined) {
      try {
        return { info: await jsm.streams.add(creationConfig(setup)), action: 'created' };
      } catch (addError) {
        if (attempt < 3 && addError instanceof JetStreamApiError && addError.code === STREAM_NAME_IN_USE) continue;
        throw addError;
      }
    }
    checkRetention(info, setup);
    const changes = drift(info.config, requiredConfig(setup, info.config));
    return Object.keys(changes).length === 0 ? { info, action: 'unchanged' } : { info: await jsm.streams.update(setup.streamName, changes), action: 'updated' };
  }
}

/**
 * Waits until a publish on the log's subjects reaches the stream from this connection's server: a
 * stream just created (or given its subjects) on a cluster takes them on the server that holds it,
 * and the others hear of it a moment later (until then a publish is answered "no responders"; seen
 * on a 3-node 2.10.27 cluster). The probe states an expected subject sequence that no subject can
 * have, so JetStream refuses it and stores nothing. Throws after `timeoutMs`; returns at once for a
 * user that may not publish there.
 */
export async function untilStreamListens(nc: NatsConnection, subjectPrefix: string, timeoutMs: number): Promise<void> {
  const subject = `${subjectPrefix}.$ready`;
  const deadline = Date.now() + timeoutMs;
  for (let wait = 1; ; wait = Math.min(wait * 2, 100)) {
    const h = headers();
    h.set('Nats-Msg-Id', randomUUID());
    h.set('Nats-Expected-Last-Subject-Sequence', String(IMPOSSIBLE_SEQ));
    try {
      await nc.request(subject, undefined, { headers: h, timeout: Math.max(1, deadline - Date.now()) });
      return; // refused (or, impossibly, stored): the stream listens
    } catch (error) {
      // A user that sets the stream up but may not append (the operator of `agora setup nats`) has nothing to wait for.
      if (error instanceof PermissionViolationError || (error instanceof Error && error.cause instanceof PermissionViolationError)) return;
      if (!(error instanceof RequestError && error.isNoResponders()) || Date.now() + wait > deadline) {
        throw new Error(`no JetStream stream takes messages on ${subject} within ${timeoutMs} ms of setting it up: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    await sleep(wait);
  }
}

/**
 * Checks, without changing anything, that the stream exists as the adapter needs it (a deployment
 * whose stream `agora setup nats --stream` manages); throws StreamNotReady saying what is wrong.
 */
export async function verifyStream(jsm: JetStreamManager, setup: StreamSetup): Promise<StreamInfo> {
  const info = await streamInfo(jsm, setup.streamName);
  if (info === undefined) throw new StreamNotReady(`JetStream stream ${setup.streamName} does not exist: create it with \`agora setup nats --stream\` (this process only checks it: EVENT_STORE=jetstream?setup=verify)`);
  checkRetention(info, setup);
  const changes = drift(info.config, requiredConfig(setup, info.config));
  if (Object.keys(changes).length > 0) {
    throw new StreamNotReady(`JetStream stream ${setup.streamName} is not configured as the event log needs (${Object.keys(changes).join(', ')}): bring it up to date with \`agora setup nats --stream\``);
  }
  return info;
}

/** The log's stream is missing or not as the adapter needs, and this process may not fix it. */
export class StreamNotReady extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StreamNotReady';
  }
}

async function streamInfo(jsm: JetStreamManager, name: string): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(name);
  } catch (error) {
    if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) return undefined;
    throw error;
  }
}

function checkRetention(info: StreamInfo, setup: StreamSetup): void {
  if (info.config.retention !== RetentionPolicy.Limits) {
    throw new Error(`JetStream stream ${setup.streamName} has retention ${info.config.retention}; an event log needs "limits"`);
  }
}
