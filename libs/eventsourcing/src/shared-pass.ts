import { backoffDelay, caughtUpSignal, sleep, type EventStore, type Position, type RecordedEvent, type SubscribeOptions, type Subscription } from '@agora/eventstore';

/**
 * Events a pass reads before the members it has not reached yet (their position is further on) stop
 * waiting for it and go on alone: a member far behind (a consumer that lagged under load, a new
 * version of a read model filled from the beginning) then holds back no member near the log's end.
 */
export const DEFAULT_PASS_LEAD = 2_000;

export interface SharedPassOptions {
  /**
   * How long the pass waits, after a subscription arrives, for more to join before it starts
   * reading (default 250 ms; each new arrival restarts the wait). Only speed depends on it: a
   * subscription that arrives once the pass has gone past its start reads on its own. The services
   * of a process start together, but each first reads what it needs (its settings, its keys) and
   * subscribes when that is done, up to a few hundred milliseconds apart on a busy machine: at 25 ms,
   * two of the standalone's read models read a 20,000-event log on their own, beside the pass.
   */
  gatherMs?: number;
  /** See DEFAULT_PASS_LEAD. */
  lead?: number;
}

/** A subscription riding the shared pass, until it goes on alone (live, after a failure, or when it came too late). */
interface Member {
  options: SubscribeOptions;
  /** Last event handled (or where it starts). */
  position: Position | undefined;
  /** Set once it handled an event of the pass: every later event of the pass is after its position (no comparing). */
  inStep: boolean;
  /** Its own subscription, once it left the pass. */
  own: Subscription | undefined;
  stopped: boolean;
  /** The handler call in progress inside the pass, for stop() to wait for. */
  inFlight: Promise<void> | undefined;
  resolveCaughtUp(): void;
  rejectCaughtUp(error: unknown): void;
}

/**
 * `store` with catch-up shared: subscriptions made around the same time (the read models,
 * consumers and schedulers of a process at start) read the log in ONE pass, each event read and
 * decoded once and handed to every subscription whose position is before it, in order; each then
 * goes on live on its own subscription of `store`, after its last event. A rebuild of N read models
 * costs one read of the log instead of N. The pass starts at the earliest member's position; members
 * it has not reached after `lead` events go on alone from theirs, so one far behind (a reactor that
 * lagged under load, a read model's new version) holds back none near the log's end.
 *
 * Each subscription keeps the semantics of `store.subscribe`: events in global order, one at a
 * time, strictly after `after`; `caughtUp` once the events that existed at start are handled;
 * `position`; `stop()` waits for the handler in progress. A handler that throws inside the pass
 * leaves it: `onError` is told, and after the backoff its own subscription delivers the same event
 * again (at least once, retried until it succeeds), so one failing consumer never holds the others
 * back. A read failure of the pass sends every subscription on alone, each resuming after its own
 * position with its own retries. Everything else (appends, reads) goes to `store` untouched.
 */
export function sharingCatchUp(store: EventStore, options: SharedPassOptions = {}): EventStore {
  const pass = new SharedPass(store, options.gatherMs ?? 250, options.lead ?? DEFAULT_PASS_LEAD);
  return {
    get kind() {
      return store.kind;
    },
    append: (streamId, events, expectedRevision) => store.append(streamId, events, expectedRevision),
    ...(store.appendMany ? { appendMany: store.appendMany.bind(store) } : {}),
    readStream: (streamId, readOptions) => store.readStream(streamId, readOptions),
    readAll: (readOptions) => store.readAll(readOptions),
    headPosition: () => store.headPosition(),
    comparePositions: (a, b) => store.comparePositions(a, b),
    subscribe: (subscribeOptions) => pass.subscribe(subscribeOptions),
    close: async () => {
      await pass.close();
      await store.close();
    },
  };
}

class SharedPass {
  /** Members waiting for the next pass or riding the current one. */
  private members: Member[] = [];
  /** idle; gathering (waiting `gatherMs` for more members); reading, from `from`, `at` the last event handed out. */
  private state: { kind: 'idle' } | { kind: 'gathering'; timer: NodeJS.Timeout } | { kind: 'reading'; from: Position | undefined; at: Position | undefined } = { kind: 'idle' };
  private running: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly store: EventStore,
    private readonly gatherMs: number,
    private readonly lead: number,
  ) {}

  subscribe(options: SubscribeOptions): Subscription {
    // Same refusals as the store (a malformed position), at the same moment.
    if (options.after !== undefined) this.store.comparePositions(options.after, options.after);
    if (this.closed || !this.canJoin(options.after)) return this.store.subscribe(options);
    const caughtUp = caughtUpSignal();
    const member: Member = { options, position: options.after, inStep: false, own: undefined, stopped: false, inFlight: undefined, resolveCaughtUp: caughtUp.resolve, rejectCaughtUp: caughtUp.reject };
    this.members.push(member);
    if (this.state.kind !== 'reading') this.gather();
    return {
      caughtUp: caughtUp.promise,
      get position() {
        return member.own?.position ?? member.position;
      },
      stop: async () => {
        member.stopped = true;
        this.members = this.members.filter((m) => m !== member);
        await member.inFlight;
        await member.own?.stop();
        member.resolveCaughtUp();
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.state.kind === 'gathering') clearTimeout(this.state.timer);
    await this.running;
  }

  /** A subscription can ride a pass that has not yet gone past where it starts. */
  private canJoin(after: Position | undefined): boolean {
    if (this.state.kind !== 'reading') return true;
    const reached = this.state.at ?? this.state.from;
    return reached === undefined || (after !== undefined && this.store.comparePositions(after, reached) >= 0);
  }

  private gather(): void {
    if (this.state.kind === 'gathering') clearTimeout(this.state.timer);
    const timer = setTimeout(() => {
      this.running = this.running.then(() => this.read());
    }, this.gatherMs);
    this.state = { kind: 'gathering', timer };
  }

  /** One pass: from the earliest member's position to the end of the log, then each member goes on alone. */
  private async read(): Promise<void> {
    let start: Position | undefined;
    for (const [index, member] of this.members.entries()) {
      if (member.position === undefined) {
        start = undefined;
        break;
      }
      if (index === 0 || (start !== undefined && this.store.comparePositions(member.position, start) < 0)) start = member.position;
    }
    this.state = { kind: 'reading', from: start, at: undefined };
    try {
      let read = 0;
      for await (const event of this.store.readAll(start === undefined ? {} : { after: start })) {
        if (this.members.length === 0 || this.closed) break;
        this.state = { kind: 'reading', from: start, at: event.position };
        if (++read === this.lead) this.releaseAhead(event);
        // A member that fails leaves `this.members` (a new array): the loop goes on over the members the event started with.
        const members = this.members;
        for (let i = 0; i < members.length; i++) {
          const handling = this.deliver(members[i]!, event);
          if (handling) await handling;
        }
      }
    } catch (error) {
      // The pass could not read on: each member resumes alone after its own position, with its own retries.
      for (const member of this.members) member.options.onError?.(error, { attempt: 1 });
    }
    const members = this.members;
    this.members = [];
    this.state = { kind: 'idle' };
    // Closing the store ends the members like the store's own subscriptions: stopped, caughtUp resolved.
    for (const member of members) {
      if (this.closed) member.resolveCaughtUp();
      else this.goAlone(member, 0);
    }
  }

  /** The members whose position is still after `event` go on alone from it: the pass is far behind them. */
  private releaseAhead(event: RecordedEvent): void {
    const ahead = this.members.filter((m) => !m.inStep && m.position !== undefined && this.store.comparePositions(m.position, event.position) > 0);
    if (ahead.length === 0) return;
    this.members = this.members.filter((m) => !ahead.includes(m));
    for (const member of ahead) this.goAlone(member, 0);
  }

  /** Hands `event` to `member` if it is after its position; a promise only when the handler returned one (most projections fold synchronously). */
  private deliver(member: Member, event: RecordedEvent): Promise<void> | undefined {
    if (member.stopped) return undefined;
    if (!member.inStep) {
      if (member.position !== undefined && this.store.comparePositions(event.position, member.position) <= 0) return undefined;
      member.inStep = true;
    }
    let result: Promise<void> | void;
    try {
      result = member.options.handler(event);
    } catch (error) {
      this.leave(member, event, error);
      return undefined;
    }
    if (!(result instanceof Promise)) {
      member.position = event.position;
      return undefined;
    }
    const handling = result.then(
      () => {
        member.position = event.position;
      },
      (error: unknown) => this.leave(member, event, error),
    );
    member.inFlight = handling;
    return handling.finally(() => (member.inFlight = undefined));
  }

  /** A handler failed inside the pass: `member` leaves it, and its own subscription delivers the same event again, after the backoff. */
  private leave(member: Member, event: RecordedEvent, error: unknown): void {
    this.members = this.members.filter((m) => m !== member);
    member.options.onError?.(error, { event, attempt: 1 });
    this.goAlone(member, backoffDelay(1, member.options.retry));
  }

  /** Continues `member` on its own subscription of the store, after its position (live, or retrying). */
  private goAlone(member: Member, delayMs: number): void {
    void (async () => {
      if (delayMs > 0) await sleep(delayMs);
      if (member.stopped) return;
      try {
        member.own = this.store.subscribe({ ...member.options, ...(member.position === undefined ? {} : { after: member.position }) });
      } catch (error) {
        member.rejectCaughtUp(error);
        return;
      }
      member.own.caughtUp.then(member.resolveCaughtUp, member.rejectCaughtUp);
    })();
  }
}
