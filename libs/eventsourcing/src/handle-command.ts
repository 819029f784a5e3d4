import { AgoraError, type CommandResult } from '@agora/contracts';
import type { Command, Decider, DomainEvent } from '@agora/decider';
import { InvalidEventData, StoreUnavailable, StreamNotFound, WrongExpectedRevision, sleep, type EventData, type EventStore, type RecordedEvent } from '@agora/eventstore';
import { eventIdFor } from './ids.js';

/**
 * What travels with a command besides its payload, copied into the metadata of every event the
 * command appends so that an audit can tell who decided what, and re-verify the signature.
 */
export interface CommandMetadata {
  commandId: string;
  commandType: string;
  actor: string;
  issuedAt: string;
  signature?: string;
  /** As the envelope had it; absent when the command started its own chain (its correlation id is then its commandId). */
  correlationId?: string;
  causationId?: string;
  /**
   * The signed payload, kept in the metadata of the first event of the commit (`commandPayload`)
   * so that an audit can rebuild the envelope and re-verify the signature from the log alone.
   */
  payload?: Record<string, unknown>;
}

export interface HandleCommandOptions<C extends Command, E extends DomainEvent, S> {
  store: EventStore;
  decider: Decider<C, E, S>;
  streamId: string;
  command: C;
  metadata: CommandMetadata;
  /** Load-decide-append rounds before giving up with `conflict`. Default 5. */
  maxAttempts?: number;
}

export const DEFAULT_MAX_ATTEMPTS = 5;

/** The stream as one attempt sees it. */
interface LoadedStream<S> {
  state: S;
  /** Revision of the last event, -1 when the stream has no events. */
  revision: number;
  /** The result of this command, when the stream already holds its events. */
  earlier: CommandResult | undefined;
}

/**
 * The command-handling kit of DESIGN.md decision 3: load the stream, fold, decide, append with the
 * expected revision, retry on conflict.
 *
 * - A commandId whose events are already in the stream returns the first result with
 *   `duplicate: true` and writes nothing. (A command that was satisfied with `[]` left no trace;
 *   repeating it decides again, and the decider answers `[]` again.)
 * - Event ids are derived from the commandId (eventIdFor), so two replicas racing on the same
 *   command cannot both write: the store refuses or absorbs the second copy. When the store absorbs
 *   it, both callers get `duplicate: false` and the same revision; the events are stored once.
 * - DomainError (and any error) thrown by `decide` propagates unchanged; nothing is written.
 * - StoreUnavailable becomes AgoraError('unavailable'); a stream that keeps moving under us becomes
 *   AgoraError('conflict') after `maxAttempts` rounds. Other errors propagate.
 *
 * Duplicate detection scans the aggregate's stream: fine for aggregates, which stay short.
 */
export async function handleCommand<C extends Command, E extends DomainEvent, S>(options: HandleCommandOptions<C, E, S>): Promise<CommandResult> {
  const { streamId, command, metadata } = options;
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1) throw new RangeError(`maxAttempts must be a positive integer, got ${String(maxAttempts)}`);
  if (command.context.commandId !== metadata.commandId) {
    // Event ids come from metadata.commandId while decide sees context.commandId: they must be one id.
    throw new TypeError(`command.context.commandId ${command.context.commandId} differs from metadata.commandId ${metadata.commandId}`);
  }
  try {
    return await decideAndAppend(options, maxAttempts);
  } catch (error) {
    if (error instanceof StoreUnavailable) {
      throw new AgoraError('unavailable', `event store unavailable while handling ${metadata.commandType} on ${streamId}: ${error.message}`, { streamId });
    }
    throw error;
  }
}

async function decideAndAppend<C extends Command, E extends DomainEvent, S>(options: HandleCommandOptions<C, E, S>, maxAttempts: number): Promise<CommandResult> {
  const { store, decider, streamId, command, metadata } = options;
  let idCollision: InvalidEventData | undefined;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const loaded = await loadStream(store, decider, streamId, metadata.commandId);
    if (loaded.earlier) return loaded.earlier;
    // Our ids were taken, yet the stream holds no event of this command: the commandId was used
    // for another stream. Retrying cannot help.
    if (idCollision) throw idCollision;

    const events = decider.decide(command, loaded.state);
    if (events.length === 0) return { commandId: metadata.commandId, streamId, events: [], revision: loaded.revision, duplicate: false };

    try {
      const expected = loaded.revision < 0 ? 'no_stream' : loaded.revision;
      const appended = await store.append(streamId, toEventData(events, metadata), expected);
      return { commandId: metadata.commandId, streamId, events: events.map((e) => e.type), revision: appended.nextExpectedRevision, position: appended.position, duplicate: false };
    } catch (error) {
      if (isIdCollision(error)) {
        // Another replica stored this command first with a different number of events (it saw an
        // older state). The re-read finds its events and answers as a duplicate.
        idCollision = error;
        continue;
      }
      if (!(error instanceof WrongExpectedRevision)) throw error;
      // Spread racing replicas apart a little so they do not collide again in lockstep.
      if (attempt < maxAttempts) await sleep(Math.random() * Math.min(50, 2 ** attempt));
    }
  }
  throw new AgoraError('conflict', `stream ${streamId} changed concurrently on each of ${maxAttempts} attempts to handle ${metadata.commandType}; retry`, {
    streamId,
    attempts: maxAttempts,
  });
}

async function loadStream<C extends Command, E extends DomainEvent, S>(store: EventStore, decider: Decider<C, E, S>, streamId: string, commandId: string): Promise<LoadedStream<S>> {
  let recorded: RecordedEvent[];
  try {
    recorded = await store.readStream(streamId);
  } catch (error) {
    if (error instanceof StreamNotFound) return { state: decider.initialState(), revision: -1, earlier: undefined };
    throw error;
  }
  let state = decider.initialState();
  // Stored events are trusted to be of the decider's event union: the store only holds what deciders produced.
  for (const e of recorded) state = decider.evolve(state, { type: e.type, data: e.data } as E);
  return { state, revision: recorded.at(-1)?.revision ?? -1, earlier: earlierResult(recorded, streamId, commandId) };
}

/** The result the first handling of `commandId` produced, rebuilt from its events in the stream. */
function earlierResult(recorded: readonly RecordedEvent[], streamId: string, commandId: string): CommandResult | undefined {
  const own = recorded.filter((e) => e.metadata['commandId'] === commandId);
  const last = own.at(-1);
  if (!last) return undefined;
  return { commandId, streamId, events: own.map((e) => e.type), revision: last.revision, position: last.position, duplicate: true };
}

/** The events to append, with deterministic ids and the command's metadata (undefined fields left out: metadata must be JSON). */
export function toEventData(events: readonly DomainEvent[], metadata: CommandMetadata): EventData[] {
  const common: Record<string, unknown> = {
    actor: metadata.actor,
    commandId: metadata.commandId,
    commandType: metadata.commandType,
    issuedAt: metadata.issuedAt,
  };
  if (metadata.signature !== undefined) common['signature'] = metadata.signature;
  if (metadata.correlationId !== undefined) common['correlationId'] = metadata.correlationId;
  if (metadata.causationId !== undefined) common['causationId'] = metadata.causationId;
  return events.map((e, index) => ({
    id: eventIdFor(metadata.commandId, index),
    type: e.type,
    data: e.data,
    metadata: index === 0 && metadata.payload !== undefined ? { ...common, commandPayload: metadata.payload } : { ...common },
  }));
}

/** The store refused an append because one of its event ids is already stored in another commit. */
function isIdCollision(error: unknown): error is InvalidEventData {
  return error instanceof InvalidEventData && /^events\[\d+\]\.id$/.test(error.path) && error.reason.includes('already stored');
}
