/**
 * A client of the gateway's GET /v1/events (Server-Sent Events), for the console's pages and for
 * any other JavaScript client (it needs only fetch and streams: browsers, Node 20). The gateway names each message
 * after its event type (`event: ProposalSubmitted`), which EventSource only delivers to
 * listeners of that exact name, so this reads the stream with fetch and parses the frames
 * itself. On a dropped connection it reconnects after the server's `retry:` delay with
 * `Last-Event-ID` set to the last position, so nothing is skipped or repeated. A stream the
 * gateway ends for its credential (`event: end`) is taken up again at once when the reader's roles
 * changed, so what it sees is decided again; the status detail names the reason.
 */

/** One committed event as the gateway sends it (`sseFrame` in the gateway). */
export interface AgoraEvent {
  id: string;
  type: string;
  streamId: string;
  revision: number;
  position: string;
  recordedAt: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

export type StreamStatus = 'connecting' | 'live' | 'reconnecting' | 'closed';

export interface EventStreamOptions {
  /** Start strictly after this position; default: from the first event (or from now, with fromEnd). */
  after?: string;
  /** Only events committed from now on. */
  fromEnd?: boolean;
  /** Stream categories to receive (server-side filter; empty: all). */
  categories?: readonly string[];
  /** Event types to receive (server-side filter; empty: all). */
  types?: readonly string[];
  onEvent(event: AgoraEvent): void;
  onStatus?(status: StreamStatus, detail?: string): void;
  /** Base URL of the gateway; default this page's origin. */
  baseUrl?: string;
  /** The stream's path; default `/v1/events` (a debate's: `/v1/debates/<id>/events`, whose frames carry the seed's event type as `type`). */
  path?: string;
}

/** Opens the stream; returns a function that closes it. */
export function openEventStream(options: EventStreamOptions): () => void {
  const controller = new AbortController();
  let last = options.after;
  let retryMs = 2000;
  let closed = false;
  /** The reason of the gateway's `event: end` on the current connection, if it sent one. */
  let ended: string | undefined;

  const url = () => {
    const search = new URLSearchParams();
    if (last === undefined && options.fromEnd) search.set('from', 'end');
    for (const c of options.categories ?? []) search.append('category', c);
    for (const t of options.types ?? []) search.append('type', t);
    const text = search.toString();
    return `${options.baseUrl ?? ''}${options.path ?? '/v1/events'}${text ? `?${text}` : ''}`;
  };

  const readOnce = async (): Promise<void> => {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (last !== undefined) headers['last-event-id'] = last;
    const res = await fetch(url(), { headers, signal: controller.signal });
    if (!res.ok || !res.body) throw new Error(`GET ${options.path ?? '/v1/events'}: HTTP ${res.status}`);
    options.onStatus?.('live');
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let id: string | undefined;
        let name: string | undefined;
        const data: string[] = [];
        for (const line of frame.split('\n')) {
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') id = text;
          else if (field === 'event') name = text;
          else if (field === 'data') data.push(text);
          else if (field === 'retry' && /^\d+$/.test(text)) retryMs = Number(text);
        }
        if (data.length === 0 || name === 'dropped') continue;
        // The gateway ended the stream for its credential (the login ended, the reader was disabled or its roles changed).
        if (name === 'end') {
          ended = (JSON.parse(data.join('\n')) as { reason?: string }).reason ?? 'unknown';
          continue;
        }
        const event = JSON.parse(data.join('\n')) as AgoraEvent;
        if (id !== undefined) last = id;
        options.onEvent(event);
      }
    }
  };

  void (async () => {
    options.onStatus?.('connecting');
    while (!closed) {
      try {
        ended = undefined;
        await readOnce();
        if (closed) break;
        options.onStatus?.('reconnecting', ended === undefined ? 'the stream ended' : `the gateway ended the stream (${ended})`);
        // Roles or key changed, a token expired: read again at once, decided on the reader as it is now. A login
        // that ended or a disabled reader is refused on the next attempt (401, 403), after the usual pause.
        if (ended === 'roles_changed' || ended === 'key_changed' || ended === 'token_expired') continue;
      } catch (error) {
        if (closed) break;
        options.onStatus?.('reconnecting', error instanceof Error ? error.message : String(error));
      }
      await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
    options.onStatus?.('closed');
  })();

  return () => {
    closed = true;
    controller.abort();
  };
}
