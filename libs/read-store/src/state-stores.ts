import { assertValidCheckpointName, type CheckpointStore, type Snapshot, type SnapshotStore } from '@agora/eventsourcing';
import type { Position } from '@agora/eventstore';
import type { ReadDatabase, SqlValue } from './database.js';
import { placeholders } from './multi-row.js';

/**
 * Where the consumers with effects outside the process (reactors, the relay) and the folds kept in
 * memory (the agent directory, the deadline schedulers' pending sets) keep how far they have got, in
 * the read side's database: on PostgreSQL every replica shares it, so a replica that takes a lease
 * over, or a new one, resumes where the last holder stopped instead of at the log's beginning; with
 * SQLite it is the data directory's file, beside the read models.
 *
 * `before`: where an earlier release kept them (files under the data directory), read when the table
 * has no row of the name yet, so an upgraded deployment goes on from there.
 */
abstract class SqlStateTable {
  private ready: Promise<void> | undefined;
  /** The last write of each name in progress: the next write of that name waits for it, so an older value never lands last. */
  private readonly writing = new Map<string, Promise<void>>();

  constructor(
    protected readonly db: ReadDatabase,
    private readonly table: string,
    private readonly columns: string,
  ) {}

  /** Creates the table on first use (once per process). */
  protected schema(): Promise<void> {
    this.ready ??= this.db.migrate((tx) => tx.run(`CREATE TABLE IF NOT EXISTS ${this.table} (name ${this.db.text} PRIMARY KEY, ${this.columns}, saved_at TEXT NOT NULL)`)).then(
      () => undefined,
      (error: unknown) => {
        this.ready = undefined;
        throw error;
      },
    );
    return this.ready;
  }

  protected async row<R extends Record<string, SqlValue>>(name: string, columns: string): Promise<R | undefined> {
    assertValidCheckpointName(name);
    await this.schema();
    await this.writing.get(name)?.catch(() => undefined);
    const [row] = await this.db.all<R>(`SELECT ${columns} FROM ${this.table} WHERE name = $1`, [name]);
    return row;
  }

  /** Inserts or replaces the row of `name` (values in the order of the table's columns after the name). */
  protected write(name: string, values: readonly SqlValue[]): Promise<void> {
    try {
      assertValidCheckpointName(name);
    } catch (error) {
      return Promise.reject(error);
    }
    const names = this.columns.split(',').map((column) => column.trim().split(/\s+/)[0]!);
    const all = [...names, 'saved_at'];
    const sql = `INSERT INTO ${this.table} (name, ${all.join(', ')}) VALUES (${placeholders(all.length + 1)}) ON CONFLICT (name) DO UPDATE SET ${all.map((column) => `${column} = excluded.${column}`).join(', ')}`;
    const previous = this.writing.get(name) ?? Promise.resolve();
    const current = previous
      .catch(() => undefined)
      .then(() => this.schema())
      .then(() => this.db.run(sql, [name, ...values, new Date().toISOString()]))
      .then(() => undefined);
    this.writing.set(name, current);
    const forget = () => {
      if (this.writing.get(name) === current) this.writing.delete(name);
    };
    current.then(forget, forget);
    return current;
  }
}

/** Consumers' checkpoints in the table `agora_checkpoints` (see SqlStateTable). */
export class SqlCheckpointStore extends SqlStateTable implements CheckpointStore {
  constructor(
    db: ReadDatabase,
    private readonly options: { before?: CheckpointStore } = {},
  ) {
    super(db, 'agora_checkpoints', 'position TEXT NOT NULL');
  }

  async load(name: string): Promise<Position | undefined> {
    const row = await this.row<{ position: string }>(name, 'position');
    return row ? row.position : this.options.before?.load(name);
  }

  save(name: string, position: Position): Promise<void> {
    if (typeof position !== 'string' || position.length === 0) return Promise.reject(new TypeError(`checkpoint ${name}: position must be a non-empty string`));
    return this.write(name, [position]);
  }
}

interface SnapshotRow {
  version: number;
  position: string;
  previous: string | null;
  event_id: string;
  state: string;
  [column: string]: SqlValue;
}

/**
 * Saved folds in the table `agora_snapshots` (see SqlStateTable): what is saved there is bounded by
 * what is live (the agents, the pending deadlines), never the log's history.
 */
export class SqlSnapshotStore extends SqlStateTable implements SnapshotStore {
  constructor(
    db: ReadDatabase,
    private readonly options: { before?: SnapshotStore } = {},
  ) {
    super(db, 'agora_snapshots', 'version INTEGER NOT NULL, position TEXT NOT NULL, previous TEXT, event_id TEXT NOT NULL, state TEXT NOT NULL');
  }

  async load(name: string): Promise<Snapshot | undefined> {
    const row = await this.row<SnapshotRow>(name, 'version, position, previous, event_id, state');
    if (!row) return this.options.before?.load(name);
    return { version: Number(row.version), position: row.position, previous: row.previous, eventId: row.event_id, state: JSON.parse(row.state) as unknown };
  }

  save(name: string, snapshot: Snapshot): Promise<void> {
    return this.write(name, [snapshot.version, snapshot.position, snapshot.previous, snapshot.eventId, JSON.stringify(snapshot.state)]);
  }
}
