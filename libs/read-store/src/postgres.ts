import pg from 'pg';
import { withoutPassword, type HeldLock, type ReadDatabase, type SqlExecutor, type SqlRow, type SqlValue } from './database.js';

/** The channel of NOTIFY on which writers say which read model moved. */
const CHANNEL = 'agora_read_models';

/** Agora's namespace of advisory locks (the first key); the second is the lock name's hash. */
const LOCK_NAMESPACE = 0x4147_4f52; // "AGOR"

/** bigint (COUNT(*), SUM) comes back as a number, as SQLite gives it: read models count far below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === 20 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text'))) as typeof pg.types.getTypeParser,
};

export interface PostgresReadDatabaseOptions {
  /** Connections at most (default 8): queries run on any; a transaction holds one until it ends; each held lock keeps one. */
  maxConnections?: number;
  /** Name shown in pg_stat_activity. */
  applicationName?: string;
}

/** The read side in PostgreSQL, shared by every replica of a deployment. */
export class PostgresReadDatabase implements ReadDatabase {
  readonly engine = 'postgres' as const;
  readonly text = 'TEXT COLLATE "C"';
  private readonly pool: pg.Pool;
  /** One transaction of this process at a time, as on SQLite: a projection's batches come in order. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly url: string,
    options: PostgresReadDatabaseOptions = {},
  ) {
    this.pool = new pg.Pool({ connectionString: url, max: options.maxConnections ?? 8, types, application_name: options.applicationName ?? 'agora' });
    // An idle connection that fails (the server restarted) is dropped by the pool; the next query opens another.
    this.pool.on('error', () => undefined);
  }

  /** Opens the pool and checks that the server answers (a clear error at start rather than at the first query). */
  static async open(url: string, options: PostgresReadDatabaseOptions = {}): Promise<PostgresReadDatabase> {
    const db = new PostgresReadDatabase(url, options);
    try {
      await db.all('SELECT 1 AS one');
    } catch (error) {
      await db.close();
      throw new Error(`the read database ${withoutPassword(url)} does not answer: ${(error as Error).message}`, { cause: error });
    }
    return db;
  }

  async all<R extends SqlRow = SqlRow>(sql: string, params?: readonly SqlValue[]): Promise<R[]> {
    return (await this.pool.query<R>(sql, params as SqlValue[] | undefined)).rows;
  }

  async run(sql: string, params?: readonly SqlValue[]): Promise<number> {
    return (await this.pool.query(sql, params as SqlValue[] | undefined)).rowCount ?? 0;
  }

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const next = this.queue.then(async () => {
      const client = await this.pool.connect();
      const tx: SqlExecutor = {
        all: async <R extends SqlRow = SqlRow>(sql: string, params?: readonly SqlValue[]) => (await client.query<R>(sql, params as SqlValue[] | undefined)).rows,
        run: async (sql, params) => (await client.query(sql, params as SqlValue[] | undefined)).rowCount ?? 0,
      };
      let broken: unknown;
      try {
        await client.query('BEGIN');
        const result = await work(tx);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch((rollback: unknown) => (broken = rollback));
        throw error;
      } finally {
        // A connection whose rollback failed is closed rather than handed to the next query.
        client.release(broken instanceof Error ? broken : undefined);
      }
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  migrate<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.transaction(async (tx) => {
      await tx.all('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_NAMESPACE, 'schema']);
      return work(tx);
    });
  }

  async snapshot<T>(work: (reader: Pick<SqlExecutor, 'all'>) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const result = await work({ all: async <R extends SqlRow = SqlRow>(sql: string, params?: readonly SqlValue[]) => (await client.query<R>(sql, params as SqlValue[] | undefined)).rows });
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollback: Error) => (broken = rollback));
      throw error;
    } finally {
      client.release(broken);
    }
  }

  async tryLock(name: string): Promise<HeldLock | undefined> {
    const client = await this.pool.connect();
    try {
      const [row] = (await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked', [LOCK_NAMESPACE, name])).rows;
      if (!row?.locked) {
        client.release();
        return undefined;
      }
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
    let held = true;
    return {
      release: async () => {
        if (!held) return;
        held = false;
        // Unlocked at once (the server frees a closed session's locks only once it notices the close); a connection that fails to is closed.
        try {
          await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_NAMESPACE, name]);
          client.release();
        } catch (error) {
          client.release(error as Error);
        }
      },
    };
  }

  /** One connection of its own, LISTENing; notifications from this process's writers come too. Reconnects after a drop (followers poll meanwhile). */
  async listen(listener: (name: string) => void): Promise<{ close(): Promise<void> }> {
    let client: pg.Client | undefined;
    let closed = false;
    const connect = async (): Promise<void> => {
      const next = new pg.Client({ connectionString: this.url, application_name: 'agora-listen' });
      next.on('notification', (message) => {
        if (message.channel === CHANNEL && message.payload) listener(message.payload);
      });
      next.on('error', () => {
        if (!closed) setTimeout(() => void connect().catch(() => undefined), 1_000).unref();
      });
      await next.connect();
      await next.query(`LISTEN ${CHANNEL}`);
      if (closed) await next.end();
      else client = next;
    };
    await connect();
    return {
      close: async () => {
        closed = true;
        await client?.end().catch(() => undefined);
      },
    };
  }

  async notify(tx: SqlExecutor, name: string): Promise<void> {
    await tx.all('SELECT pg_notify($1, $2)', [CHANNEL, name]);
  }

  describe(): string {
    return `PostgreSQL ${withoutPassword(this.url)}`;
  }

  async close(): Promise<void> {
    await this.queue;
    await this.pool.end();
  }
}
