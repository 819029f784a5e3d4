/**
 * The one place events come out of the store in today's shape. `openEventStore` wraps every
 * adapter in `upcastingStore`: each event of a type the contracts know is read at the schema
 * version it was stored at (metadata `schemaVersion`, none = 1) and upcast to the contract's
 * version before any decider, projection, reactor, relay, query or audit sees it; its metadata then
 * says that version. The bytes stay as written: an event reading changed carries them in `written`,
 * which the commit chain and the log hash cover (docs/event-versions.md).
 */
import { eventByType, SCHEMA_VERSION_FIELD, storedSchemaVersion, upcastEventData, type VersionedEvent } from '@agora/contracts';
import type { EventStore, ReadAllOptions, ReadStreamOptions, RecordedEvent, SubscribeOptions, Subscription } from './port.js';

/** The contract of an event type, or undefined for a type the contracts do not define (the store's own bookkeeping, a test's events): those pass as stored. */
export type EventVersions = (type: string) => VersionedEvent | undefined;

/**
 * `event` in today's shape: as is when it is stored at its contract's version (or its type has no
 * contract), else with its data upcast and `schemaVersion` set in its metadata, the stored form in
 * `written`. Throws UnknownEventVersion for a version this build does not know.
 */
export function upcastRecorded(event: RecordedEvent, versions: EventVersions = eventByType): RecordedEvent {
  const contract = versions(event.type);
  if (contract === undefined || event.metadata[SCHEMA_VERSION_FIELD] === contract.version) return event;
  const written = event.written ?? { data: event.data, metadata: event.metadata };
  const data = upcastEventData(contract, storedSchemaVersion(written.metadata), written.data, written.metadata);
  return { ...event, data, metadata: { ...written.metadata, [SCHEMA_VERSION_FIELD]: contract.version }, written };
}

/** `store`, every event it returns upcast (upcastRecorded). Appends go through untouched: what is appended is written as given. */
export function upcastingStore(store: EventStore, versions: EventVersions = eventByType): EventStore {
  const upcast = (event: RecordedEvent) => upcastRecorded(event, versions);
  return {
    get kind() {
      return store.kind;
    },
    append: (streamId, events, expectedRevision) => store.append(streamId, events, expectedRevision),
    ...(store.appendMany ? { appendMany: store.appendMany.bind(store) } : {}),
    readStream: async (streamId: string, options?: ReadStreamOptions) => (await store.readStream(streamId, options)).map(upcast),
    readAll: (options?: ReadAllOptions) => upcastAll(store.readAll(options), upcast),
    headPosition: () => store.headPosition(),
    comparePositions: (a, b) => store.comparePositions(a, b),
    // An event this build cannot read fails the handler like any other error: retried, reported through onError, never skipped.
    subscribe: (options: SubscribeOptions): Subscription => store.subscribe({ ...options, handler: (event) => options.handler(upcast(event)) }),
    close: () => store.close(),
  };
}

async function* upcastAll(events: AsyncIterable<RecordedEvent>, upcast: (event: RecordedEvent) => RecordedEvent): AsyncGenerator<RecordedEvent> {
  for await (const event of events) yield upcast(event);
}
