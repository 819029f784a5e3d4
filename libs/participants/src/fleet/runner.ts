/**
 * Runs a fleet: for every agent and every role it plays, the model-backed participant's role loop,
 * with a checkpoint per agent and role (a restarted fleet resumes where it stopped and acts once per
 * event), model calls from the factory it is given (one place to choose how calls are made and
 * recorded), and each action reported (who, what, cost).
 */
import { join } from 'node:path';
import type { ProviderLayer } from '@agora/providers';
import { fileCheckpoint, memoryCheckpoint, type Agora, type AgoraEvent, type RoleLoop, type RoleLoopOptions } from '@agora/sdk';
import type { ModelCalls } from '../model-calls.js';
import { runDebater } from '../roles/debater.js';
import { runDialecticParty } from '../roles/dialectic.js';
import { runExecutive } from '../roles/executive.js';
import type { ParticipantAction, ParticipantSettings } from '../roles/participant.js';
import { runReviewer } from '../roles/reviewer.js';
import { runValidator } from '../roles/validator.js';
import type { FleetAgentConfig, FleetConfig, FleetRole } from './fleet-file.js';
import { Prompts } from './prompts.js';

/** How an agent's model calls are made (and recorded): given its client, the provider layer and its configuration. */
export type ModelCallsFactory = (context: { agora: Agora; layer: ProviderLayer; agent: FleetAgentConfig }) => ModelCalls;

export interface RunFleetOptions {
  fleet: FleetConfig;
  /** One client per agent, signing with its key (connectFleet). */
  clients: ReadonlyMap<string, Agora>;
  layer: ProviderLayer;
  modelCalls: ModelCallsFactory;
  /** Each participant's action. */
  onAction?: (action: ParticipantAction) => void;
  /** An action Agora refused. */
  onRefused?: (agent: string, role: FleetRole, error: Error & { code?: string }, event: AgoraEvent) => void;
  /** Checkpoints in files under the fleet's state directory (default), or in memory (every run starts from now). */
  checkpoints?: 'file' | 'memory';
  prompts?: Prompts;
}

export interface FleetRun {
  loops: { agent: string; role: FleetRole; loop: RoleLoop }[];
  /** Resolves once every loop follows the log. */
  ready: Promise<void>;
  /** Settles when every loop has stopped; rejects when one failed (its handler threw, or Agora stayed unreachable). */
  done: Promise<void>;
  stop(): Promise<void>;
}

/** Starts every participant of the fleet. Throws before starting anything when a prompt or a constitution's mandate is missing. */
export function runFleet(options: RunFleetOptions): FleetRun {
  const { fleet } = options;
  const prompts = options.prompts ?? new Prompts(fleet.prompts);
  prompts.check([...new Set(fleet.agents.flatMap((a) => (a.roles.includes('reviewer') ? a.constitutions : [])))]);
  for (const agent of fleet.agents) if (!options.clients.has(agent.id)) throw new Error(`no client for fleet agent ${agent.id}`);
  const loops: FleetRun['loops'] = [];
  for (const agent of fleet.agents) {
    const agora = options.clients.get(agent.id)!;
    const settings: ParticipantSettings = {
      agentId: agent.id,
      model: agent.model,
      calls: options.modelCalls({ agora, layer: options.layer, agent }),
      prompts,
      ...(agent.maxOutputTokens === undefined ? {} : { maxOutputTokens: agent.maxOutputTokens }),
      ...(agent.temperature === undefined ? {} : { temperature: agent.temperature }),
      ...(options.onAction ? { report: options.onAction } : {}),
    };
    for (const role of agent.roles) {
      const loopOptions: RoleLoopOptions = {
        checkpoint: options.checkpoints === 'memory' ? memoryCheckpoint() : fileCheckpoint(join(fleet.state, `${agent.id}.${role}.json`)),
        ...(options.onRefused ? { onRefused: (error: Error & { code?: string }, event: AgoraEvent) => options.onRefused!(agent.id, role, error, event) } : {}),
      };
      const loop =
        role === 'reviewer'
          ? runReviewer(agora, settings, loopOptions)
          : role === 'executive'
            ? runExecutive(agora, { ...settings, ...(agent.maxRevisions === undefined ? {} : { maxRevisions: agent.maxRevisions }) }, loopOptions)
            : role === 'validator'
              ? runValidator(agora, { ...settings, specializations: agent.specializations }, loopOptions)
              : role === 'dialectic'
                ? runDialecticParty(agora, settings, loopOptions)
                : runDebater(agora, settings, loopOptions);
      loops.push({ agent: agent.id, role, loop });
    }
  }
  return {
    loops,
    ready: Promise.all(loops.map((l) => l.loop.ready)).then(() => undefined),
    done: Promise.all(loops.map((l) => l.loop.done)).then(() => undefined),
    async stop() {
      await Promise.all(loops.map((l) => l.loop.stop()));
    },
  };
}

/** An action as a log line: who, what, with which model, how many calls, what it cost. */
export function describeAction(action: ParticipantAction, currency: string): string {
  const cost = `${action.calls} call${action.calls === 1 ? '' : 's'}, ${action.cost.toFixed(6)} ${currency}`;
  return `${action.agent} (${action.role}) ${action.what} [${action.model}, ${cost}]${action.error ? `: ${action.error}` : ''}`;
}
