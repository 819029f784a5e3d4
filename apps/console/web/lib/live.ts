/**
 * One live connection for the whole console: events committed from now on (GET /v1/events
 * ?from=end), fanned out to the pages that asked for their categories. Pages refetch their read
 * models when something they show changes, so they stay live without reloading.
 */
import { categoryOf } from '@agora/contracts';
import { useEffect, useRef, useState } from 'preact/hooks';
import { sessionLost } from './session';
import { openEventStream, type AgoraEvent, type StreamStatus } from './sse';

type Listener = (event: AgoraEvent) => void;

const listeners = new Set<Listener>();
const statusListeners = new Set<(status: StreamStatus) => void>();
/** Called when the stream is back after a drop: what was committed meanwhile may not have been seen. */
const resyncListeners = new Set<() => void>();
let status: StreamStatus = 'connecting';
let close: (() => void) | undefined;

function ensureOpen(): void {
  close ??= openEventStream({
    fromEnd: true,
    onEvent: (event) => {
      for (const listener of [...listeners]) listener(event);
    },
    onStatus: (next, detail) => {
      // Refused for want of a session (expired, or the gateway restarted): log in again or go to the login page.
      if (next === 'reconnecting' && (detail?.includes('HTTP 401') || detail?.includes('(session_ended)'))) sessionLost();
      if (next === 'live' && status === 'reconnecting') for (const resync of [...resyncListeners]) resync();
      status = next;
      for (const listener of [...statusListeners]) listener(next);
    },
  });
}

/** Calls `listener` for every event committed from now on; returns the unsubscribe. */
export function onLiveEvent(listener: Listener): () => void {
  ensureOpen();
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The live connection's status, as component state. */
export function useLiveStatus(): StreamStatus {
  const [value, setValue] = useState(status);
  useEffect(() => {
    ensureOpen();
    statusListeners.add(setValue);
    setValue(status);
    return () => void statusListeners.delete(setValue);
  }, []);
  return value;
}

/**
 * Calls `refresh` shortly after events of the given stream categories are committed (bursts
 * coalesce), and once more a second later: the read models trail the log by a moment. Also after
 * the live stream comes back from a drop.
 */
export function useLive(categories: readonly string[], refresh: () => void): void {
  const latest = useRef(refresh);
  latest.current = refresh;
  const key = categories.join(',');
  useEffect(() => {
    if (key === '') return undefined;
    const wanted = new Set(key.split(','));
    let soon: ReturnType<typeof setTimeout> | undefined;
    let later: ReturnType<typeof setTimeout> | undefined;
    // At most one refetch per 150 ms however busy the log (a burst never starves it), and one more after the burst.
    const schedule = () => {
      soon ??= setTimeout(() => {
        soon = undefined;
        latest.current();
      }, 150);
      clearTimeout(later);
      later = setTimeout(() => latest.current(), 1200);
    };
    const off = onLiveEvent((event) => {
      if (wanted.has(categoryOf(event.streamId))) schedule();
    });
    resyncListeners.add(schedule);
    return () => {
      off();
      resyncListeners.delete(schedule);
      clearTimeout(soon);
      clearTimeout(later);
    };
  }, [key]);
}
