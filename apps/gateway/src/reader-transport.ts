import type { CommandDefinition, CommandResult, QueryDefinition, Reader, Reply } from '@agora/contracts';
import type { RecordedEvent } from '@agora/eventstore';
import type { SignedCommand } from '@agora/identity';
import type { AgoraClient } from '@agora/messaging';
import type { AgoraEvent, EventFilter, Transport } from '@agora/sdk';
import { GatewayError } from './http-reply.js';
import { eventViewFor, forwardReader, publicMetadataOf, type StreamParties } from './read-visibility.js';

/** Who a ReaderTransport reads as, asked at every read. */
export interface ReaderSource {
  /** The reader now; throws a GatewayError when there is none or its credential no longer holds. */
  reader(): Reader | undefined;
  /** While true, events are held back (the credential expired until a request renews it). */
  paused?(): boolean;
  /** The refusal of a command: the gateway holds no agent's key, so it signs nothing. */
  commandRefusal: string;
}

/**
 * The gateway's bus seen by one reader: every query asked for that reader as the gateway asks it
 * for HTTP (forwardReader: its service applies the visibility table, `forbidden` that says nothing
 * of what exists), and the
 * log's events as GET /v1/events gives them to this reader (whole, metadata only, or not at all).
 * It sends no command: the gateway holds no agent's key. An SDK client over it (`Agora.over`)
 * is how /mcp and /a2a read and wait on the log for a caller.
 */
export class ReaderTransport implements Transport {
  readonly kind = 'messaging';

  /** Aborted by close(): its waits and streams stop. */
  private readonly closing = new AbortController();

  constructor(
    private readonly client: AgoraClient,
    private readonly bus: Transport,
    private readonly source: ReaderSource,
    private readonly parties: StreamParties,
  ) {}

  private reader(): Reader | undefined {
    if (this.closing.signal.aborted) throw new GatewayError('unauthenticated', 'this reader has ended');
    return this.source.reader();
  }

  async command(_definition: CommandDefinition, _envelope: SignedCommand, _timeoutMs: number): Promise<Reply<CommandResult>> {
    return { ok: false, error: { code: 'forbidden', message: this.source.commandRefusal } };
  }

  async query(definition: QueryDefinition, params: Record<string, unknown>, timeoutMs: number): Promise<Reply<unknown>> {
    try {
      const headers = forwardReader(this.reader());
      return await this.client.request(definition.subject, params, { timeoutMs, ...(headers ? { headers } : {}) });
    } catch (error) {
      if (error instanceof GatewayError) return error.toReply();
      throw error;
    }
  }

  async *events(filter: EventFilter): AsyncGenerator<AgoraEvent> {
    const view = eventViewFor(this.reader(), this.parties);
    const signal = filter.signal ? AbortSignal.any([filter.signal, this.closing.signal]) : this.closing.signal;
    for await (const event of this.bus.events({ ...filter, signal })) {
      if (this.source.paused?.()) continue;
      if (view === undefined) {
        yield event;
        continue;
      }
      const recorded = event as unknown as RecordedEvent;
      await view.prepare([recorded]);
      const sight = view.sight(recorded);
      if (sight === 'full') yield event;
      else if (sight === 'metadata') yield { ...event, data: {}, metadata: publicMetadataOf(event) };
    }
  }

  async close(): Promise<void> {
    this.closing.abort();
  }
}
