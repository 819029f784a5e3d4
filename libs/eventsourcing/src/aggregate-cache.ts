import { positiveInt, type CommandResult } from '@agora/contracts';
import type { Command, Decider, DomainEvent } from '@agora/decider';
import { LruMap } from './lru.js';

export const DEFAULT_AGGREGATE_CACHE_STREAMS = 10_000;
export const DEFAULT_RECENT_COMMANDS_PER_STREAM = 16;

/**
 * The first results of a stream's most recent commands, by commandId, the oldest first. Bounded:
 * beyond `limit` the oldest is dropped, so a stream that takes commands for months (an agent's) is
 * not kept with every command it ever took, and their signed payloads. Once one was dropped the
 * list is no longer `complete`: a command missing from it may still be in the stream, and
 * `handleCommand` finds it through its commandId's reservation and a read of the stream.
 */
export class RecentCommands {
  private readonly byId = new Map<string, CommandResult>();
  private dropped = false;

  constructor(readonly limit: number = Number.POSITIVE_INFINITY) {}

  /** Whether every command of the stream (up to the snapshots that share this list) is listed. */
  get complete(): boolean {
    return !this.dropped;
  }

  get size(): number {
    return this.byId.size;
  }

  get(commandId: string): CommandResult | undefined {
    return this.byId.get(commandId);
  }

  /** Lists (or updates, in place) a command's result, dropping the oldest beyond the limit. */
  set(commandId: string, result: CommandResult): void {
    this.byId.set(commandId, result);
    for (const oldest of this.byId.keys()) {
      if (this.byId.size <= this.limit) break;
      this.byId.delete(oldest);
      this.dropped = true;
    }
  }
}

/**
 * One stream as a command handler knows it: the decider's state folded up to `revision`, and the
 * first results of its most recent commands.
 *
 * Snapshots of one stream form a chain (each later one folds the events after the earlier one) and
 * share one `commands` list: a command listed there has its events in the stream, whatever revision
 * the snapshot at hand was taken at, so answering it as a duplicate is always right.
 */
export interface AggregateSnapshot<S> {
  readonly state: S;
  /** Revision of the last event folded into `state`; -1 when the stream had no events. */
  readonly revision: number;
  /**
   * By commandId: the result the command's first handling produced, with `duplicate: true`, for
   * the stream's most recent commands. Shared along the chain and only added to, by
   * `handleCommand`; treat it as read-only.
   */
  readonly commands: RecentCommands;
  /**
   * The `prevCommitHash` the stream's next commit carries (see `nextCommitLink` in
   * @agora/identity): the genesis value of an empty stream, else the hash of its last commit.
   */
  readonly nextLink: string;
}

export interface AggregateCacheOptions {
  /** Streams kept; the least recently used one is dropped beyond. Default 10,000. */
  maxStreams?: number;
  /** Commands whose results each kept stream lists (RecentCommands), the most recent ones. Default 16. */
  recentCommands?: number;
}

/**
 * Folded states of recently used streams of one decider, for `handleCommand` (its `cache` option):
 * a command on a stream kept here is decided on the kept state and appended at the kept revision,
 * with no read first. The cache is only ever a lower bound of the stream: `handleCommand` never
 * lets an answer rest on it unchecked (see there). Bounded: least recently used streams go first,
 * and each stream lists only its `recentCommands` most recent commands.
 *
 * One cache per decider (`handleCommand` refuses another decider's cache): a state is only
 * meaningful to the `evolve` that folded it. Deciders must not mutate the state they are given
 * (docs/decisions/0003-deciders-are-plain-functions.md: pure functions); the cache hands the same object to every command.
 */
export class AggregateCache<C extends Command, E extends DomainEvent, S> {
  readonly maxStreams: number;
  readonly recentCommands: number;
  private readonly streams: LruMap<string, AggregateSnapshot<S>>;

  constructor(
    readonly decider: Decider<C, E, S>,
    options: AggregateCacheOptions = {},
  ) {
    this.maxStreams = positiveInt(options.maxStreams ?? DEFAULT_AGGREGATE_CACHE_STREAMS, 'maxStreams');
    this.recentCommands = positiveInt(options.recentCommands ?? DEFAULT_RECENT_COMMANDS_PER_STREAM, 'recentCommands');
    this.streams = new LruMap(this.maxStreams);
  }

  /** Streams kept now. */
  get size(): number {
    return this.streams.size;
  }

  /** The latest snapshot kept for `streamId` (which becomes the most recently used), if any. */
  get(streamId: string): AggregateSnapshot<S> | undefined {
    return this.streams.get(streamId);
  }

  /** The latest snapshot kept for `streamId`, leaving the order alone (for tests and diagnostics). */
  peek(streamId: string): AggregateSnapshot<S> | undefined {
    return this.streams.peek(streamId);
  }

  /**
   * Keeps `snapshot` unless one at a later revision is kept already (calls on one stream may finish
   * out of order). A stream with no events is not kept: there is nothing to save on reading it.
   */
  keep(streamId: string, snapshot: AggregateSnapshot<S>): void {
    if (snapshot.revision < 0) return;
    const kept = this.streams.peek(streamId);
    if (kept && kept.revision > snapshot.revision) {
      this.streams.get(streamId);
      return;
    }
    this.streams.set(streamId, snapshot);
  }

  /** Drops what is kept of `streamId`: the next command on it reads the stream. */
  forget(streamId: string): void {
    this.streams.delete(streamId);
  }

  clear(): void {
    this.streams.clear();
  }
}
