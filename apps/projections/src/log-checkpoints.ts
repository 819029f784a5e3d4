import { AUDIT_LOG_STREAM, categoryOf, type LogCheckpointRecorded, type DataOf } from '@agora/contracts';
import { COMMAND_ID_CATEGORY, LOG_HASH_ALGORITHM, LogHasher, logCheckpointDecider, reactionCommandId, type EventSourcingLogger, type LogHead } from '@agora/eventsourcing';
import { StreamNotFound, type EventStore, type Subscription } from '@agora/eventstore';
import { issueInternalCommand, type HeldLease, type Leases, type Running, type ServiceActor } from '@agora/runtime';

export const DEFAULT_CHECKPOINT_EVERY = 1_000;
export const DEFAULT_CHECKPOINT_INTERVAL_MS = 60_000;

export interface LogCheckpointsOptions {
  store: EventStore;
  /** A checkpoint after this many commits since the last one (its own checkpoints not counted). */
  every?: number;
  /** A checkpoint at least this often (ms) while commits came in since the last one. */
  intervalMs?: number;
  /** The projections service's identity: its key signs every checkpoint. */
  as: ServiceActor;
  now?: () => number;
  logger?: EventSourcingLogger;
  /** With replicas (`context.leases`): only the holder of the lease `log-checkpoints` records them on its own. */
  leases?: Leases | undefined;
}

export interface RunningLogCheckpoints extends Running {
  /** Where the running hash stands (the last event hashed). */
  readonly head: LogHead;
  /** Records a checkpoint of everything hashed so far, if anything new came since the last one. */
  checkpoint(): Promise<void>;
  /** Resolves once the log as it was at start is hashed. */
  readonly caughtUp: Promise<void>;
}

/** The last checkpoint in the log, to resume from (the hash is not computed again from the start). */
async function lastCheckpoint(store: EventStore): Promise<LogHead | undefined> {
  try {
    const events = await store.readStream(AUDIT_LOG_STREAM);
    const last = events.at(-1);
    if (!last) return undefined;
    const data = last.data as DataOf<typeof LogCheckpointRecorded>;
    return { count: data.count, hash: data.hash, position: data.position };
  } catch (error) {
    if (error instanceof StreamNotFound) return undefined;
    throw error;
  }
}

/**
 * Records signed checkpoints of the whole log in the `audit-log` stream (tamper evidence): hashes
 * every event in log order (LogHasher) from the last checkpoint on, and records the running hash
 * every `every` commits or `intervalMs` milliseconds, whichever comes first, when there is
 * anything new. With replicas, every one hashes the log but only the lease's holder records
 * (a takeover may record one the old holder did: the command id is derived from the count, so
 * that appends nothing).
 */
export async function startLogCheckpoints(options: LogCheckpointsOptions): Promise<RunningLogCheckpoints> {
  const { store } = options;
  const every = options.every ?? DEFAULT_CHECKPOINT_EVERY;
  const intervalMs = options.intervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS;
  const { as } = options;
  const now = options.now ?? Date.now;
  let lease: HeldLease | undefined = undefined;
  /** Whether this replica records checkpoints: always alone, else while it holds the lease (taken once it hashes). */
  const recording = () => (options.leases === undefined ? true : (lease?.held ?? false));
  const resumed = await lastCheckpoint(store);
  const hasher = new LogHasher(resumed);
  let lastCommit: string | undefined;
  /** Commits hashed since the head last asked for (its own checkpoints not counted). */
  let commitsSince = 0;
  let recorded = resumed?.count ?? 0;
  let wanted: LogHead | undefined;
  let running: Promise<void> | undefined;

  const record = async (head: LogHead) => {
    if (head.count <= recorded || head.position === undefined) return;
    await issueInternalCommand(
      { streamId: AUDIT_LOG_STREAM, decider: logCheckpointDecider, type: 'RecordLogCheckpoint', payload: { count: head.count, position: head.position, hash: head.hash, algorithm: LOG_HASH_ALGORITHM } },
      // Derived from what it covers: replicas recording the same checkpoint record it once.
      { store, as, commandId: reactionCommandId('log-checkpoint', String(head.count)), now: new Date(now()).toISOString(), causationId: `log-position:${head.position}` },
    );
    recorded = head.count;
  };
  /** Records a checkpoint at `head` (one at a time: the latest head asked for meanwhile follows). */
  const checkpointAt = (head: LogHead): Promise<void> => {
    commitsSince = 0;
    if (!wanted || head.count > wanted.count) wanted = head;
    running ??= (async () => {
      while (wanted && wanted.count > recorded) {
        const next = wanted;
        await record(next);
      }
    })().finally(() => (running = undefined));
    return running;
  };
  const warn = (error: unknown) => options.logger?.warn(`log checkpoint failed: ${(error as Error).message}`);

  const subscription: Subscription = store.subscribe({
    name: 'log-checkpoints',
    ...(resumed?.position === undefined ? {} : { after: resumed.position }),
    handler: (event) => {
      const commit = `${event.streamId}\n${String(event.metadata['commandId'] ?? event.id)}`;
      if (commit !== lastCommit) {
        // A new commit begins: the head is the end of the last one. Not awaited: the append must
        // not wait on this subscription.
        if (commitsSince >= every && recording()) checkpointAt(hasher.current).catch(warn);
        lastCommit = commit;
        // Its own checkpoints do not count, nor a command's commandId reservation (its commit counts).
        if (event.streamId !== AUDIT_LOG_STREAM && categoryOf(event.streamId) !== COMMAND_ID_CATEGORY) commitsSince++;
      }
      hasher.add(event);
    },
    onError: (error) => options.logger?.warn(`log checkpoints: ${(error as Error).message}`),
  });
  const checkpoint = (): Promise<void> => (commitsSince > 0 ? checkpointAt(hasher.current) : (running ?? Promise.resolve()));
  const timer = setInterval(() => recording() && checkpoint().catch(warn), intervalMs);
  timer.unref();
  lease = await options.leases?.run('log-checkpoints', { start: async () => undefined, stop: async () => undefined });

  return {
    get head() {
      return hasher.current;
    },
    checkpoint,
    caughtUp: subscription.caughtUp,
    lines: [`log checkpoints: every ${every} commits or ${intervalMs} ms in stream ${AUDIT_LOG_STREAM}${resumed ? `, resumed after event ${resumed.count}` : ''}`],
    async close() {
      clearInterval(timer);
      await lease?.close();
      await subscription.stop();
      await running?.catch(() => undefined);
    },
  };
}
