import { AgoraError, authorizeCommand, type CommandDefinition, type CommandResult, type ErrorCode, type PayloadOf } from '@agora/contracts';
import { signCommand } from '@agora/identity';
import { DomainError, type Command, type Decider, type DomainEvent } from '@agora/decider';
import { CheckpointedConsumer, handleCommand, reactionCommandId, type CommandMetadata } from '@agora/eventsourcing';
import { backoffDelay, sleep, type EventStore, type RecordedEvent } from '@agora/eventstore';
import type { AgoraClient } from '@agora/messaging';
import { contextOfEvent, inSpan, SpanKind, tracingOn } from '@agora/tracing';
import type { ServiceContext } from './context.js';
import { KeyedLock } from './keyed-lock.js';
import { withLag, type InternalCommandOutcome, type ReactorTracker } from './metrics.js';
import type { Running } from './process.js';
import type { ServiceIdentity } from './service-identity.js';

/** A command a service decides on its own behalf: in answer to an event (a reactor) or a deadline (a scheduler). */
export interface InternalCommand<C extends Command = Command, E extends DomainEvent = DomainEvent, S = unknown> {
  streamId: string;
  decider: Decider<C, E, S>;
  type: C['type'];
  payload: C['payload'];
}

/**
 * A command a service sends another service, which alone writes its aggregates: signed as the
 * sending service (signServiceCommand), through the receiver's command path (its gate, the
 * authorization table, its reply cache), exactly as an agent's command.
 */
export interface ServiceRequest {
  command: CommandDefinition;
  payload: Record<string, unknown>;
}

/** `command` with a payload its contract types, to send to the service that serves it. */
export function serviceRequest<D extends CommandDefinition>(command: D, payload: PayloadOf<D>): ServiceRequest {
  return { command, payload: payload as Record<string, unknown> };
}

/** What a reactor does in answer to an event: decide a command on its own service's aggregates, or send one to another service. */
export type Reaction = InternalCommand | ServiceRequest;

/**
 * Who a service acts as: its identity (`context.serviceIdentity('<name>')`), whose key signs
 * every command it issues on its own behalf.
 */
export type ServiceActor = ServiceIdentity;

export interface IssueOptions {
  store: EventStore;
  as: ServiceActor;
  /** Derived from what caused the command (an event id, a deadline), so a repeat lands once. */
  commandId: string;
  /** `context.now` and the envelope's `issuedAt`: the service clock (for a deadline: when it fires, never before it was due). */
  now: string;
  correlationId?: string;
  /** What the command answers: the id of the event a reaction answers, or the key of a due deadline. */
  causationId?: string;
  /** Rounds of deciding again when the stream moved under the append, before AgoraError('conflict') (handleCommand's default when unset; 1: a decision made on what was read, or none). */
  maxAttempts?: number;
}

/**
 * The signed envelope of a service's own command, as the log records it (`metadataOf` shape):
 * `{commandId, type, actor: 'service:<name>', issuedAt, payload, correlationId?, causationId?}`
 * signed with the service's key by `signCommand` of @agora/identity, exactly as an agent signs.
 * Throws when the contracts do not list this service among the command's `issuers`.
 */
export function signServiceCommand(type: string, payload: Record<string, unknown>, options: Omit<IssueOptions, 'store'>): CommandMetadata {
  const { as, commandId, now } = options;
  const authorization = authorizeCommand(type, { actor: as.actor, roles: as.roles });
  if (!authorization.allowed) throw new Error(`${as.actor} may not issue ${type} on its own behalf: ${authorization.reason} (declare it in the command's issuers)`);
  const envelope = signCommand(
    {
      commandId,
      type,
      actor: as.actor,
      issuedAt: now,
      payload,
      ...(options.correlationId === undefined ? {} : { correlationId: options.correlationId }),
      ...(options.causationId === undefined ? {} : { causationId: options.causationId }),
    },
    as.secretKey,
  );
  return {
    commandId,
    commandType: type,
    actor: as.actor,
    issuedAt: now,
    signature: envelope.signature,
    ...(envelope.correlationId === undefined ? {} : { correlationId: envelope.correlationId }),
    ...(envelope.causationId === undefined ? {} : { causationId: envelope.causationId }),
    payload,
  };
}

/**
 * Decides a service's own command (load, fold, decide, append: handleCommand) signed with the
 * service's key (signServiceCommand) and a command id derived from its cause, so that running it
 * again (a redelivered event, a second replica, a restart) finds the first result and appends
 * nothing. The decider sees the actor `service:<name>` with the role `service`.
 */
export async function issueInternalCommand(command: InternalCommand, options: IssueOptions): Promise<CommandResult> {
  const { store, as, commandId, now } = options;
  const payload = command.payload as Record<string, unknown>;
  const handle = () =>
    handleCommand({
      store,
      decider: command.decider,
      streamId: command.streamId,
      command: { type: command.type, payload, context: { now, actor: as.actor, actorRoles: as.roles, commandId } },
      metadata: signServiceCommand(command.type, payload, options),
      ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
    });
  if (!tracingOn()) return handle();
  return inSpan(`agora.command ${command.type}`, { attributes: { 'agora.command.type': command.type, 'agora.actor': as.actor, 'agora.command.id': commandId, 'agora.command.internal': true } }, async (span) => {
    try {
      const result = await handle();
      span?.setAttributes({ 'agora.outcome': outcomeOfIssued(result), 'agora.events': result.events.length });
      return result;
    } catch (error) {
      if (error instanceof DomainError) span?.setAttributes({ 'agora.outcome': 'refused', 'agora.error.code': error.code });
      throw error;
    }
  });
}

/**
 * Sends a service's own command to the service that serves it (`request.command.subject`) over the
 * process's transport, signed and attributed as issueInternalCommand's: resolves with the receiver's
 * result (a repeated command id: its first result, from the receiver's reply cache), rejects with
 * the receiver's refusal as an AgoraError of its code.
 */
export async function sendServiceCommand(client: AgoraClient, request: ServiceRequest, options: Omit<IssueOptions, 'store'> & { timeoutMs?: number }): Promise<CommandResult> {
  const signed = signServiceCommand(request.command.type, request.payload, options);
  const envelope = {
    commandId: signed.commandId,
    type: signed.commandType,
    actor: signed.actor,
    issuedAt: signed.issuedAt,
    payload: request.payload,
    signature: signed.signature,
    ...(signed.correlationId === undefined ? {} : { correlationId: signed.correlationId }),
    ...(signed.causationId === undefined ? {} : { causationId: signed.causationId }),
  };
  const reply = await client.request<CommandResult>(request.command.subject, envelope, options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs });
  if (reply.ok) return reply.result;
  throw new AgoraError(reply.error.code, `${request.command.type} on ${request.command.subject}: ${reply.error.message}`, reply.error.details);
}

/**
 * The refusals of another service that deciding again would repeat: a reaction so refused is logged
 * and skipped, as a DomainError of the service's own decider is. Any other failure (unavailable, a
 * timeout, a sender key the receiver does not know yet) is retried, the event handled again later.
 */
const REFUSED_FOR_GOOD: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['invalid_command', 'forbidden', 'service_only', 'not_found', 'illegal_state', 'command_id_reused']);

/**
 * The commands a reactor issues in answer to one event, in a span `agora.react <reactor>` that
 * continues the trace of the command that appended the event (its `traceparent` metadata), across
 * processes. Events that call for nothing make no span.
 */
function reactTraced(reactor: string, event: RecordedEvent, react: () => Promise<void>): Promise<void> {
  const attributes = { 'agora.reactor': reactor, 'agora.event.type': event.type, 'agora.event.id': event.id, 'agora.stream.id': event.streamId };
  return inSpan(`agora.react ${reactor}`, { kind: SpanKind.CONSUMER, attributes, parent: contextOfEvent(event.metadata) }, react);
}

/** How an issued command ended, for agora_commands_issued_total. */
export function outcomeOfIssued(result: CommandResult): InternalCommandOutcome {
  return result.duplicate ? 'duplicate' : result.events.length > 0 ? 'appended' : 'unchanged';
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
  react(event: RecordedEvent): Reaction[] | Promise<Reaction[]>;
  logger?: { warn(message: string, ...details: unknown[]): void };
  /** Service clock for `context.now`. Default Date.now. */
  now?: () => number;
  /**
   * Work that belongs to whichever replica runs the consumer: `before` runs each time this replica
   * starts it (at start when alone, or on taking the lease), before the first event; `after` once
   * it stops (the lease lost, or close). The chamber settles calls a stopped holder left in flight
   * in `before`, and aborts its own in `after`.
   */
  holderWork?: { before(): Promise<void>; after(): Promise<void> };
  /**
   * Events of different streams whose reactions run at once (default 1: one event at a time). Each
   * stream's events stay in order, and the checkpoint moves past an event only once its reactions
   * are done. For a reactor whose reactions on one aggregate do not depend on those on another: the
   * tribunal's rounds keep up with proposals coming faster than one command's round trip to the log.
   */
  concurrency?: number;
}

/**
 * `handle` run on up to `concurrency` events at once, each stream's in order (see
 * ReactorSpec.concurrency): `handle` of the consumer returns once the event is taken in, a failure is
 * retried with backoff in place, and `beforeCheckpoint` waits for every event taken in, so a saved
 * checkpoint never passes one whose reactions are not done. Once stopping, a failing event is given
 * up and the checkpoint refused: a restart handles it again.
 */
export function pipelined(name: string, handle: (event: RecordedEvent) => Promise<void>, concurrency: number, logger: { warn(message: string, ...details: unknown[]): void }, lag?: ReactorTracker) {
  const streams = new KeyedLock();
  const inFlight = new Set<Promise<void>>();
  // Stopping ends a backoff's sleep too: a reaction waiting to retry gives up at once, not after its delay.
  const stopping = new AbortController();
  let givenUp: unknown;
  const run = async (event: RecordedEvent): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await handle(event);
      } catch (error) {
        if (stopping.signal.aborted) return void (givenUp = error);
        logger.warn(`[reactor ${name}] ${event.type} ${event.id} on ${event.streamId} failed (attempt ${attempt}); retrying`, error);
        await sleep(backoffDelay(attempt, undefined), stopping.signal);
        if (stopping.signal.aborted) return void (givenUp = error);
      }
    }
  };
  return {
    async handle(event: RecordedEvent): Promise<void> {
      // In hand from now until its reaction is done (the lag is that of the oldest such event, not of the last one taken in).
      lag?.begin(event);
      while (inFlight.size >= concurrency) await Promise.race(inFlight);
      const job = streams.run(event.streamId, () => run(event)).finally(() => lag?.end(event));
      inFlight.add(job);
      void job.finally(() => inFlight.delete(job));
    },
    async beforeCheckpoint(): Promise<void> {
      await Promise.all(inFlight);
      if (givenUp !== undefined) throw new Error(`reactor ${name} stopped with a reaction not done; its checkpoint stays before it`, { cause: givenUp });
    },
    stop(): void {
      stopping.abort();
    },
  };
}

/**
 * A process manager: reacts to committed events by deciding commands on other aggregates, through
 * a checkpointed store subscription (at least once, in order), never through a second write made
 * beside the first. Each reaction's command id is derived from the event, so a redelivered event
 * finds its earlier result and appends nothing. A reaction the decider refuses is logged and
 * skipped: the refusal is final, and retrying it would stall every later event.
 *
 * With replicas (context.leases, on NATS), only the replica holding the lease `reactor.<name>`
 * runs the consumer; the others stand by and take over when its lease lapses, resuming from their
 * own checkpoint (what the old holder did is handled again and appends nothing).
 */
export async function runReactor(context: Pick<ServiceContext, 'store' | 'checkpoints'> & Partial<Pick<ServiceContext, 'metrics' | 'leases' | 'client' | 'config'>>, spec: ReactorSpec): Promise<Running> {
  const logger = spec.logger ?? console;
  const now = spec.now ?? Date.now;
  const lag = context.metrics?.reactor(spec.name);
  const source = `reactor.${spec.name}`;
  const send = async (request: ServiceRequest, options: Omit<IssueOptions, 'store'>): Promise<CommandResult> => {
    if (!context.client) throw new Error(`reactor ${spec.name} sends ${request.command.type} to another service: give it the process's client (ServiceContext.client)`);
    return sendServiceCommand(context.client, request, { ...options, ...(context.config ? { timeoutMs: context.config.requestTimeoutMs } : {}) });
  };
  const issue = async (event: RecordedEvent, reactions: readonly Reaction[]): Promise<void> => {
    for (const [index, reaction] of reactions.entries()) {
      const correlationId = typeof event.metadata['correlationId'] === 'string' ? event.metadata['correlationId'] : event.id;
      const options = { as: spec.as, commandId: reactionCommandId(spec.name, event.id, index), now: new Date(now()).toISOString(), correlationId, causationId: event.id };
      const sent = 'command' in reaction;
      try {
        const result = sent ? await send(reaction, options) : await issueInternalCommand(reaction, { store: context.store, ...options });
        context.metrics?.internalCommand(source, outcomeOfIssued(result));
      } catch (error) {
        const refused = error instanceof DomainError || (sent && error instanceof AgoraError && REFUSED_FOR_GOOD.has(error.code));
        if (!refused) throw error;
        context.metrics?.internalCommand(source, 'refused');
        const what = sent ? `${reaction.command.type} to ${reaction.command.subject}` : `${reaction.type} on ${reaction.streamId}`;
        logger.warn(`[reactor ${spec.name}] ${what} in answer to ${event.type} ${event.id} refused (${error.code}): ${error.message}; skipped`);
      }
    }
  };
  const react = async (event: RecordedEvent): Promise<void> => {
    const commands = await spec.react(event);
    if (commands.length === 0) return;
    await (tracingOn() ? reactTraced(spec.name, event, () => issue(event, commands)) : issue(event, commands));
  };
  let pipeline: ReturnType<typeof pipelined> | undefined;
  const newConsumer = () => {
    pipeline = (spec.concurrency ?? 1) > 1 ? pipelined(spec.name, react, spec.concurrency!, logger, lag) : undefined;
    const categories = spec.categories ? { categories: spec.categories } : {};
    return new CheckpointedConsumer({
      store: context.store,
      checkpoints: context.checkpoints,
      logger,
      consumer: pipeline ? { name: spec.name, ...categories, handle: pipeline.handle, beforeCheckpoint: pipeline.beforeCheckpoint } : withLag(lag, { name: spec.name, ...categories, handle: react }),
    });
  };
  const line = `reactor ${spec.name} (checkpoint "${spec.name}")`;
  const before = async () => spec.holderWork?.before();
  const after = async () => spec.holderWork?.after();
  if (!context.leases) {
    await before();
    const consumer = newConsumer();
    // The process serves without waiting for the reactor's backlog (a burst it had not caught up with
    // before a restart): it catches up meanwhile, its lag on the reactor metrics.
    await consumer.begin();
    return { lines: [line], close: () => (pipeline?.stop(), consumer.stop()).finally(() => after().finally(() => lag?.stop())) };
  }
  // With replicas: only the lease's holder runs the consumer. A standby's checkpoint stays where
  // its own handling left it, so a takeover handles again (appending nothing) what the holder did.
  let consumer: CheckpointedConsumer | undefined;
  const lease = await context.leases.run(source, {
    async start() {
      await before();
      consumer = newConsumer();
      await consumer.start();
    },
    async stop() {
      const stopping = consumer;
      consumer = undefined;
      pipeline?.stop();
      await stopping?.stop();
      await after();
    },
  });
  return { lines: [`${line}${lease.held ? '' : ': standing by, another replica holds its lease'}`], close: () => lease.close().finally(() => lag?.stop()) };
}
