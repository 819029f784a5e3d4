/** What an append needs to know about a stream: its last commit. */
export interface StreamState {
  /** Revision of the last event, -1 when the stream has no events. */
  lastRevision: number;
  /** Stream sequence of the subject's last message, 0 when there is none (what JetStream expects then). */
  lastSeq: number;
  /** Index of the last event within the last commit. */
  lastIndex: number;
  /** Message id of the last commit, when known. */
  commitId: string | undefined;
}

/** An expected sequence no subject can have: a publish with it is refused unless it is a duplicate. */
export const IMPOSSIBLE_SEQ = Number.MAX_SAFE_INTEGER;

export const NEW_STREAM: StreamState = { lastRevision: -1, lastSeq: 0, lastIndex: -1, commitId: undefined };

/**
 * Last known state of recently used streams, so that an append to a stream this process wrote
 * (or read) last needs no read first. Only a hint: the append states the sequence it expects
 * and JetStream refuses it when the hint is stale. Bounded by generations: when the current
 * map is full it becomes the old one and the previous old one is dropped (evicting one entry
 * at a time from a Map's front costs a walk over the holes that deletions leave there).
 */
export class StreamStateCache {
  private current = new Map<string, StreamState>();
  private previous = new Map<string, StreamState>();

  /** Keeps at least the last `generationSize` streams set, at most twice that. */
  constructor(private readonly generationSize: number) {}

  get(streamId: string): StreamState | undefined {
    return this.current.get(streamId) ?? this.previous.get(streamId);
  }

  /** Records a state unless a newer one is already known (a read may finish after a later append). */
  set(streamId: string, state: StreamState): void {
    const known = this.get(streamId);
    if (known && known.lastSeq > state.lastSeq) return;
    this.current.set(streamId, state);
    if (this.current.size >= this.generationSize) {
      this.previous = this.current;
      this.current = new Map();
    }
  }

  delete(streamId: string): void {
    this.current.delete(streamId);
    this.previous.delete(streamId);
  }
}

/**
 * Runs tasks one at a time per key, in call order. Appends to one stream from this process go
 * one after another: each needs the sequence the previous one got, and running them at once
 * would only make all but one fail JetStream's check and retry.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key);
    const result = previous ? previous.then(task) : task();
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
