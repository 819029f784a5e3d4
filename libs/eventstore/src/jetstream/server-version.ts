/**
 * Which NATS servers may hold a clustered log (a stream of more than one replica). A single
 * replica was never affected by either defect below: one node serves from 2.9.10 on.
 *
 * - Before 2.9.21, a clustered stream did not serialize the `Nats-Expected-Last-Subject-Sequence`
 *   check (nats-io/nats-server#4320): appends made at once with one expected sequence could all
 *   be stored, two commits at one revision of an aggregate, and optimistic concurrency failed
 *   silently.
 * - Before 2.11.0, a clustered stream staged the message id of a publish in its duplicate window
 *   before deciding it, and kept it there when it refused the publish for its expected sequence
 *   (nats-io/nats-server#6415, "Deterministic clustered dedupe"): the same id published again within
 *   the window is answered as a duplicate of sequence 0, a message that was never stored. A command
 *   that lost a race to its aggregate and is decided again carries the same event ids, so its
 *   append can be neither stored nor answered: on 2.10.27 at 3 replicas, 60 of 200 losing writers
 *   and 4 of 50 copies of one commit failed so (StoreUnavailable, `unavailable` to the agent).
 */
export const CLUSTERED_LOG_MIN_VERSION = '2.11.0';
/**
 * Atomic batch publish (ADR-50: a stream with `allow_atomic`, up to 1,000 messages on any of its
 * subjects, each message's expected subject sequence checked, stored all or none): the store's
 * appendMany, one append per command instead of two.
 */
export const ATOMIC_BATCH_MIN_VERSION = '2.12.0';
/** Before this, the expected-sequence check itself is not serialized on a clustered stream (nats-io/nats-server#4320). */
const SERIALIZED_CHECK_VERSION = '2.9.21';

type Version = [number, number, number];

/** `major.minor.patch` of a server version string (`2.9.10`, `v2.10.4-beta`), or undefined. */
export function parseServerVersion(version: string | undefined): Version | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version?.trim() ?? '');
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

function atLeast(version: Version, minimum: string): boolean {
  const min = parseServerVersion(minimum)!;
  for (let i = 0; i < 3; i++) if (version[i] !== min[i]) return version[i]! > min[i]!;
  return true;
}

/** Whether a server of `version` takes atomic batches (an unreadable version is taken as not). */
export function takesAtomicBatches(version: string | undefined): boolean {
  const parsed = parseServerVersion(version);
  return parsed !== undefined && atLeast(parsed, ATOMIC_BATCH_MIN_VERSION);
}

/**
 * Why a log stream of `replicas` replicas must not be used on a server of `version`, or undefined
 * when it may. An unreadable version with more than one replica is refused too: the store cannot
 * tell that the server answers concurrent appends as it relies on.
 */
export function clusteredLogRefusal(version: string | undefined, replicas: number, streamName: string): string | undefined {
  if (replicas <= 1) return undefined;
  const parsed = parseServerVersion(version);
  if (parsed && atLeast(parsed, CLUSTERED_LOG_MIN_VERSION)) return undefined;
  const fix = `Run nats-server ${CLUSTERED_LOG_MIN_VERSION} or newer on every node of the cluster (or keep the log at 1 replica on a single server)`;
  const server = `JetStream stream ${streamName} has ${replicas} replicas, and nats-server ${version ?? '(version unknown)'}`;
  if (parsed && atLeast(parsed, SERIALIZED_CHECK_VERSION)) {
    return (
      `${server} keeps the message id of a publish it refused on a clustered stream in its duplicate window (nats-io/nats-server#6415, ` +
      `fixed in 2.11.0): an append decided again after losing a race to its aggregate is answered as a duplicate of a message never ` +
      `stored, so agents acting at once on one aggregate get errors. ${fix}`
    );
  }
  return (
    `${server} does not serialize the expected-last-subject-sequence check on clustered streams (nats-io/nats-server#4320): ` +
    `concurrent appends to one aggregate could both be stored. ${fix}`
  );
}
