/**
 * /a2a's settings and their environment variables. This file imports nothing of the gateway, so
 * that the gateway's options can name them without an import circle through the A2A route.
 */
import { ConfigError, positiveIntSetting } from '@agora/runtime';

/** The bounds of what one caller, and all callers together, may hold of /a2a (tasks, push configurations, history). */
export interface A2aBounds {
  /** Tasks following the log at once, all callers together; past that a new task is refused `too_many_sessions` (default 1,000). */
  maxTasks?: number;
  /** Tasks one caller follows at once; past that its next task is refused `too_many_sessions`, others' are not (default 100). */
  tasksPerCaller?: number;
  /** Ended tasks kept readable (tasks/get, tasks/list), all callers together (default 1,000). */
  maxFinishedTasks?: number;
  /** Ended tasks one caller keeps readable: past that its own oldest is forgotten, never another caller's (default 100). */
  finishedTasksPerCaller?: number;
  /** Push configurations of one task; past that a new one is refused (default 5). */
  pushConfigsPerTask?: number;
  /** Push configurations of one caller, all its tasks together (default 50). */
  pushConfigsPerCaller?: number;
  /** Messages a task's history keeps: the oldest go first (default 50). */
  historyMessages?: number;
  /** Bytes (JSON) a task's history keeps: the oldest messages go first (default 256 KiB). */
  historyBytes?: number;
}

/** /a2a's settings (AGORA_A2A_URL, AGORA_A2A_PUSH_ALLOW, AGORA_A2A_PUSH_CONFIG_TTL_SECONDS). */
export interface A2aSetting extends A2aBounds {
  /** The public base URL the Agent Card names (the gateway as its callers reach it). Default: the URL the gateway listens on. */
  url?: string;
  /**
   * Webhook hosts an operator allows besides the public internet (`host` or `host:port`, lowercase):
   * a push to them may be `http` and may reach a loopback, private or link-local address. Default none:
   * push URLs are `https` to public addresses only.
   */
  pushAllowHosts?: readonly string[];
  /**
   * How long a push configuration is kept after it was last set (set again, it lasts as long
   * again), on every replica and across restarts (default 7 days); once its task ended, an hour at most.
   */
  pushConfigTtlSeconds?: number;
}

/** How long a push configuration is kept after it was last set, by default: 7 days (a task is followed at most 24 hours at a time). */
export const DEFAULT_A2A_PUSH_CONFIG_TTL_MS = 7 * 24 * 60 * 60_000;

export const DEFAULT_A2A_BOUNDS: Required<A2aBounds> = {
  maxTasks: 1_000,
  tasksPerCaller: 100,
  maxFinishedTasks: 1_000,
  finishedTasksPerCaller: 100,
  pushConfigsPerTask: 5,
  pushConfigsPerCaller: 50,
  historyMessages: 50,
  historyBytes: 256 * 1024,
};

export const A2A_ENV_HELP = `AGORA_A2A_URL              the gateway's public base URL, which the A2A Agent Card names (default: the address
                           it listens on); off: no A2A (/a2a and /.well-known/agent-card.json)
AGORA_A2A_PUSH_ALLOW       webhook hosts (host or host:port, comma-separated) that A2A push notifications may
                           reach over http and on loopback, private or link-local addresses (for development);
                           default none: https to public addresses only
AGORA_A2A_PUSH_CONFIG_TTL_SECONDS  how long an A2A push configuration is kept after it was last set, shared by
                           the gateway's replicas (NATS: a JetStream key-value bucket; standalone: a file in
                           the data directory) and across restarts (default ${DEFAULT_A2A_PUSH_CONFIG_TTL_MS / 1000}, 7 days);
                           once its task ended, an hour at most`;

/** A host of AGORA_A2A_PUSH_ALLOW: a host name or address, with an optional port. */
const ALLOWED_HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/;

/** /a2a from AGORA_A2A_URL ("off", or the gateway's public base URL for the Agent Card), AGORA_A2A_PUSH_ALLOW and AGORA_A2A_PUSH_CONFIG_TTL_SECONDS. Throws ConfigError on a value it does not understand. */
export function a2aSettingFromEnv(env: NodeJS.ProcessEnv): A2aSetting | false {
  const text = env['AGORA_A2A_URL']?.trim();
  if (text === 'off') return false;
  const setting: A2aSetting = {};
  if (text !== undefined && text !== '') {
    if (!URL.canParse(text) || !/^https?:$/.test(new URL(text).protocol)) throw new ConfigError(`AGORA_A2A_URL must be off or the gateway's public http(s) base URL (got ${JSON.stringify(text)})`);
    setting.url = text.replace(/\/+$/, '');
  }
  const allow = env['AGORA_A2A_PUSH_ALLOW']?.trim();
  if (allow) {
    const hosts = allow
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h !== '');
    const bad = hosts.find((h) => !ALLOWED_HOST.test(h));
    if (bad !== undefined) throw new ConfigError(`AGORA_A2A_PUSH_ALLOW must be host names or addresses, each with an optional :port, comma-separated (got ${JSON.stringify(bad)})`);
    setting.pushAllowHosts = hosts;
  }
  const ttl = positiveIntSetting(env, 'AGORA_A2A_PUSH_CONFIG_TTL_SECONDS', 'seconds');
  if (ttl !== undefined) setting.pushConfigTtlSeconds = ttl;
  return setting;
}
