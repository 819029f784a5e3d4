import { AgoraError, DisableAgent, GetAgent, ListAgents, RegisterAgent, RotateAgentKey, UpdateAgent, type AgentView } from '@agora/contracts';
import { agentDecider, agentStreamId } from '@agora/domain-registry';
import { createServiceMicroservice, onCommand, onQuery, type ServiceMicroservice } from '@agora/messaging';
import { deciderHandler, KeyedLock, type KnownAgent, type Running, type ServiceContext } from '@agora/runtime';
import type { LoggerService, LogLevel } from '@nestjs/common';

export interface RegistryServiceOptions {
  /** Nest's logger setting; `false` silences it (tests). */
  logger?: LoggerService | LogLevel[] | false;
}

export function agentView(agent: KnownAgent): AgentView {
  const { agentId, publicKey, displayName, roles, constitutions, specializations, trustScore, health, risk, status, registeredAt, revision } = agent;
  return { agentId, publicKey, displayName, roles, constitutions, specializations, trustScore, health, risk, status, registeredAt, revision };
}

/**
 * The registry service: agents registered, updated, key-rotated and disabled by commands signed
 * with an operator key (the roles are in the contracts), and the agent queries, answered from the
 * process's live agent directory.
 */
export async function startRegistryService(context: ServiceContext, options: RegistryServiceOptions = {}): Promise<Running & { service: ServiceMicroservice }> {
  const locks = new KeyedLock();
  const decide = deciderHandler({ store: context.store, decider: agentDecider, streamOf: (p: { agentId: string }) => agentStreamId(p.agentId), locks });
  const service = await createServiceMicroservice({
    service: 'registry',
    ...context.transport,
    directory: context.directory,
    maxClockSkewMs: context.config.maxClockSkewMs,
    description: 'Agora registry: agent identities, public keys, roles, constitutions, trust and health',
    commands: new Map([onCommand(RegisterAgent, decide), onCommand(UpdateAgent, decide), onCommand(RotateAgentKey, decide), onCommand(DisableAgent, decide)]),
    queries: new Map([
      onQuery(ListAgents, async ({ role, includeDisabled }) => ({
        agents: context.registry
          .list()
          .filter((a) => (includeDisabled || a.status === 'active') && (role === undefined || a.roles.includes(role)))
          .map(agentView),
      })),
      onQuery(GetAgent, async ({ agentId }) => {
        const agent = await context.registry.agent(agentId);
        if (!agent) throw new AgoraError('not_found', `no agent "${agentId}" is registered`, { agentId });
        return agentView(agent);
      }),
    ]),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  return {
    service,
    lines: [`registry service ${service.id}: agora.cmd.registry.agent.*, agora.qry.registry.*`],
    close: () => service.close(),
  };
}
