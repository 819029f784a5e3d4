import type { Reply } from '@agora/contracts';
import { CommandFailed, EXIT, flag, integerOption, listOption, stringOption, UsageError, type CommandSpec } from '../command.js';
import { gatewayUrl, unreachable } from '../gateway-client.js';
import { SseParser, type SseMessage } from '@agora/sdk';

interface StreamedEvent {
  id: string;
  type: string;
  streamId: string;
  revision: number;
  position: string;
  data: unknown;
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
  usage: '[--after <position>] [--from-end] [--category <c>] [--type <T>] [--count <N>] [--json]',
  description: 'History first (from the first event, or after --after), then live. Ctrl-C ends it; a dropped connection is resumed after the last event printed.',
  options: {
    after: { type: 'string', value: '<position>', description: 'start after this position (the first column of a line)' },
    'from-end': { type: 'boolean', description: 'skip history: only events committed from now on' },
    category: { type: 'string', multiple: true, value: '<category>', description: 'only streams of this category, e.g. agent' },
    type: { type: 'string', multiple: true, value: '<EventType>', description: 'only events of this type, e.g. AgentRegistered' },
    count: { type: 'string', short: 'n', value: '<N>', description: 'stop after N events' },
    json: { type: 'boolean', description: 'print each event as one line of JSON' },
  },
  positionals: [],
  examples: ['agora events tail --category agent --count 10'],
  async run(args, io) {
    const command = 'events tail';
    const base = gatewayUrl(args, io, command);
    const count = integerOption(args, 'count', command, { min: 1, max: Number.MAX_SAFE_INTEGER });
    if (flag(args, 'from-end') && stringOption(args, 'after') !== undefined) throw new UsageError('give --after or --from-end, not both', command);
    const url = new URL(`${base}/v1/events`);
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

    const print = (message: SseMessage): boolean => {
      let event: StreamedEvent;
      try {
        event = JSON.parse(message.data) as StreamedEvent;
      } catch {
        return false;
      }
      io.stdout(`${json ? JSON.stringify(event) : eventLine(event)}\n`);
      last = message.id ?? event.position;
      printed++;
      return count !== undefined && printed >= count;
    };

    while (!stop.signal.aborted) {
      let res: Response;
      try {
        res = await fetch(url, { headers: { accept: 'text/event-stream', ...(last === undefined ? {} : { 'last-event-id': last }) }, signal: stop.signal });
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
      if (!stop.signal.aborted) await sleep(RECONNECT_MS, stop.signal);
    }
    return EXIT.ok;
  },
};
