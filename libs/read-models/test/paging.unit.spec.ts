import { AgoraError, PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, PageCursor, PageLimit } from '@agora/contracts';
import { encodeCursor, pageOf, type Page, type PageOrder } from '../src/paging.js';

interface Row {
  id: string;
  updatedAt: string;
}

const byRecent: PageOrder<Row> = { key: (r) => [r.updatedAt, r.id], directions: ['desc', 'asc'] };
const byId: PageOrder<Row> = { key: (r) => [r.id], directions: ['asc'] };
const id = (r: Row) => r.id;

/** Rows in a shuffled order, so the helper has to select the page itself. */
function rows(n: number): Row[] {
  const out = Array.from({ length: n }, (_, i) => ({ id: `r${String(i).padStart(5, '0')}`, updatedAt: `2026-01-01T00:00:${String(i % 7).padStart(2, '0')}Z` }));
  let seed = 7;
  for (let i = out.length - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const j = seed % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function walk<V>(first: (cursor: string | undefined) => Page<V>): { pages: V[][]; items: V[] } {
  const pages: V[][] = [];
  let cursor: string | undefined;
  do {
    const page = first(cursor);
    pages.push(page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return { pages, items: pages.flat() };
}

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error instanceof AgoraError ? { code: error.code, message: error.message } : error;
  }
  return undefined;
};

describe('pageOf', () => {
  const data = rows(1234);
  const sorted = [...data].sort((a, b) => (a.updatedAt > b.updatedAt ? -1 : a.updatedAt < b.updatedAt ? 1 : a.id < b.id ? -1 : 1)).map(id);

  it(`gives ${PAGE_LIMIT_DEFAULT} items by default, in the list's order, with a cursor while more follow`, () => {
    const page = pageOf(data, byRecent, {}, id);
    expect(page.items).toEqual(sorted.slice(0, PAGE_LIMIT_DEFAULT));
    expect(page.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(PageCursor.safeParse(page.nextCursor).success).toBe(true);
  });

  it('walks every item exactly once, in order, whatever the limit; the last page has no cursor', () => {
    for (const limit of [1, 7, 100, 1000]) {
      const { pages, items } = walk((cursor) => pageOf(data, byRecent, { limit, cursor }, id));
      expect(items).toEqual(sorted);
      expect(pages.length).toBe(Math.ceil(data.length / limit));
      expect(pages.slice(0, -1).every((p) => p.length === limit)).toBe(true);
    }
  });

  it('gives one page and no cursor when everything fits, and an empty page for an empty list', () => {
    expect(pageOf(data.slice(0, 5), byId, { limit: 5 }, id)).toEqual({ items: [...data.slice(0, 5)].map(id).sort() });
    expect(pageOf([], byId, {}, id)).toEqual({ items: [] });
  });

  it('keeps its place when items are added or removed between pages (the cursor is a position, not an offset)', () => {
    const list = rows(50);
    const first = pageOf(list, byId, { limit: 10 }, id);
    const seen = new Set(first.items);
    // Remove an item already seen and one not yet seen; add one before the cursor and one after it.
    const later = list.find((r) => !seen.has(r.id))!;
    const changed = list.filter((r) => r.id !== first.items[0] && r.id !== later.id).concat([{ id: 'a-first', updatedAt: 'x' }, { id: 'z-last', updatedAt: 'x' }]);
    const rest = walk((cursor) => pageOf(changed, byId, { limit: 10, cursor: cursor ?? first.nextCursor }, id)).items;
    for (const item of rest) expect(seen.has(item)).toBe(false);
    expect(rest).toEqual(
      changed
        .map(id)
        .filter((i) => i > first.items.at(-1)!)
        .sort(),
    );
    expect(rest).toContain('z-last');
    expect(rest).not.toContain('a-first');
  });

  it('ends a page early, with a cursor, before its items pass maxBytes; a page holds at least one item', () => {
    const big = rows(40).map((r) => ({ ...r, blob: 'x'.repeat(1000) }));
    const order: PageOrder<(typeof big)[number]> = { key: (r) => [r.id], directions: ['asc'] };
    const page = pageOf(big, order, { limit: 40 }, (r) => r, { maxBytes: 10_000 });
    expect(page.items.length).toBeGreaterThan(1);
    expect(page.items.length).toBeLessThan(10);
    expect(Buffer.byteLength(JSON.stringify(page.items))).toBeLessThanOrEqual(10_000);
    expect(page.nextCursor).toBeDefined();
    const all = walk((cursor) => pageOf(big, order, { limit: 40, cursor }, (r) => r, { maxBytes: 10_000 })).items.map((r) => r.id);
    expect(all).toEqual(big.map((r) => r.id).sort());
    expect(pageOf(big, order, { limit: 40 }, (r) => r, { maxBytes: 10 }).items).toHaveLength(1);
  });

  it(`refuses a limit above ${PAGE_LIMIT_MAX} or below 1, in the contract and in the helper`, () => {
    expect(PageLimit.safeParse(PAGE_LIMIT_MAX).success).toBe(true);
    expect(PageLimit.safeParse('1000').data).toBe(1000);
    const over = PageLimit.safeParse(PAGE_LIMIT_MAX + 1);
    expect(over.success).toBe(false);
    expect(over.error?.issues[0]?.message).toBe('limit is at most 1000 items a page; follow nextCursor for the rest');
    expect(PageLimit.safeParse(0).success).toBe(false);
    expect(refusal(() => pageOf(data, byId, { limit: PAGE_LIMIT_MAX + 1 }, id))).toEqual({ code: 'invalid_command', message: 'limit is 1 to 1000 items a page (got 1001)' });
    expect(refusal(() => pageOf(data, byId, { limit: 0 }, id))).toMatchObject({ code: 'invalid_command' });
  });

  it('refuses a cursor that is not one of this list: garbage, another key shape, or not base64url', () => {
    const other = pageOf(data, byRecent, { limit: 3 }, id).nextCursor!;
    const message = 'the cursor is not one of this list: pass the nextCursor of the previous page verbatim, or none for the first page';
    for (const cursor of ['garbage', other, encodeCursor([{ a: 1 } as unknown as string]), Buffer.from('{"a":1}').toString('base64url'), '', '!!!']) {
      expect(refusal(() => pageOf(data, byId, { cursor }, id))).toEqual({ code: 'invalid_command', message });
    }
    expect(PageCursor.safeParse('a b').success).toBe(false);
  });

  it('orders numbers as numbers (most trusted first, then by id)', () => {
    const agents = [
      { id: 'b', trust: 900 },
      { id: 'a', trust: 90 },
      { id: 'c', trust: 900 },
      { id: 'd', trust: 1000 },
    ];
    const order: PageOrder<(typeof agents)[number]> = { key: (a) => [a.trust, a.id], directions: ['desc', 'asc'] };
    expect(walk((cursor) => pageOf(agents, order, { limit: 1, cursor }, (a) => a.id)).items).toEqual(['d', 'b', 'c', 'a']);
  });
});
