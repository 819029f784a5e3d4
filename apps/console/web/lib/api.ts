/**
 * The gateway's HTTP routes, for the pages: queries (GET /v1/<service>/<path>, see the gateway's
 * query routes; every query of the contracts has one) and commands (POST /v1/commands).
 * Types come from @agora/contracts (type imports only: nothing of zod reaches the bundle).
 */
import type { CommandResult, Reply } from '@agora/contracts';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { useLive } from './live';
import { sessionLost } from './session';

export type { Reply };

/** A refused query or command: the reply's stable code and message. */
export class AgoraRequestError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'AgoraRequestError';
  }
}

export type QueryParams = Record<string, string | number | boolean | readonly string[] | undefined | null>;

/** `/v1/proposal/proposals` + `{status: 'escalated'}` -> `/v1/proposal/proposals?status=escalated` (undefined and null left out; arrays repeated). */
export function queryUrl(path: string, params: QueryParams = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const item of value) search.append(name, String(item));
    else search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}

/** GET a query route; resolves with the reply's result, rejects with AgoraRequestError. */
export async function query<T>(path: string, params: QueryParams = {}, init: { signal?: AbortSignal } = {}): Promise<T> {
  const res = await fetch(queryUrl(path, params), { headers: { accept: 'application/json' }, ...(init.signal ? { signal: init.signal } : {}) });
  const reply = (await res.json().catch(() => undefined)) as Reply<T> | undefined;
  if (!reply) throw new AgoraRequestError('unavailable', `GET ${path}: HTTP ${res.status} without a JSON reply`, res.status);
  if (!reply.ok) {
    if (res.status === 401) sessionLost();
    throw new AgoraRequestError(reply.error.code, reply.error.message, res.status);
  }
  return reply.result;
}

/** POST a signed envelope to /v1/commands; resolves with the Reply (a refusal is a Reply too, not an exception). */
export async function postCommand(envelope: object): Promise<Reply<CommandResult>> {
  const res = await fetch('/v1/commands', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(envelope) });
  const reply = (await res.json().catch(() => undefined)) as Reply<CommandResult> | undefined;
  return reply ?? { ok: false, error: { code: 'unavailable', message: `HTTP ${res.status} without a JSON reply` } };
}

export interface QueryState<T> {
  data: T | undefined;
  error: AgoraRequestError | Error | undefined;
  loading: boolean;
  /** Fetch again now. */
  refresh(): void;
}

/**
 * A query's result as component state, fetched again whenever an event of one of `live`'s stream
 * categories is committed (read models trail the log by a moment: it refetches shortly after,
 * and once more a second later). `path` undefined: nothing is fetched.
 */
export function useQuery<T>(path: string | undefined, params: QueryParams = {}, live: readonly string[] = []): QueryState<T> {
  const url = path === undefined ? undefined : queryUrl(path, params);
  const fetcher = useCallback(() => {
    const [p, ...rest] = (url as string).split('?');
    return query<T>(p as string, Object.fromEntries(new URLSearchParams(rest.join('?'))));
  }, [url]);
  return useFetched(url, fetcher, live);
}

/** What `fetcher` resolves to, as component state: fetched when `key` (undefined: nothing) or `fetcher` changes, and on `live` events. */
function useFetched<T>(key: string | undefined, fetcher: () => Promise<T>, live: readonly string[]): QueryState<T> {
  const [state, setState] = useState<{ data: T | undefined; error: Error | undefined; loading: boolean; key: string | undefined }>({ data: undefined, error: undefined, loading: key !== undefined, key });
  const generation = useRef(0);
  const load = useCallback(() => {
    if (key === undefined) return;
    const mine = ++generation.current;
    void fetcher()
      .then((data) => mine === generation.current && setState({ data, error: undefined, loading: false, key }))
      .catch((error: Error) => mine === generation.current && setState((s) => ({ data: s.key === key ? s.data : undefined, error, loading: false, key })));
  }, [key, fetcher]);
  useEffect(() => {
    setState((s) => (s.key === key ? s : { data: undefined, error: undefined, loading: key !== undefined, key }));
    load();
  }, [load]);
  useLive(live, load);
  return { data: state.key === key ? state.data : undefined, error: state.key === key ? state.error : undefined, loading: state.loading, refresh: load };
}

/** The items of a paged list query shown so far, and whether more follow. */
export interface PagedList<T> {
  items: T[];
  /** More items follow the ones shown. */
  more: boolean;
}

/** The largest page a list query gives (PAGE_LIMIT_MAX in the contracts). */
const PAGE_LIMIT_MAX = 1000;

/**
 * The first items of a paged list query (a result `{<field>: T[], nextCursor?}`, see the
 * contracts' paging): `pageSize` of them at first and `pageSize` more at each `showMore()`, so a
 * fleet of 100,000 agents shows its first page at once instead of freezing the page. A refresh
 * (live events) fetches again as many items as are shown, following `nextCursor` (up to 1,000 a
 * request). The items shown stay while more load.
 */
export function usePagedQuery<T>(path: string | undefined, field: string, params: QueryParams = {}, live: readonly string[] = [], pageSize = 100): QueryState<PagedList<T>> & { showMore(): void } {
  const url = path === undefined ? undefined : queryUrl(path, params);
  const [wanted, setWanted] = useState({ url, count: pageSize });
  const count = wanted.url === url ? wanted.count : pageSize;
  const fetcher = useCallback(async (): Promise<PagedList<T>> => {
    const [p, ...rest] = (url as string).split('?');
    const search = Object.fromEntries(new URLSearchParams(rest.join('?')));
    const items: T[] = [];
    let cursor: string | undefined;
    do {
      const page = await query<Record<string, unknown> & { nextCursor?: string }>(p as string, { ...search, limit: Math.min(PAGE_LIMIT_MAX, count - items.length), cursor });
      items.push(...((page[field] as T[] | undefined) ?? []));
      cursor = page.nextCursor;
    } while (cursor !== undefined && items.length < count);
    return { items, more: cursor !== undefined };
  }, [url, field, count]);
  const state = useFetched(url === undefined ? undefined : `${url}#${count}`, fetcher, live);
  const shown = useRef<{ url: string | undefined; data: PagedList<T> } | undefined>(undefined);
  if (state.data) shown.current = { url, data: state.data };
  const kept = shown.current !== undefined && shown.current.url === url ? shown.current.data : undefined;
  return { ...state, data: state.data ?? kept, showMore: () => setWanted({ url, count: count + pageSize }) };
}
