import type { DomainEvent } from '@agora/decider';
import { mapSnapshotCodec, type Projection } from '@agora/eventsourcing';
import { StreamNotFound, type EventStore, type RecordedEvent } from '@agora/eventstore';
import { addSums, type Sums, type TimedSum } from '@agora/decider';
import { insertRows, runIn, selectIn, type SqlExecutor, type SqlProjection, type SqlValue } from '@agora/read-store';

export interface AggregateViewsSpec<S extends { status: string }, E extends DomainEvent> {
  name: string;
  /** The stream category: streams are `<category>-<id>`, and the id is the view's key. */
  category: string;
  /** The decider's initial state and its own `evolve`, so the read model and the decider cannot disagree. */
  initial: S;
  evolve(state: S, event: E): S;
  /** Version of saved snapshots of this model: bump it when `evolve` or the view changes, so older snapshots are rebuilt from the log. Default 1. */
  snapshotVersion?: number;
}

/**
 * A read model of every aggregate of a category, by id: the decider's state folded with its own
 * `evolve`, plus the revision of the stream it reflects (`V`, the view's contract type). An
 * aggregate whose state is still the initial one (a stream of events that created nothing) is left out.
 */
export function aggregateViews<V extends { streamRevision: number }, S extends { status: string }, E extends DomainEvent>(spec: AggregateViewsSpec<S, E>): Projection<Map<string, V>> {
  const prefix = `${spec.category}-`;
  return {
    name: spec.name,
    categories: [spec.category],
    initial: () => new Map(),
    snapshot: mapSnapshotCodec<V>(spec.snapshotVersion ?? 1),
    apply(model, event: RecordedEvent) {
      const id = event.streamId.slice(prefix.length);
      const current = (model.get(id) as S | undefined) ?? spec.initial;
      const next = spec.evolve(current, { type: event.type, data: event.data } as E);
      // Past the initial state, the decider's state is the view's record (the contracts define both).
      if (next.status !== spec.initial.status) model.set(id, { ...next, streamRevision: event.revision } as unknown as V);
    },
  };
}

/** The events of one stream, or undefined when it has none. */
export async function readEvents(store: EventStore, streamId: string): Promise<RecordedEvent[] | undefined> {
  try {
    return await store.readStream(streamId);
  } catch (error) {
    if (error instanceof StreamNotFound) return undefined;
    throw error;
  }
}

/**
 * One aggregate read straight from its stream, folded the way `projection` folds it: for a reactor
 * or handler that decides on the aggregate as the log has it now. Queries answer from the read model
 * itself (a command's reply waits until the model holds it). Undefined when there is none.
 */
export async function readAggregateView<V>(store: EventStore, projection: Projection<Map<string, V>>, streamId: string, id: string): Promise<V | undefined> {
  const events = await readEvents(store, streamId);
  if (!events) return undefined;
  const model = projection.initial();
  for (const event of events) projection.apply(model, event);
  return model.get(id);
}

/** A column of a read model's table: its name, its type, and its value in a record. */
export interface SqlColumn<T> {
  name: string;
  type: 'text' | 'integer';
  of(record: T): SqlValue;
}

/** A text column (compared byte by byte: see ReadDatabase.text). */
export function textColumn<T>(name: string, of: (record: T) => string | null): SqlColumn<T> {
  return { name, type: 'text', of };
}

/** A whole-number column; a boolean is stored as 1 or 0, null as NULL. */
export function integerColumn<T>(name: string, of: (record: T) => number | boolean | null): SqlColumn<T> {
  return {
    name,
    type: 'integer',
    of: (record) => {
      const value = of(record);
      return value === null ? null : Number(value);
    },
  };
}

/** A child table of the agents a view names (its participants, those it awaits), one row each: for a filter by agent (`hasAgent`). */
export function agentsTable<V>(table: string, agents: (view: V) => readonly (string | null)[]): SqlChildTable<V, unknown> {
  return childTable<V, { agent: string }>({
    table,
    columns: [textColumn('agent', (row) => row.agent)],
    key: ['agent'],
    indexes: [['agent']],
    rows: (view) => [...new Set(agents(view).filter((a): a is string => a !== null))].map((agent) => ({ agent })),
  });
}

/** A child table of a view's rows, typed by its own rows where it is written. */
export function childTable<V, C>(child: SqlChildTable<V, C>): SqlChildTable<V, unknown> {
  return child as unknown as SqlChildTable<V, unknown>;
}

/** Rows derived from a view, replaced whenever the view changes: for filters on the view's lists (a reviewer's assignments, a session's participants). */
export interface SqlChildTable<V, C> {
  /** The table's name without the version (`proposal_assignments`). */
  table: string;
  columns: readonly SqlColumn<C>[];
  /** The columns that make a row unique within its parent's (with `parent_id`, the primary key). */
  key: readonly string[];
  /** Indexes, each a list of columns, a column with ` DESC` where queries sort it so. */
  indexes: readonly (readonly string[])[];
  rows(view: V): C[];
}

export interface SqlAggregateViewsSpec<V, S extends { status: string }, E extends DomainEvent> extends Omit<AggregateViewsSpec<S, E>, 'snapshotVersion'> {
  /** Bump it when the view, its columns or `evolve` change: the tables of the new version are filled from the log. */
  version: number;
  /** Columns besides `id`, `stream_revision` and `doc` (the view as JSON), for filters and order. */
  columns: readonly SqlColumn<V>[];
  indexes: readonly (readonly string[])[];
  /** Child tables (see `childTable`). */
  children?: readonly SqlChildTable<V, unknown>[];
  /** What a view adds to the model's all-time figures (see Sums in @agora/decider): kept in `<name>_sums_v<version>`, moved by each update's difference. */
  sums?(view: V): ReadonlyMap<string, number>;
  /** What a view adds to figures over a window, at their instants: rows of `<name>_timed_v<version>`, summed over a window by `windowSums`. */
  timed?(view: V): readonly TimedSum[];
}

/** A read model of every aggregate of a category in a table, and the ways to read it. */
export interface SqlAggregateViews<V> extends SqlProjection {
  /** The table of the views, with its version (`proposals_v1`). */
  readonly table: string;
  /** A child table's name with its version. */
  childTable(name: string): string;
  /** One view by id, or undefined. */
  get(db: Pick<SqlExecutor, 'all'>, id: string): Promise<V | undefined>;
  /** The all-time figures: the sums of every view's `sums` (empty without `sums`). */
  sums(db: Pick<SqlExecutor, 'all'>): Promise<Sums>;
  /** The sums of every view's `timed` contributions at instants from `from` to `to` (both included, milliseconds since the epoch). */
  windowSums(db: Pick<SqlExecutor, 'all'>, from: number, to: number): Promise<Sums>;
}

const versioned = (table: string, version: number) => `${table}_v${version}`;

function indexStatements(table: string, indexes: readonly (readonly string[])[]): string[] {
  return indexes.map((columns) => `CREATE INDEX IF NOT EXISTS ${table}_by_${columns.map((c) => c.replace(/\s+DESC$/i, '')).join('_')} ON ${table} (${columns.join(', ')})`);
}

/**
 * `aggregateViews` in tables: every aggregate of a category folded with the decider's own `evolve`,
 * one row per aggregate (the view as JSON in `doc`, the columns its queries filter and sort on beside
 * it, child rows for its lists). A batch loads each aggregate it touches once, folds its events, and
 * writes the row once.
 */
export function sqlAggregateViews<V extends { streamRevision: number }, S extends { status: string }, E extends DomainEvent>(spec: SqlAggregateViewsSpec<V, S, E>): SqlAggregateViews<V> {
  const prefix = `${spec.category}-`;
  // The table is named after the read model, with its version (`proposals_v1`).
  const table = versioned(spec.name, spec.version);
  const childTable = (name: string) => versioned(name, spec.version);
  const sumsTable = versioned(`${spec.name}_sums`, spec.version);
  const timed = spec.timed;
  const children = [...(spec.children ?? []), ...(timed ? [timedTable(`${spec.name}_timed`, timed)] : [])];
  const sumsOfView = spec.sums ?? (() => new Map<string, number>());
  const viewColumns = ['id', 'stream_revision', 'doc', ...spec.columns.map((c) => c.name)];
  const upsert = `ON CONFLICT (id) DO UPDATE SET ${viewColumns.slice(1).map((c) => `${c} = excluded.${c}`).join(', ')}`;
  const get = async (db: Pick<SqlExecutor, 'all'>, id: string): Promise<V | undefined> => {
    const [row] = await db.all<{ doc: string }>(`SELECT doc FROM ${table} WHERE id = $1`, [id]);
    return row ? (JSON.parse(row.doc) as V) : undefined;
  };
  return {
    name: spec.name,
    version: spec.version,
    categories: [spec.category],
    table,
    childTable,
    tables: [...children.map((c) => childTable(c.table)), ...(spec.sums ? [sumsTable] : []), table],
    schema(db) {
      // BIGINT: instants in milliseconds and sums pass 32 bits (an INTEGER of SQLite is 64 bits already).
      const type = (c: { type: 'text' | 'integer' }) => (c.type === 'text' ? db.text : 'BIGINT');
      return [
        ...(spec.sums ? [`CREATE TABLE IF NOT EXISTS ${sumsTable} (figure ${db.text} PRIMARY KEY, value BIGINT NOT NULL)`] : []),
        `CREATE TABLE IF NOT EXISTS ${table} (id ${db.text} PRIMARY KEY, stream_revision INTEGER NOT NULL, doc TEXT NOT NULL${spec.columns.map((c) => `, ${c.name} ${type(c)}`).join('')})`,
        ...indexStatements(table, spec.indexes),
        ...children.flatMap((child) => [
          `CREATE TABLE IF NOT EXISTS ${childTable(child.table)} (parent_id ${db.text} NOT NULL${child.columns.map((c) => `, ${c.name} ${type(c)}`).join('')}, PRIMARY KEY (parent_id, ${child.key.join(', ')}))`,
          ...indexStatements(childTable(child.table), child.indexes),
        ]),
      ];
    },
    async apply(tx, events) {
      // Each aggregate the batch touches: its view before the batch (if any, read in one statement) and its state after.
      const ids = [...new Set(events.map((event) => event.streamId.slice(prefix.length)))];
      const stored = new Map((await selectIn<{ id: string; doc: string }>(tx, `SELECT id, doc FROM ${table} WHERE id IN (`, ids)).map((row) => [row.id, JSON.parse(row.doc) as V]));
      const touched = new Map<string, { before: V | undefined; state: S; revision: number }>();
      for (const event of events) {
        const id = event.streamId.slice(prefix.length);
        let entry = touched.get(id);
        if (!entry) {
          const before = stored.get(id);
          entry = { before, state: (before as unknown as S | undefined) ?? spec.initial, revision: 0 };
          touched.set(id, entry);
        }
        entry.state = spec.evolve(entry.state, { type: event.type, data: event.data } as E);
        entry.revision = event.revision;
      }
      const delta: Sums = new Map();
      const views: [string, V][] = [];
      for (const [id, { before, state, revision }] of touched) {
        // Past the initial state, the decider's state is the view's record (the contracts define both).
        if (state.status === spec.initial.status) continue;
        const view = { ...state, streamRevision: revision } as unknown as V;
        if (spec.sums) {
          addSums(delta, sumsOfView(view));
          if (before) addSums(delta, sumsOfView(before), -1);
        }
        views.push([id, view]);
      }
      // Every row of the batch in as few statements as the engines' limit on parameters allows.
      await insertRows(tx, table, viewColumns, views.map(([id, view]) => [id, view.streamRevision, JSON.stringify(view), ...spec.columns.map((c) => c.of(view))]), upsert);
      for (const child of children) {
        const name = childTable(child.table);
        await runIn(tx, `DELETE FROM ${name} WHERE parent_id IN (`, views.map(([id]) => id));
        const rows = views.flatMap(([id, view]) => child.rows(view).map((row) => [id, ...child.columns.map((c) => c.of(row))]));
        await insertRows(tx, name, ['parent_id', ...child.columns.map((c) => c.name)], rows);
      }
      // The figures move by the difference; a sum back at 0 leaves no row (as in a table filled in one pass).
      const moved = [...delta].filter(([, change]) => change !== 0);
      await insertRows(tx, sumsTable, ['figure', 'value'], moved, `ON CONFLICT (figure) DO UPDATE SET value = ${sumsTable}.value + excluded.value`);
      if (moved.length > 0) await runIn(tx, `DELETE FROM ${sumsTable} WHERE value = 0 AND figure IN (`, moved.map(([figure]) => figure));
    },
    get,
    async sums(db) {
      if (!spec.sums) return new Map();
      const rows = await db.all<{ figure: string; value: number }>(`SELECT figure, value FROM ${sumsTable}`);
      return new Map(rows.map((r) => [r.figure, Number(r.value)]));
    },
    async windowSums(db, from, to) {
      if (!timed) return new Map();
      const rows = await db.all<{ figure: string; total: number | string }>(`SELECT figure, SUM(value) AS total FROM ${childTable(`${spec.name}_timed`)} WHERE at >= $1 AND at <= $2 GROUP BY figure`, [from, to]);
      return new Map(rows.map((r) => [r.figure, Number(r.total)]));
    },
  };
}

/** The child table of a view's timed contributions, one row per figure and instant (two at the same instant add up). */
function timedTable<V>(table: string, timed: (view: V) => readonly TimedSum[]): SqlChildTable<V, unknown> {
  return childTable<V, TimedSum>({
    table,
    columns: [textColumn<TimedSum>('figure', (t) => t.key), integerColumn<TimedSum>('at', (t) => t.at), integerColumn<TimedSum>('value', (t) => t.value)],
    key: ['figure', 'at'],
    // Covering: a window's sums read the index alone.
    indexes: [['at', 'figure', 'value']],
    rows(view) {
      const merged = new Map<string, TimedSum>();
      for (const t of timed(view)) {
        const key = `${t.key}@${t.at}`;
        const seen = merged.get(key);
        merged.set(key, seen ? { ...seen, value: seen.value + t.value } : t);
      }
      return [...merged.values()];
    },
  });
}
