import { START, excludeSystemEvents, type AllStreamResolvedEvent, type AllStreamSubscription, type KurrentDBClient } from '@kurrent/kurrentdb-client';
import { backoffDelay, caughtUpSignal, sleep } from '../catch-up.js';
import { InvalidPosition } from '../errors.js';
import type { Position, RecordedEvent, SubscribeOptions, Subscription } from '../port.js';
import { comparePositions, decodePosition, isSystemEvent, isUsablePosition, toRecordedEvent, type ClientPosition } from './mapping.js';

/** Where the adapter reports trouble that no caller is waiting on (a dropped subscription); `console` fits. */
export interface KurrentDbLogger {
  warn(message: string, ...meta: unknown[]): void;
}

const ABORTED: unique symbol = Symbol('aborted');

/** Settles like `promise`, or with ABORTED as soon as `signal` aborts (so stop() never waits on the network). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.resolve(ABORTED);
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

export interface KurrentDbSubscriptionDeps {
  client: KurrentDBClient;
  logger: KurrentDbLogger;
  /** Position of the last non-system event in $all now, or undefined when there is none. */
  headPosition(): Promise<ClientPosition | undefined>;
  /** Throws InvalidPosition unless `position` is one of the store's (StoreUnavailable when it cannot tell). */
  checkPosition(position: ClientPosition): Promise<void>;
  /** Told when the server answered a subscription (caught up, or sent an event). */
  onAnswer?(): void;
}

/**
 * A catch-up subscription over `subscribeToAll`, one event at a time.
 *
 * - The client's subscription is a Readable: we pull one event, await the handler, then pull the
 *   next, so back-pressure reaches the server and nothing runs concurrently.
 * - A drop (the stream errors or ends) is retried with backoff by subscribing again from the last
 *   position we processed; positions at or before it are skipped, so nothing is delivered twice.
 * - `caughtUp` resolves when we have processed the $all head read at start (works on every server
 *   version), or when the server said caught-up and every event it sent before that is handled.
 *   It rejects with InvalidPosition, and the subscription ends, when `after` is not a position of
 *   the store (the server would fail every resubscription from it).
 */
export function kurrentDbSubscription(deps: KurrentDbSubscriptionDeps, options: SubscribeOptions): Subscription {
  const { client, logger } = deps;
  const abort = new AbortController();
  const { signal } = abort;
  const name = options.name ?? 'subscription';
  /** Last position processed, including system events we skipped: where a resubscription starts. */
  let cursor: ClientPosition | undefined = options.after === undefined ? undefined : decodePosition(options.after);
  /** Last position handed to the handler successfully: what callers checkpoint. */
  let position: Position | undefined = options.after;
  let current: AllStreamSubscription | undefined;

  const caughtUp = caughtUpSignal();

  const report = (error: unknown, context: { event?: RecordedEvent; attempt: number }) => {
    try {
      options.onError?.(error, context);
    } catch (callbackError) {
      logger.warn(`kurrentdb ${name}: onError threw`, callbackError);
    }
  };

  /** Calls the handler until it succeeds; false when stopped first. */
  const deliver = async (event: RecordedEvent): Promise<boolean> => {
    for (let attempt = 1; ; attempt++) {
      if (signal.aborted) return false;
      try {
        await options.handler(event);
        position = event.position;
        return true;
      } catch (error) {
        if (signal.aborted) return false;
        report(error, { event, attempt });
        await sleep(backoffDelay(attempt, options.retry), signal);
      }
    }
  };

  const loop = async (): Promise<void> => {
    let head: ClientPosition | undefined;
    let headKnown = false;
    let startChecked = cursor === undefined;
    let drops = 0;
    while (!signal.aborted) {
      let subscription: AllStreamSubscription | undefined;
      try {
        if (!startChecked) {
          const checked = await untilAborted(deps.checkPosition(cursor!), signal);
          if (checked === ABORTED) return;
          startChecked = true;
        }
        if (!headKnown) {
          const read = await untilAborted(deps.headPosition(), signal);
          if (read === ABORTED) return;
          head = read;
          headKnown = true;
          if (head === undefined || (cursor !== undefined && comparePositions(head, cursor) <= 0)) caughtUp.resolve();
        }

        let serverCaughtUp = false;
        let waiting = false;
        const sub = client.subscribeToAll({ fromPosition: cursor ?? START, filter: excludeSystemEvents() });
        subscription = sub;
        current = sub;
        // Errors reach us through the iterator; this listener only keeps a late one from crashing the process.
        sub.on('error', () => undefined);
        let answered = false;
        const onAnswer = () => {
          if (answered) return;
          answered = true;
          deps.onAnswer?.();
        };
        sub.on('caughtUp', () => {
          onAnswer();
          serverCaughtUp = true;
          if (waiting && sub.readableLength === 0) caughtUp.resolve();
        });
        const events = sub[Symbol.asyncIterator]();

        while (true) {
          // Every event read so far is handled; if the buffer is empty too, all the server sent before caught-up is.
          if (serverCaughtUp && sub.readableLength === 0) caughtUp.resolve();
          waiting = true;
          const next: IteratorResult<AllStreamResolvedEvent> | typeof ABORTED = await untilAborted(events.next(), signal);
          waiting = false;
          if (next === ABORTED) return;
          if (next.done) throw new Error('the server ended the subscription');
          onAnswer();
          drops = 0;
          const recorded = next.value.event;
          if (!recorded || !isUsablePosition(recorded.position)) continue;
          if (cursor !== undefined && comparePositions(recorded.position, cursor) <= 0) continue;
          if (!isSystemEvent(recorded)) {
            const handled = await deliver(toRecordedEvent(recorded, recorded.position));
            if (!handled) return;
          }
          cursor = recorded.position;
          if (head !== undefined && comparePositions(cursor, head) >= 0) caughtUp.resolve();
        }
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof InvalidPosition) {
          report(error, { attempt: 1 });
          caughtUp.reject(error);
          return;
        }
        drops++;
        logger.warn(`kurrentdb ${name}: subscription dropped, resubscribing after ${position ?? 'the start'} (attempt ${drops})`, error);
        report(error, { attempt: drops });
        await sleep(backoffDelay(drops, options.retry), signal);
      } finally {
        if (subscription) release(subscription);
        if (current === subscription) current = undefined;
      }
    }
  };

  const running = loop()
    .catch((error: unknown) => logger.warn(`kurrentdb ${name}: subscription loop failed`, error))
    .finally(caughtUp.resolve);

  return {
    caughtUp: caughtUp.promise,
    get position() {
      return position;
    },
    async stop() {
      abort.abort();
      if (current) release(current);
      await running;
    },
  };
}

/** Cancels the server call and ends the local stream; safe to call more than once. */
function release(subscription: AllStreamSubscription): void {
  subscription.unsubscribe().catch(() => undefined);
  if (!subscription.destroyed) subscription.destroy();
}
