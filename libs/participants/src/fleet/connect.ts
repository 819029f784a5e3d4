/**
 * A fleet's agents on Agora: each agent's key file (created when missing, mode 0600), its
 * registration and its model budget (by an operator, when the fleet is given an operator key: an
 * agent not registered yet is registered, a registered one is left as it is; the budget the fleet
 * file gives is set, SetModelBudget, once per amount), and one SDK client per agent, signing with its key.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { CommandResult, Role } from '@agora/contracts';
import { generateKeyPair, parseKeyFile } from '@agora/identity';
import { Agora, replyError, uuidV5, type NatsOptions } from '@agora/sdk';
import type { FleetAgentConfig, FleetConfig } from './fleet-file.js';

export interface FleetConnection {
  /** One client per agent, signing with its key. */
  clients: Map<string, Agora>;
  /** The agents the operator registered now. */
  registered: string[];
  /** The budgets the operator set now (`agent amount currency`). */
  budgets: string[];
  /** Key files created now. */
  created: string[];
  close(): Promise<void>;
}

export interface ConnectFleetOptions {
  /** The gateway (`http://127.0.0.1:8080`), or `nats`. */
  url?: string;
  nats?: NatsOptions;
  /** An operator's key file: agents not registered yet are registered with it, and their budgets set. */
  operatorKeyFile?: string;
  /** The currency of the budgets (the provider layer's). Default USD. */
  currency?: string;
}

/** The registry roles of a fleet agent (taking turns in recoveries needs none: an observer, when it plays nothing else). */
export function registryRoles(agent: Pick<FleetAgentConfig, 'roles'>): Role[] {
  const roles = agent.roles.filter((r): r is Exclude<typeof r, 'dialectic'> => r !== 'dialectic');
  return roles.length > 0 ? roles : ['observer'];
}

function ensureKeyFile(agent: FleetAgentConfig, created: string[]): string {
  if (existsSync(agent.keyFile)) {
    const key = parseKeyFile(readFileSync(agent.keyFile, 'utf8'));
    if (key.agentId !== undefined && key.agentId !== agent.id) throw new Error(`${agent.keyFile} is the key of ${key.agentId}, not of ${agent.id}`);
    return key.publicKey;
  }
  const key = generateKeyPair();
  mkdirSync(dirname(agent.keyFile), { recursive: true });
  writeFileSync(agent.keyFile, `${JSON.stringify({ agentId: agent.id, ...key }, null, 2)}\n`, { mode: 0o600 });
  created.push(agent.keyFile);
  return key.publicKey;
}

/**
 * SetModelBudget for an agent, the same command id every attempt: an agent registered a moment ago
 * may not be known yet to the replica that takes the budget (each replica learns of it from the log),
 * which answers not_found; asked again for up to 30 s.
 */
async function setBudget(operator: Agora, agentId: string, amount: number, currency: string): Promise<CommandResult> {
  const commandId = uuidV5(`fleet-budget:${agentId}:${amount}:${currency}`);
  for (const deadline = Date.now() + 30_000; ; await new Promise((resolve) => setTimeout(resolve, 250))) {
    const reply = await operator.trySend('SetModelBudget', { agentId, amount, currency }, { commandId });
    if (reply.ok) return reply.result;
    if (reply.error.code !== 'not_found' || Date.now() > deadline) throw replyError(reply.error);
  }
}

export async function connectFleet(fleet: FleetConfig, options: ConnectFleetOptions): Promise<FleetConnection> {
  const transport = options.nats ? { nats: options.nats } : { url: options.url ?? 'http://127.0.0.1:8080' };
  const clients = new Map<string, Agora>();
  const registered: string[] = [];
  const budgets: string[] = [];
  const created: string[] = [];
  const close = async () => {
    await Promise.all([...clients.values()].map((c) => c.close().catch(() => undefined)));
  };
  try {
    const operator = options.operatorKeyFile ? await Agora.connect({ ...transport, signer: { keyFile: options.operatorKeyFile } }) : undefined;
    try {
      for (const agent of fleet.agents) {
        const publicKey = ensureKeyFile(agent, created);
        const client = await Agora.connect({ ...transport, signer: { keyFile: agent.keyFile, agentId: agent.id } });
        clients.set(agent.id, client);
        const known = await (operator ?? client).tryQuery('GetAgent', { agentId: agent.id });
        if (!known.ok) {
          if (known.error.code !== 'not_found' && known.error.code !== 'unknown_actor') throw new Error(`reading agent ${agent.id}: ${known.error.code}: ${known.error.message}`);
          if (!operator) throw new Error(`agent ${agent.id} is not registered: register it (agora agents register) or give the fleet an operator key`);
          await operator.send('RegisterAgent', {
            agentId: agent.id,
            publicKey,
            displayName: agent.id,
            roles: registryRoles(agent),
            constitutions: agent.constitutions,
            specializations: agent.specializations,
            trustScore: agent.trustScore ?? 500,
          });
          registered.push(agent.id);
        }
        if (operator && agent.budget !== undefined) {
          // One command per amount: a fleet started again with the same budget changes nothing.
          const currency = options.currency ?? 'USD';
          const set = await setBudget(operator, agent.id, agent.budget, currency);
          if (!set.duplicate) budgets.push(`${agent.id} ${agent.budget} ${currency}`);
        }
      }
    } finally {
      await operator?.close();
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { clients, registered, budgets, created, close };
}
