import { CheckpointedConsumer, COMMAND_ID_CATEGORY, type CheckpointStore, type EventSourcingLogger } from '@agora/eventsourcing';
import type { EventStore } from '@agora/eventstore';
import type { EventPublisher } from '@agora/messaging';
import type { ServiceContext } from './context.js';
import { withLag, type ReactorTracker } from './metrics.js';
import type { Running } from './process.js';

export interface EventRelayOptions {
  store: EventStore;
  publisher: EventPublisher;
  checkpoints: CheckpointStore;
  /** Checkpoint name. Default `relay`. */
  name?: string;
  logger?: EventSourcingLogger;
  /** Reports how far behind the log the relay is (ProcessMetrics.reactor). */
  lag?: ReactorTracker;
}

/** Events the relay sends at most before it waits for them to reach the server. */
export const RELAY_FLUSH_EVERY = 1_000;

/**
 * Relays committed events from the store to `agora.evt.<category>.<EventType>` (docs/decisions/
 * 0002-nats-commands-and-notifications.md): in order, at least once, checkpointed. A restart resumes after the last saved
 * checkpoint: it neither skips an event (the checkpoint only moves after the publish reached the
 * server) nor floods listeners with the whole history (only the events since the last save, at
 * most a second's worth, go out again; listeners dedupe on `Agora-Event-Id`).
 */
export async function startEventRelay(options: EventRelayOptions): Promise<CheckpointedConsumer> {
  const { publisher } = options;
  // Events go out without a round trip each: the checkpoint waits for them to reach the server
  // (beforeCheckpoint), and a flush every RELAY_FLUSH_EVERY events bounds what waits in the
  // connection's buffer (a relay with no checkpoint sends the whole log).
  let unflushed = 0;
  const relay = new CheckpointedConsumer({
    store: options.store,
    checkpoints: options.checkpoints,
    consumer: withLag(options.lag, {
      name: options.name ?? 'relay',
      async handle(event) {
        // Command id reservations (command-ids.ts) are the log's bookkeeping, not news for listeners.
        if (event.streamId.startsWith(`${COMMAND_ID_CATEGORY}-`)) return;
        publisher.send(event);
        if (++unflushed >= RELAY_FLUSH_EVERY) {
          unflushed = 0;
          await publisher.flush();
        }
      },
      async beforeCheckpoint() {
        unflushed = 0;
        await publisher.flush();
      },
    }),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  await relay.start();
  return relay;
}

/** The relay as a part of a process: publishes on the process's transport, checkpoints under its data directory. */
export async function runEventRelay(context: Pick<ServiceContext, 'store' | 'publisher' | 'checkpoints'> & Partial<Pick<ServiceContext, 'metrics'>>): Promise<Running> {
  const lag = context.metrics?.reactor('relay');
  const relay = await startEventRelay({ store: context.store, publisher: context.publisher, checkpoints: context.checkpoints, ...(lag ? { lag } : {}) });
  return { lines: [`relaying committed events to agora.evt.<category>.<EventType> (checkpoint "${relay.name}")`], close: () => relay.stop().finally(() => lag?.stop()) };
}
