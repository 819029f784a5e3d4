import { DomainError } from '@agora/decider';
import { deadlineCommandId, Scheduler, type DeadlineChange } from '@agora/eventsourcing';
import type { RecordedEvent } from '@agora/eventstore';
import type { ServiceContext } from './context.js';
import type { Running } from './process.js';
import { issueInternalCommand, type InternalCommand, type ServiceActor } from './reactor.js';

export interface DeadlinesSpec {
  /** For logs. */
  name: string;
  as: ServiceActor;
  categories: readonly string[];
  /** Reads deadlines off the log (see SchedulerOptions.deadlineOf): pure, and it must cancel what the expiry settles. */
  deadlineOf(event: RecordedEvent): DeadlineChange;
  /** The expiry command of a due deadline; undefined for a key it does not know (logged, dropped). */
  expire(key: string, dueAt: string): InternalCommand | undefined;
  logger?: { warn(message: string, ...details: unknown[]): void };
}

/**
 * Durable deadlines of a service (DESIGN.md decision 5): the pending set is rebuilt from the log at
 * start, and each due deadline fires its expiry command with `context.now` = the due time and a
 * command id derived from the deadline, so every replica and every restart that fires it again
 * appends nothing more. A refusal is final (logged); a store outage is retried with backoff.
 */
export async function runDeadlines(context: Pick<ServiceContext, 'store'>, spec: DeadlinesSpec): Promise<Running & { scheduler: Scheduler }> {
  const logger = spec.logger ?? console;
  const scheduler = new Scheduler({
    store: context.store,
    name: spec.name,
    categories: spec.categories,
    deadlineOf: spec.deadlineOf,
    logger,
    async fire(key, dueAt) {
      const command = spec.expire(key, dueAt);
      if (!command) {
        logger.warn(`[deadlines ${spec.name}] no expiry command for deadline ${key}; dropped`);
        return;
      }
      try {
        await issueInternalCommand(command, { store: context.store, as: spec.as, commandId: deadlineCommandId(key, dueAt), now: dueAt });
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        logger.warn(`[deadlines ${spec.name}] ${command.type} for ${key} refused (${error.code}): ${error.message}; dropped`);
      }
    },
  });
  await scheduler.start();
  return { scheduler, lines: [`deadlines ${spec.name}: ${scheduler.pending().length} pending`], close: () => scheduler.stop() };
}
