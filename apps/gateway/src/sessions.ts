/**
 * Browser sessions (the signing specification, "Logging in"): a one-time challenge the reader
 * signs with its key, and in exchange a session the gateway remembers, carried by an HttpOnly,
 * SameSite=Strict cookie. The web console reads with it when reads are closed, so no script of the
 * page holds anything that reads on its own. Sessions live in this process's memory: a gateway
 * restart ends them all (the console then asks for the key again), and each gateway replica has
 * its own (a load balancer in front of several needs sticky sessions).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { LOGIN, SIGNING_TAGS } from '@agora/contracts';
import { domainSigningBytes, verifyBytes } from '@agora/identity';
import type { AgentDirectory } from '@agora/messaging';
import { GatewayError } from './http-reply.js';

export interface Session {
  id: string;
  agentId: string;
  expiresAt: number;
}

export interface SessionOptions {
  /** How long a session lasts, in seconds. Default LOGIN.sessionSeconds (AGORA_SESSION_SECONDS). */
  sessionSeconds?: number;
  /** How long a challenge may be answered, in seconds. Default LOGIN.challengeSeconds. */
  challengeSeconds?: number;
  /** At most this many challenges and this many sessions are kept; past that the oldest go first. Default 10,000. */
  maxEntries?: number;
}

/** A random id: 32 bytes, base64url (43 characters). */
const randomId = (): string => randomBytes(32).toString('base64url');

/** The session cookie's value in a Cookie header, if any. */
export function sessionCookieOf(req: IncomingMessage): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === LOGIN.cookie) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

/** Set-Cookie for a session (Secure when the request came over HTTPS, directly or through a proxy that says so), or its removal. */
export function sessionCookie(req: IncomingMessage, session: { id: string; maxAgeSeconds: number } | undefined): string {
  const secure = (req.socket as { encrypted?: boolean }).encrypted === true || req.headers['x-forwarded-proto'] === 'https';
  const value = session === undefined ? `${LOGIN.cookie}=; Max-Age=0` : `${LOGIN.cookie}=${session.id}; Max-Age=${session.maxAgeSeconds}`;
  return `${value}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export class SessionStore {
  private readonly challenges = new Map<string, number>();
  private readonly sessions = new Map<string, Session>();
  /** What to do when a session ends (logout, expiry): e.g. close the event streams it opened; and the timer of its expiry. */
  private readonly onEnd = new Map<string, { listeners: Set<() => void>; timer: NodeJS.Timeout }>();
  readonly sessionSeconds: number;
  private readonly challengeSeconds: number;
  private readonly maxEntries: number;

  constructor(
    private readonly directory: AgentDirectory,
    readonly audience: string,
    options: SessionOptions = {},
    private readonly now: () => Date = () => new Date(),
  ) {
    this.sessionSeconds = options.sessionSeconds ?? LOGIN.sessionSeconds;
    this.challengeSeconds = options.challengeSeconds ?? LOGIN.challengeSeconds;
    this.maxEntries = options.maxEntries ?? 10_000;
  }

  /** A fresh challenge, good for one login attempt within challengeSeconds. */
  challenge(): { challenge: string; audience: string; expiresAt: string } {
    const now = this.now().getTime();
    this.sweep(now);
    const challenge = randomId();
    const expiresAt = now + this.challengeSeconds * 1000;
    this.challenges.set(challenge, expiresAt);
    if (this.challenges.size > this.maxEntries) this.challenges.delete(this.challenges.keys().next().value as string);
    return { challenge, audience: this.audience, expiresAt: new Date(expiresAt).toISOString() };
  }

  /**
   * Checks a signed challenge and opens a session: the challenge is used up whatever the outcome;
   * the agent must be registered and active, and the signature its registered key's over the login
   * bytes. Throws a GatewayError naming what is wrong.
   */
  async login(input: { agentId: string; challenge: string; signature: string }): Promise<{ session: Session; roles: readonly string[] }> {
    const now = this.now().getTime();
    const expiresAt = this.challenges.get(input.challenge);
    this.challenges.delete(input.challenge);
    if (expiresAt === undefined || expiresAt < now) throw new GatewayError('invalid_token', 'the challenge is unknown, expired or already used: ask for a new one (POST /v1/login/challenge)');
    const agent = await this.directory.get(input.agentId);
    if (agent === undefined) throw new GatewayError('unknown_actor', `no agent "${input.agentId}" is registered`);
    const bytes = domainSigningBytes(SIGNING_TAGS.login, { aud: this.audience, challenge: input.challenge, sub: input.agentId });
    if (!verifyBytes(bytes, input.signature, agent.publicKey)) throw new GatewayError('bad_signature', `the login signature does not verify under ${input.agentId}'s registered key`);
    if (agent.status !== 'active') throw new GatewayError('actor_disabled', `agent ${input.agentId} is disabled`);
    const session: Session = { id: randomId(), agentId: input.agentId, expiresAt: now + this.sessionSeconds * 1000 };
    this.sessions.set(session.id, session);
    if (this.sessions.size > this.maxEntries) this.end(this.sessions.keys().next().value as string);
    return { session, roles: agent.roles };
  }

  /** An agent's roles as the directory has them now (undefined: not registered). */
  async roles(agentId: string): Promise<readonly string[] | undefined> {
    return (await this.directory.get(agentId))?.roles;
  }

  /** The live session of this id, or undefined (unknown, ended or expired). */
  get(id: string): Session | undefined {
    const session = this.sessions.get(id);
    if (session === undefined) return undefined;
    if (session.expiresAt <= this.now().getTime()) {
      this.end(id);
      return undefined;
    }
    return session;
  }

  /** Calls `listener` when the session ends (logout, or its expiry comes); returns the unsubscribe. */
  whenEnded(id: string, listener: () => void): () => void {
    const session = this.get(id);
    if (session === undefined) {
      listener();
      return () => undefined;
    }
    let entry = this.onEnd.get(id);
    if (entry === undefined) {
      const timer = setTimeout(() => this.end(id), Math.max(0, session.expiresAt - this.now().getTime()));
      timer.unref();
      this.onEnd.set(id, (entry = { listeners: new Set(), timer }));
    }
    const { listeners } = entry;
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.onEnd.get(id)?.listeners === listeners) {
        clearTimeout(entry.timer);
        this.onEnd.delete(id);
      }
    };
  }

  /** Ends a session (logout): it reads no more, and what it opened is closed. */
  end(id: string): void {
    this.sessions.delete(id);
    const entry = this.onEnd.get(id);
    if (entry === undefined) return;
    this.onEnd.delete(id);
    clearTimeout(entry.timer);
    for (const listener of entry.listeners) listener();
  }

  /** Drops expired challenges and sessions (on every new challenge, so memory stays bounded without a timer). */
  private sweep(now: number): void {
    // Every challenge and every session lives as long as the others of its kind: the oldest come first.
    for (const [challenge, expiresAt] of this.challenges) {
      if (expiresAt >= now) break;
      this.challenges.delete(challenge);
    }
    for (const [id, session] of this.sessions) {
      if (session.expiresAt > now) break;
      this.end(id);
    }
  }
}
