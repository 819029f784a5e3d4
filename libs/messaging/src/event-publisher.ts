import { categoryOf, EVENT_HEADERS, eventSubject, SCHEMA_VERSION_FIELD } from '@agora/contracts';
import type { NatsConnection } from '@nats-io/nats-core';
import type { InProcessBus } from './in-process-bus.js';
import { NatsWire } from './nats-wire.js';
import { encodeJson, type WireConnection, type WireHeaders } from './wire.js';

/**
 * A committed event as the store records it. The same shape as @agora/eventstore's
 * RecordedEvent (which fits it as is), written out here so that messaging does not depend on the
 * store.
 */
export interface RelayedEvent {
  id: string;
  type: string;
  data: unknown;
  metadata: Record<string, unknown>;
  streamId: string;
  revision: number;
  position: string;
  recordedAt: string;
}

/** Headers of a relayed event, so a listener can filter or dedupe without parsing the body (named in the contracts: they are part of the wire). */
export { EVENT_HEADERS };

/** The event's headers, and the W3C `traceparent` of the command that appended it when its metadata has one (a listener's work continues that trace). */
export function eventHeaders(event: RelayedEvent): WireHeaders {
  const traceparent = event.metadata['traceparent'];
  return {
    [EVENT_HEADERS.id]: event.id,
    [EVENT_HEADERS.type]: event.type,
    [EVENT_HEADERS.stream]: event.streamId,
    [EVENT_HEADERS.revision]: String(event.revision),
    [EVENT_HEADERS.position]: event.position,
    [EVENT_HEADERS.natsMsgId]: event.id,
    // Every event of a contracted type comes out of the store with its schema version (upcasting.ts in @agora/eventstore).
    ...(typeof event.metadata[SCHEMA_VERSION_FIELD] === 'number' ? { [EVENT_HEADERS.schemaVersion]: String(event.metadata[SCHEMA_VERSION_FIELD]) } : {}),
    ...(typeof traceparent === 'string' ? { traceparent } : {}),
  };
}

/**
 * Announces committed events on `agora.evt.<category>.<EventType>` for live listeners (agents,
 * SSE). The body is the event as JSON. `publish` resolves only once the message has reached
 * the NATS server (a flush), so a relay that checkpoints after it never skips an event: at least
 * once, and a listener dedupes on `Agora-Event-Id`. Core NATS does not keep messages for absent
 * listeners; a listener that must not miss any reads the store instead.
 */
export class EventPublisher {
  constructor(private readonly wire: WireConnection) {}

  static overNats(connection: NatsConnection): EventPublisher {
    return new EventPublisher(new NatsWire(connection));
  }

  static inProcess(bus: InProcessBus): EventPublisher {
    return new EventPublisher(bus);
  }

  subjectOf(event: Pick<RelayedEvent, 'streamId' | 'type'>): string {
    return eventSubject(categoryOf(event.streamId), event.type);
  }

  async publish(event: RelayedEvent): Promise<void> {
    this.send(event);
    await this.flush();
  }

  /**
   * Publishes without waiting for the server: the message goes out with the connection's next
   * write. `flush` then says when everything sent before it has reached the server (one round
   * trip for any number of events, where `publish` costs one each).
   */
  send(event: RelayedEvent): void {
    const { id, type, data, metadata, streamId, revision, position, recordedAt } = event;
    const body: RelayedEvent = { id, type, data, metadata, streamId, revision, position, recordedAt };
    this.wire.publish(this.subjectOf(event), encodeJson(body), { headers: eventHeaders(event) });
  }

  /** Resolves once every event sent so far has reached the NATS server (or the bus). */
  flush(): Promise<void> {
    return this.wire.flush();
  }
}
