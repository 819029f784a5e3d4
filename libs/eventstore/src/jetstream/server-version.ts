/**
 * Which NATS servers may hold a clustered log. Before 2.9.21, a clustered stream did not serialize
 * the `Nats-Expected-Last-Subject-Sequence` check (nats-io/nats-server#4320): appends made at once
 * with one expected sequence could all be stored, two commits at one revision of an aggregate, and
 * optimistic concurrency failed silently. A single replica was never affected.
 */
export const CLUSTERED_LOG_MIN_VERSION = '2.9.21';

/** `major.minor.patch` of a server version string (`2.9.10`, `v2.10.4-beta`), or undefined. */
export function parseServerVersion(version: string | undefined): [number, number, number] | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version?.trim() ?? '');
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

function atLeast(version: [number, number, number], minimum: [number, number, number]): boolean {
  for (let i = 0; i < 3; i++) if (version[i] !== minimum[i]) return version[i]! > minimum[i]!;
  return true;
}

/**
 * Why a log stream of `replicas` replicas must not be used on a server of `version`, or undefined
 * when it may. An unreadable version with more than one replica is refused too: the store cannot
 * tell that the server serializes the check it relies on.
 */
export function clusteredLogRefusal(version: string | undefined, replicas: number, streamName: string): string | undefined {
  if (replicas <= 1) return undefined;
  const parsed = parseServerVersion(version);
  if (parsed && atLeast(parsed, parseServerVersion(CLUSTERED_LOG_MIN_VERSION)!)) return undefined;
  return (
    `JetStream stream ${streamName} has ${replicas} replicas, and nats-server ${version ?? '(version unknown)'} does not serialize ` +
    `the expected-last-subject-sequence check on clustered streams (nats-io/nats-server#4320): concurrent appends to one ` +
    `aggregate could both be stored. Run nats-server ${CLUSTERED_LOG_MIN_VERSION} or newer on every node of the cluster ` +
    `(or keep the log at 1 replica on a single server)`
  );
}
