/**
 * The gateway's HTTP routes, for the pages: queries (GET /v1/<service>/<path>, see the gateway's
 * query routes; every query of the contracts has one) and commands (POST /v1/commands).
 * Types come from @agora/contracts (type imports only: nothing of zod reaches the bundle).
 */
import type { CommandResult, Reply } from '@agora/contracts';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { useLive } from './live';

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
  if (!reply.ok) throw new AgoraRequestError(reply.error.code, reply.error.message, res.status);
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
  const [state, setState] = useState<{ data: T | undefined; error: Error | undefined; loading: boolean; url: string | undefined }>({ data: undefined, error: undefined, loading: url !== undefined, url });
  const generation = useRef(0);
  const load = useCallback(() => {
    if (url === undefined) return;
    const mine = ++generation.current;
    const [p, ...rest] = url.split('?');
    void query<T>(p as string, Object.fromEntries(new URLSearchParams(rest.join('?'))))
      .then((data) => mine === generation.current && setState({ data, error: undefined, loading: false, url }))
      .catch((error: Error) => mine === generation.current && setState((s) => ({ data: s.url === url ? s.data : undefined, error, loading: false, url })));
  }, [url]);
  useEffect(() => {
    setState((s) => (s.url === url ? s : { data: undefined, error: undefined, loading: url !== undefined, url }));
    load();
  }, [load]);
  useLive(live, load);
  return { data: state.url === url ? state.data : undefined, error: state.url === url ? state.error : undefined, loading: state.loading, refresh: load };
}
