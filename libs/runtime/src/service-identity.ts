import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_NAMES, SERVICE_ROLE, serviceActorId, type ServiceName } from '@agora/contracts';
import { generateKeyPair, InvalidKey, parseKeyFile, publicKeyOf, serviceKeyAt, type ServiceKeyring } from '@agora/identity';
import { ConfigError } from './config-error.js';

/**
 * Who a service acts as when it appends on its own behalf (a reaction, a deadline, a process
 * step): `service:<name>`, signing every such command with its own Ed25519 key exactly as an
 * agent signs its commands (libs/identity `signCommand`). Deciders see the role `service`.
 */
export interface ServiceIdentity {
  service: ServiceName;
  /** `service:<name>`: no agent id can take this form. */
  actor: string;
  /** What deciders see in `context.actorRoles`: `['service']`. */
  roles: readonly string[];
  publicKey: string;
  secretKey: string;
}

/** The environment variable that may hold a service's secret key: `AGORA_<NAME>_SERVICE_KEY`. */
export const serviceKeyVariable = (service: ServiceName): string => `AGORA_${service.toUpperCase()}_SERVICE_KEY`;

/** The key file of a service in the keys directory: `<dir>/<name>.key.json`. */
export const serviceKeyFile = (dir: string, service: ServiceName): string => join(dir, `${service}.key.json`);

export interface ServiceKeySettings {
  /** `AGORA_SERVICE_KEYS_DIR` (default `<dataDir>/service-keys`). */
  serviceKeysDir: string;
  /** Secret keys given as variables (`AGORA_<NAME>_SERVICE_KEY`), by service. */
  serviceSecretKeys: Partial<Record<ServiceName, string>>;
  /** `AGORA_SERVICE_PUBLIC_KEYS`: the services' public keys over time; undefined when not set. */
  serviceKeyring: ServiceKeyring | undefined;
}

/**
 * A service's identity: its secret key from `AGORA_<NAME>_SERVICE_KEY`, else from
 * `<AGORA_SERVICE_KEYS_DIR>/<name>.key.json`, else a new key written there (mode 0600) on first
 * start. When `AGORA_SERVICE_PUBLIC_KEYS` names the service, the key must be the one in force
 * there now: a service started with another service's key, or with a rotated-out key, refuses to
 * start (ConfigError saying which).
 */
export function loadServiceIdentity(settings: ServiceKeySettings, service: ServiceName, options: { now?: () => number; log?: (line: string) => void } = {}): ServiceIdentity {
  const actor = serviceActorId(service);
  const variable = serviceKeyVariable(service);
  const file = serviceKeyFile(settings.serviceKeysDir, service);
  let secretKey = settings.serviceSecretKeys[service];
  let publicKey: string;
  if (secretKey !== undefined) {
    try {
      publicKey = publicKeyOf(secretKey);
    } catch (error) {
      throw new ConfigError(`${variable}: ${(error as Error).message}`);
    }
  } else {
    let text: string | undefined;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new ConfigError(`cannot read the ${service} service's key file ${file}: ${(error as Error).message}`);
    }
    if (text === undefined) {
      const pair = generateKeyPair();
      mkdirSync(settings.serviceKeysDir, { recursive: true, mode: 0o700 });
      writeFileSync(file, `${JSON.stringify({ agentId: actor, ...pair }, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
      chmodSync(file, 0o600);
      options.log?.(`created the ${service} service's key ${file} (public key ${pair.publicKey}); give the public key to verifiers in AGORA_SERVICE_PUBLIC_KEYS`);
      ({ publicKey, secretKey } = pair);
    } else {
      try {
        const parsed = parseKeyFile(text);
        if (parsed.agentId !== undefined && parsed.agentId !== actor) throw new InvalidKey(`it belongs to ${parsed.agentId}, not ${actor}`);
        ({ publicKey, secretKey } = parsed);
      } catch (error) {
        throw new ConfigError(`the ${service} service's key file ${file}: ${(error as Error).message}`);
      }
    }
  }
  const keyring = settings.serviceKeyring;
  if (keyring !== undefined && Object.hasOwn(keyring, service)) {
    const at = new Date((options.now ?? Date.now)()).toISOString();
    const inForce = serviceKeyAt(keyring, service, at);
    if (inForce !== publicKey) {
      const owner = Object.entries(keyring).find(([other, entries]) => other !== service && entries.some((e) => e.publicKey === publicKey))?.[0];
      const known = keyring[service]!.some((e) => e.publicKey === publicKey);
      const why = owner !== undefined ? `it is the ${owner} service's key` : known ? 'it was rotated out (or is not yet valid)' : 'AGORA_SERVICE_PUBLIC_KEYS does not list it';
      throw new ConfigError(`the ${service} service's key ${publicKey} is not its key in force in AGORA_SERVICE_PUBLIC_KEYS (${inForce ?? 'none at this time'}): ${why}`);
    }
  }
  return { service, actor, roles: [SERVICE_ROLE], publicKey, secretKey: secretKey! };
}

/** The secret keys given as variables, by service (ConfigError for a malformed one). */
export function serviceSecretKeysFromEnv(env: NodeJS.ProcessEnv): Partial<Record<ServiceName, string>> {
  const out: Partial<Record<ServiceName, string>> = {};
  for (const service of SERVICE_NAMES) {
    const value = env[serviceKeyVariable(service)]?.trim();
    if (!value) continue;
    try {
      publicKeyOf(value);
    } catch (error) {
      throw new ConfigError(`${serviceKeyVariable(service)}: ${(error as Error).message}`);
    }
    out[service] = value;
  }
  return out;
}

/**
 * The service keys a verifier (an auditor) uses: AGORA_SERVICE_PUBLIC_KEYS when set, else the
 * public halves of the key files found in the keys directory and of the AGORA_<NAME>_SERVICE_KEY
 * variables (each as the service's only key, valid at every time): what standalone mode created.
 */
export function resolveServiceKeyring(config: { dataDir: string; serviceKeysDir?: string; serviceSecretKeys?: Partial<Record<string, string>>; serviceKeyring?: ServiceKeyring | undefined }): ServiceKeyring {
  if (config.serviceKeyring !== undefined) return config.serviceKeyring;
  const dir = config.serviceKeysDir ?? join(config.dataDir, 'service-keys');
  const out: Record<string, { publicKey: string }[]> = {};
  for (const service of SERVICE_NAMES) {
    const secret = config.serviceSecretKeys?.[service];
    if (secret !== undefined) {
      out[service] = [{ publicKey: publicKeyOf(secret) }];
      continue;
    }
    let text: string;
    try {
      text = readFileSync(serviceKeyFile(dir, service), 'utf8');
    } catch {
      continue;
    }
    try {
      out[service] = [{ publicKey: parseKeyFile(text).publicKey }];
    } catch (error) {
      throw new ConfigError(`the ${service} service's key file ${serviceKeyFile(dir, service)}: ${(error as Error).message}`);
    }
  }
  return out;
}
