import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { natsLinkOptions } from '@agora/contracts';
import { StoreRefused, StoreUnavailable } from '../errors.js';
import type { NatsCredentials } from '../nats-credentials.js';
import type { EventStore } from '../port.js';
import { chooseAppendMode, type AtomicAppends } from './append-mode.js';
import { clusteredLogRefusal, takesAtomicBatches } from './server-version.js';
import { setUpStream, StreamNotReady, untilStreamListens, verifyStream, type StreamSetupAction } from './stream-setup.js';
import { JetStreamEventStore, type JetStreamStoreLogger } from './store.js';

export type { JetStreamStoreLogger } from './store.js';
export { StreamNotReady, type StreamSetupAction } from './stream-setup.js';

export interface JetStreamEventStoreOptions {
  /** NATS servers to connect to (ignored when `connection` is given). Default `127.0.0.1:4222`. */
  servers?: string | string[];
  /** The NATS user to connect as (ignored when `connection` is given). */
  credentials?: NatsCredentials;
  /** JetStream stream that holds the log. Default `AGORA_EVENTS`. */
  streamName?: string;
  /** Commits of stream `s` go to subject `<subjectPrefix>.<s>`. Default `agora.es`. */
  subjectPrefix?: string;
  /** Replicas of a stream this creates (an existing stream is only ever raised to it). Default 1; use 3 in production. */
  replicas?: number;
  /**
   * `ensure` (default): create the stream when missing and bring a drifted one up to what the
   * adapter needs. `verify`: only check it, and refuse to open (StoreRefused `stream_not_ready`)
   * when it is missing or drifted: for deployments whose stream `agora setup nats --stream` manages.
   */
  streamSetup?: 'ensure' | 'verify';
  /** An open connection to use; `close()` then leaves it open. */
  connection?: NatsConnection;
  /** How often a caught-up subscription looks for new events when nothing woke it. Default 1000 ms. */
  pollIntervalMs?: number;
  /** Deadline of every request to NATS. Default 5000 ms. */
  requestTimeoutMs?: number;
  /**
   * Offer `appendMany` as one atomic batch where the server takes them (nats-server 2.12+; the stream
   * gets `allow_atomic`). `auto` (default): on a replicated stream (or one in memory), where the
   * server stages batches in memory and one batch beat two appends (docs/cluster.md); not on a
   * single-replica file stream, where each batch took about 5 ms on nats-server 2.15.1 and batches
   * went one at a time, about 1 % of the rate of two appends (docs/benchmarks.md). `true`: wherever
   * the server and the stream take them; `false`: never. The store says at start which it chose and why.
   */
  atomicAppends?: AtomicAppends;
  /** JetStream's dedup window: an append retried within it with the same event ids is stored once. Default 2 min. */
  duplicateWindowMs?: number;
  logger?: JetStreamStoreLogger;
}

const NAME_RE = /^[A-Za-z0-9_-]+$/;
const PREFIX_RE = /^[^\s.*>]+(\.[^\s.*>]+)*$/;

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number, got ${value}`);
  return value;
}

function resolveOptions(options: JetStreamEventStoreOptions) {
  const streamName = options.streamName ?? 'AGORA_EVENTS';
  const subjectPrefix = options.subjectPrefix ?? 'agora.es';
  if (!NAME_RE.test(streamName)) throw new RangeError(`streamName ${JSON.stringify(streamName)} must be letters, digits, "_" or "-"`);
  if (!PREFIX_RE.test(subjectPrefix)) throw new RangeError(`subjectPrefix ${JSON.stringify(subjectPrefix)} must be dot-separated tokens without wildcards or spaces`);
  const replicas = options.replicas ?? 1;
  if (!Number.isSafeInteger(replicas) || replicas < 1 || replicas > 5) throw new RangeError(`replicas must be 1 to 5, got ${replicas}`);
  return {
    streamName,
    subjectPrefix,
    replicas,
    pollIntervalMs: positive('pollIntervalMs', options.pollIntervalMs ?? 1_000),
    requestTimeoutMs: positive('requestTimeoutMs', options.requestTimeoutMs ?? 5_000),
    duplicateWindowMs: positive('duplicateWindowMs', options.duplicateWindowMs ?? 120_000),
    // Everything the store says goes to stderr: stdout is a command's output (`agora audit --json`).
    logger: options.logger ?? { warn: (message: string, ...details: unknown[]) => console.warn(message, ...details), info: (message: string, ...details: unknown[]) => console.error(message, ...details) },
  };
}

/**
 * Opens the `jetstream` event store: connects (or uses `connection`), creates or updates the
 * JetStream stream, and returns the store. One JetStream message per commit on
 * `<subjectPrefix>.<streamId>`; see docs/decisions/0001-one-event-store-port.md.
 */
export async function openJetStreamEventStore(options: JetStreamEventStoreOptions = {}): Promise<EventStore> {
  const config = resolveOptions(options);
  let nc: NatsConnection;
  try {
    nc =
      options.connection ??
      (await connect({
        servers: options.servers ?? '127.0.0.1:4222',
        name: 'agora-eventstore',
        ...(options.credentials === undefined ? {} : { user: options.credentials.user, pass: options.credentials.pass }),
        ...(options.credentials?.inboxPrefix === undefined ? {} : { inboxPrefix: options.credentials.inboxPrefix }),
        timeout: config.requestTimeoutMs,
        // Keep trying for ever: subscriptions resume by themselves once the server is back.
        maxReconnectAttempts: -1,
        // Notice a link that died silently within seconds (NATS_PING_INTERVAL_MS, NATS_MAX_PINGS_OUT) and go to another node, as every Agora connection does.
        ...natsLinkOptions(),
        reconnectTimeWait: 500,
        // A stack captured for every request is a large share of an append's CPU; our errors say what failed.
        noAsyncTraces: true,
      }));
  } catch (error) {
    throw new StoreUnavailable(`jetstream: cannot connect to ${String(options.servers ?? '127.0.0.1:4222')}: ${messageOf(error)}`, undefined, { cause: error });
  }
  const ownsConnection = options.connection === undefined;
  try {
    // A clustered log needs a server that serializes the expected-sequence check: asked for, or already so.
    refuseClusteredLogOn(nc, config.streamName, config.replicas);
    const jsm = await jetstreamManager(nc, { timeout: config.requestTimeoutMs });
    const asked = options.atomicAppends ?? 'auto';
    const version = nc.info?.version;
    // A stream an operator manages (verify) is served as it is: with atomic batches only if it allows them.
    let info;
    if (options.streamSetup === 'verify') info = await verifyStream(jsm, config);
    else {
      const setUp = await setUpStream(jsm, { ...config, atomicBatches: takesAtomicBatches(version) && asked });
      if (setUp.action !== 'unchanged') await untilStreamListens(nc, config.subjectPrefix, config.requestTimeoutMs);
      info = setUp.info;
    }
    refuseClusteredLogOn(nc, config.streamName, info.config.num_replicas ?? 1);
    const mode = chooseAppendMode(asked, version, info.config);
    (config.logger.info ?? config.logger.warn).call(config.logger, `jetstream event store: log stream ${config.streamName}: ${mode.reason}`);
    return new JetStreamEventStore(nc, jsm, config, ownsConnection, mode.atomic);
  } catch (error) {
    if (ownsConnection) await nc.close().catch(() => undefined);
    if (error instanceof StoreRefused) throw error;
    if (error instanceof StreamNotReady) throw new StoreRefused(`jetstream: ${error.message}`, 'stream_not_ready');
    throw new StoreUnavailable(`jetstream: cannot set up stream ${config.streamName}: ${messageOf(error)}`, undefined, { cause: error });
  }
}

/**
 * The setup step of a deployment whose services only verify the log's stream
 * (`EVENT_STORE=jetstream?setup=verify`; `agora setup nats --stream`): creates the stream, or brings
 * it up to what the store needs, over a connection allowed to (an operator's). Says what it did;
 * a second run is `unchanged`.
 */
export async function setUpJetStreamLog(
  connection: NatsConnection,
  options: Pick<JetStreamEventStoreOptions, 'streamName' | 'subjectPrefix' | 'replicas' | 'duplicateWindowMs' | 'requestTimeoutMs' | 'atomicAppends'> = {},
): Promise<StreamSetupAction> {
  const config = resolveOptions(options);
  refuseClusteredLogOn(connection, config.streamName, config.replicas);
  const jsm = await jetstreamManager(connection, { timeout: config.requestTimeoutMs });
  const { action } = await setUpStream(jsm, { ...config, atomicBatches: takesAtomicBatches(connection.info?.version) && (options.atomicAppends ?? 'auto') });
  if (action !== 'unchanged') await untilStreamListens(connection, config.subjectPrefix, config.requestTimeoutMs);
  return action;
}

/** Throws StoreRefused when the connected server must not hold a log of `replicas` replicas (see server-version.ts). */
function refuseClusteredLogOn(nc: NatsConnection, streamName: string, replicas: number): void {
  const reason = clusteredLogRefusal(nc.info?.version, replicas, streamName);
  if (reason) throw new StoreRefused(`jetstream: ${reason}`, 'unsupported_server');
}
