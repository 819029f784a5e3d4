import { DomainError } from '@agora/decider';
import { deadlineCommandId, Scheduler, type DeadlineChange } from '@agora/eventsourcing';
import type { RecordedEvent } from '@agora/eventstore';
import { contextOfEvent, inSpan, tracingOn } from '@agora/tracing';
import type { ServiceContext } from './context.js';
import type { Running } from './process.js';
import { issueInternalCommand, outcomeOfIssued, type InternalCommand, type ServiceActor } from './reactor.js';

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
  /** Service clock: the expiry's `context.now`. Default Date.now. */
  now?: () => number;
}

/** A deadline fired this much later than due is logged (a process was down, or the scheduler fell behind). */
export const LATE_DEADLINE_LOG_MS = 5_000;

/**
 * Durable deadlines of a service (docs/decisions/0005-durable-time.md): the pending set is rebuilt from the log at
 * start, and each due deadline fires its expiry command with a command id derived from the
 * deadline, so a restart (or a second replica around a lease takeover) that fires it again appends
 * nothing more. With replicas (context.leases), only the holder of the lease `deadlines.<name>`
 * fires; the others keep the pending set and take over when its holder's lease lapses. A
 * refusal is final (logged); a store outage is retried with backoff.
 *
 * The expiry is decided at the time it fires (`context.now` = the service clock, never before the
 * due time), not at the due time: the expiry events record both (`deadlineAt` and the time they
 * were decided), and a phase that follows a late expiry gets its whole configured duration from
 * then. Had it run "as of" the due time, a deadline that fired after an outage would start the next
 * phase in the past, and that phase would expire at once, unseen.
 */
export async function runDeadlines(context: Pick<ServiceContext, 'store'> & Partial<Pick<ServiceContext, 'metrics' | 'snapshots' | 'leases'>>, spec: DeadlinesSpec): Promise<Running & { scheduler: Scheduler }> {
  const logger = spec.logger ?? console;
  const clock = spec.now ?? Date.now;
  // How late each deadline fires (agora_deadline_lateness_seconds); pending ones are read at scrape time, once the scheduler exists.
  // A standby's pending set is not its to fire: only the firing scheduler reports what is overdue.
  const lateness = context.metrics?.deadlines(spec.name, () => (scheduler.isActive ? scheduler.pending() : []));
  const scheduler = new Scheduler({
    store: context.store,
    name: spec.name,
    categories: spec.categories,
    deadlineOf: spec.deadlineOf,
    ...(context.snapshots ? { snapshots: context.snapshots } : {}),
    // With replicas, only the lease's holder fires; every replica keeps the pending set, to take over at once.
    active: context.leases === undefined,
    logger,
    fire: (key, dueAt, cause) =>
      tracingOn()
        ? inSpan(`agora.deadline ${spec.name}`, { attributes: { 'agora.deadline.key': key, 'agora.deadline.due_at': dueAt }, parent: contextOfEvent(cause ?? {}) }, () => fire(key, dueAt))
        : fire(key, dueAt),
  });
  async function fire(key: string, dueAt: string): Promise<void> {
    lateness?.fired(dueAt);
    const command = spec.expire(key, dueAt);
    if (!command) {
      logger.warn(`[deadlines ${spec.name}] no expiry command for deadline ${key}; dropped`);
      return;
    }
    const due = Date.parse(dueAt);
    const firedAt = Math.max(due, clock());
    const lateMs = firedAt - due;
    if (lateMs >= LATE_DEADLINE_LOG_MS) logger.warn(`[deadlines ${spec.name}] ${key} due at ${dueAt} fires ${(lateMs / 1000).toFixed(1)} s late; what follows it gets its full time from now`);
    try {
      const result = await issueInternalCommand(command, { store: context.store, as: spec.as, commandId: deadlineCommandId(key, dueAt), now: new Date(firedAt).toISOString(), causationId: key });
      context.metrics?.internalCommand(`deadlines.${spec.name}`, outcomeOfIssued(result));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      context.metrics?.internalCommand(`deadlines.${spec.name}`, 'refused');
      logger.warn(`[deadlines ${spec.name}] ${command.type} for ${key} refused (${error.code}): ${error.message}; dropped`);
    }
  }
  await scheduler.start();
  const lease = await context.leases?.run(`deadlines.${spec.name}`, {
    start: async () => scheduler.setActive(true),
    stop: async () => scheduler.setActive(false),
  });
  return {
    scheduler,
    lines: [`deadlines ${spec.name}: ${scheduler.pending().length} pending${lease && !lease.held ? '; standing by, another replica holds its lease' : ''}`],
    async close() {
      await lease?.close();
      await scheduler.stop();
      lateness?.stop();
    },
  };
}
