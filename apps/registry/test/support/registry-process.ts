// Runs the registry the way an operator does (a separate OS process, `agora-registry`, its settings in
// the environment, run from source so the test needs no build) to completion; its replicas' discovery.
import type { NatsConnection } from '@nats-io/nats-core';
import { expectOnlyReplicas as expectOnlyServiceReplicas, gatherServiceReplies, runToCompletion, type Finished } from '@agora/testing';

export type { Finished };

const ENTRY = 'apps/registry/src/main.ts';

/** Runs the registry to completion (`--help`, a bad setting): exit code and output. */
export function runRegistry(args: readonly string[], env: Record<string, string>, timeoutMs = 30_000): Promise<Finished> {
  return runToCompletion(ENTRY, args, env, timeoutMs);
}

export { gatherServiceReplies };

export const expectOnlyReplicas = (nc: NatsConnection, ids: readonly string[]): Promise<void> => expectOnlyServiceReplicas(nc, 'registry', ids);
