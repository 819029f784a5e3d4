import { AgoraError, EVENT_SUBJECT_PREFIX, READ_TOKEN, type CommandDefinition, type CommandResult, type QueryDefinition, type Reply } from '@agora/contracts';
import { mintReadToken, type SignedCommand } from '@agora/identity';
import { NatsAgoraClient, type AgoraClient } from '@agora/messaging/client';
import { HttpTransport } from './http.js';
import type { AgoraEvent, EventFilter, Transport } from './transport.js';

export type NatsOptions = NonNullable<Parameters<typeof NatsAgoraClient.connect>[0]> & {
  /** The audience of the read tokens its queries carry (services with closed reads check it). Default READ_TOKEN.defaultAudience. */
  readAudience?: string;
  /**
   * The gateway's URL, for catching up: an event stream that continues after a position (a role
   * loop resuming from its checkpoint, a wait after a command) reads the log through the gateway's
   * event stream, which replays what came after it and then follows it live. Without it, such a
   * stream over NATS is live only (core NATS keeps nothing for an absent listener).
   */
  catchUpUrl?: string;
};

/** Who reads: each query carries a fresh read token of this agent (header READ_TOKEN.natsHeader). */
export interface NatsReader {
  agentId: string;
  secretKey: string;
  audience?: string;
}

/** How long the read token of one query lives: enough for a slow reply, far below the most allowed. */
const QUERY_TOKEN_SECONDS = 60;

/** How many event ids a NATS listener remembers to drop a redelivered event (the relay is at least once). */
const SEEN_IDS = 10_000;

/**
 * Speaks to Agora over NATS (or, inside an Agora process, over its in-process bus): commands and
 * queries are requests on their subjects, events arrive on `agora.evt.<category>.<EventType>`.
 * Core NATS keeps nothing for an absent listener, so an event stream here is live only; a stream
 * that continues `after` a position is read through the gateway when a catch-up transport is
 * given (`catchUpUrl`): it replays what the listener missed, with the gateway's visibility rules
 * (an agent's NATS user has no JetStream API and hears only the categories it may read in full).
 */
export class MessagingTransport implements Transport {
  readonly kind = 'messaging';

  /**
   * @param client NATS, or the in-process bus of the process the caller runs in (the gateway's /mcp).
   * @param reader when given, every query carries a read token of this agent.
   */
  constructor(
    private readonly client: AgoraClient,
    private readonly reader?: NatsReader,
    private readonly catchUp?: Transport,
  ) {}

  /**
   * Connects to NATS. With a signer and no user/password, the connection is the signer's own: its
   * key as an nkey, its replies under `_INBOX_<agentId>` (`agora setup nats` makes the server's
   * users so). With a signer, its queries carry the signer's read token.
   */
  static async connect(options: NatsOptions, signer?: { agentId: string; secretKey: string }): Promise<MessagingTransport> {
    const { readAudience, catchUpUrl, ...connect } = options;
    const identity = connect.identity ?? (signer !== undefined && connect.credentials === undefined ? signer : undefined);
    // Who reads is the signer, however the connection authenticates (its nkey, or a NATS_USER of the bootstrap users).
    const readerKey = signer ?? identity;
    const reader = readerKey && { ...readerKey, ...(readAudience === undefined ? {} : { audience: readAudience }) };
    // The gateway reads with the same reader's tokens (its audience is the gateway's own unless named).
    const catchUp = catchUpUrl === undefined ? undefined : new HttpTransport(catchUpUrl, signer && { ...signer, ...(readAudience === undefined ? {} : { audience: readAudience }) });
    return new MessagingTransport(await NatsAgoraClient.connect({ name: 'agora-sdk', ...connect, ...(identity ? { identity } : {}) }), reader, catchUp);
  }

  command(definition: CommandDefinition, envelope: SignedCommand, timeoutMs: number): Promise<Reply<CommandResult>> {
    return this.client.request<CommandResult>(definition.subject, envelope, { timeoutMs });
  }

  query(definition: QueryDefinition, params: Record<string, unknown>, timeoutMs: number): Promise<Reply<unknown>> {
    return this.client.request(definition.subject, params, { timeoutMs, ...(this.reader ? { headers: { [READ_TOKEN.natsHeader]: this.readToken(this.reader) } } : {}) });
  }

  private readToken(reader: NatsReader): string {
    return mintReadToken({ agentId: reader.agentId, secretKey: reader.secretKey, lifetimeSeconds: QUERY_TOKEN_SECONDS, ...(reader.audience === undefined ? {} : { audience: reader.audience }) });
  }

  async *events(filter: EventFilter): AsyncGenerator<AgoraEvent> {
    // A stream that continues after a position catches up through the gateway, which then follows the log live.
    if (filter.after !== undefined && this.catchUp !== undefined) {
      yield* this.catchUp.events(filter);
      return;
    }
    const signal = filter.signal ?? new AbortController().signal;
    const categories = filter.categories?.length ? filter.categories : ['*'];
    const types = filter.types?.length ? filter.types : ['*'];
    const subjects = categories.flatMap((c) => types.map((t) => (c === '*' && t === '*' ? `${EVENT_SUBJECT_PREFIX}.>` : `${EVENT_SUBJECT_PREFIX}.${c}.${t}`)));
    const queue: AgoraEvent[] = [];
    let wake: (() => void) | undefined;
    const seen = new Set<string>();
    let refused: AgoraError | undefined;
    const subscriptions = subjects.map((subject) =>
      this.client.subscribe(
        subject,
        (message) => {
          const event = message.body as AgoraEvent;
          if (!event || typeof event.id !== 'string' || seen.has(event.id)) return;
          seen.add(event.id);
          if (seen.size > SEEN_IDS) seen.delete(seen.values().next().value as string);
          queue.push(event);
          wake?.();
        },
        {
          // An agent's own NATS user hears only the event categories it may read in full: say so rather than wait for ever.
          onError: (error) => {
            refused ??= new AgoraError('forbidden', `NATS refused the events on ${subject} (${error.message}): an agent's NATS user hears only the categories it may read in full; read the others through the gateway's event stream`, { subject });
            wake?.();
          },
        },
      ),
    );
    const onAbort = () => wake?.();
    signal.addEventListener('abort', onAbort);
    try {
      if (this.client instanceof NatsAgoraClient) await this.client.connection.flush();
      if (refused) throw refused;
      filter.onOpen?.();
      while (!signal.aborted) {
        if (refused) throw refused;
        const event = queue.shift();
        if (event) {
          yield event;
          continue;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      for (const sub of subscriptions) sub.unsubscribe();
    }
  }

  async close(): Promise<void> {
    await this.catchUp?.close();
    await this.client.close();
  }
}
