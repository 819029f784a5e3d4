/** A value bound to a statement's parameter, or read from a column: text, a whole number, or null. */
export type SqlValue = string | number | null;

/** A row as the engine returns it: columns by name. */
export type SqlRow = Record<string, SqlValue>;

/**
 * Runs statements. Parameters are written `$1`, `$2`, ... in the SQL text and given in that order:
 * both engines take that form as it is. Statements use the SQL both engines speak alike (CREATE
 * TABLE/INDEX IF NOT EXISTS, INSERT ... ON CONFLICT DO UPDATE, keyset WHERE clauses, CAST(... AS
 * INTEGER)); where they differ, the database says how (`text`).
 */
export interface SqlExecutor {
  /** The rows a statement returns. */
  all<R extends SqlRow = SqlRow>(sql: string, params?: readonly SqlValue[]): Promise<R[]>;
  /** Runs a statement for its effect; resolves with the number of rows it changed. */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>;
}

/** A lock held by this process until released (or until the process or its connection ends). */
export interface HeldLock {
  release(): Promise<void>;
}

/**
 * The read side's database. Queries (`all`) see only committed transactions; `transaction` runs its
 * work as one, all or nothing, one transaction of this process at a time.
 */
export interface ReadDatabase extends SqlExecutor {
  /** `postgres` (deployments, shared by every replica) or `sqlite` (one file under the data directory). */
  readonly engine: 'postgres' | 'sqlite';
  /**
   * The column type of text that sorts and compares byte by byte, as JavaScript compares strings of
   * ASCII (ids, ISO times): `TEXT COLLATE "C"` on PostgreSQL (whose default collation follows the
   * locale), `TEXT` on SQLite (binary already). Keys and filtered columns use it, so a page is the
   * same on both engines.
   */
  readonly text: string;
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /**
   * A transaction that changes tables (CREATE, DROP), one at a time among every process sharing the
   * database: PostgreSQL's `CREATE TABLE IF NOT EXISTS` run by two replicas at once can fail on its
   * catalog's unique index, so on PostgreSQL it first takes a lock of the transaction.
   */
  migrate<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Runs `work`'s queries on one snapshot of the database: whatever commits meanwhile, they all see the same state (read only). */
  snapshot<T>(work: (reader: Pick<SqlExecutor, 'all'>) => Promise<T>): Promise<T>;
  /**
   * Takes `name`'s lock if no other holder has it, without waiting: on PostgreSQL an advisory lock of
   * the session, so one replica of every deployment sharing the database holds it, and it is free
   * again when that replica's connection ends; on SQLite a lock of this process (one process writes a
   * data directory). Undefined when another holds it.
   */
  tryLock(name: string): Promise<HeldLock | undefined>;
  /**
   * Tells `listener` the name a writer `notify`-ed, once its transaction commits, in every process
   * sharing the database (PostgreSQL's LISTEN; undefined where a process is alone on its database,
   * SQLite). A follower learns so at once that the tables moved, without polling for it.
   */
  listen?(listener: (name: string) => void): Promise<{ close(): Promise<void> }>;
  /** Inside `tx`: tells the listeners `name` once the transaction commits (nothing where there is no `listen`). */
  notify(tx: SqlExecutor, name: string): Promise<void>;
  /** Where it is, for the start-up log (no password). */
  describe(): string;
  close(): Promise<void>;
}

/** Where the read side's database is: the AGORA_READ_DB setting, parsed. */
export type ReadDatabaseConfig = { engine: 'postgres'; url: string } | { engine: 'sqlite'; file: string };

export const READ_DB_HELP = `AGORA_READ_DB              where the read models live: postgres://user@host:5432/db for deployments
                           (every replica shares it), or sqlite:<file> for one process (default
                           sqlite:<AGORA_DATA_DIR>/read-models.sqlite)`;

/** AGORA_READ_DB as a config: `postgres://...` or `postgresql://...`, or `sqlite:<file>`; unset: SQLite in the data directory. */
export function parseReadDatabaseConfig(value: string | undefined, defaultFile: string): ReadDatabaseConfig {
  const raw = value?.trim();
  if (!raw) return { engine: 'sqlite', file: defaultFile };
  if (/^postgres(ql)?:\/\//.test(raw)) return { engine: 'postgres', url: raw };
  if (raw.startsWith('sqlite:') && raw.length > 'sqlite:'.length) return { engine: 'sqlite', file: raw.slice('sqlite:'.length) };
  throw new TypeError(`AGORA_READ_DB=${JSON.stringify(raw)} is neither a PostgreSQL URL (postgres://user@host:5432/database) nor sqlite:<file>`);
}

/** A URL without its password, for logs. */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/:[^:@/]*@/, ':***@');
  }
}
