/**
 * The agents of the voting tests, registered the way the registry service registers them (the
 * registry decider through handleCommand, straight into the shared store), with their key pairs,
 * and signed command helpers. (A service's tests import no other service.)
 */
import { randomUUID } from 'node:crypto';
import type { CommandDefinition, CommandResult, Reply, Role } from '@agora/contracts';
import { agentDecider, agentStreamId, type AgentCommand } from '@agora/domain-registry';
import { handleCommand } from '@agora/eventsourcing';
import type { EventStore } from '@agora/eventstore';
import { createSignedCommand, generateKeyPair, type KeyPair, type SignedCommand } from '@agora/identity';

interface AgentSpec {
  roles: Role[];
  trustScore: number;
  specializations: string[];
  displayName: string;
}

export const AGENTS: Record<string, AgentSpec> = {
  deployer: { roles: ['executive'], trustScore: 500, specializations: [], displayName: 'Deployer' },
  security_bot: { roles: ['validator'], trustScore: 900, specializations: ['security'], displayName: 'Security Validator' },
  compliance_bot: { roles: ['validator'], trustScore: 850, specializations: ['compliance'], displayName: 'Compliance Validator' },
  ops_bot: { roles: ['validator'], trustScore: 800, specializations: ['operations'], displayName: 'Ops Validator' },
  risk_bot: { roles: ['validator'], trustScore: 750, specializations: ['risk'], displayName: 'Risk Validator' },
  ethics_bot: { roles: ['validator'], trustScore: 720, specializations: ['ethics'], displayName: 'Ethics Validator' },
  junior_bot: { roles: ['validator'], trustScore: 300, specializations: ['security'], displayName: 'Junior Validator' },
  watcher: { roles: ['observer'], trustScore: 500, specializations: [], displayName: 'Watcher' },
};

/** The five validators selected by default (the most trusted), most trusted first. */
export const FIVE = ['security_bot', 'compliance_bot', 'ops_bot', 'risk_bot', 'ethics_bot'];

export type Keys = Record<string, KeyPair>;

/** Key pairs of every agent of AGENTS and of the bootstrap operator `root`. */
export function generateKeys(): Keys {
  return Object.fromEntries(['root', ...Object.keys(AGENTS)].map((id) => [id, generateKeyPair()]));
}

/** Registers every agent of AGENTS (signed off by `root`, like the registry would record it). */
export async function registerAgents(store: EventStore, keys: Keys): Promise<void> {
  for (const [agentId, spec] of Object.entries(AGENTS)) {
    const commandId = randomUUID();
    const command: AgentCommand = {
      type: 'RegisterAgent',
      context: { actor: 'root', actorRoles: ['operator'], now: new Date().toISOString(), commandId },
      payload: { agentId, publicKey: keys[agentId]!.publicKey, constitutions: [], health: 1, risk: 0, ...spec },
    };
    await handleCommand({ store, decider: agentDecider, streamId: agentStreamId(agentId), command, metadata: { commandId, commandType: 'RegisterAgent', actor: 'root', issuedAt: command.context.now } });
  }
}

export type Requester = <T = CommandResult>(subject: string, body: unknown) => Promise<Reply<T>>;

/** Signs `payload` as `actor` with `key` (default: the actor's own key). */
export function sign(keys: Keys, definition: CommandDefinition, actor: string, payload: Record<string, unknown>, key: KeyPair = keys[actor]!): SignedCommand {
  return createSignedCommand({ type: definition.type, actor, payload, secretKey: key.secretKey });
}
