/**
 * What a read stands on (a read token, or a console login's session) and what ends it: everything
 * a reader keeps open (an SSE stream, an MCP session's notifications) is bound to the credential it
 * was opened with, and ends when the token expires, the session ends, or the registry changes the
 * agent (disabled, its roles or its key changed), which the gateway learns through the agent
 * directory it already follows (AgentDirectory.watch).
 */
import type { AgentDirectory, AgentRecord } from '@agora/messaging';
import type { SessionStore } from './sessions.js';

/** Why an open read ended: the reason of an SSE `event: end`, and of an MCP session's last log message. */
export type EndReason = 'token_expired' | 'session_ended' | 'reader_disabled' | 'roles_changed' | 'key_changed';

/** What an open read was granted on. */
export interface Credential {
  agentId: string;
  /** The agent's roles when the read was opened: visibility was decided on them. */
  roles: readonly string[];
  /** The key its token or login was verified under. */
  publicKey: string;
  /** When it stops being good (ms since the epoch): the token's `exp`, or the session's expiry. */
  expiresAt: number;
  /** The console session it reads with (a login), if any: it ends with the session (logout, expiry). */
  session?: string;
}

/** How a record differs from what a credential was granted on, or undefined when it does not. */
export function changeOf(credential: Credential, record: AgentRecord | undefined): EndReason | undefined {
  if (record === undefined || record.status !== 'active') return 'reader_disabled';
  if (record.publicKey !== credential.publicKey) return 'key_changed';
  const roles = new Set(credential.roles);
  if (record.roles.length !== roles.size || record.roles.some((role) => !roles.has(role))) return 'roles_changed';
  return undefined;
}

interface Binding {
  credential: Credential;
  end(reason: EndReason): void;
}

/** The open reads of a gateway by agent, each ended once, with its reason, when its credential no longer holds. */
export class CredentialWatch {
  private readonly byAgent = new Map<string, Set<Binding>>();
  private unwatch: (() => void) | undefined;

  constructor(
    private readonly directory: AgentDirectory,
    private readonly sessions: SessionStore | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Calls `end` once, asynchronously, when the credential no longer holds: at its expiry, when its
   * session ends, or when the directory changes its agent. Returns the unbinding (call it when the
   * read ends by itself).
   */
  bind(credential: Credential, end: (reason: EndReason) => void): () => void {
    this.unwatch ??= this.directory.watch?.((agentId) => void this.check(agentId));
    let ended = false;
    const cleanups: (() => void)[] = [];
    const unbind = () => {
      cleanups.forEach((cleanup) => cleanup());
      cleanups.length = 0;
    };
    const binding: Binding = {
      credential,
      end: (reason) => {
        if (ended) return;
        ended = true;
        unbind();
        end(reason);
      },
    };
    let bindings = this.byAgent.get(credential.agentId);
    if (bindings === undefined) this.byAgent.set(credential.agentId, (bindings = new Set()));
    bindings.add(binding);
    const held = bindings;
    cleanups.push(() => {
      held.delete(binding);
      if (held.size === 0 && this.byAgent.get(credential.agentId) === held) this.byAgent.delete(credential.agentId);
    });
    let timer: NodeJS.Timeout;
    // A timer may fire a little early (the event loop's cached clock): never before the expiry.
    const expireAt = () => {
      const left = credential.expiresAt - this.now();
      if (left > 0) {
        timer = setTimeout(expireAt, left);
        timer.unref();
      } else binding.end(credential.session === undefined ? 'token_expired' : 'session_ended');
    };
    timer = setTimeout(expireAt, Math.max(0, credential.expiresAt - this.now()));
    timer.unref();
    cleanups.push(() => clearTimeout(timer));
    if (credential.session !== undefined && this.sessions !== undefined) {
      const session = credential.session;
      // whenEnded may call back at once (the session ended meanwhile): never before bind returns.
      let stopWatching: (() => void) | undefined;
      queueMicrotask(() => {
        if (!ended) stopWatching = this.sessions!.whenEnded(session, () => binding.end('session_ended'));
      });
      cleanups.push(() => stopWatching?.());
    }
    // The record may have changed between the check of the credential and now, unseen by the watch.
    void this.check(credential.agentId, binding);
    return () => {
      ended = true;
      unbind();
    };
  }

  /** Ends the reads of an agent whose record no longer matches what they were granted on. */
  private async check(agentId: string, only?: Binding): Promise<void> {
    const bindings = this.byAgent.get(agentId);
    if (bindings === undefined) return;
    let record: AgentRecord | undefined;
    try {
      record = await this.directory.get(agentId);
    } catch {
      // The directory could not say: its next change is checked again.
      return;
    }
    for (const binding of only === undefined ? [...bindings] : [only]) {
      const reason = changeOf(binding.credential, record);
      if (reason !== undefined) binding.end(reason);
    }
  }

  /** Open reads bound, for the metrics and tests. */
  get size(): number {
    let size = 0;
    for (const bindings of this.byAgent.values()) size += bindings.size;
    return size;
  }

  close(): void {
    this.unwatch?.();
    this.unwatch = undefined;
  }
}
