/**
 * The whole event log as this page has received it (GET /v1/events from the first event, then
 * live), each event with its command signature checked in the browser as it arrives, in log
 * order (see SignatureChecker). One per page: started when first used, kept while the console is
 * open, so going back to the log does not read it again. Holds at most MAX_EVENTS (the oldest go).
 */
import { categoryOf, type ConfiguredKeys } from '@agora/contracts';
import { useEffect, useState } from 'preact/hooks';
import { query } from './api';
import { SignatureChecker, type SignatureMark } from './signing';
import { openEventStream, type AgoraEvent, type StreamStatus } from './sse';

export interface LoggedEvent {
  event: AgoraEvent;
  category: string;
  /** undefined while the check runs. */
  mark: SignatureMark | undefined;
  seq: number;
}

export const MAX_EVENTS = 20_000;

class EventLog {
  readonly events: LoggedEvent[] = [];
  status: StreamStatus = 'connecting';
  /** Events received in total (the array keeps the newest MAX_EVENTS). */
  received = 0;
  private readonly checker = new SignatureChecker();
  private readonly listeners = new Set<() => void>();
  private started = false;
  private scheduled = false;

  start(): void {
    if (this.started) return;
    this.started = true;
    // Keys no event of the log names (the bootstrap operators', the services') come from the registry's configuration, asked first.
    void query<ConfiguredKeys>('/v1/registry/configured-keys')
      .then((keys) => this.checker.knowConfigured(keys))
      .catch(() => undefined)
      .finally(() => this.open());
  }

  private open(): void {
    openEventStream({
      onEvent: (event) => this.add(event),
      onStatus: (status) => {
        this.status = status;
        this.changed();
      },
    });
  }

  private add(event: AgoraEvent): void {
    const entry: LoggedEvent = { event, category: categoryOf(event.streamId), mark: undefined, seq: this.received++ };
    this.events.push(entry);
    if (this.events.length > MAX_EVENTS) this.events.splice(0, this.events.length - MAX_EVENTS);
    // Called in log order: the checker learns keys synchronously before it awaits the verification.
    void this.checker.check(event).then((mark) => {
      entry.mark = mark;
      this.changed();
    });
    this.changed();
  }

  /** Coalesces a burst of events (a history replay) into one render per frame. */
  private changed(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      for (const l of [...this.listeners]) l();
    });
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Resolves with the first event (already received or still to come) that `match` accepts. */
  waitFor(match: (e: LoggedEvent) => boolean): { promise: Promise<LoggedEvent>; cancel(): void } {
    let off = () => {};
    const promise = new Promise<LoggedEvent>((resolve) => {
      const look = () => {
        const found = this.events.find((e) => match(e) && e.mark !== undefined);
        if (found) {
          off();
          resolve(found);
        }
      };
      off = this.subscribe(look);
      look();
    });
    return { promise, cancel: () => off() };
  }
}

export const eventLog = new EventLog();

/** The log as component state (re-rendered as events arrive and their checks finish). */
export function useEventLog(): EventLog {
  const [, tick] = useState(0);
  useEffect(() => {
    eventLog.start();
    return eventLog.subscribe(() => tick((t) => t + 1));
  }, []);
  return eventLog;
}
