import { eventByType, SCHEMA_VERSION_FIELD, type Reply } from '@agora/contracts';
import { CommandFailed, EXIT, flag, integerOption, listOption, stringOption, UsageError, type CommandSpec } from '../command.js';
import { SseParser, type SseMessage } from '@agora/sdk';
import { gatewayUrl, MIN_POSITION_OPTION, readHeaders, unreachable, withMinPosition } from '../gateway-client.js';

interface StreamedEvent {
  id: string;
  type: string;
  streamId: string;
  revision: number;
  position: string;
  data: unknown;
  metadata?: Record<string, unknown>;
}

/**
 * Why this build cannot take `event`'s data for the shape its contracts describe (a schema version
 * it does not know, docs/event-versions.md), or undefined when it can. A type it does not know at
 * all is not its business: printed as received.
 */
export function unknownVersion(event: StreamedEvent): string | undefined {
  const known = eventByType(event.type)?.version;
  const version = event.metadata?.[SCHEMA_VERSION_FIELD];
  if (known === undefined || version === known) return undefined;
  return `${event.type} arrives at schema version ${String(version ?? 'none')}, this agora knows version ${known}: its data is printed as received, not as version ${known} (an agora from the gateway's release reads it)`;
}

/** `<position> <streamId>@<revision> <type> <data JSON>` */
export function eventLine(event: StreamedEvent): string {
  return `${event.position} ${event.streamId}@${event.revision} ${event.type} ${JSON.stringify(event.data)}`;
}

const RECONNECT_MS = 1_000;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

export const eventsTail: CommandSpec = {
  name: 'events tail',
  brief: 'print committed events as they happen',
  summary: 'Print committed events as they happen (GET /v1/events), one line each: <position> <streamId>@<revision> <type> <data>.',
  usage: '[--after <position>] [--from-end] [--category <c>] [--type <T>] [--first <N>] [--min-position <position>] [--json]',
  description:
    "History first (from the first event, or after --after), then live, oldest first: --first N stops after the first N events printed from there (not the last N of the log). Ctrl-C ends it; a dropped connection is resumed after the last event printed, and a stream the gateway ends because its read token expired is taken up again at once with a fresh one. An event at a schema version this agora does not know is printed as received, and said so on stderr once per type and version.",
  options: {
    after: { type: 'string', value: '<position>', description: 'start after this position (the first column of a line)' },
    'from-end': { type: 'boolean', description: 'skip history: only events committed from now on' },
    category: { type: 'string', multiple: true, value: '<category>', description: 'only streams of this category, e.g. agent' },
    type: { type: 'string', multiple: true, value: '<EventType>', description: 'only events of this type, e.g. AgentRegistered' },
    first: { type: 'string', short: 'n', value: '<N>', description: 'stop after the first N events printed (oldest first, from where the tail starts)' },
    ...MIN_POSITION_OPTION,
    json: { type: 'boolean', description: 'print each event as one line of JSON' },
  },
  positionals: [],
  examples: ['agora events tail --category agent --first 10', 'agora events tail --from-end'],
  async run(args, io) {
    const command = 'events tail';
    const base = gatewayUrl(args, io, command);
    const count = integerOption(args, 'first', command, { min: 1, max: Number.MAX_SAFE_INTEGER });
    if (flag(args, 'from-end') && stringOption(args, 'after') !== undefined) throw new UsageError('give --after or --from-end, not both', command);
    const url = withMinPosition(new URL(`${base}/v1/events`), args);
    for (const c of listOption(args, 'category') ?? []) url.searchParams.append('category', c);
    for (const t of listOption(args, 'type') ?? []) url.searchParams.append('type', t);
    if (flag(args, 'from-end')) url.searchParams.set('from', 'end');
    const json = flag(args, 'json');

    const stop = new AbortController();
    io.signal?.addEventListener('abort', () => stop.abort(), { once: true });
    if (io.signal?.aborted) return EXIT.ok;
    let last = stringOption(args, 'after');
    let printed = 0;
    let connected = false;
    let ended: string | undefined;
    const warned = new Set<string>();

    const print = (message: SseMessage): boolean => {
      // Not events: a slow client's drop, and the end of a stream whose token expired (or whose reader changed): the loop reconnects with a fresh token after the last event printed.
      if (message.event === 'dropped') return false;
      if (message.event === 'end') {
        ended = (JSON.parse(message.data) as { reason?: string }).reason ?? 'unknown';
        if (ended !== 'token_expired') io.stderr(`agora: the gateway ended the event stream (${ended}); reconnecting with a fresh token\n`);
        return false;
      }
      let event: StreamedEvent;
      try {
        event = JSON.parse(message.data) as StreamedEvent;
      } catch {
        return false;
      }
      const why = unknownVersion(event);
      if (why !== undefined && !warned.has(why)) {
        warned.add(why);
        io.stderr(`agora: ${why}\n`);
      }
      io.stdout(`${json ? JSON.stringify(event) : eventLine(event)}\n`);
      last = message.id ?? event.position;
      printed++;
      return count !== undefined && printed >= count;
    };

    while (!stop.signal.aborted) {
      let res: Response;
      const openedAt = Date.now();
      try {
        // A fresh read token for every connection: a long tail outlives one.
        res = await fetch(url, { headers: { accept: 'text/event-stream', ...readHeaders(args, io, command), ...(last === undefined ? {} : { 'last-event-id': last }) }, signal: stop.signal });
      } catch (error) {
        if (stop.signal.aborted) break;
        // The first connection must work; later ones are a resume after a drop, retried.
        if (!connected) throw unreachable(base, error);
        io.stderr(`agora: reconnecting to ${base} (${(error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message})\n`);
        await sleep(RECONNECT_MS, stop.signal);
        continue;
      }
      if (!res.ok || !res.body) {
        const text = await res.text();
        let reply: Reply | undefined;
        try {
          reply = JSON.parse(text) as Reply;
        } catch {
          reply = undefined;
        }
        if (reply?.ok === false) throw new CommandFailed(reply.error.code, reply.error.message, reply.error.details);
        throw new CommandFailed(undefined, `the gateway answered ${res.status}: ${text.slice(0, 200)}`);
      }
      connected = true;
      const parser = new SseParser();
      const decoder = new TextDecoder();
      try {
        for await (const chunk of res.body) {
          for (const message of parser.feed(decoder.decode(chunk, { stream: true }))) {
            if (print(message)) {
              stop.abort();
              break;
            }
          }
          if (stop.signal.aborted) break;
        }
      } catch (error) {
        if (stop.signal.aborted) break;
        io.stderr(`agora: the event stream broke (${(error as Error).message}); resuming after ${last ?? 'the start'}\n`);
      }
      // An expired token's stream is taken up again at once (unless it lasted under a pause: a clock behind the gateway's); anything else after a pause.
      const renew = ended === 'token_expired' && Date.now() - openedAt > RECONNECT_MS;
      ended = undefined;
      if (!stop.signal.aborted && !renew) await sleep(RECONNECT_MS, stop.signal);
    }
    return EXIT.ok;
  },
};
