import { positiveInt, type CommandResult } from '@agora/contracts';
import type { Command, Decider, DomainEvent } from '@agora/decider';
import { LruMap } from './lru.js';

export const DEFAULT_AGGREGATE_CACHE_STREAMS = 10_000;

/**
 * One stream as a command handler knows it: the decider's state folded up to `revision`, and the
 * first result of each command whose events are in the stream.
 *
 * Snapshots of one stream form a chain (each later one folds the events after the earlier one) and
 * share one `commands` map, which only ever grows: a command listed there has its events in the
 * stream, whatever revision the snapshot at hand was taken at, so answering it as a duplicate is
 * always right.
 */
export interface AggregateSnapshot<S> {
  readonly state: S;
  /** Revision of the last event folded into `state`; -1 when the stream had no events. */
  readonly revision: number;
  /**
   * By commandId: the result the command's first handling produced, with `duplicate: true`. Shared
   * along the chain and only added to, by `handleCommand`; treat it as read-only.
   */
  readonly commands: Map<string, CommandResult>;
  /**
   * The `prevCommitHash` the stream's next commit carries (see `nextCommitLink` in
   * @agora/identity): the genesis value of an empty stream, else the hash of its last commit.
   */
  readonly nextLink: string;
}

export interface AggregateCacheOptions {
  /** Streams kept; the least recently used one is dropped beyond. Default 10,000. */
  maxStreams?: number;
}

/**
 * Folded states of recently used streams of one decider, for `handleCommand` (its `cache` option):
 * a command on a stream kept here is decided on the kept state and appended at the kept revision,
 * with no read first. The cache is only ever a lower bound of the stream: `handleCommand` never
 * lets an answer rest on it unchecked (see there). Bounded: least recently used streams go first.
 *
 * One cache per decider (`handleCommand` refuses another decider's cache): a state is only
 * meaningful to the `evolve` that folded it. Deciders must not mutate the state they are given
 * (docs/decisions/0003-deciders-are-plain-functions.md: pure functions); the cache hands the same object to every command.
 */
export class AggregateCache<C extends Command, E extends DomainEvent, S> {
  readonly maxStreams: number;
  private readonly streams: LruMap<string, AggregateSnapshot<S>>;

  constructor(
    readonly decider: Decider<C, E, S>,
    options: AggregateCacheOptions = {},
  ) {
    this.maxStreams = positiveInt(options.maxStreams ?? DEFAULT_AGGREGATE_CACHE_STREAMS, 'maxStreams');
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
