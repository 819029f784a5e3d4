/**
 * Who this page reads as. A gateway with open reads (AGORA_READS=open) asks nothing: the console
 * reads as today. One that closes reads wants a login: the operator's key file is read into this
 * page's memory, signs the gateway's one-time challenge (the signing specification, "Logging in"),
 * and the gateway answers with a session cookie (HttpOnly: no script here can read it) that every
 * query and the live stream then carry. The key stays in memory for signing decisions, never in
 * storage; logging out ends the session on the gateway and reloads the page, which forgets the key
 * and everything read with the session.
 */
import { useEffect, useState } from 'preact/hooks';
import { currentOperatorKey, setOperatorKey } from './operator';
import type { OperatorKey } from './signing';

export type SessionState =
  | { state: 'checking' }
  /** Reads are open: no login. */
  | { state: 'open' }
  /** Reads are closed and this page has no session; `why` says why when it had one. */
  | { state: 'out'; why?: string }
  | { state: 'in'; agentId: string; roles: string[]; readsAll: boolean; expiresAt: string };

let current: SessionState = { state: 'checking' };
const listeners = new Set<(state: SessionState) => void>();

function set(next: SessionState): void {
  current = next;
  for (const listener of [...listeners]) listener(next);
}

async function replyOf<T>(res: Response): Promise<{ ok: true; result: T } | { ok: false; error: { code: string; message: string } }> {
  const reply = (await res.json().catch(() => undefined)) as { ok: true; result: T } | { ok: false; error: { code: string; message: string } } | undefined;
  return reply ?? { ok: false, error: { code: 'unavailable', message: `HTTP ${res.status} without a JSON reply` } };
}

async function post<T>(path: string, body?: unknown) {
  return replyOf<T>(await fetch(path, { method: 'POST', headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }));
}

/** Why the page was reloaded to the login page (the address's fragment says, so nothing is stored). */
const REASONS: Record<string, string> = {
  '#logged-out': 'You are logged out: the session has ended on the gateway, and this page has forgotten your key.',
  '#session-ended': 'Your session has ended (it expired, or the gateway restarted). Log in again.',
};

/** Reloads the console at `/`, forgetting everything this page held (the key, what it read), to show the login page with a reason. */
function startOver(reason: keyof typeof REASONS): void {
  location.replace(`/${reason}`);
}

/** Asks the gateway whether reads are closed and, if so, whether this browser has a session. */
export async function checkSession(): Promise<void> {
  const why = REASONS[location.hash];
  if (why !== undefined) history.replaceState(null, '', location.pathname + location.search);
  try {
    const health = (await (await fetch('/health', { headers: { accept: 'application/json' } })).json()) as { reads?: { mode?: string } };
    if (health.reads?.mode !== 'closed') return set({ state: 'open' });
    const res = await fetch('/v1/session', { headers: { accept: 'application/json' } });
    // 204: no session cookie, not logged in.
    const me = res.status === 204 ? undefined : await replyOf<{ agentId: string; roles: string[]; readsAll: boolean; expiresAt: string }>(res);
    set(me?.ok ? { state: 'in', ...me.result } : { state: 'out', ...(why ? { why } : {}) });
  } catch (error) {
    set({ state: 'out', why: `The gateway cannot be reached: ${error instanceof Error ? error.message : String(error)}` });
  }
}

/** Logs in with a key loaded into memory: the gateway's challenge, signed here, for a session cookie. Throws with the gateway's reason. */
export async function logIn(key: OperatorKey): Promise<void> {
  const challenge = await post<{ challenge: string; audience: string }>('/v1/login/challenge');
  if (!challenge.ok) throw new Error(challenge.error.message);
  const signature = await key.signLogin(challenge.result.challenge, challenge.result.audience);
  const reply = await post<{ agentId: string; roles: string[] }>('/v1/login', { agentId: key.agentId, challenge: challenge.result.challenge, signature });
  if (!reply.ok) throw new Error(`${reply.error.code}: ${reply.error.message}`);
  setOperatorKey(key);
  // GET /v1/session says what the session reads (readsAll) and until when.
  await checkSession();
}

/** Set once the person logs out: a read refused meanwhile (the session ends first) must not log in again. */
let leaving = false;

/** Ends the session on the gateway, then reloads the page: the key and everything read are forgotten. */
export async function logOut(): Promise<void> {
  leaving = true;
  setOperatorKey(undefined);
  await post('/v1/logout').catch(() => undefined);
  startOver('#logged-out');
}

let renewing: Promise<void> | undefined;

/**
 * A read was refused for want of a session (it expired, or the gateway restarted): with the key
 * still in memory, log in again at once; without it, back to the login page.
 */
export function sessionLost(): void {
  if (current.state !== 'in' || renewing || leaving) return;
  const key = currentOperatorKey();
  renewing = (key ? logIn(key) : Promise.reject(new Error('no key in memory')))
    .catch(() => {
      if (!leaving) startOver('#session-ended');
    })
    .finally(() => {
      renewing = undefined;
    });
}

export function useSession(): SessionState {
  const [state, setState] = useState(current);
  useEffect(() => {
    listeners.add(setState);
    setState(current);
    if (current.state === 'checking') void checkSession();
    return () => void listeners.delete(setState);
  }, []);
  return state;
}
