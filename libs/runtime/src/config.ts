import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AgentId, NATS_LINK_CHECK_HELP, natsLinkCheck, PublicKeyText, READ_TOKEN } from '@agora/contracts';
import { DEFAULT_READ_MODEL_WAIT_MS } from '@agora/eventsourcing';
import { parseReadDatabaseConfig, READ_DB_HELP, type ReadDatabaseConfig } from '@agora/read-store';
import { EVENT_STORE_HELP, NATS_CREDENTIALS_HELP, natsCredentials, parseStoreConfig, type NatsCredentials, type StoreConfig } from '@agora/eventstore';
import { InvalidKey, parseKeyFile, parseServiceKeyring, publicKeyObject, type ServiceKeyring } from '@agora/identity';
import { DEFAULT_MAX_CLOCK_SKEW_MS, DEFAULT_NATS_URL, DEFAULT_REQUEST_TIMEOUT_MS } from '@agora/messaging';
import type { BootstrapAgent } from './agent-directory.js';
import { DEFAULT_LEASE_TTL_MS } from './lease.js';
import { DEFAULT_NATS_WAIT_MS, STARTUP_ENV_HELP } from './startup.js';
import { serviceSecretKeysFromEnv } from './service-identity.js';
import { ConfigError } from './config-error.js';

export interface RuntimeConfig {
  store: StoreConfig;
  /** NATS servers; undefined in standalone mode without NATS_URL (in-process transport). */
  natsUrl: string | undefined;
  /** The NATS user (NATS_USER / NATS_PASSWORD), for the transport and the jetstream store. */
  natsCredentials?: NatsCredentials;
  /**
   * AGORA_NATS_READS: `closed` makes the services answer NATS queries by the visibility table, to the
   * reader a read token proves. Default closed when the process connects as a NATS user (a deployment
   * with users, where agents have NATS users of their own), open on a NATS without users. `explicit`:
   * the variable said so.
   */
  natsReads?: { mode: 'open' | 'closed'; audience: string; explicit?: boolean };
  dataDir: string;
  /** AGORA_READ_DB: where the read models live. Default: SQLite at `<dataDir>/read-models.sqlite` (see `readDatabaseOf`). */
  readDb?: ReadDatabaseConfig;
  /** Operators known from configuration, so the first RegisterAgent can be signed. */
  operators: BootstrapAgent[];
  maxClockSkewMs: number;
  requestTimeoutMs: number;
  /** Where service keys are kept (`<name>.key.json`); AGORA_SERVICE_KEYS_DIR, default `<dataDir>/service-keys`. */
  serviceKeysDir?: string;
  /** Service secret keys given as variables (AGORA_<NAME>_SERVICE_KEY), by service. */
  serviceSecretKeys?: Partial<Record<string, string>>;
  /** AGORA_SERVICE_PUBLIC_KEYS: every service's public keys over time (verifiers' view); undefined when unset. */
  serviceKeyring?: ServiceKeyring | undefined;
  /** Framework log levels shown (AGORA_LOG_LEVEL and everything more severe). Default: warn and above. */
  logLevels?: LogLevelName[];
  /** How long a starting process waits for NATS (AGORA_NATS_WAIT_MS); undefined = the default. */
  natsWaitMs?: number;
  /** AGORA_READ_MODEL_WAIT_MS: how long a query given `minPosition` waits for the read models to reach it before `read_model_behind`. Default DEFAULT_READ_MODEL_WAIT_MS. */
  readModelWaitMs?: number;
  /** AGORA_LEASE_TTL_MS: how long a replica's lease on a reactor or scheduler outlives its last renewal; 0 = no leases. Default DEFAULT_LEASE_TTL_MS. */
  leaseTtlMs?: number;
  /** Where the process serves /metrics (METRICS_PORT, METRICS_HOST); unset: not served by runProcess (tests). */
  metrics?: { port: number; host: string };
}

/**
 * Default METRICS_PORT of each process, distinct so that several run on one host without a clash.
 * The projections keep the 9464 they always had, and the one-process mode serves everything there.
 */
export const DEFAULT_METRICS_PORTS = {
  standalone: 9464,
  projections: 9464,
  registry: 9465,
  proposal: 9466,
  tribunal: 9467,
  voting: 9468,
  dialectic: 9469,
  gateway: 9470,
  chamber: 9471,
  debate: 9472,
  /** `agora audit --follow`. */
  audit: 9473,
} as const;

export const DEFAULT_METRICS_HOST = '0.0.0.0';

/** The help lines of METRICS_PORT and METRICS_HOST for a process whose default port is `port`. */
export function metricsEnvHelp(port: number): string {
  return `METRICS_PORT               HTTP port of /metrics (Prometheus) and /health (default ${port}; 0 = any free port)
METRICS_HOST               address the metrics endpoint binds (default ${DEFAULT_METRICS_HOST})`;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

function logLevels(env: NodeJS.ProcessEnv): LogLevelName[] {
  const raw = (env['AGORA_LOG_LEVEL'] ?? 'warn').trim();
  const index = LOG_LEVELS.indexOf(raw as LogLevelName);
  if (index < 0) throw new ConfigError(`AGORA_LOG_LEVEL=${JSON.stringify(raw)} must be one of ${LOG_LEVELS.join(', ')}`);
  return LOG_LEVELS.slice(0, index + 1);
}

export const RUNTIME_ENV_HELP = `${EVENT_STORE_HELP}
NATS_URL                   NATS servers (default ${DEFAULT_NATS_URL}); in standalone mode, unset means
                           the in-process transport
${NATS_CREDENTIALS_HELP}
${NATS_LINK_CHECK_HELP}
AGORA_NATS_READS           closed or open: with closed, a query on NATS must carry its reader's read token
                           (header Agora-Read-Token; the SDK, the clients and the gateway send it) and is
                           answered by the visibility table; without one it is refused (forbidden).
                           Default closed when NATS_USER is set (NATS with users, agents as themselves),
                           open on a NATS without users; open with NATS_USER set is logged as a warning
AGORA_READ_AUDIENCE        the audience those read tokens must name (default agora, as the gateway's)
AGORA_DATA_DIR             data directory: embedded store, checkpoints (default ./data)
${READ_DB_HELP}
AGORA_OPERATOR_KEY_FILE    key file of the bootstrap operator ({"agentId","publicKey"}; a secretKey in
                           it is checked and ignored): may sign the first RegisterAgent
AGORA_OPERATOR_PUBLIC_KEY  the same as a variable: ed25519:<base64url>, with AGORA_OPERATOR_ID
AGORA_OPERATOR_ID          agent id of that operator (default root)
AGORA_SERVICE_KEYS_DIR     where each service's key file <name>.key.json is kept, created (mode 0600) on the
                           service's first start when missing (default <AGORA_DATA_DIR>/service-keys)
AGORA_<NAME>_SERVICE_KEY   a service's secret key as a variable instead (ed25519-secret:...), e.g.
                           AGORA_TRIBUNAL_SERVICE_KEY; names: registry, proposal, tribunal, voting,
                           dialectic, projections, chamber, debate
AGORA_SERVICE_PUBLIC_KEYS  the services' public keys, JSON or @<file>: {"tribunal":"ed25519:...", ...} or,
                           with rotations, {"tribunal":[{"publicKey":"ed25519:...","until":"<time>"},
                           {"publicKey":"ed25519:...","from":"<time>"}]}; a service whose key is not
                           its key in force here refuses to start; auditors verify with it
AGORA_MAX_CLOCK_SKEW_MS    how far issuedAt may be from the service clock (default ${DEFAULT_MAX_CLOCK_SKEW_MS})
AGORA_REQUEST_TIMEOUT_MS   timeout of every request a process makes (default ${DEFAULT_REQUEST_TIMEOUT_MS})
AGORA_LEASE_TTL_MS         on NATS, the replicas of a service share its reactors and deadline schedulers:
                           one replica holds a lease on each and renews it every third of this, another
                           takes it over after this long without renewal (default ${DEFAULT_LEASE_TTL_MS}; 0 = no
                           leases, every replica runs every reactor and scheduler)
AGORA_READ_MODEL_WAIT_MS   read your writes: how long a query or event stream given minPosition waits for
                           the read models to reach it before read_model_behind (default ${DEFAULT_READ_MODEL_WAIT_MS})
AGORA_LOG_LEVEL            framework log detail: error, warn, log, debug or verbose (default warn)
${STARTUP_ENV_HELP}`;

/** A whole-number setting within bounds (`what` completes "must be ..."); the fallback when unset. Throws ConfigError naming it. */
export function intSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, bounds: { min: number; max?: number; what: string }): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < bounds.min || value > (bounds.max ?? Number.MAX_SAFE_INTEGER)) throw new ConfigError(`${name}=${JSON.stringify(raw)} must be ${bounds.what}`);
  return value;
}

/** A positive whole-number setting (`unit` is what it counts: `milliseconds`); the fallback when unset, undefined without one. Throws ConfigError naming it. */
export function positiveIntSetting(env: NodeJS.ProcessEnv, name: string, unit: string): number | undefined;
export function positiveIntSetting(env: NodeJS.ProcessEnv, name: string, unit: string, fallback: number): number;
export function positiveIntSetting(env: NodeJS.ProcessEnv, name: string, unit: string, fallback?: number): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  return intSetting(env, name, 0, { min: 1, what: `a positive whole number of ${unit}` });
}

/** A number from 0 to 1 (a share, a risk); the fallback when unset. Throws ConfigError naming it. */
export function unitSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, what = 'a number from 0 to 1'): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > 1) throw new ConfigError(`${name}=${JSON.stringify(raw)} must be ${what}`);
  return value;
}

/**
 * A JSON setting, given inline or as `@<file>`, checked by `define` (which throws with what is
 * wrong); undefined when unset. Throws ConfigError naming the setting and the problem.
 */
export function jsonSetting<T>(env: NodeJS.ProcessEnv, name: string, define: (input: unknown) => T): T | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  let text = raw;
  if (raw.startsWith('@')) {
    try {
      text = readFileSync(raw.slice(1), 'utf8');
    } catch (error) {
      throw new ConfigError(`${name}: cannot read ${raw.slice(1)}: ${(error as Error).message}`);
    }
  }
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch {
    throw new ConfigError(`${name} is not JSON`);
  }
  try {
    return define(input);
  } catch (error) {
    throw new ConfigError(`${name}: ${(error as Error).message}`);
  }
}

/** A TCP port setting (0 = any free port). */
export function portSetting(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  return intSetting(env, name, fallback, { min: 0, max: 65535, what: 'a port number (0 to 65535; 0 = any free port)' });
}

/** The bootstrap operator's key file `npm start` creates in its data directory when no operator is configured (apps/standalone). */
export const STANDALONE_OPERATOR_KEY_FILE = 'operator.key.json';

/** `<data dir>/operator.key.json` when it is there (the operator `npm start` made), else undefined. */
export function standaloneOperatorKeyFile(dataDir: string): string | undefined {
  const file = join(dataDir, STANDALONE_OPERATOR_KEY_FILE);
  return existsSync(file) ? file : undefined;
}

/** Reads the bootstrap operator's key file: `{agentId, publicKey}`, or a full key file whose public key is derived from its secret. */
export function readOperatorKeyFile(path: string, fallbackId: string): BootstrapAgent {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`AGORA_OPERATOR_KEY_FILE: cannot read ${path}: ${(error as Error).message}`);
  }
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new ConfigError(`AGORA_OPERATOR_KEY_FILE: ${path} is not JSON (expected {"agentId": "...", "publicKey": "ed25519:..."})`);
  }
  try {
    const publicKey = typeof parsed['secretKey'] === 'string' ? parseKeyFile(text).publicKey : parsed['publicKey'];
    const agentId = typeof parsed['agentId'] === 'string' ? parsed['agentId'] : fallbackId;
    return checkedOperator(agentId, publicKey, `AGORA_OPERATOR_KEY_FILE (${path})`);
  } catch (error) {
    if (error instanceof InvalidKey) throw new ConfigError(`AGORA_OPERATOR_KEY_FILE: ${path}: ${error.message}`);
    throw error;
  }
}

function checkedOperator(agentId: unknown, publicKey: unknown, source: string): BootstrapAgent {
  const id = AgentId.safeParse(agentId);
  if (!id.success) throw new ConfigError(`${source}: agent id ${JSON.stringify(agentId)}: ${id.error.issues[0]?.message}`);
  const key = PublicKeyText.safeParse(publicKey);
  if (!key.success) throw new ConfigError(`${source}: ${key.error.issues[0]?.message}`);
  try {
    publicKeyObject(key.data);
  } catch (error) {
    throw new ConfigError(`${source}: ${(error as Error).message}`);
  }
  return { agentId: id.data, publicKey: key.data };
}

/**
 * AGORA_NATS_READS (open or closed) and the audience of read tokens (AGORA_READ_AUDIENCE, as the
 * gateway's). Unset: closed when the process is a NATS user (wherever NATS has users, agents have
 * theirs, and may publish queries), open on a NATS without users (anyone connected may do anything there).
 */
function natsReadsSetting(env: NodeJS.ProcessEnv, credentials: NatsCredentials | undefined): { mode: 'open' | 'closed'; audience: string; explicit: boolean } {
  const given = env['AGORA_NATS_READS']?.trim() || undefined;
  const mode = given ?? (credentials === undefined ? 'open' : 'closed');
  if (mode !== 'open' && mode !== 'closed') throw new ConfigError(`AGORA_NATS_READS must be open or closed (got ${JSON.stringify(mode)})`);
  return { mode, audience: env['AGORA_READ_AUDIENCE']?.trim() || READ_TOKEN.defaultAudience, explicit: given !== undefined };
}

export interface ReadConfigOptions {
  /** Standalone mode runs without NATS unless NATS_URL is set; a service process always uses NATS. */
  natsByDefault: boolean;
  /** Default METRICS_PORT of the process (DEFAULT_METRICS_PORTS); unset: metrics settings are not read. */
  metricsPort?: number;
}

/** The read models' SQLite file when AGORA_READ_DB is not set. */
export function defaultReadDatabaseFile(dataDir: string): string {
  return join(dataDir, 'read-models.sqlite');
}

/** Where a config's read models live (its `readDb`, else SQLite in its data directory). */
export function readDatabaseOf(config: Pick<RuntimeConfig, 'readDb' | 'dataDir'>): ReadDatabaseConfig {
  return config.readDb ?? { engine: 'sqlite', file: defaultReadDatabaseFile(config.dataDir) };
}

/** Reads the environment every Agora process shares (see RUNTIME_ENV_HELP). Throws ConfigError naming the bad setting. */
export function readRuntimeConfig(env: NodeJS.ProcessEnv, options: ReadConfigOptions): RuntimeConfig {
  let store: StoreConfig;
  try {
    store = parseStoreConfig(env['EVENT_STORE'], env);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  let credentials: NatsCredentials | undefined;
  try {
    credentials = natsCredentials(env);
    // Read again by each connection (libs/messaging, the JetStream store): a bad value stops the process here, named.
    natsLinkCheck(env);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const natsEnv = env['NATS_URL']?.trim() || undefined;
  const natsUrl = natsEnv ?? (options.natsByDefault ? DEFAULT_NATS_URL : undefined);
  // A service process that fell back to a private embedded log would join the shared queue groups
  // and answer from a log nobody else sees: on NATS the store must be named.
  if (options.natsByDefault && !env['EVENT_STORE']?.trim()) {
    throw new ConfigError(
      `EVENT_STORE is not set: a process on NATS (${natsUrl}) must name the shared event store, e.g. EVENT_STORE=jetstream or EVENT_STORE=kurrentdb://...; EVENT_STORE=embedded only if this process is alone with its own log`,
    );
  }
  const dataDir = resolve(env['AGORA_DATA_DIR'] ?? './data');
  let readDb: ReadDatabaseConfig;
  try {
    readDb = parseReadDatabaseConfig(env['AGORA_READ_DB'], defaultReadDatabaseFile(dataDir));
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const operatorId = env['AGORA_OPERATOR_ID']?.trim() || 'root';
  const operators: BootstrapAgent[] = [];
  const keyFile = env['AGORA_OPERATOR_KEY_FILE']?.trim();
  if (keyFile) operators.push(readOperatorKeyFile(resolve(keyFile), operatorId));
  const publicKey = env['AGORA_OPERATOR_PUBLIC_KEY']?.trim();
  if (publicKey) operators.push(checkedOperator(operatorId, publicKey, 'AGORA_OPERATOR_PUBLIC_KEY'));
  return {
    store,
    natsUrl,
    ...(credentials === undefined ? {} : { natsCredentials: credentials }),
    natsReads: natsReadsSetting(env, credentials),
    dataDir,
    readDb,
    operators,
    maxClockSkewMs: positiveIntSetting(env, 'AGORA_MAX_CLOCK_SKEW_MS', 'milliseconds', DEFAULT_MAX_CLOCK_SKEW_MS),
    requestTimeoutMs: positiveIntSetting(env, 'AGORA_REQUEST_TIMEOUT_MS', 'milliseconds', DEFAULT_REQUEST_TIMEOUT_MS),
    logLevels: logLevels(env),
    leaseTtlMs: intSetting(env, 'AGORA_LEASE_TTL_MS', DEFAULT_LEASE_TTL_MS, { min: 0, what: 'a whole number of milliseconds (0 = no leases)' }),
    readModelWaitMs: intSetting(env, 'AGORA_READ_MODEL_WAIT_MS', DEFAULT_READ_MODEL_WAIT_MS, { min: 0, what: 'a whole number of milliseconds (0 = answer at once or refuse)' }),
    natsWaitMs: intSetting(env, 'AGORA_NATS_WAIT_MS', DEFAULT_NATS_WAIT_MS, { min: 0, what: 'a whole number of milliseconds (0 = do not wait)' }),
    ...(options.metricsPort === undefined ? {} : { metrics: { port: portSetting(env, 'METRICS_PORT', options.metricsPort), host: env['METRICS_HOST']?.trim() || DEFAULT_METRICS_HOST } }),
    serviceKeysDir: resolve(env['AGORA_SERVICE_KEYS_DIR']?.trim() || join(env['AGORA_DATA_DIR'] ?? './data', 'service-keys')),
    serviceSecretKeys: serviceSecretKeysFromEnv(env),
    serviceKeyring: jsonSetting(env, 'AGORA_SERVICE_PUBLIC_KEYS', parseServiceKeyring),
  };
}
