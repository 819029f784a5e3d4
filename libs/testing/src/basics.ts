import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { a2aPushBucket } from '@agora/messaging';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

/** The NATS server the tests use (CI starts one with JetStream on 127.0.0.1:4222). */
export const TEST_NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';

const created = new Set<string>();

/**
 * A JetStream log of its own (stream and subject prefix no other test uses), on the shared server
 * or on `natsUrl`, as an EVENT_STORE value and its parts.
 */
export function uniqueJetStreamLog(label = 'test', natsUrl = TEST_NATS_URL): { streamName: string; subjectPrefix: string; eventStore: string } {
  const run = randomBytes(5).toString('hex');
  const streamName = `AGORA_${label.toUpperCase()}_${run}`;
  const subjectPrefix = `${label.toLowerCase()}.${run}`;
  if (natsUrl === TEST_NATS_URL) created.add(streamName);
  const host = natsUrl.replace(/^nats:\/\//, '');
  return { streamName, subjectPrefix, eventStore: `jetstream://${host}?stream=${streamName}&prefix=${subjectPrefix}` };
}

/** The bootstrap operator of a test's own Agora: its id and public key. */
export type TestOperator = { agentId: string; publicKey: string };

/** A test's own Agora's settings on the store and transport `T` (see agoraOn). */
export type TestAgora<T> = T & { dataDir: string; operators: TestOperator[]; maxClockSkewMs: number; requestTimeoutMs: number };

/**
 * The settings (for openServiceContext) of a test's own Agora on a store and transport (`setup`):
 * `operator` as the bootstrap operator, `dataDir`, a wide clock window and a 10 s request timeout.
 */
export function agoraOn<T extends { store: unknown; natsUrl: string | undefined }>(setup: T, dataDir: string, operator: TestOperator): TestAgora<T> {
  return { ...setup, dataDir, operators: [operator], maxClockSkewMs: 300_000, requestTimeoutMs: 10_000 };
}

/**
 * The settings (for openServiceContext) of a test's own Agora in one process: an embedded log in
 * `<dataDir>/events`, the in-process transport, `operator` as the bootstrap operator, a wide clock
 * window and a 10 s request timeout.
 */
export function embeddedAgora(dataDir: string, operator: TestOperator) {
  return agoraOn({ store: { kind: 'embedded' as const, directory: join(dataDir, 'events') }, natsUrl: undefined }, dataDir, operator);
}

/**
 * The settings (for openServiceContext) of one replica process on a JetStream log it shares with
 * others: the log and the transport on `natsUrl`, `operator` as the bootstrap operator, a wide clock
 * window and a 5 s request timeout; each replica gets a `dataDir` of its own.
 */
export function sharedLogReplica(natsUrl: string, log: { streamName: string; subjectPrefix: string }, operator: TestOperator, dataDir: string) {
  return {
    store: { kind: 'jetstream' as const, servers: natsUrl, streamName: log.streamName, subjectPrefix: log.subjectPrefix },
    natsUrl,
    dataDir,
    operators: [operator],
    maxClockSkewMs: 300_000,
    requestTimeoutMs: 5_000,
  };
}

/** Deletes the JetStream logs `uniqueJetStreamLog` handed out in this test file, and the A2A push bucket a gateway made for each (call in afterAll). */
export async function deleteJetStreamLogs(): Promise<void> {
  if (created.size === 0) return;
  const nc = await connect({ servers: TEST_NATS_URL });
  try {
    const jsm = await jetstreamManager(nc);
    for (const name of created) {
      await jsm.streams.delete(name).catch(() => undefined);
      await jsm.streams.delete(`KV_${a2aPushBucket(name)}`).catch(() => undefined);
    }
    created.clear();
  } finally {
    await nc.close();
  }
}

/**
 * True under `AGORA_TEST_SCALE=full` (`npm run test:full`): the suites that measure load, faults or
 * scale run at full size; otherwise (npm test, CI) at a small size that still proves the same thing.
 */
export const FULL_SCALE = process.env['AGORA_TEST_SCALE'] === 'full';

/** `ci` in the tests' usual run, `full` under `AGORA_TEST_SCALE=full`. */
export function scaled<T>(ci: T, full: T): T {
  return FULL_SCALE ? full : ci;
}

/** Polls `check` until it holds; fails with `what` after `timeoutMs`. */
export async function waitFor(check: () => boolean | Promise<boolean>, what = 'condition', timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
