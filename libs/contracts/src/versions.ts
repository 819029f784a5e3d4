/**
 * Event schema versions (docs/event-versions.md). Every event type's contract names the version of
 * its `data` (1 until its shape changes otherwise than by a new optional field), and every event
 * is stored with the version it was written at, in its metadata under `schemaVersion` (an event
 * written before versions existed has none and reads as version 1). Reading an older version runs
 * the contract's upcasters, one version at a time, to today's shape: pure functions of the stored
 * data (and metadata), so a replay, a rebuild and an audit all see the same thing. The stored bytes
 * are never rewritten: hashes and signatures cover what was written.
 */

/** The metadata field holding the schema version an event's data is in. */
export const SCHEMA_VERSION_FIELD = 'schemaVersion';

/**
 * Turns the data of version n of an event type into version n + 1. Pure: no clock, no ids, no I/O;
 * the same stored event always gives the same result. `metadata` is the event's stored metadata
 * (read only), for an upcaster that needs who or when.
 */
export type EventUpcaster = (data: unknown, metadata: Readonly<Record<string, unknown>>) => unknown;

/** What upcasting needs of an event's contract. */
export interface VersionedEvent {
  type: string;
  /** The version of the shape the contract's `data` schema describes: today's. */
  version: number;
  /** `upcasters[n - 1]` turns version n into n + 1; there is one for every version before `version`. */
  upcasters: readonly EventUpcaster[];
}

/** An event written at a schema version this build does not know (a newer release wrote it): it is not read as something it is not. */
export class UnknownEventVersion extends Error {
  override readonly name = 'UnknownEventVersion';
  constructor(
    readonly eventType: string,
    readonly version: unknown,
    readonly known: number,
  ) {
    super(`${eventType} version ${String(version)} is not one this release reads (it knows versions 1 to ${known}): the event was written by a newer release, or its metadata.${SCHEMA_VERSION_FIELD} is damaged`);
  }
}

/** Checks a contract's version and upcasters agree (defineEvent calls it). */
export function checkVersioning(event: VersionedEvent): void {
  if (!Number.isInteger(event.version) || event.version < 1) throw new Error(`${event.type}: version must be a whole number from 1, got ${event.version}`);
  if (event.upcasters.length !== event.version - 1) {
    throw new Error(`${event.type} is at version ${event.version}: it needs ${event.version - 1} upcaster(s) (from each earlier version to the next), it has ${event.upcasters.length}`);
  }
}

/** The schema version an event was stored at: its metadata's `schemaVersion`, or 1 when it has none (written before versions existed). */
export function storedSchemaVersion(metadata: Readonly<Record<string, unknown>>): number {
  return (metadata[SCHEMA_VERSION_FIELD] as number | undefined) ?? 1;
}

/**
 * The data of an event stored at `from`, in today's shape (`event.version`): the upcasters from
 * `from` on, in order. Data already at today's version is returned as is. Throws
 * UnknownEventVersion for a version that is not a whole number from 1 to today's.
 */
export function upcastEventData(event: VersionedEvent, from: unknown, data: unknown, metadata: Readonly<Record<string, unknown>>): unknown {
  if (from === event.version) return data;
  if (typeof from !== 'number' || !Number.isInteger(from) || from < 1 || from > event.version) throw new UnknownEventVersion(event.type, from, event.version);
  let upcast = data;
  for (let version = from; version < event.version; version++) upcast = event.upcasters[version - 1]!(upcast, metadata);
  return upcast;
}
