/**
 * Agora in this process for the debate's gateway tests: the registry, the debate service and the
 * HTTP gateway (with the web console) over the in-process transport and an embedded store; the
 * seed's two debaters registered with the role debater; their moves signed and sent as agents do.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandByType, GetDebate, OpenDebate, PostDebateMove, type DebateView, type Reply } from '@agora/contracts';
import { EXAMPLE_PARTICIPANTS, EXAMPLE_TOPIC } from '@agora/domain-debate';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test only: the gateway in front of the service, as standalone mode wires it.
import { startGateway, type Gateway } from '@agora/gateway';
import { createSignedCommand, generateKeyPair, type KeyPair } from '@agora/identity';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test only: the registry knows the debaters, as standalone mode wires it.
import { startRegistryService } from '@agora/registry';
import { recordedModelCalls, type ModelCalls } from '@agora/participants';
import type { ProviderLayer } from '@agora/providers';
import { openServiceContext, startAll, type Running, type ServiceContext } from '@agora/runtime';
import { Agora, MessagingTransport } from '@agora/sdk';
import { embeddedAgora, waitFor } from '@agora/testing';
import { startDebateService } from '../../src/debate-service.js';
import type { DebateClient } from '../../src/scripted.js';

export interface Harness {
  gateway: Gateway;
  /** The operator's (root) and the debaters' keys. */
  keys: Record<string, KeyPair>;
  context: ServiceContext;
  client: DebateClient;
  /** The debaters' model calls over a layer, recorded in their ledgers (each has a budget of 20 USD). */
  calls(layer: ProviderLayer): (agentId: string) => ModelCalls;
  /** Opens a debate of the seed's two debaters on the seed's topic (one thread, or those given). */
  open(debateId: string, threads?: { threadId: string; topic: string }[]): Promise<void>;
  close(): Promise<void>;
}

/** `reads: 'closed'`: the gateway closes reads (AGORA_READS=closed) against the registry's agents. */
export async function startHarness(options: { console?: boolean; reads?: 'closed' } = {}): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'agora-debate-gw-'));
  const keys: Record<string, KeyPair> = { root: generateKeyPair(), saylor: generateKeyPair(), hayes: generateKeyPair() };
  const context = await openServiceContext(embeddedAgora(dir, { agentId: 'root', publicKey: keys['root']!.publicKey }));
  let gateway: Gateway | undefined;
  const running: Running = await startAll([
    () => startRegistryService(context, { logger: false }),
    () => startDebateService(context, { logger: false }),
    async () => {
      gateway = await startGateway({ client: context.client, store: context.store, port: 0, host: '127.0.0.1', logger: false, ...(options.console ? {} : { console: false }), ...(options.reads ? { reads: { mode: options.reads, directory: context.directory } } : {}) });
      const started = gateway;
      return { close: () => started.close() };
    },
  ]);
  const send = (agent: string, type: string, payload: Record<string, unknown>) =>
    context.client.request(commandByType(type)!.subject, createSignedCommand({ type, actor: agent, payload, secretKey: keys[agent]!.secretKey }), { timeoutMs: 10_000 }) as Promise<Reply<{ events: string[] }>>;
  for (const agentId of ['saylor', 'hayes']) {
    const reply = await send('root', 'RegisterAgent', { agentId, publicKey: keys[agentId]!.publicKey, displayName: agentId, roles: ['debater'], constitutions: [], trustScore: 500 });
    if (!reply.ok) throw new Error(`RegisterAgent ${agentId}: ${reply.error.message}`);
    const budget = await send('root', 'SetModelBudget', { agentId, amount: 20, currency: 'USD' });
    if (!budget.ok) throw new Error(`SetModelBudget ${agentId}: ${budget.error.message}`);
  }
  await waitFor(async () => (await context.registry.agent('hayes')) !== undefined, 'the registry to know the debaters');
  const client: DebateClient = {
    move: (agentId, payload) => send(agentId, PostDebateMove.type, payload),
    async debate(debateId) {
      const reply = (await context.client.request(GetDebate.subject, { debateId }, { timeoutMs: 10_000 })) as Reply<DebateView>;
      if (!reply.ok) throw new Error(reply.error.message);
      return reply.result;
    },
  };
  return {
    gateway: gateway!,
    keys,
    context,
    client,
    calls(layer) {
      const byAgent = new Map<string, ModelCalls>();
      return (agentId) => {
        let calls = byAgent.get(agentId);
        if (!calls) {
          calls = recordedModelCalls(Agora.over(new MessagingTransport(context.client), { signer: { secretKey: keys[agentId]!.secretKey, agentId } }), layer);
          byAgent.set(agentId, calls);
        }
        return calls;
      };
    },
    async open(debateId, threads) {
      const reply = await send('saylor', OpenDebate.type, { debateId, topic: EXAMPLE_TOPIC, participants: EXAMPLE_PARTICIPANTS, ...(threads ? { threads } : {}) });
      if (!reply.ok) throw new Error(`OpenDebate: ${reply.error.message}`);
    },
    async close() {
      await running.close();
      await context.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
