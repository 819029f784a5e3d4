/**
 * How every NATS connection Agora makes notices a dead link (services, gateway, projections, the
 * event store's own connection, the SDK, the CLI): it pings its server every `pingIntervalMs` and
 * drops the connection when `maxPingsOut` pings in a row went unanswered, then reconnects, to
 * another node of a cluster first (leastRecentlyDialled). nats.js's own defaults, 2 minutes and 2,
 * leave a client whose node's link silently dropped waiting about 4 minutes; these notice within
 * (maxPingsOut + 1) x pingIntervalMs, 12 s by default (docs/cluster.md, "A client's node cut off").
 */
export interface NatsLinkCheck {
  pingIntervalMs: number;
  maxPingsOut: number;
}

/** 4 s and 2: a silent link is dropped within 12 s, and a client acts through another node within 15 s. */
export const DEFAULT_NATS_LINK_CHECK: NatsLinkCheck = { pingIntervalMs: 4_000, maxPingsOut: 2 };

export const NATS_LINK_CHECK_HELP = `NATS_PING_INTERVAL_MS      how often each NATS connection pings its server (default 4000)
NATS_MAX_PINGS_OUT         unanswered pings after which it drops the link and reconnects, to
                           another node of a cluster (default 2): a dead link is noticed within
                           (NATS_MAX_PINGS_OUT + 1) x NATS_PING_INTERVAL_MS`;

function whole(env: Record<string, string | undefined>, name: string, fallback: number, min: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${name}=${JSON.stringify(raw)} must be a whole number of at least ${min}`);
  return value;
}

/** NATS_PING_INTERVAL_MS and NATS_MAX_PINGS_OUT, else the defaults; throws naming a setting that makes no sense. */
export function natsLinkCheck(env: Record<string, string | undefined> = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {}): NatsLinkCheck {
  return {
    pingIntervalMs: whole(env, 'NATS_PING_INTERVAL_MS', DEFAULT_NATS_LINK_CHECK.pingIntervalMs, 100),
    maxPingsOut: whole(env, 'NATS_MAX_PINGS_OUT', DEFAULT_NATS_LINK_CHECK.maxPingsOut, 1),
  };
}

/**
 * Which server a connection dials next: the one dialled least recently (nats.js's `reconnectToServer`,
 * given the pool with the client's own pick first). nats.js alone dials the server it just lost again
 * first (it keeps the current server at the head of its pool when the cluster's gossip adds the
 * others), and a node cut off silently holds that dial for the connect timeout, 20 s; this tries the
 * other nodes first, and a node never dialled before any other. Ties keep the client's order.
 */
export function leastRecentlyDialled<S extends { readonly lastConnect: number }>(pool: readonly S[]): S | null {
  let pick: S | null = null;
  for (const server of pool) if (pick === null || server.lastConnect < pick.lastConnect) pick = server;
  return pick;
}

/** The nats.js connect options of a link check: pings, and the next server dialled after a lost link. */
export function natsLinkOptions(check: NatsLinkCheck = natsLinkCheck()): { pingInterval: number; maxPingOut: number; reconnectToServer: typeof leastRecentlyDialled } {
  return { pingInterval: check.pingIntervalMs, maxPingOut: check.maxPingsOut, reconnectToServer: leastRecentlyDialled };
}
