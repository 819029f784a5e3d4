import type { CommandResult } from '@agora/contracts';
import { DomainError, type Command, type Decider, type DomainEvent } from '@agora/decider';
import { CheckpointedConsumer, handleCommand, reactionCommandId } from '@agora/eventsourcing';
import type { EventStore, RecordedEvent } from '@agora/eventstore';
import type { ServiceContext } from './context.js';
import type { Running } from './process.js';

/** A command a service decides on its own behalf: in answer to an event (a reactor) or a deadline (a scheduler). */
export interface InternalCommand<C extends Command = Command, E extends DomainEvent = DomainEvent, S = unknown> {
  streamId: string;
  decider: Decider<C, E, S>;
  type: C['type'];
  payload: C['payload'];
}

/** Who a service acts as: not an agent (it signs nothing), but named in the metadata of what it appends. */
export interface ServiceActor {
  /** e.g. `service:tribunal`. */
  actor: string;
  /** Roles the decider sees in `context.actorRoles`. */
  roles: readonly string[];
}

export interface IssueOptions {
  store: EventStore;
  as: ServiceActor;
  /** Derived from what caused the command (an event id, a deadline), so a repeat lands once. */
  commandId: string;
  /** `context.now`: the service clock, or the due time of a deadline. */
  now: string;
  correlationId?: string;
  causationId?: string;
}

/**
 * Decides a service's own command (load, fold, decide, append: handleCommand) with a command id
 * derived from its cause, so that running it again (a redelivered event, a second replica, a
 * restart) finds the first result and appends nothing.
 */
export function issueInternalCommand(command: InternalCommand, options: IssueOptions): Promise<CommandResult> {
  const { store, as, commandId, now } = options;
  return handleCommand({
    store,
    decider: command.decider,
    streamId: command.streamId,
    command: { type: command.type, payload: command.payload, context: { now, actor: as.actor, actorRoles: as.roles, commandId } },
    metadata: {
      commandId,
      commandType: command.type,
      actor: as.actor,
      issuedAt: now,
      ...(options.correlationId === undefined ? {} : { correlationId: options.correlationId }),
      ...(options.causationId === undefined ? {} : { causationId: options.causationId }),
    },
  });
}

export interface ReactorSpec {
  /** Names the checkpoint and the derived command ids: never rename a reactor that has run. */
  name: string;
  as: ServiceActor;
  /** Only events of streams in these categories are shown to `react`. */
  categories?: readonly string[];
  /**
   * The commands an event calls for; none for most events. It runs again on redelivery: keep it a
   * function of the event, or of what the service reads at that moment (a redelivered reaction
   * keeps its derived command id, so its first result stands whatever the second read says).
   */
  react(event: RecordedEvent): InternalCommand[] | Promise<InternalCommand[]>;
  logger?: { warn(message: string, ...details: unknown[]): void };
  /** Service clock for `context.now`. Default Date.now. */
  now?: () => number;
}

/**
 * A process manager: reacts to committed events by deciding commands on other aggregates, through
 * a checkpointed store subscription (at least once, in order), never through a second write made
 * beside the first. Each reaction's command id is derived from the event, so a redelivered event
 * finds its earlier result and appends nothing. A reaction the decider refuses is logged and
 * skipped: the refusal is final, and retrying it would stall every later event.
 */
export async function runReactor(context: Pick<ServiceContext, 'store' | 'checkpoints'>, spec: ReactorSpec): Promise<Running> {
  const logger = spec.logger ?? console;
  const now = spec.now ?? Date.now;
  const consumer = new CheckpointedConsumer({
    store: context.store,
    checkpoints: context.checkpoints,
    logger,
    consumer: {
      name: spec.name,
      ...(spec.categories ? { categories: spec.categories } : {}),
      async handle(event) {
        for (const [index, command] of (await spec.react(event)).entries()) {
          const correlationId = typeof event.metadata['correlationId'] === 'string' ? event.metadata['correlationId'] : event.id;
          try {
            await issueInternalCommand(command, {
              store: context.store,
              as: spec.as,
              commandId: reactionCommandId(spec.name, event.id, index),
              now: new Date(now()).toISOString(),
              correlationId,
              causationId: event.id,
            });
          } catch (error) {
            if (!(error instanceof DomainError)) throw error;
            logger.warn(`[reactor ${spec.name}] ${command.type} on ${command.streamId} in answer to ${event.type} ${event.id} refused (${error.code}): ${error.message}; skipped`);
          }
        }
      },
    },
  });
  await consumer.start();
  return { lines: [`reactor ${spec.name} (checkpoint "${spec.name}")`], close: () => consumer.stop() };
}
