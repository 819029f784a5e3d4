import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import type { HeldLock, ReadDatabase, SqlExecutor, SqlRow, SqlValue } from './database.js';

type Statement = Database.Statement<Record<string, SqlValue>, SqlRow>;

/** `$1, $2, ...` are named parameters to SQLite ("1", "2"): bound from an object of those names. */
function named(params: readonly SqlValue[] | undefined): Record<string, SqlValue> {
  const bound: Record<string, SqlValue> = {};
  if (params) for (let i = 0; i < params.length; i++) bound[String(i + 1)] = params[i]!;
  return bound;
}

/** Prepared statements of one connection, by SQL text (a read model uses a few dozen). */
class Statements {
  private readonly cache = new Map<string, Statement>();
  constructor(private readonly db: Database.Database) {}

  get(sql: string): Statement {
    let statement = this.cache.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      if (this.cache.size >= 500) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(sql, statement);
    }
    return statement;
  }

  all<R extends SqlRow>(sql: string, params?: readonly SqlValue[]): R[] {
    const statement = this.get(sql);
    return (statement.reader ? statement.all(named(params)) : (statement.run(named(params)), [])) as R[];
  }

  run(sql: string, params?: readonly SqlValue[]): number {
    return this.get(sql).run(named(params)).changes;
  }
}

/**
 * The read side in one SQLite file (better-sqlite3), for a process alone on its data directory
 * (`npm start`). Write-ahead logging, two connections: transactions on one, queries on the other, so
 * a query never sees half a transaction. Statements run synchronously, each one short (indexed
 * reads and writes of single rows and pages).
 */
export class SqliteReadDatabase implements ReadDatabase {
  readonly engine = 'sqlite' as const;
  readonly text = 'TEXT';
  private readonly writer: Database.Database;
  private readonly reader: Database.Database;
  private readonly writes: Statements;
  private readonly reads: Statements;
  /** One transaction at a time: the next waits for this one. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly locks = new Set<string>();
  private snapshots: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(readonly file: string) {
    this.file = resolve(file);
    mkdirSync(dirname(this.file), { recursive: true });
    this.writer = new Database(this.file);
    this.writer.pragma('journal_mode = WAL');
    this.writer.pragma('synchronous = NORMAL');
    this.writer.pragma('busy_timeout = 5000');
    this.reader = new Database(this.file);
    this.reader.pragma('busy_timeout = 5000');
    this.writes = new Statements(this.writer);
    this.reads = new Statements(this.reader);
  }

  async all<R extends SqlRow = SqlRow>(sql: string, params?: readonly SqlValue[]): Promise<R[]> {
    return this.reads.all<R>(sql, params);
  }

  /** Outside a transaction, a statement for its effect runs on the writing connection, after the transactions queued before it. */
  async run(sql: string, params?: readonly SqlValue[]): Promise<number> {
    return this.transaction(async (tx) => tx.run(sql, params));
  }

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const next = this.queue.then(async () => {
      if (this.closed) throw new Error(`the read database ${this.file} is closed`);
      const tx: SqlExecutor = {
        all: async <R extends SqlRow = SqlRow>(sql: string, params?: readonly SqlValue[]) => this.writes.all<R>(sql, params),
        run: async (sql, params) => this.writes.run(sql, params),
      };
      this.writer.exec('BEGIN IMMEDIATE');
      try {
        const result = await work(tx);
        this.writer.exec('COMMIT');
        return result;
      } catch (error) {
        if (this.writer.inTransaction) this.writer.exec('ROLLBACK');
        throw error;
      }
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** A transaction: BEGIN IMMEDIATE already takes the file's one writer lock. */
  migrate<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.transaction(work);
  }

  /** On the reading connection, in a transaction of its own: SQLite's write-ahead log keeps its snapshot until it ends. One snapshot at a time. */
  snapshot<T>(work: (reader: Pick<SqlExecutor, 'all'>) => Promise<T>): Promise<T> {
    const next = this.snapshots.then(async () => {
      const reader = new Database(this.file, { readonly: true });
      try {
        const reads = new Statements(reader);
        reader.exec('BEGIN');
        // The snapshot starts at the first read.
        reads.all('SELECT 1 AS one');
        return await work({ all: async <R extends SqlRow = SqlRow>(sql: string, params?: readonly SqlValue[]) => reads.all<R>(sql, params) });
      } finally {
        reader.close();
      }
    });
    this.snapshots = next.catch(() => undefined);
    return next;
  }

  async tryLock(name: string): Promise<HeldLock | undefined> {
    if (this.locks.has(name)) return undefined;
    this.locks.add(name);
    let held = true;
    return {
      release: async () => {
        if (held) this.locks.delete(name);
        held = false;
      },
    };
  }

  /** A process alone on its file has no one to tell. */
  async notify(): Promise<void> {}

  describe(): string {
    return `SQLite ${this.file}`;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.queue;
    this.closed = true;
    this.reader.close();
    this.writer.close();
  }
}
