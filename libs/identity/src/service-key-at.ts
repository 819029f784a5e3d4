// The keyring's shape and its lookup, free of node:crypto so a browser (the console's event log) checks service signatures as an offline auditor does.

/**
 * The public keys of Agora's services over time, as verifiers know them (configuration, not the
 * log: no command can add or change one). A service's entries are its keys, each valid from
 * `from` (inclusive; absent: always before) until `until` (exclusive; absent: still in force).
 * A rotation is a new entry plus an `until` on the old one.
 */
export interface ServiceKeyEntry {
  publicKey: string;
  from?: string;
  until?: string;
}
export type ServiceKeyring = Readonly<Record<string, readonly ServiceKeyEntry[]>>;

/**
 * The key a service signed with at time `at` (ISO-8601, e.g. the envelope's issuedAt): the entry
 * whose [from, until) holds `at`; undefined when none does (an unknown service, or a time outside
 * every key's validity: a rotated-out or expired key). Pure: an offline auditor's lookup.
 */
export function serviceKeyAt(keyring: ServiceKeyring, service: string, at: string): string | undefined {
  const time = Date.parse(at);
  if (!Number.isFinite(time)) return undefined;
  const entries = Object.hasOwn(keyring, service) ? keyring[service]! : [];
  const valid = entries.filter((e) => (e.from === undefined || Date.parse(e.from) <= time) && (e.until === undefined || time < Date.parse(e.until)));
  return valid.at(-1)?.publicKey;
}
