/**
 * The projections service as its int tests run it: in this process, over a fresh embedded store in a
 * temp dir and the in-process transport, /metrics on a free loopback port, after a test's history has
 * been written into the log.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Reply } from '@agora/contracts';
import type { EventStore } from '@agora/eventstore';
import { generateKeyPair, type KeyPair } from '@agora/identity';
import { openServiceContext, type ServiceContext } from '@agora/runtime';
import { embeddedAgora } from '@agora/testing';
import { startProjectionsService, type ProjectionsServiceOptions, type RunningProjections } from '../../src/projections-service.js';

/** The service's settings in these tests: /metrics on a free port of the loopback address, no logs. */
export const LOCAL_SERVICE: ProjectionsServiceOptions = { metricsPort: 0, metricsHost: '127.0.0.1', logger: false };

/** An in-process context over a fresh embedded store in a temp dir, with a generated operator key. */
async function openTestContext(prefix: string): Promise<{ dir: string; context: ServiceContext; root: KeyPair }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const root = generateKeyPair();
  return { dir, context: await openServiceContext({ ...embeddedAgora(dir, { agentId: 'root', publicKey: root.publicKey }), requestTimeoutMs: 5_000 }), root };
}

export interface ProjectionsOver {
  /** The temp dir of the store. */
  dir: string;
  context: ServiceContext;
  /** The bootstrap operator's key pair. */
  root: KeyPair;
  running: RunningProjections;
  /** A query or command over the context's in-process client, answered within 5 s. */
  request<T>(subject: string, body: unknown): Promise<Reply<T>>;
  /** Closes the service and the context, and removes the dir. */
  close(): Promise<void>;
}

/**
 * The projections service started over a test context of its own (`prefix` names its temp dir) once
 * `write` has appended the history it starts from (nothing when omitted); `options` add to or
 * replace LOCAL_SERVICE. When writing or starting fails, what was opened is closed again.
 */
export async function startProjectionsOver(prefix: string, write?: (store: EventStore) => Promise<void>, options: ProjectionsServiceOptions = {}): Promise<ProjectionsOver> {
  const { dir, context, root } = await openTestContext(prefix);
  let running: RunningProjections | undefined;
  const close = async () => {
    await running?.close();
    await context.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await write?.(context.store);
    running = await startProjectionsService(context, { ...LOCAL_SERVICE, ...options });
  } catch (error) {
    await close();
    throw error;
  }
  const request = <T>(subject: string, body: unknown): Promise<Reply<T>> => context.client.request<T>(subject, body, { timeoutMs: 5_000 });
  return { dir, context, root, running, request, close };
}
