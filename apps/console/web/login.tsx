/**
 * The login page, shown instead of the console when the gateway closes its reads and this browser
 * has no session: the operator chooses a key file, the page reads it into memory and signs the
 * gateway's one-time challenge with it (lib/session.ts). The key stays in memory to sign decisions.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { readKeyFile } from './lib/operator';
import { logIn } from './lib/session';
import { Alert } from './ui';

export function LoginPage(props: { why?: string }) {
  const file = useRef<HTMLInputElement>(null);
  const [agentId, setAgentId] = useState('');
  const [chosen, setChosen] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    document.title = 'Log in · Agora';
  }, []);
  const submit = async () => {
    setError(undefined);
    setBusy(true);
    try {
      await logIn(await readKeyFile(file.current, agentId));
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
      setChosen(undefined);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="login">
      <main class="login-card" id="main">
        <div class="login-brand">
          <img src="/favicon.svg" alt="" width={32} height={32} />
          Agora
        </div>
        <h1>Log in with your key</h1>
        <p class="muted">This gateway shows its log only to registered agents. Your browser signs a one-time challenge from the gateway with your key file; what you see then depends on your role.</p>
        {props.why ? (
          <p class="notice" role="status">
            {props.why}
          </p>
        ) : null}
        <form
          aria-label="Log in"
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          <label class="keyfile">
            <span class="keyfile-title">Key file</span>
            <span class="keyfile-hint">{chosen ?? 'Choose a file such as operator.key.json'}</span>
            <input ref={file} type="file" accept=".json,application/json" name="keyfile" onChange={(e) => setChosen((e.target as HTMLInputElement).files?.[0]?.name)} />
          </label>
          <details class="login-more">
            <summary>The file names no agent?</summary>
            <label>
              Agent id
              <input value={agentId} onInput={(e) => setAgentId((e.target as HTMLInputElement).value)} name="agentId" autoComplete="username" />
            </label>
          </details>
          <button type="submit" class="primary login-submit" disabled={busy}>
            {busy ? 'Logging in…' : 'Log in'}
          </button>
          <Alert message={error} />
        </form>
        <ul class="login-facts small muted">
          <li>The secret key never leaves this page: it is kept in memory to sign your decisions, never sent and never stored. Reloading the page forgets it.</li>
          <li>The session is a cookie no script can read; it lasts a few minutes and ends when you log out.</li>
          <li>
            No key yet? <code>agora keys new</code> makes one, and an operator registers it. A standalone Agora keeps its operator key in <code>&lt;data dir&gt;/operator.key.json</code>.
          </li>
        </ul>
      </main>
    </div>
  );
}
