import type { ReadDatabase } from './database.js';

/** Where every read model of the database has got to in the log: one row per read model and version. */
export const POSITIONS_TABLE = 'agora_read_models';

export function positionsSchema(db: Pick<ReadDatabase, 'text'>): string {
  return `CREATE TABLE IF NOT EXISTS ${POSITIONS_TABLE} (name ${db.text} PRIMARY KEY, version INTEGER NOT NULL, position TEXT, previous TEXT, event_id TEXT, events INTEGER NOT NULL, updated_at TEXT NOT NULL)`;
}

export interface PositionRow {
  version: number;
  position: string | null;
  previous: string | null;
  event_id: string | null;
  events: number;
  [column: string]: string | number | null;
}

/**
 * A read model at its version (`proposals_v1`): its row in `agora_read_models`, its writer's lock
 * and its notifications. Each version has its own, so replicas of two releases (a rolling upgrade)
 * each keep their own tables.
 */
export function readModelKey(projection: { name: string; version: number }): string {
  return `${projection.name}_v${projection.version}`;
}

/** The row of `key` as it stands, locked until the transaction ends where the engine locks rows (PostgreSQL; SQLite's write transaction holds the whole file). */
export async function positionRowForUpdate(tx: { all: ReadDatabase['all'] }, engine: ReadDatabase['engine'], key: string): Promise<PositionRow | undefined> {
  const [row] = await tx.all<PositionRow>(`SELECT version, position, previous, event_id, events FROM ${POSITIONS_TABLE} WHERE name = $1${engine === 'postgres' ? ' FOR UPDATE' : ''}`, [key]);
  return row;
}
