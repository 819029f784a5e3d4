import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { InvalidPosition, type EventStore, type Position, type RecordedEvent } from '@agora/eventstore';
import { assertValidCheckpointName, writeFileAtomically } from './checkpoint-store.js';
import type { EventSourcingLogger } from './streams.js';

/** How a state folded from the log is saved and restored. */
export interface SnapshotCodec<M> {
  /** Bump it whenever the fold or the saved form changes: a snapshot of another version is discarded and the state rebuilt from the log. */
  version: number;
  /** A JSON-serializable copy of the state. */
  encode(state: M): unknown;
  decode(saved: unknown): M;
}

/** A saved state and the place in the log it reflects. */
export interface Snapshot {
  /** The codec's version that wrote it. */
  version: number;
  /** Position of the last event folded into `state`. */
  position: Position;
  /** Position of the event before it (null: it was the first of the log), to check the log still has that event there. */
  previous: Position | null;
  /** Id of the event at `position`. */
  eventId: string;
  state: unknown;
}

/** Where folded states are kept between runs, by name. */
export interface SnapshotStore {
  load(name: string): Promise<Snapshot | undefined>;
  save(name: string, snapshot: Snapshot): Promise<void>;
}

/** Version of the snapshot file's own layout (not of the state inside it). */
const FILE_FORMAT = 1;

/** One JSON file per name, `<directory>/<name>.snapshot.json`, replaced atomically. */
export class FileSnapshotStore implements SnapshotStore {
  readonly directory: string;

  constructor(directory: string) {
    this.directory = resolve(directory);
  }

  async load(name: string): Promise<Snapshot | undefined> {
    assertValidCheckpointName(name);
    let text: string;
    try {
      text = await readFile(this.fileOf(name), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    const parsed = JSON.parse(text) as Partial<Snapshot> & { format?: number };
    if (parsed.format !== FILE_FORMAT || typeof parsed.version !== 'number' || typeof parsed.position !== 'string' || typeof parsed.eventId !== 'string') {
      throw new Error(`snapshot file ${this.fileOf(name)} is not a format ${FILE_FORMAT} snapshot`);
    }
    return { version: parsed.version, position: parsed.position, previous: parsed.previous ?? null, eventId: parsed.eventId, state: parsed.state };
  }

  async save(name: string, snapshot: Snapshot): Promise<void> {
    assertValidCheckpointName(name);
    const body = { format: FILE_FORMAT, name, savedAt: new Date().toISOString(), ...snapshot };
    await writeFileAtomically(this.directory, this.fileOf(name), JSON.stringify(body));
  }

  private fileOf(name: string): string {
    return join(this.directory, `${name}.snapshot.json`);
  }
}

/**
 * The saved state of `name` if it can be trusted: written by this codec version, and the log
 * still holds the event it ends at, at the same position (the log was not replaced or cut).
 * Otherwise undefined, after a log line saying why: the caller folds the log from the beginning.
 */
export async function restoreSnapshot<M>(store: EventStore, snapshots: SnapshotStore, name: string, codec: SnapshotCodec<M>, logger: EventSourcingLogger): Promise<{ state: M; snapshot: Snapshot } | undefined> {
  let snapshot: Snapshot | undefined;
  try {
    snapshot = await snapshots.load(name);
  } catch (error) {
    logger.warn(`[snapshot ${name}] unreadable; discarded, rebuilding from the log`, error);
    return undefined;
  }
  if (!snapshot) return undefined;
  if (snapshot.version !== codec.version) {
    logger.warn(`[snapshot ${name}] version ${snapshot.version} does not match the code's version ${codec.version}; discarded, rebuilding from the log`);
    return undefined;
  }
  if (!(await logHolds(store, snapshot))) {
    logger.warn(`[snapshot ${name}] position ${snapshot.position} (event ${snapshot.eventId}) is not in this log; discarded, rebuilding from the log`);
    return undefined;
  }
  try {
    return { state: codec.decode(snapshot.state), snapshot };
  } catch (error) {
    logger.warn(`[snapshot ${name}] could not be decoded; discarded, rebuilding from the log`, error);
    return undefined;
  }
}

/** Where a fold stopped in the log: the last event folded, its id, and the position before it (null: it was the log's first). */
export interface LogMark {
  position: Position;
  previous: Position | null;
  eventId: string;
}

/** Whether the log still holds the event `mark` names at its position (one read): false when the log was replaced or cut since. */
export async function logHolds(store: EventStore, mark: LogMark): Promise<boolean> {
  let atPosition: RecordedEvent | undefined;
  try {
    for await (const event of store.readAll({ ...(mark.previous === null ? {} : { after: mark.previous }), maxCount: 1 })) atPosition = event;
  } catch (error) {
    if (!(error instanceof InvalidPosition)) throw error;
  }
  return atPosition?.position === mark.position && atPosition.id === mark.eventId;
}

export interface SnapshotSchedule {
  /**
   * Save once this many events were folded since the last save (default 10,000)... While catching
   * up on history only the time rule applies, and the state is saved once caught up if this many
   * were folded: a rebuild of a long log encodes and writes each model about once, not once every
   * 10,000 events.
   */
  events?: number;
  /** ...or this many ms passed with unsaved events (default 30,000); and when stopped. */
  ms?: number;
}

/**
 * Follows the events a state was folded with and saves the state now and then (see
 * SnapshotSchedule). One save at a time; a failed save is logged, and the next one tries again.
 */
export class SnapshotWriter<M> {
  private last: { position: Position; previous: Position | null; eventId: string } | undefined;
  private sinceSave = 0;
  private savedAtMs = Date.now();
  private saving: Promise<void> | undefined;
  /** Set once the history that existed at start is folded (caughtUp): from then on the count rule applies too. */
  private live = false;
  private readonly everyEvents: number;
  private readonly everyMs: number;

  constructor(
    private readonly snapshots: SnapshotStore,
    private readonly name: string,
    private readonly codec: SnapshotCodec<M>,
    private readonly logger: EventSourcingLogger,
    schedule: SnapshotSchedule = {},
    restored?: Snapshot,
  ) {
    this.everyEvents = schedule.events ?? 10_000;
    this.everyMs = schedule.ms ?? 30_000;
    if (restored) this.last = { position: restored.position, previous: restored.previous, eventId: restored.eventId };
  }

  /** Call after folding `event` into `state`. */
  folded(event: RecordedEvent, state: M): void {
    this.last = { position: event.position, previous: this.last?.position ?? null, eventId: event.id };
    this.sinceSave++;
    if ((this.live && this.sinceSave >= this.everyEvents) || Date.now() - this.savedAtMs >= this.everyMs) void this.save(state);
  }

  /** Call once the history that existed at start is folded into `state`: saves it if the count rule is due, and applies that rule from now on. */
  caughtUp(state: M): void {
    this.live = true;
    if (this.sinceSave >= this.everyEvents) void this.save(state);
  }

  /** Saves `state` unless nothing was folded since the last save; resolves when written (or failed, logged). */
  save(state: M): Promise<void> {
    if (this.saving) return this.saving.then(() => (this.sinceSave > 0 ? this.save(state) : undefined));
    if (!this.last || this.sinceSave === 0) return Promise.resolve();
    // Encoded now, with the position it reflects; written in the background.
    const snapshot: Snapshot = { version: this.codec.version, ...this.last, state: this.codec.encode(state) };
    this.sinceSave = 0;
    this.savedAtMs = Date.now();
    this.saving = this.snapshots
      .save(this.name, snapshot)
      .catch((error: unknown) => {
        this.sinceSave++;
        this.logger.warn(`[snapshot ${this.name}] saving at ${snapshot.position} failed; will retry`, error);
      })
      .finally(() => (this.saving = undefined));
    return this.saving;
  }
}

/** The codec of a read model that is a Map from ids to JSON views (what `aggregateViews` and the agent directory build). */
export function mapSnapshotCodec<V>(version: number): SnapshotCodec<Map<string, V>> {
  return {
    version,
    encode: (model) => [...model],
    decode: (saved) => {
      if (!Array.isArray(saved)) throw new TypeError('a map snapshot is an array of [key, value] pairs');
      return new Map(saved as Array<[string, V]>);
    },
  };
}
