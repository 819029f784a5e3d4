/**
 * Page addresses are plain paths (`/tribunal`, `/dialectic/<sessionId>`): the gateway answers any
 * page path with index.html, so a link can be opened, bookmarked and reloaded.
 */
import { useEffect, useState } from 'preact/hooks';

const changes = new Set<() => void>();
window.addEventListener('popstate', () => changes.forEach((c) => c()));

export function navigate(path: string): void {
  if (path === location.pathname + location.search) return;
  history.pushState(null, '', path);
  changes.forEach((c) => c());
}

/** The current path and query string, as component state. */
export function useLocation(): { path: string; search: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const changed = () => setTick((t) => t + 1);
    changes.add(changed);
    return () => void changes.delete(changed);
  }, []);
  return { path: location.pathname, search: new URLSearchParams(location.search) };
}

/** Replaces the query string (filters) without a new history entry. */
export function setSearch(params: Record<string, string | undefined>): void {
  const search = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === '') search.delete(k);
    else search.set(k, v);
  }
  const text = search.toString();
  history.replaceState(null, '', `${location.pathname}${text ? `?${text}` : ''}`);
  changes.forEach((c) => c());
}

/** A click on an in-console link: navigate without reloading (modifier clicks open a new tab as usual). */
export function onLinkClick(event: MouseEvent): void {
  const anchor = (event.target as Element | null)?.closest?.('a');
  if (!anchor || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const href = anchor.getAttribute('href');
  if (!href || !href.startsWith('/') || href.startsWith('/v1/') || href.startsWith('/docs') || anchor.target) return;
  event.preventDefault();
  navigate(href);
}
