// Starts the registry the way an operator does: a separate OS process (`agora-registry`), its
// settings in the environment, run from source through tools/ts-run so the test needs no build.
import type { NatsConnection } from '@nats-io/nats-core';
import { runToCompletion, startAgoraProcess, type AgoraProcess, type Finished } from '@agora/testing';

export { REPO_ROOT } from '@agora/testing';
export type { Finished };

const ENTRY = 'apps/registry/src/main.ts';

/** Runs the registry to completion (`--help`, a bad setting): exit code and output. */
export function runRegistry(args: readonly string[], env: Record<string, string>, timeoutMs = 30_000): Promise<Finished> {
  return runToCompletion(ENTRY, args, env, timeoutMs);
}

export interface RegistryProcess extends AgoraProcess {
  /** Its replica id in `$SRV` (read off its start-up log). */
  readonly id: string;
}

/** Starts one registry process and resolves once it has printed `ready` and named its replica id. */
export async function startRegistryProcess(env: Record<string, string>, readyTimeoutMs = 60_000): Promise<RegistryProcess> {
  const started = await startAgoraProcess(ENTRY, 'agora-registry', env, readyTimeoutMs);
  const id = /registry service (\S+):/.exec(started.output())?.[1];
  if (id === undefined) {
    await started.kill();
    throw new Error(`agora-registry was ready without naming its replica id; its output:\n${started.output()}`);
  }
  return { ...started, id };
}

/** Every answer to a `$SRV` request within `maxWaitMs` (discovery is scatter-gather: each replica answers). */
export async function gatherServiceReplies<T>(nc: NatsConnection, subject: string, maxWaitMs = 1_000): Promise<T[]> {
  const replies: T[] = [];
  for await (const msg of await nc.requestMany(subject, '', { strategy: 'timer', maxWait: maxWaitMs })) replies.push(msg.json<T>());
  return replies;
}

/**
 * The NATS server is shared: a registry another test (or another engineer) runs at the same time
 * joins the same queue group and would take some of our requests. Say so plainly instead of
 * failing later with replies from a registry that knows none of our agents.
 */
export async function expectOnlyReplicas(nc: NatsConnection, ids: readonly string[]): Promise<void> {
  const foreign = (await gatherServiceReplies<{ id: string }>(nc, '$SRV.PING.registry', 500)).map((p) => p.id).filter((id) => !ids.includes(id));
  if (foreign.length > 0) {
    throw new Error(`other registry replicas (${foreign.join(', ')}) serve the "registry" queue group on this NATS server; this test needs it to itself (is another test run going on?)`);
  }
}
