import type { SqlExecutor, SqlRow, SqlValue } from './database.js';

/**
 * Parameters one statement carries at most: under SQLite's limit (32,766) and PostgreSQL's (65,535).
 * A batch of a read model's writes goes in as few statements as this allows: one round trip to
 * PostgreSQL (and one prepared statement of SQLite) for many rows instead of one per row.
 */
export const MAX_PARAMETERS = 30_000;

/** `items` in runs whose parameters (`perItem` each) fit one statement. */
export function inStatements<T>(items: readonly T[], perItem: number): T[][] {
  const size = Math.max(1, Math.floor(MAX_PARAMETERS / Math.max(1, perItem)));
  const runs: T[][] = [];
  for (let i = 0; i < items.length; i += size) runs.push(items.slice(i, i + size));
  return runs;
}

/** `$from, $from+1, ...`: `count` placeholders for an IN list. */
export function placeholders(count: number, from = 1): string {
  return Array.from({ length: count }, (_, i) => `$${from + i}`).join(', ');
}

/**
 * Inserts `rows` (each its values in the order of `columns`) into `table` in multi-row statements,
 * each followed by `suffix` (an ON CONFLICT clause). Resolves with the rows written.
 */
export async function insertRows(tx: Pick<SqlExecutor, 'run'>, table: string, columns: readonly string[], rows: readonly (readonly SqlValue[])[], suffix = ''): Promise<number> {
  for (const run of inStatements(rows, columns.length)) {
    const tuples = run.map((_, r) => `(${placeholders(columns.length, r * columns.length + 1)})`);
    await tx.run(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')}${suffix ? ` ${suffix}` : ''}`, run.flat());
  }
  return rows.length;
}

/** The rows of `sql` (ending in `IN (`, closed here) for every value of `values`, read in as few statements as the limit allows. */
export async function selectIn<R extends SqlRow>(db: Pick<SqlExecutor, 'all'>, sql: string, values: readonly SqlValue[]): Promise<R[]> {
  const rows: R[] = [];
  for (const run of inStatements(values, 1)) rows.push(...(await db.all<R>(`${sql}${placeholders(run.length)})`, run)));
  return rows;
}

/** Runs `sql` (ending in `IN (`, closed here) for every value of `values`, in as few statements as the limit allows. */
export async function runIn(tx: Pick<SqlExecutor, 'run'>, sql: string, values: readonly SqlValue[]): Promise<void> {
  for (const run of inStatements(values, 1)) await tx.run(`${sql}${placeholders(run.length)})`, run);
}
