/**
 * Reads through the gateway. A query is asked of its service on behalf of the reader the gateway's
 * credential check proved (forwardReader): the service applies the visibility table (libs/contracts),
 * once, as it does for an agent asking on NATS. The gateway applies the table to what it serves
 * itself: each event of an event stream. A refusal is `forbidden` with a message that is the same
 * whether the thing asked for exists or not.
 */
import { categoryOf, EVENT_VISIBILITY, namedAt, READ_TOKEN, type AgoraError, type Reader } from '@agora/contracts';
import { notAParty as sharedNotAParty, READER_HEADER } from '@agora/messaging';
import { StreamNotFound, type EventStore, type RecordedEvent } from '@agora/eventstore';
import { GatewayError } from './http-reply.js';

/** The one refusal of something an agent is no party to: it does not say whether it exists. */
export function notAParty(reader: Reader, what: string): GatewayError {
  return gatewayErrorOf(sharedNotAParty(reader, what));
}

const gatewayErrorOf = (error: AgoraError): GatewayError => new GatewayError(error.code, error.message, error.details);

/**
 * The headers of a query asked for a reader (none with open reads): the reader's id, believed by a
 * service where only the gateway can have asked (its inbox) or reads are open, and the reader's read
 * token when it sent one, which proves the reader where the gateway does not ask from its own inbox
 * (`npm start` on NATS as one user).
 */
export function forwardReader(reader: Reader | undefined, token?: string): Record<string, string> | undefined {
  if (reader === undefined) return undefined;
  return { [READER_HEADER]: reader.agentId, ...(token === undefined ? {} : { [READ_TOKEN.natsHeader]: token }) };
}

/** What a reader gets of one event: all of it, its metadata without data and signed payload, or nothing. */
export type EventSight = 'full' | 'metadata' | 'none';

/** Streams most recently asked about whose parties are remembered. */
const MAX_STREAMS = 10_000;

/**
 * The agents each stream concerns: named at its category's party fields in any of its events, or
 * the actor of one of them. Shared by every event stream of a gateway; a stream is read from the
 * store once, then followed event by event as the streams pass its new events.
 */
export class StreamParties {
  private readonly known = new Map<string, { parties: Set<string>; revision: number }>();

  constructor(private readonly store: EventStore) {}

  /** Makes partiesOf() answer for every event given (reads a stream not seen yet, or one whose events were skipped). */
  async prepare(events: readonly RecordedEvent[]): Promise<void> {
    for (const event of events) {
      const fields = this.fieldsOf(event.streamId);
      if (fields === undefined) continue;
      const entry = this.known.get(event.streamId);
      if (entry !== undefined && entry.revision >= event.revision) continue;
      if (entry !== undefined && entry.revision === event.revision - 1) {
        this.fold(entry, event, fields);
        continue;
      }
      await this.load(event.streamId);
    }
  }

  /** The parties of a stream, read from the store now; an empty set when the stream does not exist. */
  async load(streamId: string): Promise<ReadonlySet<string>> {
    const fields = this.fieldsOf(streamId) ?? [];
    let events: RecordedEvent[];
    try {
      events = await this.store.readStream(streamId);
    } catch (error) {
      if (error instanceof StreamNotFound) return new Set();
      throw new GatewayError('unavailable', `the event store cannot be read: ${error instanceof Error ? error.message : String(error)}`);
    }
    const entry = { parties: new Set<string>(), revision: -1 };
    for (const event of events) this.fold(entry, event, fields);
    this.known.delete(streamId);
    this.known.set(streamId, entry);
    if (this.known.size > MAX_STREAMS) this.known.delete(this.known.keys().next().value as string);
    return entry.parties;
  }

  partiesOf(streamId: string): ReadonlySet<string> | undefined {
    return this.known.get(streamId)?.parties;
  }

  private fieldsOf(streamId: string): readonly string[] | undefined {
    const access = EVENT_VISIBILITY[categoryOf(streamId)];
    return access?.read === 'party' ? access.fields : undefined;
  }

  private fold(entry: { parties: Set<string>; revision: number }, event: RecordedEvent, fields: readonly string[]): void {
    for (const id of namedAt(event.data, fields)) entry.parties.add(id);
    const actor = event.metadata['actor'];
    if (typeof actor === 'string') entry.parties.add(actor);
    entry.revision = Math.max(entry.revision, event.revision);
  }
}

/** How an event stream shows events to a reader who does not read everything (undefined for one who does). */
export interface EventView {
  prepare(events: readonly RecordedEvent[]): Promise<void>;
  sight(event: RecordedEvent): EventSight;
}

export function eventViewFor(reader: Reader | undefined, parties: StreamParties): EventView | undefined {
  if (reader === undefined || reader.readsAll) return undefined;
  return {
    prepare: (events) => (reader.asAgent ? parties.prepare(events) : Promise.resolve()),
    sight(event) {
      if (reader.asAgent) {
        const access = EVENT_VISIBILITY[categoryOf(event.streamId)];
        if (access?.read === 'all') return 'full';
        if (access?.read === 'party' && parties.partiesOf(event.streamId)?.has(reader.agentId)) return 'full';
      }
      return reader.asObserver ? 'metadata' : 'none';
    },
  };
}

/**
 * The metadata an observer reads: who did what, when, signed how, in which chain. Only these
 * members: others carry payloads (`commandPayload`, the decision's inputs).
 */
export const PUBLIC_METADATA = ['actor', 'commandId', 'commandType', 'issuedAt', 'signature', 'correlationId', 'causationId', 'prevCommitHash', 'schemaVersion'] as const;

/** The SSE frame of an event's metadata alone: no data, and of the metadata only PUBLIC_METADATA. */
/** The members of an event's metadata an observer reads (PUBLIC_METADATA): none that copies the payload. */
export function publicMetadataOf(event: Pick<RecordedEvent, 'metadata'>): Record<string, unknown> {
  return Object.fromEntries(PUBLIC_METADATA.filter((key) => Object.hasOwn(event.metadata, key)).map((key) => [key, event.metadata[key]]));
}

export function metadataFrame(event: RecordedEvent): string {
  const { id, type, streamId, revision, position, recordedAt } = event;
  const metadata = publicMetadataOf(event);
  return `id: ${position}\nevent: ${type}\ndata: ${JSON.stringify({ id, type, streamId, revision, position, recordedAt, metadata })}\n\n`;
}
