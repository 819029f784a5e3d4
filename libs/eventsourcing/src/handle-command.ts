import { AgoraError, type CommandResult } from '@agora/contracts';
import type { Command, Decider, DomainEvent } from '@agora/decider';
import { InvalidEventData, StoreUnavailable, StreamNotFound, WrongExpectedRevision, sleep, type AppendResult, type EventData, type EventStore, type RecordedEvent } from '@agora/eventstore';
import type { AggregateCache, AggregateSnapshot } from './aggregate-cache.js';
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
  /**
   * Folded states of recently used streams, kept between commands (opt-in; `deciderHandler` uses
   * one). A command on a kept stream is decided on the kept state and appended at the kept
   * revision without reading the stream first; see `handleCommand` for why that stays correct.
   * Must be a cache of this `decider`.
   */
  cache?: AggregateCache<C, E, S>;
}

export const DEFAULT_MAX_ATTEMPTS = 5;

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
 * - After a conflict only the events appended since are read (`fromRevision`), not the stream again.
 *
 * With a `cache`, a kept stream is not read before deciding. The kept state may be stale (another
 * process appended since), never wrong: it is the stream up to a revision. So:
 * - a decision that appends is checked by the store, which refuses it unless the stream is still
 *   at the kept revision (optimistic concurrency): nothing is ever appended on a state older than
 *   the stream. On that refusal the new events are read, folded, and the command decided again;
 * - a repeated commandId whose first handling happened elsewhere appends nothing either: the store
 *   refuses the copy decided on the kept state (conflict, or ids taken), or absorbs it (a commit
 *   whose event ids it holds, e.g. JetStream within its dedup window) and answers with the first
 *   copy's revision, which is not the one ours would have got. Either way the new events are
 *   read, and the command is answered from them as a duplicate. The exception: the first copy
 *   sits right after the kept revision, so it was decided on the same state, and the answer
 *   cannot be told from a fresh append: the revision and position are the first copy's, with
 *   `duplicate: false` as in a race (see above), and the cache folds the events decided here,
 *   which differ from the stored ones only in what they take from the context (`now`, roles);
 * - a decision that appends nothing (a refusal, or `[]` for "already satisfied") is not checked by
 *   any append, so when it was made on a kept state the stream is read from the kept revision on
 *   first: when it moved, the command is decided again on the new state, and only an answer made
 *   on the stream as it was read is final. A refusal on stale state ("agent not registered" just
 *   after another replica registered it) would otherwise be wrong, and final. Refusals and no-ops
 *   are rare on the hot path, and that read is cheap when nothing is new (one request on JetStream).
 * The events of a successful append are folded into the cache as decided: the store only takes
 * plain JSON, so they are what a read would return.
 *
 * Duplicate detection looks through the aggregate's stream: fine for aggregates, which stay short.
 */
export async function handleCommand<C extends Command, E extends DomainEvent, S>(options: HandleCommandOptions<C, E, S>): Promise<CommandResult> {
  const { streamId, command, metadata } = options;
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1) throw new RangeError(`maxAttempts must be a positive integer, got ${String(maxAttempts)}`);
  if (command.context.commandId !== metadata.commandId) {
    // Event ids come from metadata.commandId while decide sees context.commandId: they must be one id.
    throw new TypeError(`command.context.commandId ${command.context.commandId} differs from metadata.commandId ${metadata.commandId}`);
  }
  if (options.cache && options.cache.decider !== options.decider) throw new TypeError(`the aggregate cache passed to handle ${metadata.commandType} on ${streamId} belongs to another decider`);
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
  const { store, decider, streamId, command, metadata, cache } = options;
  const { commandId } = metadata;
  const kept = cache?.get(streamId);
  let view = kept ?? (await readWhole(options));
  /** Whether `view` holds every event the stream had when this call last read it (a kept view may lack some). */
  let checked = kept === undefined;
  let idCollision: InvalidEventData | undefined;
  for (let attempt = 1; ; ) {
    const earlier = view.commands.get(commandId);
    if (earlier) return { ...earlier, events: [...earlier.events] };
    // Our ids were taken, yet the stream (read since) holds no event of this command: the
    // commandId was used for another stream. Retrying cannot help.
    if (idCollision) throw idCollision;

    let events: E[];
    try {
      events = decider.decide(command, view.state);
    } catch (error) {
      if (checked) throw error;
      // Refused on a kept state: final only if the stream has not moved since.
      const current = await catchUp(options, view);
      checked = true;
      if (current.revision === view.revision) throw error;
      view = current;
      continue;
    }
    if (events.length === 0) {
      if (!checked) {
        // "Already satisfied" on a kept state: final only if the stream has not moved since.
        const current = await catchUp(options, view);
        checked = true;
        if (current.revision !== view.revision) {
          view = current;
          continue;
        }
      }
      return { commandId, streamId, events: [], revision: view.revision, duplicate: false };
    }

    let appended: AppendResult;
    try {
      appended = await store.append(streamId, toEventData(events, metadata), view.revision < 0 ? 'no_stream' : view.revision);
    } catch (error) {
      if (isIdCollision(error)) {
        // Another replica stored this command first with a different number of events (it saw an
        // older state). The catch-up finds its events and answers as a duplicate.
        idCollision = error;
      } else if (error instanceof WrongExpectedRevision) {
        if (attempt >= maxAttempts) {
          throw new AgoraError('conflict', `stream ${streamId} changed concurrently on each of ${maxAttempts} attempts to handle ${metadata.commandType}; retry`, {
            streamId,
            attempts: maxAttempts,
          });
        }
        // Spread racing replicas apart a little so they do not collide again in lockstep.
        await sleep(Math.random() * Math.min(50, 2 ** attempt));
      } else {
        throw error;
      }
      attempt++;
      view = await catchUp(options, view);
      checked = true;
      continue;
    }

    const result: CommandResult = { commandId, streamId, events: events.map((e) => e.type), revision: appended.nextExpectedRevision, position: appended.position, duplicate: false };
    if (appended.nextExpectedRevision === view.revision + events.length) {
      cache?.keep(streamId, withOwnCommit(decider, view, events, result));
      return result;
    }
    // Appended at the expected revision, these events would have got exactly the revisions after
    // it: the store answered for a copy of this command stored earlier and further on (it absorbs
    // a commit whose ids it holds), decided on a later state than ours. Answer from the log.
    const first = (await catchUp(options, view)).commands.get(commandId);
    if (first) return { ...first, events: [...first.events] };
    cache?.forget(streamId);
    return result;
  }
}

/** The whole stream, folded from the initial state (kept in the cache). */
async function readWhole<C extends Command, E extends DomainEvent, S>(options: HandleCommandOptions<C, E, S>): Promise<AggregateSnapshot<S>> {
  const { store, decider, streamId, cache } = options;
  const empty: AggregateSnapshot<S> = { state: decider.initialState(), revision: -1, commands: new Map() };
  let recorded: RecordedEvent[];
  try {
    recorded = await store.readStream(streamId);
  } catch (error) {
    if (error instanceof StreamNotFound) return empty;
    throw error;
  }
  const snapshot = folded(decider, empty, recorded);
  cache?.keep(streamId, snapshot);
  return snapshot;
}

/** `view` with the events appended after it, read from the store (kept in the cache). */
async function catchUp<C extends Command, E extends DomainEvent, S>(options: HandleCommandOptions<C, E, S>, view: AggregateSnapshot<S>): Promise<AggregateSnapshot<S>> {
  const { store, decider, streamId, cache } = options;
  let recorded: RecordedEvent[];
  try {
    recorded = await store.readStream(streamId, { fromRevision: view.revision + 1 });
  } catch (error) {
    if (error instanceof StreamNotFound && view.revision < 0) return view;
    throw error;
  }
  // Revisions are consecutive and never rewritten, so this cannot happen; if the store says
  // otherwise, trust it over what we folded.
  if (recorded.length > 0 && recorded[0]!.revision !== view.revision + 1) {
    cache?.forget(streamId);
    return readWhole(options);
  }
  if (recorded.length === 0) return view;
  const snapshot = folded(decider, view, recorded);
  cache?.keep(streamId, snapshot);
  return snapshot;
}

/**
 * `base` with `recorded` (the events right after it, in revision order) folded in, and their
 * commands added to the commands map it shares with `base`. Stored events are trusted to be of the
 * decider's event union: the store only holds what deciders produced.
 */
function folded<C extends Command, E extends DomainEvent, S>(decider: Decider<C, E, S>, base: AggregateSnapshot<S>, recorded: readonly RecordedEvent[]): AggregateSnapshot<S> {
  let state = base.state;
  const { commands } = base;
  for (const e of recorded) {
    state = decider.evolve(state, { type: e.type, data: e.data } as E);
    const commandId = e.metadata['commandId'];
    if (typeof commandId !== 'string') continue;
    const known = commands.get(commandId);
    // A snapshot further down the chain may have listed this event already.
    if (known && known.revision >= e.revision) continue;
    commands.set(commandId, { commandId, streamId: e.streamId, events: known ? [...known.events, e.type] : [e.type], revision: e.revision, position: e.position, duplicate: true });
  }
  return { state, revision: recorded.at(-1)?.revision ?? base.revision, commands };
}

/** `view` with the events this call just appended folded in, as `result` describes them. */
function withOwnCommit<C extends Command, E extends DomainEvent, S>(decider: Decider<C, E, S>, view: AggregateSnapshot<S>, events: readonly E[], result: CommandResult): AggregateSnapshot<S> {
  let state = view.state;
  for (const e of events) state = decider.evolve(state, e);
  view.commands.set(result.commandId, { ...result, events: [...result.events], duplicate: true });
  return { state, revision: result.revision, commands: view.commands };
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
