// The harness of tests against a running Agora as a user starts it: the one-process standalone
// (`apps/standalone`) on a port of its own, and agents that sign commands and read over its HTTP API.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandResult, Reply } from '@agora/contracts';
import { createSignedCommand, generateKeyPair, mintReadToken, parseKeyFile, type KeyPair } from '@agora/identity';
import { startAgoraProcess, type AgoraProcess } from './processes.js';
import { definitionOf, okOver, type CommandRef } from './services.js';

export interface HttpAgents {
  /** Every agent's key pair by id; `key(id)` finds or makes one on first use. */
  readonly keys: Record<string, KeyPair>;
  /** The agent's key: given, read from `<keyDir>/<agentId>.key.json` when that file exists (the demos write their agents' keys so), else made. */
  key(agentId: string): KeyPair;
  /** Signs `command` as `agentId` (with its key, or `options.key`) and POSTs it to /v1/commands; the reply as it comes. */
  send<T = CommandResult>(agentId: string, command: CommandRef, payload: Record<string, unknown>, options?: { key?: KeyPair }): Promise<Reply<T>>;
  /** `send`, failing with the error's code and message unless the reply is ok; the result. */
  ok<T = CommandResult>(agentId: string, command: CommandRef, payload: Record<string, unknown>): Promise<T>;
  /** GET `path` (`/v1/...`), failing on an error reply; read as `as` with a read token of its own when given. */
  get<T>(path: string, options?: { as?: string }): Promise<T>;
}

/** Agents speaking to the gateway at `url` (or the one `url()` names at each request) over HTTP. */
export function agentsOverHttp(url: string | (() => string), options: { keys?: Record<string, KeyPair>; keyDir?: () => string } = {}): HttpAgents {
  const base = typeof url === 'function' ? url : () => url;
  const keys = options.keys ?? {};
  const key = (agentId: string): KeyPair => {
    const file = options.keyDir && join(options.keyDir(), `${agentId}.key.json`);
    return (keys[agentId] ??= file && existsSync(file) ? parseKeyFile(readFileSync(file, 'utf8')) : generateKeyPair());
  };
  const send = async <T = CommandResult>(agentId: string, command: CommandRef, payload: Record<string, unknown>, sendOptions: { key?: KeyPair } = {}): Promise<Reply<T>> => {
    const envelope = createSignedCommand({ type: definitionOf(command).type, actor: agentId, payload, secretKey: (sendOptions.key ?? key(agentId)).secretKey });
    const res = await fetch(`${base()}/v1/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(envelope) });
    return (await res.json()) as Reply<T>;
  };
  return {
    keys,
    key,
    send,
    ok: okOver(send),
    async get<T>(path: string, getOptions: { as?: string } = {}) {
      const headers = getOptions.as === undefined ? undefined : { authorization: `Bearer ${mintReadToken({ agentId: getOptions.as, secretKey: key(getOptions.as).secretKey, lifetimeSeconds: 60 })}` };
      const reply = (await (await fetch(`${base()}${path}`, headers ? { headers } : {})).json()) as Reply<T>;
      if (!reply.ok) throw new Error(`GET ${path}: ${reply.error.code} ${reply.error.message}`);
      return reply.result;
    },
  };
}

export interface StandaloneOptions {
  /** Names the test's directory (`agora-<label>-...`). */
  label: string;
  /** Settings beyond the standalone's own (policies, AGORA_READS, providers ...). */
  env?: Record<string, string>;
  /** The data directory, inside the test's directory (default: the test's directory itself). */
  dataDir?: string;
  /** How long it may take to print ready (default 60 s). */
  readyTimeoutMs?: number;
}

export interface Standalone extends HttpAgents {
  /** A directory of the test's own, removed by stop(). */
  readonly dir: string;
  /** Its AGORA_DATA_DIR. */
  readonly dataDir: string;
  /** The gateway's address, `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly process: AgoraProcess;
  /** The operator key it wrote at its first start (`<dataDir>/operator.key.json`): `root`'s, which `key('root')` gives. */
  readonly operatorKeyFile: string;
  /** Registers agents as the operator `root` with keys of their own (`key(agentId)`), each written to its key file (`keyFile(agentId)`) for the clients a test starts. */
  register(agents: Record<string, { roles: readonly string[]; [field: string]: unknown }>): Promise<void>;
  /** An agent's key file in the test's directory (`<dir>/<agentId>.key.json`), once registered. */
  keyFile(agentId: string): string;
  /** Stops it (SIGTERM) and removes the directory. */
  stop(): Promise<void>;
}

/**
 * Starts the one-process standalone (`apps/standalone/src/main.ts`) as a user does, on a free port
 * of 127.0.0.1 (and its metrics on another), with a data directory of the test's own, and resolves
 * once it is ready. Its agents read their keys from `<dataDir>/demo-keys` when a demo wrote them there.
 */
export async function startStandalone(options: StandaloneOptions): Promise<Standalone> {
  const dir = await mkdtemp(join(tmpdir(), `agora-${options.label}-`));
  const dataDir = options.dataDir === undefined ? dir : join(dir, options.dataDir);
  let started: AgoraProcess;
  try {
    started = await startAgoraProcess('apps/standalone/src/main.ts', 'agora', { AGORA_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', ...options.env }, options.readyTimeoutMs);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const url = /gateway listening on (http:\/\/[^\s]+) /.exec(started.output())![1]!;
  const operatorKeyFile = join(dataDir, 'operator.key.json');
  const keys: Record<string, KeyPair> = existsSync(operatorKeyFile) ? { root: parseKeyFile(readFileSync(operatorKeyFile, 'utf8')) } : {};
  const agents = agentsOverHttp(url, { keys, keyDir: () => join(dataDir, 'demo-keys') });
  const keyFile = (agentId: string) => join(dir, `${agentId}.key.json`);
  return {
    ...agents,
    dir,
    dataDir,
    url,
    process: started,
    operatorKeyFile,
    keyFile,
    async register(fleet) {
      for (const [agentId, profile] of Object.entries(fleet)) {
        const key = agents.key(agentId);
        writeFileSync(keyFile(agentId), JSON.stringify({ agentId, ...key }), { mode: 0o600 });
        await agents.ok('root', 'RegisterAgent', { agentId, publicKey: key.publicKey, displayName: agentId, constitutions: [], ...profile, roles: [...profile.roles] });
      }
    },
    async stop() {
      await started.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
