import type { EventStore, Position } from '@agora/eventstore';
import type { ReadDatabase } from './database.js';
import { POSITIONS_TABLE, positionRowForUpdate, positionsSchema, readModelKey } from './positions.js';
import { ScratchTables } from './scratch.js';
import type { SqlProjection } from './sql-projection.js';

/** How a rebuild is going, for its progress lines. */
export interface RebuildProgress {
  name: string;
  /** `fold`: the log folded into tables beside the live ones; `catch-up`: the events appended meanwhile; `switch`: the rows put in place of the live ones. */
  phase: 'fold' | 'catch-up' | 'switch';
  /** Events of the log read so far. */
  events: number;
  /** Events read a second, since the fold began. */
  perSecond: number;
  /** The log's end when the fold began, in events, where the store's positions count them (the embedded store, JetStream). */
  total?: number;
  /** Seconds left at this rate to reach `total`. */
  secondsLeft?: number;
}

export interface RebuildOptions {
  /** Called every `progressEveryMs` while the fold runs, and at each phase's start. */
  progress?: (progress: RebuildProgress) => void;
  /** Default 2,000. */
  progressEveryMs?: number;
  /** Events applied in one transaction of the fold (default 500). */
  maxBatch?: number;
}

export interface RebuildResult {
  name: string;
  version: number;
  /** Events of the log read, and of them those of the read model's categories. */
  events: number;
  applied: number;
  /** Rows put in place of the live ones, by table. */
  rows: Record<string, number>;
  /** Where the read model stands in the log once switched (null: the log is empty). */
  position: Position | null;
  foldMs: number;
  /** How long the switch's transaction held the read model's writer back (the queries were answered meanwhile, from the old rows). */
  switchMs: number;
}

/** A position the store counts in events (the embedded store's and JetStream's are whole numbers), else undefined. */
function countOf(position: Position | undefined): number | undefined {
  return position !== undefined && /^\d{1,15}$/.test(position) ? Number(position) : undefined;
}

/**
 * Builds a read model again from the whole log without stopping what reads or writes it: the log is
 * folded into tables of a scratch database beside the live ones (batched, the writer and the queries
 * going on meanwhile), caught up with what was appended since, and then, in one transaction of the
 * live database that holds the read model's position (its writer waits for it; the queries keep
 * reading the old rows until it commits), the events appended since are folded too, the live rows are
 * replaced by the rebuilt ones (multi-row inserts) and the position is set to where they stand.
 *
 * A live writer's batches that the rebuilt rows already hold are skipped by it, as after a takeover
 * (it checks the recorded position in each write). Use it when a read model's rows are suspect
 * (`agora verify-read-models` found a difference) or to compact one; a changed fold needs a new
 * version instead, whose tables every process fills at start.
 */
export async function rebuildSqlProjection(db: ReadDatabase, store: EventStore, projection: SqlProjection, options: RebuildOptions = {}): Promise<RebuildResult> {
  const key = readModelKey(projection);
  const maxBatch = options.maxBatch ?? 500;
  const every = options.progressEveryMs ?? 2_000;
  await db.migrate(async (tx) => {
    await tx.run(positionsSchema(db));
    for (const statement of projection.schema(db)) await tx.run(statement);
  });
  const scratch = await ScratchTables.create(projection);
  try {
    const started = Date.now();
    const total = countOf(await store.headPosition());
    let lastReport = 0;
    const report = (phase: RebuildProgress['phase'], force = false) => {
      const now = Date.now();
      if (!options.progress || (!force && now - lastReport < every)) return;
      lastReport = now;
      const perSecond = scratch.events / Math.max(0.001, (now - started) / 1000);
      const secondsLeft = total !== undefined && perSecond > 0 ? Math.max(0, (total - scratch.events) / perSecond) : undefined;
      options.progress({ name: projection.name, phase, events: scratch.events, perSecond, ...(total === undefined ? {} : { total }), ...(secondsLeft === undefined ? {} : { secondsLeft }) });
    };
    report('fold', true);
    await scratch.foldUpTo(store, undefined, maxBatch, () => report('fold'));
    // The writer went on meanwhile: fold what it has written since, a few times, so that the
    // switch's own fold (which holds the writer back) is short.
    report('catch-up', true);
    for (let round = 0; round < 3; round++) {
      const [row] = await db.all<{ position: string | null }>(`SELECT position FROM ${POSITIONS_TABLE} WHERE name = $1`, [key]);
      const live = row?.position ?? undefined;
      if (live === undefined || (scratch.mark && store.comparePositions(scratch.mark.position, live) >= 0)) break;
      await scratch.foldUpTo(store, live, maxBatch);
    }
    const foldMs = Date.now() - started;
    report('switch', true);
    const switchStarted = Date.now();
    const rows: Record<string, number> = {};
    await db.transaction(async (tx) => {
      const row = await positionRowForUpdate(tx, db.engine, key);
      if (row?.position && (!scratch.mark || store.comparePositions(scratch.mark.position, row.position) < 0)) await scratch.foldUpTo(store, row.position, maxBatch);
      for (const table of projection.tables) {
        await tx.run(`DELETE FROM ${table}`);
        rows[table] = await scratch.copyInto(tx, table);
      }
      const mark = scratch.mark;
      const values = [key, mark?.position ?? null, mark?.previous ?? null, mark?.eventId ?? null, scratch.applied, new Date().toISOString()];
      if (row) await tx.run(`UPDATE ${POSITIONS_TABLE} SET position = $2, previous = $3, event_id = $4, events = $5, updated_at = $6 WHERE name = $1`, values);
      else await tx.run(`INSERT INTO ${POSITIONS_TABLE} (name, version, position, previous, event_id, events, updated_at) VALUES ($1, $7, $2, $3, $4, $5, $6)`, [...values, projection.version]);
      await db.notify(tx, key);
    });
    return { name: projection.name, version: projection.version, events: scratch.events, applied: scratch.applied, rows, position: scratch.mark?.position ?? null, foldMs, switchMs: Date.now() - switchStarted };
  } finally {
    await scratch.close();
  }
}
