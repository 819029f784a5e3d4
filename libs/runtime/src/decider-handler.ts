import { AgoraError, categoryOf, readerOf, readsCategory, readsStream, serviceOfActor, type CommandResult } from '@agora/contracts';
import { DomainError, type Command, type Decider, type DomainEvent } from '@agora/decider';
import { AggregateCache, handleCommand, type AggregateCacheOptions, type CommandMetadata } from '@agora/eventsourcing';
import { StreamNotFound, type EventStore, type RecordedEvent } from '@agora/eventstore';
import type { CommandHandler, VerifiedCommand } from '@agora/messaging';
import { KeyedLock } from './keyed-lock.js';

export interface DeciderHandlerOptions<C extends Command, E extends DomainEvent, S, P> {
  store: EventStore;
  decider: Decider<C, E, S>;
  /** The aggregate stream the command is decided on, from its (parsed) payload (and the service clock's `context.now`, for a stream per period). */
  streamOf(payload: P, command: VerifiedCommand<P>, context: C['context']): string | Promise<string>;
  /** Builds the decider's command (what it adds to the signed payload is recorded with the decision). Default: `{type, payload, context}` as they come. */
  toCommand?(command: VerifiedCommand<P>, context: C['context']): C | Promise<C>;
  /** Service clock for `context.now`. Default Date.now. */
  now?: () => number;
  /** Shared by the handlers of one service so commands on one stream queue up. Default: one per handler. */
  locks?: KeyedLock;
  /** Load-decide-append attempts before `conflict`. Default 5. */
  maxAttempts?: number;
  /**
   * Folded states of the streams this handler used last, so that a command on one of them is
   * decided and appended without reading the stream first (see `handleCommand` for why that stays
   * correct with other replicas writing too). Default: a cache of its own for 10,000 streams.
   * Options to size it, a cache to share (one decider), or `false` to read the stream every time.
   */
  cache?: AggregateCache<C, E, S> | AggregateCacheOptions | false;
}

/** The metadata a verified command leaves on every event it appends (docs/decisions/0004-every-command-is-signed.md): enough to re-verify its signature offline. */
export function metadataOf(command: VerifiedCommand): CommandMetadata {
  const { envelope } = command;
  return {
    commandId: envelope.commandId,
    commandType: envelope.type,
    actor: envelope.actor,
    issuedAt: envelope.issuedAt,
    signature: envelope.signature,
    correlationId: envelope.correlationId ?? envelope.commandId,
    ...(envelope.causationId === undefined ? {} : { causationId: envelope.causationId }),
    payload: envelope.payload,
  };
}

/**
 * A dispatcher handler that decides a verified command with a decider (docs/decisions/0003-deciders-are-plain-functions.md):
 * load the stream, fold, decide, append at the expected revision, retry on conflict. Commands on
 * one stream run one at a time in this process (`locks`), and the folded state of recently used
 * streams is kept (`cache`), so the usual command is one append and no read. The decider sees
 * the service clock as `context.now` (an agent cannot backdate a decision; the signed `issuedAt`
 * stays in the metadata) and the actor's roles as the registry has them.
 */
export function deciderHandler<C extends Command, E extends DomainEvent, S, P>(options: DeciderHandlerOptions<C, E, S, P>): CommandHandler<P> {
  const now = options.now ?? Date.now;
  const locks = options.locks ?? new KeyedLock();
  const cache = options.cache === false ? undefined : options.cache instanceof AggregateCache ? options.cache : new AggregateCache(options.decider, options.cache);
  return async (verified): Promise<CommandResult> => {
    const context = { now: new Date(now()).toISOString(), actor: verified.actor.agentId, actorRoles: verified.actor.roles, commandId: verified.envelope.commandId };
    const command = options.toCommand ? await options.toCommand(verified, context) : ({ type: verified.definition.type, payload: verified.payload, context } as C);
    const streamId = await options.streamOf(verified.payload, verified, context);
    try {
      return await locks.run(streamId, () =>
        handleCommand({
          store: options.store,
          decider: options.decider,
          streamId,
          command,
          metadata: metadataOf(verified as VerifiedCommand),
          ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
          ...(cache === undefined ? {} : { cache }),
        }),
      );
    } catch (error) {
      throw await concealedRefusal(error, options.store, streamId, verified as VerifiedCommand);
    }
  };
}

/** The one refusal a sender gets for an aggregate it may not read, whatever the aggregate's state or owner, or whether it exists. */
export function notYoursRefusal(commandType: string, streamId: string, actor: string): AgoraError {
  return new AgoraError('forbidden', `${actor} may not ${commandType} on ${streamId}: it does not exist, or it is not one ${actor} may act on`, { commandType });
}

/**
 * A decider's refusal says no more than a read would (docs/security-reads.md: a reader cannot probe
 * for ids). For a sender who may not read the aggregate (the visibility table, as `GET /v1/events`
 * applies it: not a party to the stream, or a category agents do not read), every refusal becomes
 * the same `forbidden` (notYoursRefusal), and so does "not found" on a stream that does not exist.
 * Readers who may see the aggregate (its parties, operators, auditors, services) keep the decider's
 * own message, and so does a refusal of a new aggregate's content (an empty stream: nothing to
 * hide). Refusals are rare: the stream is read once to find its parties.
 */
async function concealedRefusal(error: unknown, store: EventStore, streamId: string, verified: VerifiedCommand): Promise<unknown> {
  if (!(error instanceof DomainError)) return error;
  const actor = verified.actor.agentId;
  if (serviceOfActor(actor) !== undefined) return error;
  const reader = readerOf(actor, verified.actor.roles);
  const category = categoryOf(streamId);
  if (readsCategory(reader, category)) return error;
  let events: RecordedEvent[];
  try {
    events = await store.readStream(streamId);
  } catch (readError) {
    if (!(readError instanceof StreamNotFound)) return notYoursRefusal(verified.definition.type, streamId, actor);
    events = [];
  }
  if (events.length === 0 ? error.code !== 'not_found' : readsStream(reader, category, events)) return error;
  return notYoursRefusal(verified.definition.type, streamId, actor);
}
