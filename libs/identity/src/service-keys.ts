import { InvalidKey, publicKeyObject } from './keys.js';
import type { ServiceKeyEntry, ServiceKeyring } from './service-key-at.js';

export { serviceKeyAt, type ServiceKeyEntry, type ServiceKeyring } from './service-key-at.js';

/**
 * Reads a keyring from its JSON form: `{"<service>": "ed25519:..." | [{"publicKey", "from"?, "until"?}, ...]}`.
 * Throws InvalidKey saying what is wrong.
 */
export function parseServiceKeyring(input: unknown): ServiceKeyring {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw new InvalidKey('service keys are an object: {"<service>": "ed25519:..." or [{"publicKey": "ed25519:...", "from": "<time>", "until": "<time>"}]}');
  const out: Record<string, ServiceKeyEntry[]> = {};
  for (const [service, value] of Object.entries(input as Record<string, unknown>)) {
    const list = typeof value === 'string' ? [{ publicKey: value }] : value;
    if (!Array.isArray(list)) throw new InvalidKey(`service "${service}": a public key or a list of {publicKey, from, until}`);
    out[service] = list.map((entry: unknown, index) => {
      const { publicKey, from, until } = (entry ?? {}) as Record<string, unknown>;
      const where = `service "${service}" key ${index}`;
      if (typeof publicKey !== 'string') throw new InvalidKey(`${where}: no publicKey`);
      try {
        publicKeyObject(publicKey);
      } catch (error) {
        throw new InvalidKey(`${where}: ${(error as Error).message}`);
      }
      for (const [name, time] of [['from', from], ['until', until]] as const) {
        if (time !== undefined && (typeof time !== 'string' || !Number.isFinite(Date.parse(time)))) throw new InvalidKey(`${where}: ${name} must be an ISO-8601 time`);
      }
      return { publicKey, ...(from === undefined ? {} : { from: from as string }), ...(until === undefined ? {} : { until: until as string }) };
    });
  }
  return out;
}

