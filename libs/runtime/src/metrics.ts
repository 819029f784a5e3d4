import type { ErrorCode } from '@agora/contracts';
import type { Consumer } from '@agora/eventsourcing';
import { DuplicateRevision, WrongExpectedRevision, type EventStore, type RecordedEvent } from '@agora/eventstore';
import type { CommandObservation, DispatchObserver } from '@agora/messaging';
import type { NatsConnection } from '@nats-io/nats-core';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Error codes that say the platform failed (the command may be fine); every other code is a refusal of the command itself. */
export const FAILURE_CODES: readonly ErrorCode[] = ['internal', 'unavailable', 'timeout', 'conflict'];

/** `accepted`, `refused` (the command was wrong: bad signature, forbidden, illegal state...) or `failed` (FAILURE_CODES). */
export type CommandOutcome = 'accepted' | 'refused' | 'failed';

export function outcomeOf(code: ErrorCode | undefined): CommandOutcome {
  if (code === undefined) return 'accepted';
  return FAILURE_CODES.includes(code) ? 'failed' : 'refused';
}

/** Buckets of the command and store latency histograms, in seconds: 0.5 ms to 10 s. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Buckets of the reactor and deadline lag histograms, in seconds: 10 ms to 1 h. */
export const LAG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

/** What a reactor reports while it handles an event (see ProcessMetrics.reactor). */
export interface ReactorTracker {
  /** `event` is in hand (several may be, where a reactor runs several streams' reactions at once). */
  begin(event: RecordedEvent): void;
  /** `event`'s reaction is done. */
  end(event: RecordedEvent): void;
  /** The reactor stopped: its lag series goes away. */
  stop(): void;
}

/** A consumer whose `handle` reports to a reactor tracker (none: the consumer as it is). */
export function withLag(tracker: ReactorTracker | undefined, consumer: Consumer): Consumer {
  if (!tracker) return consumer;
  return {
    ...consumer,
    async handle(event) {
      tracker.begin(event);
      try {
        await consumer.handle(event);
      } finally {
        tracker.end(event);
      }
    },
  };
}

export type InternalCommandOutcome = 'appended' | 'unchanged' | 'duplicate' | 'refused';

/** What a deadline scheduler reports: its pending deadlines (read at scrape time) and each firing. */
export interface DeadlineTracker {
  fired(dueAt: string): void;
  /** The scheduler stopped: its overdue series goes away. */
  stop(): void;
}

/**
 * The metrics every Agora process exposes, in one prom-client Registry per process (never the
 * global one): what the process's services, store, reactors, deadlines and NATS connections do.
 * The process's parts register their own metrics (the projections' read-model figures, the
 * gateway's HTTP requests) in the same registry, so one `/metrics` says everything about the
 * process. Labels are service, command type, outcome, error code, adapter, reactor and scheduler
 * names and connection names: a handful of values each, never an id.
 *
 * - agora_commands_handled_total{service,type,outcome,code}    counter: commands answered; outcome accepted,
 *                                                              refused (code = the refusal) or failed; code "none" when accepted
 * - agora_commands_duration_seconds{service,type}              histogram: verify, decide, append, reply
 * - agora_store_append_duration_seconds{adapter}               histogram: one append (one commit)
 * - agora_store_appends_total{adapter,outcome}                 counter: ok, conflict (wrong expected revision), failed
 * - agora_store_read_duration_seconds{adapter}                 histogram: one stream read
 * - agora_store_duplicate_revisions_total{adapter}             counter: stream reads refused because two commits claim one revision
 *                                                              (a log written by a server that let concurrent appends through)
 * - agora_reactor_lag_seconds{reactor}                         gauge: age of the oldest event whose reaction is not done (0 when idle)
 * - agora_reactor_delay_seconds{reactor}                       histogram: commit of an event to its handling
 * - agora_deadline_overdue_seconds{scheduler}                  gauge: how late the most overdue pending deadline is (0 when none)
 * - agora_deadline_lateness_seconds{scheduler}                 histogram: due time to firing
 * - agora_commands_issued_total{source,outcome}                counter: commands a service issued on its own behalf, by source
 *                                                              (reactor.<name>, deadlines.<name>) and outcome: appended (its result
 *                                                              lists events: appended by it, or by a copy issued at the same instant),
 *                                                              unchanged (already satisfied), duplicate (its command id was handled before:
 *                                                              by a redelivery, a restart or another replica), refused
 * - agora_lease_held{lease}                                    gauge: 1 while this replica holds the lease (runs that reactor or scheduler), 0 standing by
 * - agora_nats_reconnects_total{connection}                    counter
 * - agora_nats_disconnects_total{connection}                   counter
 * - agora_nats_slow_consumer_events_total{connection}          counter: the client dropped messages of a subscription that fell behind
 */
export class ProcessMetrics {
  readonly registry: Registry;
  private readonly commands: Counter<'service' | 'type' | 'outcome' | 'code'>;
  private readonly commandSeconds: Histogram<'service' | 'type'>;
  private readonly appendSeconds: Histogram<'adapter'>;
  private readonly appends: Counter<'adapter' | 'outcome'>;
  private readonly readSeconds: Histogram<'adapter'>;
  private readonly duplicateRevisions: Counter<'adapter'>;
  private readonly reactorDelay: Histogram<'reactor'>;
  private readonly internalCommands: Counter<'source' | 'outcome'>;
  private readonly deadlineLateness: Histogram<'scheduler'>;
  private readonly natsEvents: Record<'reconnect' | 'disconnect' | 'slowConsumer', Counter<'connection'>>;
  /** The event each reactor has in hand, by reactor name. */
  /** Each reactor's events in hand: those its reactions have not finished. */
  private readonly inHand = new Map<string, Set<RecordedEvent>>();
  /** Pending deadlines of each scheduler, read at scrape time. */
  private readonly schedulers = new Map<string, () => readonly { dueAt: string }[]>();
  private readonly watched = new WeakSet<NatsConnection>();
  private leases: { held(): ReadonlyArray<{ name: string; held: boolean }> } | undefined;

  constructor(options: { registry?: Registry; defaultMetrics?: boolean; now?: () => number } = {}) {
    const now = options.now ?? Date.now;
    this.registry = options.registry ?? new Registry();
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    const registers = [this.registry];
    this.commands = new Counter({
      name: 'agora_commands_handled_total',
      help: 'Commands answered by the services of this process, by service, command type, outcome (accepted, refused: the command was wrong, failed: the platform failed) and error code (none when accepted)',
      labelNames: ['service', 'type', 'outcome', 'code'],
      registers,
    });
    this.commandSeconds = new Histogram({
      name: 'agora_commands_duration_seconds',
      help: 'Time to answer a command (verify the envelope, load, decide, append, reply), by service and command type',
      labelNames: ['service', 'type'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.appendSeconds = new Histogram({ name: 'agora_store_append_duration_seconds', help: 'Time of one append (one commit) to the event store, by adapter', labelNames: ['adapter'], buckets: LATENCY_BUCKETS, registers });
    this.appends = new Counter({ name: 'agora_store_appends_total', help: 'Appends to the event store, by adapter and outcome: ok, conflict (wrong expected revision), failed', labelNames: ['adapter', 'outcome'], registers });
    this.readSeconds = new Histogram({ name: 'agora_store_read_duration_seconds', help: 'Time of one stream read from the event store, by adapter', labelNames: ['adapter'], buckets: LATENCY_BUCKETS, registers });
    this.duplicateRevisions = new Counter({
      name: 'agora_store_duplicate_revisions_total',
      help: 'Stream reads the event store refused because two commits claim one revision (a log written by a server that let concurrent appends through, nats-io/nats-server#4320), by adapter',
      labelNames: ['adapter'],
      registers,
    });
    const inHand = this.inHand;
    new Gauge({
      name: 'agora_reactor_lag_seconds',
      help: 'How far behind the log a reactor (or the relay) is: the age of the oldest event whose reaction is not done, 0 when it is idle (caught up)',
      labelNames: ['reactor'],
      registers,
      collect() {
        this.reset();
        for (const [reactor, events] of inHand) {
          let oldest = Infinity;
          for (const event of events) oldest = Math.min(oldest, Date.parse(event.recordedAt));
          this.set({ reactor }, events.size > 0 ? Math.max(0, (now() - oldest) / 1000) : 0);
        }
      },
    });
    this.internalCommands = new Counter({
      name: 'agora_commands_issued_total',
      help: 'Commands the services of this process issued on their own behalf, by source (reactor.<name>, deadlines.<name>) and outcome: appended (its result lists events: appended by it, or by a copy issued at the same instant), unchanged (already satisfied), duplicate (its command id was handled before: a redelivery, a restart or another replica), refused',
      labelNames: ['source', 'outcome'],
      registers,
    });
    const leasesOf = () => this.leases;
    new Gauge({
      name: 'agora_lease_held',
      help: 'Whether this replica holds a lease, by lease (reactor.<name>, deadlines.<name>): 1 = it runs that reactor or deadline scheduler, 0 = it stands by',
      labelNames: ['lease'],
      registers,
      collect() {
        this.reset();
        for (const { name, held } of leasesOf()?.held() ?? []) this.set({ lease: name }, held ? 1 : 0);
      },
    });
    this.reactorDelay = new Histogram({ name: 'agora_reactor_delay_seconds', help: 'Seconds from the commit of an event to a reactor (or the relay) handling it, by reactor', labelNames: ['reactor'], buckets: LAG_BUCKETS, registers });
    const schedulers = this.schedulers;
    new Gauge({
      name: 'agora_deadline_overdue_seconds',
      help: 'How late the most overdue deadline of a scheduler is (due and not fired yet), 0 when none is overdue',
      labelNames: ['scheduler'],
      registers,
      collect() {
        this.reset();
        const at = now();
        for (const [scheduler, pending] of schedulers) {
          const overdue = pending().reduce((most, { dueAt }) => Math.max(most, (at - Date.parse(dueAt)) / 1000), 0);
          this.set({ scheduler }, overdue);
        }
      },
    });
    this.deadlineLateness = new Histogram({ name: 'agora_deadline_lateness_seconds', help: 'Seconds from the due time of a deadline to its firing, by scheduler', labelNames: ['scheduler'], buckets: LAG_BUCKETS, registers });
    const nats = (name: string, help: string) => new Counter({ name, help, labelNames: ['connection'], registers });
    this.natsEvents = {
      reconnect: nats('agora_nats_reconnects_total', 'Reconnections of the NATS connections of this process, by connection (client, or the service served on it)'),
      disconnect: nats('agora_nats_disconnects_total', 'Disconnections of the NATS connections of this process, by connection'),
      slowConsumer: nats('agora_nats_slow_consumer_events_total', 'Slow-consumer events on the NATS connections of this process (a subscription fell behind and the client dropped messages), by connection'),
    };
  }

  /** What the services' dispatchers report to (ServiceTransport.observer). */
  readonly observer: DispatchObserver = {
    command: (observation: CommandObservation) => this.command(observation),
    natsConnection: (connection, name) => this.watchNats(connection, name),
  };

  command({ service, type, code, seconds }: CommandObservation): void {
    this.commands.inc({ service, type, outcome: outcomeOf(code), code: code ?? 'none' });
    this.commandSeconds.observe({ service, type }, seconds);
  }

  /** Counts reconnects, disconnects and slow-consumer events of a NATS connection until it closes. */
  watchNats(connection: NatsConnection, name: string): void {
    if (this.watched.has(connection)) return;
    this.watched.add(connection);
    for (const counter of Object.values(this.natsEvents)) counter.inc({ connection: name }, 0);
    void (async () => {
      for await (const status of connection.status()) {
        if (status.type === 'reconnect' || status.type === 'disconnect' || status.type === 'slowConsumer') this.natsEvents[status.type].inc({ connection: name });
      }
    })().catch(() => undefined);
  }

  /** The store with the latency of its appends and stream reads measured (every other call passes through). */
  instrumentStore(store: EventStore, adapter: string): EventStore {
    const { appendSeconds, appends, readSeconds, duplicateRevisions } = this;
    appends.inc({ adapter, outcome: 'ok' }, 0);
    duplicateRevisions.inc({ adapter }, 0);
    return new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'append') {
          return async (...args: Parameters<EventStore['append']>) => {
            const end = appendSeconds.startTimer({ adapter });
            try {
              const result = await target.append(...args);
              appends.inc({ adapter, outcome: 'ok' });
              return result;
            } catch (error) {
              appends.inc({ adapter, outcome: error instanceof WrongExpectedRevision ? 'conflict' : 'failed' });
              throw error;
            } finally {
              end();
            }
          };
        }
        if (property === 'readStream') {
          return async (...args: Parameters<EventStore['readStream']>) => {
            const end = readSeconds.startTimer({ adapter });
            try {
              return await target.readStream(...args);
            } catch (error) {
              if (error instanceof DuplicateRevision) duplicateRevisions.inc({ adapter });
              throw error;
            } finally {
              end();
            }
          };
        }
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  /** Counts a command issued on a service's own behalf (agora_commands_issued_total). */
  internalCommand(source: string, outcome: InternalCommandOutcome): void {
    this.internalCommands.inc({ source, outcome });
  }

  /** Reports the process's leases (agora_lease_held). */
  watchLeases(leases: { held(): ReadonlyArray<{ name: string; held: boolean }> }): void {
    this.leases = leases;
  }

  /** A reactor's lag: `begin` when it takes an event, `end` when done with it. */
  reactor(name: string, now: () => number = Date.now): ReactorTracker {
    const events = new Set<RecordedEvent>();
    this.inHand.set(name, events);
    this.reactorDelay.zero({ reactor: name });
    return {
      begin: (event) => {
        events.add(event);
        this.reactorDelay.observe({ reactor: name }, Math.max(0, (now() - Date.parse(event.recordedAt)) / 1000));
      },
      end: (event) => void events.delete(event),
      stop: () => this.inHand.delete(name),
    };
  }

  /** A scheduler's lateness: its pending deadlines are read at scrape time; `fired` records each firing. */
  deadlines(name: string, pending: () => readonly { dueAt: string }[], now: () => number = Date.now): DeadlineTracker {
    this.schedulers.set(name, pending);
    this.deadlineLateness.zero({ scheduler: name });
    return {
      fired: (dueAt) => this.deadlineLateness.observe({ scheduler: name }, Math.max(0, (now() - Date.parse(dueAt)) / 1000)),
      stop: () => this.schedulers.delete(name),
    };
  }
}

/**
 * Registers metrics with `register(registry)` and returns a function that removes them again, so a
 * part of a process (the projections, a gateway) can stop and start again on the same registry.
 */
export function registerRemovably(registry: Registry, register: (registry: Registry) => void): () => void {
  const before = new Set(registry.getMetricsAsArray().map((m) => m.name));
  register(registry);
  const added = registry.getMetricsAsArray().map((m) => m.name).filter((name) => !before.has(name));
  return () => {
    for (const name of added) registry.removeSingleMetric(name);
  };
}
