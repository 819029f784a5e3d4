/** The console's frame: a skip link, the header with the live status, the navigation of every page, and the current page. */
import { useEffect, useRef } from 'preact/hooks';
import { useLiveStatus } from './lib/live';
import { onLinkClick, useLocation } from './lib/router';
import { logOut, useSession, type SessionState } from './lib/session';
import { LoginPage } from './login';
import type { ConsolePage } from './page';
import { pages } from './pages/index';

function pageOf(path: string): { page: ConsolePage | undefined; rest: string[] } {
  const [first = '', ...rest] = path.split('/').filter((s) => s !== '').map((s) => decodeURIComponent(s));
  if (first === '') return { page: pages[0], rest: [] };
  return { page: pages.find((p) => p.path === first), rest };
}

function NavLink(props: { page: ConsolePage; current: boolean }) {
  const badge = props.page.useBadge?.();
  return (
    <li>
      <a href={`/${props.page.path}`} aria-current={props.current ? 'page' : undefined}>
        {props.page.label}
        {badge ? (
          <span class="nav-badge" aria-label={`${badge} waiting`}>
            {badge}
          </span>
        ) : null}
      </a>
    </li>
  );
}

function LiveIndicator() {
  const status = useLiveStatus();
  const text = status === 'live' ? 'Live' : status === 'connecting' ? 'Connecting' : status === 'reconnecting' ? 'Reconnecting' : 'Offline';
  return (
    <span class={`live live-${status}`} role="status" aria-live="polite" title="Updates arrive from the gateway's event stream (GET /v1/events)">
      <span class="live-dot" aria-hidden="true" />
      {text}
    </span>
  );
}

/** Who is logged in, and the way out (reads closed only). */
function SessionBar(props: { session: Extract<SessionState, { state: 'in' }> }) {
  return (
    <span class="who">
      <span>
        <span class="who-label">Logged in as </span>
        <strong>{props.session.agentId}</strong>
        {props.session.roles.length ? <span class="who-roles"> · {props.session.roles.join(', ')}</span> : null}
      </span>
      <button type="button" class="logout" onClick={() => void logOut()}>
        Log out
      </button>
    </span>
  );
}

/** The console, or the login page when the gateway closes reads and this browser has no session. */
export function App() {
  const session = useSession();
  if (session.state === 'checking') return <p class="checking muted">Connecting to the gateway…</p>;
  if (session.state === 'out') return <LoginPage {...(session.why ? { why: session.why } : {})} />;
  return <Console session={session} />;
}

function Console(props: { session: SessionState }) {
  const { path, search } = useLocation();
  const { page, rest } = pageOf(path);
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  useEffect(() => {
    document.title = page ? `${page.title} · Agora` : 'Not found · Agora';
    // Moves focus to the new page for keyboard and screen-reader users (not on the first load).
    if (first.current) first.current = false;
    else main.current?.focus();
  }, [page?.path]);
  const Component = page?.component;
  return (
    <div class="shell" onClick={onLinkClick}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/">
          <img src="/favicon.svg" alt="" width={24} height={24} />
          Agora
        </a>
        <span class="top-right">
          <LiveIndicator />
          {props.session.state === 'in' ? <SessionBar session={props.session} /> : null}
        </span>
      </header>
      <nav class="nav" aria-label="Pages">
        <ul>
          {pages.map((p) => (
            <NavLink key={p.path} page={p} current={p === page} />
          ))}
        </ul>
      </nav>
      <main id="main" ref={main} tabIndex={-1}>
        {page && Component ? (
          <>
            <h1>{page.title}</h1>
            <Component rest={rest} search={search} />
          </>
        ) : (
          <>
            <h1>Not found</h1>
            <p>
              No page at <code>{path}</code>. <a href="/">Back to the fleet</a>.
            </p>
          </>
        )}
      </main>
    </div>
  );
}
