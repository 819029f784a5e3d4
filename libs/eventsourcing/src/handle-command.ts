import { AgoraError, categoryOf, eventByType, positiveInt, SCHEMA_VERSION_FIELD, type CommandResult } from '@agora/contracts';
import { rulesOf, type Command, type Decider, type DomainEvent } from '@agora/decider';
import { InvalidEventData, StoreUnavailable, StreamNotFound, WrongExpectedRevision, sleep, type AppendResult, type EventData, type EventStore, type RecordedEvent } from '@agora/eventstore';
import { RecentCommands, type AggregateCache, type AggregateSnapshot } from './aggregate-cache.js';
import { assertReservedFor, assertSameCommand, checkCommandId, COMMAND_ID_RESERVED, commandIdStream, reservationAppend, reserveCommandId, type CommandIdentity } from './command-ids.js';
import { eventIdFor } from './ids.js';
import { currentTraceparent, inSpan, inSpanSync, tracingOn } from '@agora/tracing';
import { COMMIT_CHAIN_FIELD, commitHash, genesisCommitHash, lastCommitOf, type ChainEvent } from '@agora/identity';

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
  /** The W3C trace context of the append, when tracing is on (set by handleCommand): a reaction or deadline the events cause continues the trace. */
  traceparent?: string;
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
 * The command-handling kit of docs/decisions/0003-deciders-are-plain-functions.md: load the stream, fold, decide, append with the
 * expected revision, retry on conflict.
 *
 * - One commandId is one command across every stream and type (command-ids.ts): a command
 *   reserves its id in the store with its first append, in the same atomic append where the store
 *   has one (`appendMany`: a conflict on either stream writes neither), else in an append of its
 *   own just before; an id held by another command (another stream, type, actor, or signed
 *   payload) is refused with `command_id_reused`, nothing written.
 * - A commandId whose events are already in the stream returns the first result with
 *   `duplicate: true` and writes nothing (when type, actor and payload match, checked against the
 *   stream's own record without a read). (A command that was satisfied with `[]` left no trace;
 *   repeating it decides again, and the decider answers `[]` again.)
 * - Event ids are derived from the commandId (eventIdFor), so two replicas racing on the same
 *   command cannot both write: the store refuses or absorbs the second copy. The store says which
 *   append stored the commit (AppendResult.alreadyStored): that one answers `duplicate: false`,
 *   every copy `duplicate: true` with the same revision; the events are stored once.
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
 *   read, and the command is answered from them as a duplicate (also when the first copy sits
 *   right after the kept revision: the store says it absorbed ours);
 * - a decision that appends nothing (a refusal, or `[]` for "already satisfied") is not checked by
 *   any append, so when it was made on a kept state the stream is read from the kept revision on
 *   first: when it moved, the command is decided again on the new state, and only an answer made
 *   on the stream as it was read is final. A refusal on stale state ("agent not registered" just
 *   after another replica registered it) would otherwise be wrong, and final. Refusals and no-ops
 *   are rare on the hot path, and that read is cheap when nothing is new (one request on JetStream).
 * The events of a successful append are folded into the cache as decided: the store only takes
 * plain JSON, so they are what a read would return.
 *
 * Duplicate detection looks through the stream's most recent commands, which a kept snapshot
 * lists (RecentCommands). A command older than those is found through its id's reservation,
 * which every path that could answer it anew meets: the atomic append or the reservation append
 * is refused or absorbed, and a refusal or a no-op reads the reservation when the list is not
 * complete. The stream is then read whole for its first result, once.
 */
export async function handleCommand<C extends Command, E extends DomainEvent, S>(options: HandleCommandOptions<C, E, S>): Promise<CommandResult> {
  const { streamId, command, metadata } = options;
  const maxAttempts = positiveInt(options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS, 'maxAttempts');
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
  // One commandId, one command across every stream and type (command-ids.ts): reserved before the first append.
  const identity: CommandIdentity = { commandId, streamId, commandType: metadata.commandType, actor: metadata.actor, ...(metadata.payload === undefined ? {} : { payload: metadata.payload }) };
  let reserved = false;
  /** Whether this command held its id before this call (a retry, or a copy): then it may be in the stream further back than `view` lists; undefined until known. */
  let heldBefore: boolean | undefined;
  let searched = false;
  /**
   * The first result of this command when it is in the stream but older than the commands `view`
   * lists (RecentCommands): looked for only when its id was reserved before this call, by a read of
   * the whole stream, once. Rare: a retry that comes after many other commands on its stream.
   */
  const older = async (): Promise<CommandResult | undefined> => {
    if (searched || view.commands.complete) return undefined;
    heldBefore ??= await checkCommandId(store, identity);
    if (!heldBefore) return undefined;
    searched = true;
    return searchStream(options, identity);
  };
  /** When `view` is a kept one not yet checked: reads what the stream took since, and says whether it moved (then `view` has it). */
  const moved = async (): Promise<boolean> => {
    if (checked) return false;
    const current = await catchUp(options, view);
    checked = true;
    if (current.revision === view.revision) return false;
    view = current;
    return true;
  };
  for (let attempt = 1; ; ) {
    const earlier = view.commands.get(commandId);
    if (earlier) {
      // Found in this stream: the log's own record of the command says whether it is this one (no read).
      const recorded = firstHandling.get(earlier);
      if (recorded) assertSameCommand(identity, recorded);
      else if (!reserved) await checkCommandId(store, identity);
      return { ...earlier, events: [...earlier.events] };
    }
    if (idCollision) {
      // Our ids were taken, yet the stream (read since) lists no event of this command: it is
      // further back in the stream, or the commandId was used for another stream. Retrying cannot help.
      heldBefore = true;
      const first = await older();
      if (first) return first;
      throw idCollision;
    }

    let events: E[];
    try {
      events = tracingOn() ? decideTraced(decider, command, view.state) : decider.decide(command, view.state);
    } catch (error) {
      // Refused on a kept state: final only if the stream has not moved since.
      if (await moved()) continue;
      // A retry of a command handled long ago is answered with its first result, not refused now.
      const first = await older();
      if (first) return first;
      throw error;
    }
    if (events.length === 0) {
      // "Already satisfied" on a kept state: final only if the stream has not moved since.
      if (await moved()) continue;
      if (!reserved) heldBefore = await checkCommandId(store, identity);
      const first = await older();
      if (first) return first;
      return { commandId, streamId, events: [], revision: view.revision, duplicate: false };
    }

    // The reservation goes with the events in one atomic append where the store has one; else it is appended first.
    const reservationMetadata = () => toEventData([{ type: COMMAND_ID_RESERVED, data: {} }], metadata, genesisCommitHash(commandIdStream(commandId)))[0]!.metadata ?? {};
    const reservation = !reserved && store.appendMany ? reservationAppend(identity, reservationMetadata()) : undefined;
    if (!reserved && !reservation) {
      heldBefore = (await reserveCommandId(store, identity, reservationMetadata())) === 'held';
      reserved = true;
      const first = await older();
      if (first) return first;
    }

    let appended: AppendResult;
    let toAppend: EventData[] = [];
    const expected = view.revision < 0 ? 'no_stream' : view.revision;
    const write = async (): Promise<AppendResult> => {
      if (!reservation) return store.append(streamId, toAppend, expected);
      const [, result] = await store.appendMany!([reservation, { streamId, events: toAppend, expectedRevision: expected }]);
      return result!;
    };
    try {
      if (tracingOn()) {
        const link = view.nextLink;
        appended = await inSpan('agora.append', { attributes: { 'agora.stream.category': categoryOf(streamId), 'agora.stream.id': streamId, 'agora.events': events.length, 'agora.append.attempt': attempt } }, async (span) => {
          // The append span's context rides in the events' metadata (traceparent), for what they cause.
          toAppend = toEventData(events, { ...metadata, ...withTraceparent() }, link, command);
          try {
            const result = await write();
            span?.setAttribute('agora.append.revision', result.nextExpectedRevision);
            return result;
          } catch (error) {
            span?.setAttribute('agora.outcome', error instanceof WrongExpectedRevision ? 'conflict' : isIdCollision(error) ? 'ids_taken' : 'error');
            throw error;
          }
        });
      } else {
        toAppend = toEventData(events, metadata, view.nextLink, command);
        appended = await write();
      }
      if (reservation) reserved = true;
    } catch (error) {
      if (reservation && error instanceof WrongExpectedRevision && error.streamId === reservation.streamId) {
        // The id is reserved already (nothing of ours was written): by this same command (a copy
        // handled elsewhere, whose events the catch-up finds), or by another (refused).
        await assertReservedFor(store, identity);
        reserved = true;
        heldBefore = true;
        view = await catchUp(options, view);
        checked = true;
        if (!view.commands.get(commandId)) {
          const first = await older();
          if (first) return first;
        }
        continue;
      }
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
    if (!appended.alreadyStored && appended.nextExpectedRevision === view.revision + events.length) {
      cache?.keep(streamId, withOwnCommit(decider, view, events, result, commitHash(toAppend as ChainEvent[]), identity));
      return result;
    }
    // The store absorbed our append: a copy of this command (another replica's, or one racing
    // here) stored it first, decided on our state or, further on, on a later one. Only the append
    // that stored it answers `duplicate: false`; this one answers from the log.
    view = await catchUp(options, view);
    heldBefore = true;
    const first = view.commands.get(commandId) ?? (await older());
    if (first) return { ...first, events: [...first.events] };
    cache?.forget(streamId);
    return { ...result, duplicate: appended.alreadyStored === true };
  }
}

/** What each command found in a stream was (type, actor, signed payload), as its first event's metadata records it; keyed by its entry in `commands`. */
const firstHandling = new WeakMap<CommandResult, { commandType: string; actor: string; payload?: unknown }>();

/** The whole stream, folded from the initial state (kept in the cache). */
async function readWhole<C extends Command, E extends DomainEvent, S>(options: HandleCommandOptions<C, E, S>): Promise<AggregateSnapshot<S>> {
  const { store, decider, streamId, cache } = options;
  // Without a cache the snapshot lives for one call: it lists every command of the stream.
  const empty: AggregateSnapshot<S> = { state: decider.initialState(), revision: -1, commands: new RecentCommands(cache?.recentCommands), nextLink: genesisCommitHash(streamId) };
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
  for (const e of recorded) {
    state = decider.evolve(state, { type: e.type, data: e.data } as E);
    listCommandOf(base.commands, e);
  }
  // `recorded` starts and ends at commit boundaries (commits are appended and read whole).
  const nextLink = recorded.length === 0 ? base.nextLink : commitHash(lastCommitOf(recorded));
  return { state, revision: recorded.at(-1)?.revision ?? base.revision, commands: base.commands, nextLink };
}

/** Lists the command of `e` (added to its entry when the command has several events). */
function listCommandOf(commands: RecentCommands, e: RecordedEvent): void {
  const commandId = e.metadata['commandId'];
  if (typeof commandId !== 'string') return;
  const known = commands.get(commandId);
  // A snapshot further down the chain may have listed this event already.
  if (known && known.revision >= e.revision) return;
  const entry: CommandResult = { commandId, streamId: e.streamId, events: known ? [...known.events, e.type] : [e.type], revision: e.revision, position: e.position, duplicate: true };
  const recorded = known ? firstHandling.get(known) : handlingOf(e);
  if (recorded) firstHandling.set(entry, recorded);
  commands.set(commandId, entry);
}

/**
 * The first result of `identity`'s command in its stream, read whole (for a command older than the
 * ones a snapshot lists); undefined when none of its events is there. Refused with
 * `command_id_reused` when the stream's record of it is another command's.
 */
async function searchStream<C extends Command, E extends DomainEvent, S>(options: HandleCommandOptions<C, E, S>, identity: CommandIdentity): Promise<CommandResult | undefined> {
  const found = new RecentCommands();
  let recorded: RecordedEvent[];
  try {
    recorded = await options.store.readStream(options.streamId);
  } catch (error) {
    if (error instanceof StreamNotFound) return undefined;
    throw error;
  }
  for (const e of recorded) if (e.metadata['commandId'] === identity.commandId) listCommandOf(found, e);
  const first = found.get(identity.commandId);
  if (!first) return undefined;
  const handling = firstHandling.get(first);
  if (handling) assertSameCommand(identity, handling);
  return { ...first, events: [...first.events] };
}

function handlingOf(e: RecordedEvent): { commandType: string; actor: string; payload?: unknown } | undefined {
  const { commandType, actor, commandPayload } = e.metadata;
  if (typeof commandType !== 'string' || typeof actor !== 'string') return undefined;
  return { commandType, actor, ...(commandPayload === undefined ? {} : { payload: commandPayload }) };
}

/** `view` with the events this call just appended folded in, as `result` describes them. */
function withOwnCommit<C extends Command, E extends DomainEvent, S>(decider: Decider<C, E, S>, view: AggregateSnapshot<S>, events: readonly E[], result: CommandResult, nextLink: string, identity: CommandIdentity): AggregateSnapshot<S> {
  let state = view.state;
  for (const e of events) state = decider.evolve(state, e);
  const entry: CommandResult = { ...result, events: [...result.events], duplicate: true };
  firstHandling.set(entry, { commandType: identity.commandType, actor: identity.actor, ...(identity.payload === undefined ? {} : { payload: identity.payload }) });
  view.commands.set(result.commandId, entry);
  return { state, revision: result.revision, commands: view.commands, nextLink };
}

/**
 * What an audit needs to decide a command again exactly as it was decided: the context the decider
 * saw (the service clock, the actor's roles) and, when the decider's payload is not the signed one
 * (a service enriched it, or no envelope was signed), that payload. Kept in the metadata of the
 * first event of the commit, as `decision`.
 */
export interface RecordedDecision {
  now: string;
  actorRoles: string[];
  payload?: unknown;
  /** The rules it was decided under (RULES_VERSION of @agora/decider); absent in logs written before they were numbered: 1. */
  rules?: number;
}

/** The `decision` metadata of a command (see RecordedDecision). */
export function recordedDecision(command: Command, signedPayload: unknown): RecordedDecision {
  const decision: RecordedDecision = { now: command.context.now, actorRoles: [...command.context.actorRoles], rules: rulesOf(command.context) };
  if (signedPayload === undefined || JSON.stringify(signedPayload) !== JSON.stringify(command.payload)) decision.payload = command.payload;
  return decision;
}

/**
 * The events to append, with deterministic ids and the command's metadata (undefined fields left
 * out: metadata must be JSON), each carrying `prevCommitHash`: the link to the stream's previous
 * commit (`nextCommitLink` of @agora/identity), and `schemaVersion`: its type's version in the
 * contracts (docs/event-versions.md). With the decided `command`, the first event also records the
 * decision (RecordedDecision).
 */
export function toEventData(events: readonly DomainEvent[], metadata: CommandMetadata, prevCommitHash: string, command?: Command): EventData[] {
  const common: Record<string, unknown> = {
    [COMMIT_CHAIN_FIELD]: prevCommitHash,
    actor: metadata.actor,
    commandId: metadata.commandId,
    commandType: metadata.commandType,
    issuedAt: metadata.issuedAt,
  };
  if (metadata.signature !== undefined) common['signature'] = metadata.signature;
  if (metadata.correlationId !== undefined) common['correlationId'] = metadata.correlationId;
  if (metadata.causationId !== undefined) common['causationId'] = metadata.causationId;
  if (metadata.traceparent !== undefined) common['traceparent'] = metadata.traceparent;
  const first: Record<string, unknown> = { ...common };
  if (metadata.payload !== undefined) first['commandPayload'] = metadata.payload;
  if (command !== undefined) first['decision'] = recordedDecision(command, metadata.payload);
  return events.map((e, index) => {
    const version = eventByType(e.type)?.version;
    const own = index === 0 ? first : { ...common };
    return { id: eventIdFor(metadata.commandId, index), type: e.type, data: e.data, metadata: version === undefined ? own : { ...own, [SCHEMA_VERSION_FIELD]: version } };
  });
}

/**
 * The decider's call in a span `agora.decide`, with the events it decided (their count and types)
 * or the code it refused with (a refusal is the command's, not a fault: the span is not an error).
 */
function decideTraced<C extends Command, E extends DomainEvent, S>(decider: Decider<C, E, S>, command: C, state: S): E[] {
  const outcome = inSpanSync('agora.decide', { attributes: { 'agora.command.type': command.type } }, (span) => {
    try {
      const events = decider.decide(command, state);
      span?.setAttributes({ 'agora.events': events.length, 'agora.event.types': events.map((e) => e.type), 'agora.outcome': events.length > 0 ? 'ok' : 'unchanged' });
      return { events };
    } catch (error) {
      const code = typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : 'error';
      span?.setAttributes({ 'agora.outcome': code, 'agora.error.code': code });
      return { error };
    }
  });
  if ('error' in outcome) throw outcome.error;
  return outcome.events;
}

/** `{traceparent}` of the active span, or nothing. */
function withTraceparent(): { traceparent?: string } {
  const traceparent = currentTraceparent();
  return traceparent === undefined ? {} : { traceparent };
}

/** The store refused an append because one of its event ids is already stored in another commit. */
function isIdCollision(error: unknown): error is InvalidEventData {
  return error instanceof InvalidEventData && /^events\[\d+\]\.id$/.test(error.path) && error.reason.includes('already stored');
}
