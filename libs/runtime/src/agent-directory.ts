import { agentDecider, agentStreamId, type Agent, type AgentEvent } from '@agora/domain-registry';
import { ProjectionRunner, type Projection } from '@agora/eventsourcing';
import { StreamNotFound, type EventStore, type RecordedEvent } from '@agora/eventstore';
import { CompositeAgentDirectory, StaticAgentDirectory, type AgentDirectory, type AgentRecord } from '@agora/messaging';

/** An agent as the registry's log has it, with the revision of its stream. */
export interface KnownAgent extends Agent {
  revision: number;
}

export type AgentModel = Map<string, KnownAgent>;

/** Folds every `agent-*` stream with the registry decider's own `evolve`, so the directory and the decider cannot disagree. */
export const agentsProjection: Projection<AgentModel> = {
  name: 'agents',
  categories: ['agent'],
  initial: () => new Map(),
  apply(model, event) {
    const next = evolveAgent(model.get(agentIdOf(event)), event);
    if (next) model.set(next.agentId, next);
  },
};

function agentIdOf(event: RecordedEvent): string {
  return event.streamId.slice('agent-'.length);
}

function evolveAgent(current: KnownAgent | undefined, event: RecordedEvent): KnownAgent | undefined {
  const state = agentDecider.evolve(current ?? agentDecider.initialState(), { type: event.type, data: event.data } as AgentEvent);
  return state.status === 'unregistered' ? undefined : { ...state, revision: event.revision };
}

export function toAgentRecord(agent: Agent): AgentRecord {
  return { publicKey: agent.publicKey, roles: agent.roles, status: agent.status };
}

/**
 * Who may send commands, read off the registry's streams: a read model of every agent, kept live
 * by a catch-up subscription. Every service process runs one over the shared store, so no service
 * asks another who an agent is.
 *
 * The model trails the log by the time it takes an event to reach the subscription. An agent the
 * model does not know yet is read from its stream directly, so a command sent right after the
 * agent's registration is not refused as `unknown_actor`.
 */
export class RegistryDirectory implements AgentDirectory {
  private readonly runner: ProjectionRunner<AgentModel>;

  constructor(private readonly store: EventStore) {
    this.runner = new ProjectionRunner(store, agentsProjection);
  }

  /** Resolves once every agent registered before the call is known. */
  start(): Promise<void> {
    return this.runner.start();
  }

  stop(): Promise<void> {
    return this.runner.stop();
  }

  /** Every agent the model knows, in id order. */
  list(): KnownAgent[] {
    return [...this.runner.model.values()].sort((a, b) => (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0));
  }

  /** One agent: from the model, else from its stream. */
  async agent(agentId: string): Promise<KnownAgent | undefined> {
    return this.runner.model.get(agentId) ?? (await this.readStream(agentId));
  }

  async get(agentId: string): Promise<AgentRecord | undefined> {
    const agent = await this.agent(agentId);
    return agent && toAgentRecord(agent);
  }

  private async readStream(agentId: string): Promise<KnownAgent | undefined> {
    let events: RecordedEvent[];
    try {
      events = await this.store.readStream(agentStreamId(agentId));
    } catch (error) {
      if (error instanceof StreamNotFound) return undefined;
      throw error;
    }
    return events.reduce<KnownAgent | undefined>((agent, event) => evolveAgent(agent, event), undefined);
  }
}

/** An operator configured outside the log, so the very first RegisterAgent can be signed. */
export interface BootstrapAgent {
  agentId: string;
  publicKey: string;
}

/**
 * The directory every service's command gate uses: the registry first (its word wins once it
 * knows the agent, e.g. after a key rotation or a disable), then the configured bootstrap operators.
 */
export function commandDirectory(registry: RegistryDirectory, bootstrap: readonly BootstrapAgent[]): AgentDirectory {
  const configured = new StaticAgentDirectory(bootstrap.map((a) => [a.agentId, { publicKey: a.publicKey, roles: ['operator'], status: 'active' }] as const));
  return new CompositeAgentDirectory(registry, configured);
}
