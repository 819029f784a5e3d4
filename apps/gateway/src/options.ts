import { DEFAULT_MCP_BOUNDS } from '@agora/mcp';
import { commands, events, queries, type CommandDefinition, type EventDefinition, type QueryDefinition } from '@agora/contracts';
import { DEFAULT_READ_MODEL_WAIT_MS } from '@agora/eventsourcing';
import { ConfigError, positiveIntSetting } from '@agora/runtime';
import type { EventStore } from '@agora/eventstore';
import type { AgoraClient } from '@agora/messaging';
import type { LoggerService } from '@nestjs/common';
import type { Registry } from 'prom-client';
import { DEFAULT_FEED_OPTIONS, type EventFeedOptions } from './event-feed.js';
import { DEFAULT_HEARTBEAT_MS } from './event-stream.js';
import type { A2aSetting } from './a2a/settings.js';
import type { McpSessionBounds } from './mcp-route.js';
import { ReadAccess, type ReadAccessOptions } from './read-auth.js';

export type SseFeedOptions = Omit<EventFeedOptions, 'logger'>;

/** The commands and queries a gateway serves (default: every one in @agora/contracts). */
export interface GatewayCatalog {
  commands: readonly CommandDefinition[];
  queries: readonly QueryDefinition[];
  /** Described in /docs under the SSE route. Default: the contracts' events when `catalog` is not given, else none. */
  events?: readonly EventDefinition[];
}

export interface GatewayOptions {
  /** How commands and queries reach the services: NatsAgoraClient, or InProcessAgoraClient in standalone mode. */
  client: AgoraClient;
  /** Where GET /v1/events reads committed events from. */
  store: EventStore;
  /** Default 8080; 0 picks any free port (see `Gateway.url`). */
  port?: number;
  /** Default 0.0.0.0. */
  host?: string;
  /** Largest command body accepted; larger ones get 413 `payload_too_large`. Default 256 KiB. */
  maxBodyBytes?: number;
  /** Timeout of every request to a service; no reply in time is 504 `timeout`. Default 5000 ms. */
  requestTimeoutMs?: number;
  /** Nest's logger (`false` silences it, e.g. in tests). Default: Nest's console logger. */
  logger?: false | LoggerService;
  /** Commands and queries to serve. Default: the contracts catalog. Tests give a made-up service's. */
  catalog?: GatewayCatalog;
  /** Interval of the SSE heartbeat comment. Default 15 s. */
  sseHeartbeatMs?: number;
  /**
   * How long an SSE client may leave written events unread (the socket's buffer full) before it is
   * dropped with its resume position, so that one slow reader holds no subscription open for
   * ever. Default 30 s.
   */
  sseSlowClientMs?: number;
  /** What the SSE clients share: live events kept in memory, events per history page, history pages kept (defaults in DEFAULT_FEED_OPTIONS). */
  sseFeed?: Partial<SseFeedOptions>;
  /** Read your writes: how long an event stream given `minPosition` waits for the gateway's feed to reach it before `read_model_behind`. Default DEFAULT_READ_MODEL_WAIT_MS (AGORA_READ_MODEL_WAIT_MS). */
  readModelWaitMs?: number;
  /** The process's Prometheus registry (`context.metrics.registry`): GET /metrics serves it, with the gateway's metrics added. Default: a registry of the gateway's own. */
  registry?: Registry;
  /**
   * Directory of the built web console, served at `/`. Default: @agora/console's build output
   * (apps/console/dist/public); `false`: no console (`/` is a 404 like any unknown path).
   */
  console?: string | false;
  /**
   * Who may read (AGORA_READS): `{mode: 'closed', directory}` makes every query and event stream
   * need a read token and apply the visibility table. Default: open (anyone reads everything).
   */
  reads?: ReadAccessOptions;
  /**
   * MCP over Streamable HTTP at `/mcp`: queries, waiting tools and resources (commands need a key,
   * which stays with its agent: `agora mcp`). `allowedHostnames`: host names besides localhost
   * that requests may name in Host and Origin (DNS rebinding protection). `false`: no /mcp.
   */
  mcp?: { allowedHostnames?: readonly string[]; sessions?: McpSessionBounds } | false;
  /**
   * Agora as an A2A agent: the Agent Card at /.well-known/agent-card.json and the JSON-RPC binding
   * at /a2a. `url`: the public base URL the card names (default: the URL the gateway listens on).
   * `false`: neither.
   */
  a2a?: A2aSetting | false;
  /**
   * Where the gateway keeps what outlives it and its replicas share (A2A push configurations):
   * over a NATS client and given `scope` (the log the replicas share, as leaseScope names it), a
   * JetStream key-value bucket named after it; else a file in `dataDir`; else its memory.
   */
  shared?: { dataDir?: string; scope?: string };
  /**
   * The scrape token of /metrics (AGORA_METRICS_TOKEN): a request with `Authorization: Bearer
   * <token>` gets every metric of the registry; any other request only the metrics whose labels
   * name no agent (METRICS_ID_LABELS: reviewers' and validators' ids and what they decided stay
   * behind the token). Default: none, so /metrics serves only those.
   */
  metricsToken?: string;
}

export const METRICS_TOKEN_ENV_HELP = `AGORA_METRICS_TOKEN        the scrape token of the gateway's /metrics (16 characters or more): with
                           Authorization: Bearer <token> it serves every metric, without only those whose
                           labels name no agent (default none: only those)`;

/** AGORA_METRICS_TOKEN: /metrics' scrape token, or undefined. Throws ConfigError on one shorter than 16 characters. */
export function metricsTokenFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  const token = env['AGORA_METRICS_TOKEN']?.trim();
  if (token === undefined || token === '') return undefined;
  if (token.length < 16 || /\s/.test(token)) throw new ConfigError('AGORA_METRICS_TOKEN must be 16 characters or more, with no spaces');
  return token;
}

export { A2A_ENV_HELP, a2aSettingFromEnv } from './a2a/settings.js';

export const DEFAULT_SSE_SLOW_CLIENT_MS = 30_000;

export const MCP_ENV_HELP = `AGORA_MCP_ALLOWED_HOSTS    host names besides localhost that /mcp requests may name in Host and Origin,
                           comma-separated (DNS rebinding protection); off: no /mcp
AGORA_MCP_SESSIONS_PER_READER  MCP sessions one reader holds at once (reads open: no reader, only the next bound);
                           past that initialize is refused 429 too_many_sessions (default ${DEFAULT_MCP_BOUNDS.sessionsPerCaller})
AGORA_MCP_SESSIONS_MAX     MCP sessions in all; past that initialize is refused 503 too_many_sessions (default ${DEFAULT_MCP_BOUNDS.maxSessions})
AGORA_MCP_SESSION_IDLE_SECONDS  an MCP session with no request this long is closed (default ${DEFAULT_MCP_BOUNDS.idleMs / 1000})`;

/**
 * /mcp from AGORA_MCP_ALLOWED_HOSTS ("off", or the host names it may be reached by besides
 * localhost) and the bounds of its sessions. Throws ConfigError on a value it does not understand.
 */
export function mcpSettingFromEnv(env: NodeJS.ProcessEnv): GatewayOptions['mcp'] {
  const text = env['AGORA_MCP_ALLOWED_HOSTS']?.trim();
  if (text === 'off') return false;
  const sessions: McpSessionBounds = {};
  const perReader = positiveIntSetting(env, 'AGORA_MCP_SESSIONS_PER_READER', 'sessions');
  const max = positiveIntSetting(env, 'AGORA_MCP_SESSIONS_MAX', 'sessions');
  const idle = positiveIntSetting(env, 'AGORA_MCP_SESSION_IDLE_SECONDS', 'seconds');
  if (perReader !== undefined) sessions.sessionsPerReader = perReader;
  if (max !== undefined) sessions.maxSessions = max;
  if (idle !== undefined) sessions.idleSeconds = idle;
  return {
    ...(text ? { allowedHostnames: text.split(',').map((h) => h.trim().toLowerCase()).filter((h) => h !== '') } : {}),
    ...(Object.keys(sessions).length > 0 ? { sessions } : {}),
  };
}

export interface Gateway {
  /** Base URL to reach the gateway, e.g. `http://127.0.0.1:8080` (a wildcard host is given as loopback). */
  url: string;
  /** Ends open event streams and stops listening. The client and the store stay open: they are the caller's. */
  close(): Promise<void>;
  /** This gateway's Prometheus registry (what GET /metrics serves). */
  registry: Registry;
}

export const DEFAULT_PORT = 8080;
export const DEFAULT_MAX_BODY_BYTES = 256 * 1024;
export const DEFAULT_REQUEST_TIMEOUT_MS = 5_000;

/** GatewayOptions with every default filled in: what the controllers get. */
export interface ResolvedGatewayOptions {
  client: AgoraClient;
  store: EventStore;
  maxBodyBytes: number;
  requestTimeoutMs: number;
  sseHeartbeatMs: number;
  sseSlowClientMs: number;
  sseFeed: SseFeedOptions;
  readModelWaitMs: number;
  catalog: GatewayCatalog;
  reads: ReadAccess;
  metricsToken: string | undefined;
}

export const GATEWAY_OPTIONS = Symbol.for('agora.gateway.options');

export function resolveOptions(options: GatewayOptions): ResolvedGatewayOptions {
  return {
    client: options.client,
    store: options.store,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    sseHeartbeatMs: options.sseHeartbeatMs ?? DEFAULT_HEARTBEAT_MS,
    sseSlowClientMs: options.sseSlowClientMs ?? DEFAULT_SSE_SLOW_CLIENT_MS,
    sseFeed: { ...DEFAULT_FEED_OPTIONS, ...options.sseFeed },
    readModelWaitMs: options.readModelWaitMs ?? DEFAULT_READ_MODEL_WAIT_MS,
    catalog: options.catalog ?? { commands, queries, events },
    reads: new ReadAccess(options.reads),
    metricsToken: options.metricsToken,
  };
}
