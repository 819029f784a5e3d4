import { AgoraError, PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, PAGE_MAX_BYTES, type PageRequest } from '@agora/contracts';
import type { SqlExecutor, SqlRow, SqlValue } from '@agora/read-store';

/** An item's place in a list's order: compared component by component; the last ones make it unique (an id). */
export type SortKey = readonly (string | number)[];

export interface PageOrder<T> {
  /** The item's sort key, e.g. `[s.updatedAt, s.sessionId]`. */
  key(item: T): SortKey;
  /** One direction per key component, e.g. `['desc', 'asc']`: most recently updated first, then by id. */
  directions: readonly ('asc' | 'desc')[];
}

/** One page: the items, and while more follow, the cursor of the next page. */
export interface Page<V> {
  items: V[];
  nextCursor?: string;
}

export interface PageOptions {
  /** JSON bytes of the page's items at most (a page holds at least one item). Default PAGE_MAX_BYTES. */
  maxBytes?: number;
}

/**
 * One page of a list query (see PageRequest in the contracts): the `limit` items that follow the
 * cursor in `order`, as `view` shows them. `items` need not be sorted (a read model's map values,
 * filtered): the page is selected in one pass with a buffer of `limit + 1`, so a page of 1,000 out of
 * 100,000 costs one pass, not a sort of the whole list. The cursor is the last item's sort key
 * (base64url JSON), so a page never repeats or skips an item that kept its place in the order.
 * A cursor that is not one of this list's is refused as `invalid_command`.
 */
export function pageOf<T, V>(items: Iterable<T>, order: PageOrder<T>, request: PageRequest, view: (item: T) => V, options: PageOptions = {}): Page<V> {
  const limit = checkedLimit(request);
  const after = request.cursor === undefined ? undefined : decodeCursor(request.cursor, order.directions.length);
  const compare = (a: SortKey, b: SortKey) => compareKeys(a, b, order.directions);
  // The `limit + 1` first items after the cursor, in order (one more than the page, to know whether more follow).
  const keep = limit + 1;
  const best: { key: SortKey; item: T }[] = [];
  for (const item of items) {
    const key = order.key(item);
    if (after && compare(key, after) <= 0) continue;
    if (best.length === keep && compare(key, best[keep - 1]!.key) >= 0) continue;
    let lo = 0;
    let hi = best.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compare(best[mid]!.key, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    best.splice(lo, 0, { key, item });
    if (best.length > keep) best.pop();
  }
  return pageFrom(best, limit, view, options);
}

function checkedLimit(request: PageRequest): number {
  const limit = request.limit ?? PAGE_LIMIT_DEFAULT;
  if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_LIMIT_MAX) throw new AgoraError('invalid_command', `limit is 1 to ${PAGE_LIMIT_MAX} items a page (got ${String(limit)})`, { limit });
  return limit;
}

/** The page of the first `limit` of `best` (sorted, up to `limit + 1` items: one more says that more follow), cut at `maxBytes`. */
function pageFrom<T, V>(best: readonly { key: SortKey; item: T }[], limit: number, view: (item: T) => V, options: PageOptions): Page<V> {
  const maxBytes = options.maxBytes ?? PAGE_MAX_BYTES;
  const page: V[] = [];
  let bytes = 0;
  for (const { item } of best.slice(0, limit)) {
    const shown = view(item);
    bytes += Buffer.byteLength(JSON.stringify(shown)) + 1;
    if (page.length > 0 && bytes > maxBytes) break;
    page.push(shown);
  }
  return page.length < best.length ? { items: page, nextCursor: encodeCursor(best[page.length - 1]!.key) } : { items: page };
}

/** A condition of a list query; it binds its values with `bind(value)`, which returns the parameter's name (`$3`). */
export type SqlCondition = (bind: (value: SqlValue) => string) => string;

/** A list query on a read model's table: the rows of `from` that meet `where`, in `order`. */
export interface SqlPageQuery<R extends SqlRow> {
  /** What to select and from where: `SELECT doc, updated_at, id FROM proposals_v1`. */
  from: string;
  /** Conditions, ANDed. */
  where?: SqlCondition[];
  /** The sort columns with their directions; the last ones make a row's place unique (an id). */
  order: readonly { column: string; direction: 'asc' | 'desc' }[];
  /** The row's sort key, the values of the `order` columns: what the cursor holds. */
  key(row: R): SortKey;
}

/**
 * One page of a list query answered by the database: the same pages and cursors as `pageOf` (a
 * cursor is the last item's sort key), read with a keyset condition on indexed columns, so a page
 * costs the same at any length of the list.
 */
export async function sqlPage<R extends SqlRow, V>(db: SqlExecutor, query: SqlPageQuery<R>, request: PageRequest, view: (row: R) => V, options: PageOptions = {}): Promise<Page<V>> {
  const limit = checkedLimit(request);
  const after = request.cursor === undefined ? undefined : decodeCursor(request.cursor, query.order.length);
  const params: SqlValue[] = [];
  const bind = (value: SqlValue) => {
    params.push(value);
    return `$${params.length}`;
  };
  const conditions = (query.where ?? []).map((condition) => `(${condition(bind)})`);
  if (after) {
    // (c1, c2, ...) after the cursor's key in the mixed directions: c1 beyond, or c1 equal and c2 beyond, ...
    const alternatives = query.order.map((_, i) =>
      query.order
        .slice(0, i + 1)
        .map(({ column, direction }, j) => `${column} ${j < i ? '=' : direction === 'asc' ? '>' : '<'} ${bind(after[j]!)}`)
        .join(' AND '),
    );
    conditions.push(`(${alternatives.map((a) => `(${a})`).join(' OR ')})`);
  }
  const sql = `${query.from}${conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : ''} ORDER BY ${query.order.map(({ column, direction }) => `${column} ${direction.toUpperCase()}`).join(', ')} LIMIT ${limit + 1}`;
  const rows = await db.all<R>(sql, params);
  return pageFrom(
    rows.map((row) => ({ key: query.key(row), item: row })),
    limit,
    view,
    options,
  );
}

function compareKeys(a: SortKey, b: SortKey, directions: readonly ('asc' | 'desc')[]): number {
  for (let i = 0; i < directions.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    const lower = typeof x === typeof y ? x < y : typeof x === 'number';
    return (lower ? -1 : 1) * (directions[i] === 'desc' ? -1 : 1);
  }
  return 0;
}

export function encodeCursor(key: SortKey): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

function decodeCursor(cursor: string, length: number): SortKey {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    key = undefined;
  }
  if (!Array.isArray(key) || key.length !== length || !key.every((k) => typeof k === 'string' || (typeof k === 'number' && Number.isFinite(k)))) {
    throw new AgoraError('invalid_command', 'the cursor is not one of this list: pass the nextCursor of the previous page verbatim, or none for the first page', { cursor });
  }
  return key as SortKey;
}

/** A `where` condition of a list query: `column` equals `value`. */
export function equals(column: string, value: SqlValue): SqlCondition {
  return (bind) => `${column} = ${bind(value)}`;
}

/** A `where` condition of a list query: the row's `id` has `agent` in the child table `table` (see agentsTable). */
export function hasAgent(table: string, agent: string): SqlCondition {
  return (bind) => `id IN (SELECT parent_id FROM ${table} WHERE agent = ${bind(agent)})`;
}
