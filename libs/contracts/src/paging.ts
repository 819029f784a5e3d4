import { z } from 'zod';

/**
 * Paging, shared by every list query: `limit` (default 100, at most 1,000; a larger one is refused
 * as `invalid_command`, not clamped) and `cursor` (opaque: the previous page's `nextCursor`) in the
 * params; the result keeps its list field (`agents`, `sessions`...) and adds `nextCursor`, present
 * while more items follow. Pages are in the list's stable order (its sort key, then the id), so a
 * walk that follows `nextCursor` returns every item exactly once, as long as the item does not
 * move in the order meanwhile (a session updated during the walk may move ahead of the cursor).
 * A page also ends early, with a `nextCursor`, before its reply would exceed PAGE_MAX_BYTES.
 */
export const PAGE_LIMIT_DEFAULT = 100;
export const PAGE_LIMIT_MAX = 1000;
/** JSON bytes of the items of one page at most (half of NATS' default 1 MiB message limit); a page holds at least one item. */
export const PAGE_MAX_BYTES = 512 * 1024;

export const PageLimit = z.coerce
  .number()
  .int()
  .min(1, { error: 'limit is at least 1' })
  .max(PAGE_LIMIT_MAX, { error: `limit is at most ${PAGE_LIMIT_MAX} items a page; follow nextCursor for the rest` })
  .describe(`Items on this page at most: default ${PAGE_LIMIT_DEFAULT}, at most ${PAGE_LIMIT_MAX}`);

export const PageCursor = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,2000}$/, 'a cursor is the nextCursor of the previous page, verbatim')
  .describe('Opaque: the nextCursor of the previous page (absent: the first page)');

/** Spread into a list query's params: `z.object({ role: Role.optional(), ...pageParams }).strict()`. */
export const pageParams = { limit: PageLimit.optional(), cursor: PageCursor.optional() };

/** The result's `nextCursor`: present while more items follow. */
export const NextCursor = PageCursor.optional().describe('Present while more items follow: pass it as cursor for the next page');

export interface PageRequest {
  limit?: number | undefined;
  cursor?: string | undefined;
}
