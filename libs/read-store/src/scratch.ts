import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { streamFilter, type LogMark } from '@agora/eventsourcing';
import type { EventStore, Position, RecordedEvent } from '@agora/eventstore';
import type { SqlExecutor, SqlRow } from './database.js';
import { insertRows } from './multi-row.js';
import type { SqlProjection } from './sql-projection.js';
import { SqliteReadDatabase } from './sqlite.js';

/**
 * A read model's tables folded from the log into a database of their own (SQLite in a temporary
 * directory), beside the live ones: what `verify` compares with them, and what a rebuild puts in
 * their place.
 */
export class ScratchTables {
  /** The last event folded (applied or skipped): where the next fold goes on from. */
  mark: LogMark | undefined;
  /** Events of the log read (applied or skipped). */
  events = 0;
  /** Events of the projection's categories applied. */
  applied = 0;
  private readonly accepts: (streamId: string) => boolean;

  private constructor(
    readonly db: SqliteReadDatabase,
    private readonly dir: string,
    private readonly projection: SqlProjection,
  ) {
    this.accepts = streamFilter(projection.categories);
  }

  static async create(projection: SqlProjection): Promise<ScratchTables> {
    const dir = mkdtempSync(join(tmpdir(), `agora-${projection.name}-`));
    const db = new SqliteReadDatabase(join(dir, 'scratch.sqlite'));
    try {
      await db.transaction(async (tx) => {
        for (const statement of projection.schema(db)) await tx.run(statement);
      });
    } catch (error) {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    return new ScratchTables(db, dir, projection);
  }

  /**
   * Folds the log's events after the last one folded, up to and including the one at `upTo` (the
   * log's end when undefined), in batches of `maxBatch` applied events, each batch one transaction.
   * `tick` is called after each batch.
   */
  foldUpTo(store: EventStore, upTo: Position | undefined, maxBatch: number, tick?: () => void): Promise<void> {
    return ScratchTables.foldTogether(store, [this], upTo, maxBatch, tick);
  }

  /**
   * `foldUpTo` for several read models in one pass over the log: it starts after the earliest of
   * their last events folded, and each takes the events after its own.
   */
  static async foldTogether(store: EventStore, scratches: readonly ScratchTables[], upTo: Position | undefined, maxBatch: number, tick?: () => void): Promise<void> {
    const behind = scratches.filter((s) => upTo === undefined || !s.mark || store.comparePositions(s.mark.position, upTo) < 0);
    if (behind.length === 0) return;
    const marks = behind.map((s) => s.mark?.position);
    const from = marks.includes(undefined) ? undefined : (marks as Position[]).reduce((a, b) => (store.comparePositions(a, b) <= 0 ? a : b));
    const batches = new Map<ScratchTables, RecordedEvent[]>(behind.map((s) => [s, []]));
    const write = async (scratch: ScratchTables) => {
      const events = batches.get(scratch)!;
      batches.set(scratch, []);
      if (events.length > 0) await scratch.db.transaction((tx) => scratch.projection.apply(tx, events));
      scratch.applied += events.length;
      tick?.();
    };
    for await (const event of store.readAll(from === undefined ? {} : { after: from })) {
      for (const scratch of behind) {
        if (scratch.mark && store.comparePositions(event.position, scratch.mark.position) <= 0) continue;
        scratch.events++;
        scratch.mark = { position: event.position, previous: scratch.mark?.position ?? null, eventId: event.id };
        if (!scratch.accepts(event.streamId)) continue;
        const batch = batches.get(scratch)!;
        batch.push(event);
        if (batch.length >= maxBatch) await write(scratch);
      }
      if (upTo !== undefined && store.comparePositions(event.position, upTo) >= 0) break;
    }
    for (const scratch of behind) await write(scratch);
  }

  /** Every row of `table`, a page at a time, in the order they were written. */
  async *rows(table: string, pageSize = 500): AsyncIterable<SqlRow[]> {
    for (let after = 0; ; ) {
      const page = await this.db.all<SqlRow & { rowid__: number }>(`SELECT rowid AS rowid__, * FROM ${table} WHERE rowid > $1 ORDER BY rowid LIMIT ${pageSize}`, [after]);
      if (page.length === 0) return;
      after = page.at(-1)!.rowid__;
      yield page.map(({ rowid__: _, ...row }) => row);
    }
  }

  /** Copies every row of `table` into the table of that name in `tx` (multi-row inserts); resolves with the rows copied. */
  async copyInto(tx: SqlExecutor, table: string): Promise<number> {
    let copied = 0;
    for await (const page of this.rows(table)) {
      const columns = Object.keys(page[0]!);
      copied += await insertRows(tx, table, columns, page.map((row) => columns.map((column) => row[column] ?? null)));
    }
    return copied;
  }

  async close(): Promise<void> {
    await this.db.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
