import type { AppendNotifier } from '../catch-up.js';
import type { Position, RecordedEvent } from '../port.js';
import { AllPager, type AllReaderContext } from './all-reader.js';

/** Recent events the tail keeps for subscriptions a little behind it (about one page of each). */
const DEFAULT_CAPACITY = 4_096;

interface TailRead {
  /** The notifier's version when the read began (undefined while it waits for the one before): it sees every commit announced up to then. */
  startVersion: number | undefined;
  done: Promise<void>;
  settled: boolean;
}

/**
 * The live end of the log, read once for every subscription of one store that is there. Each
 * catch-up subscription reads history through its own consumer; once it is at the tail's end, or
 * among the recent events the tail keeps, its pages come from here: one pull consumer per store
 * instead of one per subscription, each commit fetched and decoded once per process however many
 * read models, reactors and schedulers follow the log (a registry replica has three).
 *
 * A page is the events strictly after `after`, in log order, as the subscription's own consumer
 * would have given them. A subscription at the end joins a read that began at or after the
 * notifier's version it holds (it took that version before asking) or that waits to begin, or else
 * queues one behind the read in progress: nothing announced before it asked is missed, as with its
 * own consumer, and however many subscriptions are woken, at most two reads are under way. `readPage` answers `undefined` when `after` is
 * neither among the recent events nor the tail's end, and when a read of the tail fails (the tail
 * is reset): the subscription then reads on its own consumer, with its own retries, until it gets
 * back here.
 */
export class SharedTail {
  private pager: AllPager | undefined;
  /** Events read by the tail, oldest first, contiguous in the log, ending at its end. */
  private recent: RecordedEvent[] = [];
  /** Number in the tail's sequence of `recent[0]`. */
  private base = 0;
  /** Number of each event in `recent`, and of the position just before `recent[0]` (the anchor: where the tail started, or the last event dropped). */
  private numbers = new Map<Position, number>();
  private anchor: Position | undefined;
  private reading: TailRead | undefined;
  private generation = 0;

  constructor(
    private readonly ctx: AllReaderContext,
    private readonly notifier: AppendNotifier,
    private readonly pageSize: number,
    private readonly capacity = DEFAULT_CAPACITY,
  ) {}

  /** The position of the tail's last event (or where it started); undefined when it has not started. */
  get end(): Position | undefined {
    return this.recent.at(-1)?.position ?? this.anchor;
  }

  /** Up to `maxCount` events after `after` when the tail can answer for it; undefined otherwise. */
  async readPage(after: Position | undefined, maxCount: number): Promise<RecordedEvent[] | undefined> {
    if (after === undefined || !this.pager) return undefined;
    const known = this.numbers.get(after);
    if (known === undefined) return undefined;
    if (known < this.base + this.recent.length - 1) return this.pageAfter(known, maxCount);
    // At the end: join a read that begins, or began, at this version or later; or ask for one after the one in progress.
    if (!this.canJoin(this.reading, this.notifier.version)) this.reading = this.queueRead(this.reading);
    try {
      await this.reading.done;
    } catch {
      // The tail failed or was reset: the subscription reads on its own (and meets any outage there, with its own retries).
      return undefined;
    }
    const number = this.numbers.get(after);
    return number === undefined ? undefined : this.pageAfter(number, maxCount);
  }

  /**
   * A subscription found the log's end at `position` through its own consumer: the tail starts
   * there if it has not started, or if it is behind and nobody is reading it (it then starts again
   * at `position`; subscriptions it leaves behind read on their own until they reach it).
   */
  offerEnd(position: Position, comparePositions: (a: Position, b: Position) => number): void {
    const end = this.end;
    if (end !== undefined && ((this.reading && !this.reading.settled) || comparePositions(end, position) >= 0)) return;
    this.reset();
    this.anchor = position;
    this.numbers.set(position, -1);
    this.base = 0;
    const generation = this.generation;
    // Opening the consumer takes a request: until it answers, pages come from each subscription's own consumer.
    const opening = AllPager.open(this.ctx, position).then(
      (pager) => {
        if (generation === this.generation) this.pager = pager;
        else pager.close();
      },
      () => {
        if (generation === this.generation) this.reset();
      },
    );
    const read: TailRead = { startVersion: -1, done: opening, settled: false };
    void opening.finally(() => (read.settled = true));
    this.reading = read;
  }

  close(): void {
    this.reset();
  }

  private pageAfter(number: number, maxCount: number): RecordedEvent[] {
    const from = number + 1 - this.base;
    return this.recent.slice(from, from + maxCount);
  }

  /**
   * A read in progress or waiting to begin, that sees what was announced up to `version`. Never a
   * read that has ended: a subscription polling after a wake-up whose commit was not yet stored
   * when the tail last read (the wake-up is the core NATS copy of the publish, which can arrive
   * before JetStream has stored it) must read again, or it would wait for the next append.
   */
  private canJoin(read: TailRead | undefined, version: number): read is TailRead {
    if (!read || read.settled) return false;
    return read.startVersion === undefined || read.startVersion >= version;
  }

  private queueRead(previous: TailRead | undefined): TailRead {
    const generation = this.generation;
    const read: TailRead = { startVersion: undefined, done: Promise.resolve(), settled: false };
    read.done = (previous?.done ?? Promise.resolve())
      .catch(() => undefined)
      .then(async () => {
        try {
          read.startVersion = this.notifier.version;
          if (generation !== this.generation || !this.pager) throw new Error('the shared tail was reset');
          if (!this.pager.usable) {
            const end = this.end;
            this.pager.close();
            this.pager = await AllPager.open(this.ctx, end);
          }
          const page = await this.pager.next(this.pageSize);
          if (generation === this.generation) this.add(page);
        } catch (error) {
          if (generation === this.generation) this.reset();
          throw error;
        } finally {
          read.settled = true;
        }
      });
    read.done.catch(() => undefined);
    return read;
  }

  private add(page: readonly RecordedEvent[]): void {
    for (const event of page) {
      this.numbers.set(event.position, this.base + this.recent.length);
      this.recent.push(event);
    }
    if (this.recent.length <= this.capacity) return;
    // Drop the older half; the last dropped event becomes the anchor.
    const drop = this.recent.length - (this.capacity >> 1);
    if (this.anchor !== undefined) this.numbers.delete(this.anchor);
    for (let i = 0; i < drop - 1; i++) this.numbers.delete(this.recent[i]!.position);
    this.anchor = this.recent[drop - 1]!.position;
    this.recent = this.recent.slice(drop);
    this.base += drop;
  }

  private reset(): void {
    this.generation++;
    this.pager?.close();
    this.pager = undefined;
    this.recent = [];
    this.numbers = new Map();
    this.anchor = undefined;
    this.base = 0;
    this.reading = undefined;
  }
}
