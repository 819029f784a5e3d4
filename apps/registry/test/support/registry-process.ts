// Starts the registry the way an operator does: a separate OS process (`agora-registry`), its
// settings in the environment, run from source so the test needs no build.
import type { NatsConnection } from '@nats-io/nats-core';
import { expectOnlyReplicas as expectOnlyServiceReplicas, gatherServiceReplies, runToCompletion, startServiceProcess, type Finished, type ServiceProcess } from '@agora/testing';

export { REPO_ROOT } from '@agora/testing';
export type { Finished };

const ENTRY = 'apps/registry/src/main.ts';

/** Runs the registry to completion (`--help`, a bad setting): exit code and output. */
export function runRegistry(args: readonly string[], env: Record<string, string>, timeoutMs = 30_000): Promise<Finished> {
  return runToCompletion(ENTRY, args, env, timeoutMs);
}

export type RegistryProcess = ServiceProcess;

/** Starts one registry process and resolves once it has printed `ready` and named its replica id. */
export function startRegistryProcess(env: Record<string, string>, readyTimeoutMs = 60_000): Promise<RegistryProcess> {
  return startServiceProcess('registry', env, readyTimeoutMs);
}

export { gatherServiceReplies };

export const expectOnlyReplicas = (nc: NatsConnection, ids: readonly string[]): Promise<void> => expectOnlyServiceReplicas(nc, 'registry', ids);
