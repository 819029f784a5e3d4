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
  /** Called as each read model is switched (`rebuildSqlProjections` switches them one after another). */
  switched?: (result: RebuildResult) => void;
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
  const [result] = await rebuildSqlProjections(db, store, [projection], options);
  return result!;
}

/**
 * `rebuildSqlProjection` for several read models, folded in one pass over the log (the log is read
 * once, not once a read model); each is then caught up and switched on its own, in that order. The
 * progress of the shared fold names them all.
 */
export async function rebuildSqlProjections(db: ReadDatabase, store: EventStore, projections: readonly SqlProjection[], options: RebuildOptions = {}): Promise<RebuildResult[]> {
  const maxBatch = options.maxBatch ?? 500;
  const every = options.progressEveryMs ?? 2_000;
  await db.migrate(async (tx) => {
    await tx.run(positionsSchema(db));
    for (const projection of projections) for (const statement of projection.schema(db)) await tx.run(statement);
  });
  const scratches: ScratchTables[] = [];
  try {
    for (const projection of projections) scratches.push(await ScratchTables.create(projection));
    const started = Date.now();
    const total = countOf(await store.headPosition());
    let lastReport = 0;
    const report = (name: string, scratch: ScratchTables, phase: RebuildProgress['phase'], force = false) => {
      const now = Date.now();
      if (!options.progress || (!force && now - lastReport < every)) return;
      lastReport = now;
      const perSecond = scratch.events / Math.max(0.001, (now - started) / 1000);
      const secondsLeft = total !== undefined && perSecond > 0 ? Math.max(0, (total - scratch.events) / perSecond) : undefined;
      options.progress({ name, phase, events: scratch.events, perSecond, ...(total === undefined ? {} : { total }), ...(secondsLeft === undefined ? {} : { secondsLeft }) });
    };
    const together = projections.map((p) => p.name).join(', ');
    report(together, scratches[0]!, 'fold', true);
    await ScratchTables.foldTogether(store, scratches, undefined, maxBatch, () => report(together, scratches[0]!, 'fold'));
    const results: RebuildResult[] = [];
    for (const [i, projection] of projections.entries()) {
      const result = await catchUpAndSwitch(db, store, projection, scratches[i]!, maxBatch, started, (phase) => report(projection.name, scratches[i]!, phase, true));
      results.push(result);
      options.switched?.(result);
    }
    return results;
  } finally {
    for (const scratch of scratches) await scratch.close();
  }
}

/** After the fold: folds what the live writer wrote meanwhile, then puts the rebuilt rows in place of the live ones in one transaction. */
async function catchUpAndSwitch(db: ReadDatabase, store: EventStore, projection: SqlProjection, scratch: ScratchTables, maxBatch: number, started: number, report: (phase: RebuildProgress['phase']) => void): Promise<RebuildResult> {
  const key = readModelKey(projection);
  // The writer went on meanwhile: fold what it has written since, a few times, so that the
  // switch's own fold (which holds the writer back) is short.
  report('catch-up');
  for (let round = 0; round < 3; round++) {
    const [row] = await db.all<{ position: string | null }>(`SELECT position FROM ${POSITIONS_TABLE} WHERE name = $1`, [key]);
    const live = row?.position ?? undefined;
    if (live === undefined || (scratch.mark && store.comparePositions(scratch.mark.position, live) >= 0)) break;
    await scratch.foldUpTo(store, live, maxBatch);
  }
  const foldMs = Date.now() - started;
  report('switch');
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
}
