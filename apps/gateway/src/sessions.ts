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
  /** Sessions one agent may hold; its next login ends its own oldest. Default 8 (AGORA_CONSOLE_SESSIONS_PER_AGENT). */
  sessionsPerAgent?: number;
  /** Sessions in all; past that a login is refused `too_many_sessions`, never another agent's session ended. Default 10,000 (AGORA_CONSOLE_SESSIONS_MAX). */
  maxSessions?: number;
  /** Unanswered challenges one source (remote address; an IPv6 /64) may hold; its next one drops its own oldest. Default 16 (AGORA_LOGIN_CHALLENGES_PER_SOURCE). */
  challengesPerSource?: number;
  /** Unanswered challenges in all; past that a challenge is refused `too_many_sessions`, never another source's dropped. Default 10,000 (AGORA_LOGIN_CHALLENGES_MAX). */
  maxChallenges?: number;
}

export const DEFAULT_SESSION_BOUNDS = { sessionsPerAgent: 8, maxSessions: 10_000, challengesPerSource: 16, maxChallenges: 10_000 } as const;

/**
 * Who asks for a challenge, for its bound: the remote address, an IPv4-mapped IPv6 one as IPv4,
 * and an IPv6 one by its /64 (one host usually holds a whole /64). Behind a reverse proxy every
 * request comes from the proxy: give it enough room (AGORA_LOGIN_CHALLENGES_PER_SOURCE).
 */
export function sourceOf(req: IncomingMessage): string {
  const address = req.socket.remoteAddress ?? 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(':')) return address;
  const [head = '', tail] = address.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
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

/**
 * Refuses (`forbidden`) a state-changing console request a browser sent from another origin: a
 * page on another port of the same host is same-site, so SameSite=Strict still sends the session
 * cookie; `Sec-Fetch-Site` (anything but same-origin, or none for a typed URL) or else `Origin`
 * (another host and port than the request's own, or a proxy's X-Forwarded-Host) says so. A client
 * that is not a browser sends neither and is not concerned: it has no ambient cookie to abuse.
 */
export function refuseCrossOrigin(req: IncomingMessage): void {
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') {
    throw new GatewayError('forbidden', `a console request from another origin (Sec-Fetch-Site: ${site}) is refused: log in and out from the console's own page`);
  }
  const origin = req.headers.origin;
  if (origin === undefined) return;
  const own = new Set([req.headers.host, ...String(req.headers['x-forwarded-host'] ?? '').split(',')].map((h) => h?.trim().toLowerCase()).filter((h) => h));
  const from = URL.canParse(origin) ? new URL(origin).host.toLowerCase() : undefined;
  if (from === undefined || !own.has(from)) throw new GatewayError('forbidden', `a console request from another origin (Origin: ${JSON.stringify(origin.slice(0, 100))}) is refused: log in and out from the console's own page`);
}

/** Set-Cookie for a session (Secure when the request came over HTTPS, directly or through a proxy that says so), or its removal. */
export function sessionCookie(req: IncomingMessage, session: { id: string; maxAgeSeconds: number } | undefined): string {
  const secure = (req.socket as { encrypted?: boolean }).encrypted === true || req.headers['x-forwarded-proto'] === 'https';
  const value = session === undefined ? `${LOGIN.cookie}=; Max-Age=0` : `${LOGIN.cookie}=${session.id}; Max-Age=${session.maxAgeSeconds}`;
  return `${value}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** Keys grouped by owner, oldest first, to bound each owner's share. */
class Owned {
  private readonly byOwner = new Map<string, Set<string>>();

  add(owner: string, key: string): void {
    let keys = this.byOwner.get(owner);
    if (keys === undefined) this.byOwner.set(owner, (keys = new Set()));
    keys.add(key);
  }

  delete(owner: string, key: string): void {
    const keys = this.byOwner.get(owner);
    if (keys === undefined) return;
    keys.delete(key);
    if (keys.size === 0) this.byOwner.delete(owner);
  }

  count(owner: string): number {
    return this.byOwner.get(owner)?.size ?? 0;
  }

  oldest(owner: string): string | undefined {
    return this.byOwner.get(owner)?.values().next().value;
  }
}

export class SessionStore {
  private readonly challenges = new Map<string, { expiresAt: number; source: string }>();
  private readonly challengesBySource = new Owned();
  private readonly sessions = new Map<string, Session>();
  private readonly sessionsByAgent = new Owned();
  /** What to do when a session ends (logout, expiry): e.g. close the event streams it opened; and the timer of its expiry. */
  private readonly onEnd = new Map<string, { listeners: Set<() => void>; timer: NodeJS.Timeout }>();
  readonly sessionSeconds: number;
  private readonly challengeSeconds: number;
  private readonly bounds: Required<Pick<SessionOptions, keyof typeof DEFAULT_SESSION_BOUNDS>>;

  constructor(
    private readonly directory: AgentDirectory,
    readonly audience: string,
    options: SessionOptions = {},
    private readonly now: () => Date = () => new Date(),
  ) {
    this.sessionSeconds = options.sessionSeconds ?? LOGIN.sessionSeconds;
    this.challengeSeconds = options.challengeSeconds ?? LOGIN.challengeSeconds;
    this.bounds = {
      sessionsPerAgent: options.sessionsPerAgent ?? DEFAULT_SESSION_BOUNDS.sessionsPerAgent,
      maxSessions: options.maxSessions ?? DEFAULT_SESSION_BOUNDS.maxSessions,
      challengesPerSource: options.challengesPerSource ?? DEFAULT_SESSION_BOUNDS.challengesPerSource,
      maxChallenges: options.maxChallenges ?? DEFAULT_SESSION_BOUNDS.maxChallenges,
    };
  }

  /**
   * A fresh challenge for `source` (sourceOf), good for one login attempt within challengeSeconds.
   * A source past its share drops its own oldest; when all are taken the challenge is refused
   * (`too_many_sessions`, with the seconds until one frees): nobody's challenge is dropped for another's.
   */
  challenge(source = 'unknown'): { challenge: string; audience: string; expiresAt: string } {
    const now = this.now().getTime();
    this.sweep(now);
    if (this.challengesBySource.count(source) >= this.bounds.challengesPerSource) this.dropChallenge(this.challengesBySource.oldest(source)!);
    if (this.challenges.size >= this.bounds.maxChallenges) {
      const first = this.challenges.values().next().value;
      const retryAfter = Math.max(1, Math.ceil(((first?.expiresAt ?? now) - now) / 1000));
      throw new GatewayError('too_many_sessions', `the gateway holds its most unanswered login challenges (${this.bounds.maxChallenges}, AGORA_LOGIN_CHALLENGES_MAX); ask again in ${retryAfter} s`, { retryAfterSeconds: retryAfter });
    }
    const challenge = randomId();
    const expiresAt = now + this.challengeSeconds * 1000;
    this.challenges.set(challenge, { expiresAt, source });
    this.challengesBySource.add(source, challenge);
    return { challenge, audience: this.audience, expiresAt: new Date(expiresAt).toISOString() };
  }

  private dropChallenge(challenge: string): void {
    const entry = this.challenges.get(challenge);
    if (entry === undefined) return;
    this.challenges.delete(challenge);
    this.challengesBySource.delete(entry.source, challenge);
  }

  /**
   * Checks a signed challenge and opens a session: the challenge is used up whatever the outcome;
   * the agent must be registered and active, and the signature its registered key's over the login
   * bytes. Throws a GatewayError naming what is wrong.
   */
  async login(input: { agentId: string; challenge: string; signature: string }): Promise<{ session: Session; roles: readonly string[] }> {
    const now = this.now().getTime();
    const expiresAt = this.challenges.get(input.challenge)?.expiresAt;
    this.dropChallenge(input.challenge);
    if (expiresAt === undefined || expiresAt < now) throw new GatewayError('invalid_token', 'the challenge is unknown, expired or already used: ask for a new one (POST /v1/login/challenge)');
    const agent = await this.directory.get(input.agentId);
    if (agent === undefined) throw new GatewayError('unknown_actor', `no agent "${input.agentId}" is registered`);
    const bytes = domainSigningBytes(SIGNING_TAGS.login, { aud: this.audience, challenge: input.challenge, sub: input.agentId });
    if (!verifyBytes(bytes, input.signature, agent.publicKey)) throw new GatewayError('bad_signature', `the login signature does not verify under ${input.agentId}'s registered key`);
    if (agent.status !== 'active') throw new GatewayError('actor_disabled', `agent ${input.agentId} is disabled`);
    this.sweep(now);
    // An agent past its share ends its own oldest session; when all are taken the login is refused, never another agent's session ended.
    if (this.sessionsByAgent.count(input.agentId) >= this.bounds.sessionsPerAgent) this.end(this.sessionsByAgent.oldest(input.agentId)!);
    if (this.sessions.size >= this.bounds.maxSessions) throw new GatewayError('too_many_sessions', `the gateway holds its most console sessions (${this.bounds.maxSessions}, AGORA_CONSOLE_SESSIONS_MAX): log in again once one ends`);
    const session: Session = { id: randomId(), agentId: input.agentId, expiresAt: now + this.sessionSeconds * 1000 };
    this.sessions.set(session.id, session);
    this.sessionsByAgent.add(session.agentId, session.id);
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
    const session = this.sessions.get(id);
    if (session !== undefined) this.sessionsByAgent.delete(session.agentId, id);
    this.sessions.delete(id);
    const entry = this.onEnd.get(id);
    if (entry === undefined) return;
    this.onEnd.delete(id);
    clearTimeout(entry.timer);
    for (const listener of entry.listeners) listener();
  }

  /** Drops expired challenges and sessions (on every new challenge and login, so memory stays bounded without a timer). */
  private sweep(now: number): void {
    // Every challenge and every session lives as long as the others of its kind: the oldest come first.
    for (const [challenge, { expiresAt }] of this.challenges) {
      if (expiresAt >= now) break;
      this.dropChallenge(challenge);
    }
    for (const [id, session] of this.sessions) {
      if (session.expiresAt > now) break;
      this.end(id);
    }
  }
}
