// Starts the voting service the way an operator does: a separate OS process (`agora-voting`), its
// settings in the environment, run from source so the test needs no build.
import { expectOnlyReplicas as expectOnlyServiceReplicas, startServiceProcess, type ServiceProcess } from '@agora/testing';
import type { NatsConnection } from '@nats-io/nats-core';

export type VotingProcess = ServiceProcess;

export function startVotingProcess(env: Record<string, string>, readyTimeoutMs = 60_000): Promise<VotingProcess> {
  return startServiceProcess('voting', env, readyTimeoutMs);
}

export const expectOnlyReplicas = (nc: NatsConnection, ids: readonly string[]): Promise<void> => expectOnlyServiceReplicas(nc, 'voting', ids);
