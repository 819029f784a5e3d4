import { reservedAgentId, type AgentTrustAdjusted, type AgentUpdated, type DataOf, type dialecticContracts, type registryContracts, type Role } from '@agora/contracts';
import { DomainError, rulesOf, type Command, type CommandsOf, type Decider, type EventsOf } from '@agora/decider';
import {
  breakerDecision,
  DEFAULT_BREAKER_POLICY,
  evolveBreaker,
  initialBreaker,
  resumeDecision,
  type Breaker,
  type BreakerEvent,
  type BreakerPolicy,
  type ResumeAgentPayload,
} from '@agora/domain-common';

/** The agent's events: the registry's, and the circuit breaker's (whose contracts are the dialectic protocol's). */
export type AgentEvent = EventsOf<(typeof registryContracts.events)[number]> | BreakerEvent;

/**
 * An automatic trust change, issued by the registry itself in answer to an event of another
 * service (never by an agent): `cause` names that event, and the command id is derived from it,
 * so a redelivered event changes nothing twice.
 */
export interface AdjustTrustPayload {
  agentId: string;
  delta: number;
  reason: string;
  cause: DataOf<typeof AgentTrustAdjusted>['cause'];
}

/** The commands on an agent's stream, from the contracts (the breaker's too); the registry's own AdjustTrust and ResumeAgent carry what it adds. */
type AgentCommandDefinition = Extract<(typeof registryContracts.commands)[number] | (typeof dialecticContracts.commands)[number], { service: 'registry'; aggregate: 'agent' }>;
export type AgentCommand =
  | Exclude<CommandsOf<AgentCommandDefinition>, { type: 'AdjustTrust' | 'ResumeAgent' }>
  | Command<'AdjustTrust', AdjustTrustPayload>
  /** Internal: the registry's answer to RecoveryResolved (never sent by an agent). */
  | Command<'ResumeAgent', ResumeAgentPayload>;

export type { ResumeAgentPayload } from '@agora/domain-common';

export interface Agent {
  agentId: string;
  publicKey: string;
  displayName: string;
  roles: Role[];
  constitutions: string[];
  specializations: string[];
  trustScore: number;
  health: number;
  risk: number;
  status: 'active' | 'disabled';
  /** The circuit breaker (seed 001): health and risk come in only through ReportHealth, which trips it. */
  breaker: Breaker;
  /** Tags of the last recorded health report (the breaker's rules compare a new report with it). */
  reportTags?: string[];
  registeredAt: string;
}

export type AgentState = { status: 'unregistered' } | Agent;

export const agentStreamId = (agentId: string): string => `agent-${agentId}`;

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');

function registered(state: AgentState, agentId: string): Agent {
  if (state.status === 'unregistered') throw new DomainError('not_found', `agent ${agentId} is not registered`, { agentId });
  return state;
}

/** A command only a service issues on its own behalf (its identity presents the role `service`). */
function requireService(context: { actor: string; actorRoles: readonly string[] }, toDo: string): void {
  if (context.actorRoles.includes('service')) return;
  throw new DomainError('forbidden', `${context.actor} may not ${toDo}: only the registry service does, on its own behalf`, { actor: context.actor, actorRoles: [...context.actorRoles] });
}

function active(state: AgentState, agentId: string): Agent {
  const agent = registered(state, agentId);
  if (agent.status === 'disabled') throw new DomainError('illegal_state', `agent ${agentId} is disabled`, { agentId });
  return agent;
}

/**
 * The agent decider under a circuit-breaker policy (the threshold at which ReportHealth pauses an
 * agent that has none of its own). Health and risk change only through ReportHealth (the breaker
 * rules of @agora/domain-dialectic); the breaker reopens only through ResumeAgent.
 */
export function createAgentDecider(policy: BreakerPolicy = DEFAULT_BREAKER_POLICY, options: { bootstrapOperators?: readonly string[] } = {}): Decider<AgentCommand, AgentEvent, AgentState> {
  const bootstrap = new Set(options.bootstrapOperators ?? []);
  return {
    initialState: () => ({ status: 'unregistered' }),

    evolve(state, event) {
      switch (event.type) {
        case 'AgentRegistered': {
          const { registeredAt, ...rest } = event.data;
          return { ...rest, roles: [...rest.roles], status: 'active', breaker: initialBreaker(), registeredAt };
        }
        case 'AgentHealthReported':
          return state.status === 'unregistered' ? state : { ...state, health: event.data.health, risk: event.data.risk, reportTags: [...event.data.tags], breaker: evolveBreaker(state.breaker, event) };
        case 'AgentPaused':
        case 'AgentResumed':
          return state.status === 'unregistered' ? state : { ...state, breaker: evolveBreaker(state.breaker, event) };
        case 'AgentUpdated': {
          if (state.status === 'unregistered') return state;
          const { agentId: _id, ...changes } = event.data;
          const defined = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined));
          return { ...state, ...defined };
        }
        case 'AgentKeyRotated':
          return state.status === 'unregistered' ? state : { ...state, publicKey: event.data.publicKey };
        case 'AgentDisabled':
          return state.status === 'unregistered' ? state : { ...state, status: 'disabled' };
        case 'AgentEnabled':
          return state.status === 'unregistered' ? state : { ...state, status: 'active' };
        case 'AgentTrustAdjusted':
          return state.status === 'unregistered' ? state : { ...state, trustScore: event.data.trustScore };
      }
    },

    decide(command, state) {
      const { payload } = command;
      switch (command.type) {
        case 'RegisterAgent': {
          const p = command.payload;
          // An agent named after a process's NATS user (or a service actor's inbox) could read that process's replies (rules 3 on: an older log keeps its registrations).
          const reserved = rulesOf(command.context) >= 3 ? reservedAgentId(p.agentId) : undefined;
          if (reserved !== undefined) throw new DomainError('invalid_command', reserved, { agentId: p.agentId });
          // A registry entry under a bootstrap operator's id would win over its configured key (rules 4 on): only that operator registers it.
          if (rulesOf(command.context) >= 4 && bootstrap.has(p.agentId) && command.context.actor !== p.agentId) {
            throw new DomainError('invalid_command', `agent id ${p.agentId} is reserved for the bootstrap operator (configured outside the log): only ${p.agentId} itself may register it`, { agentId: p.agentId });
          }
          if (state.status !== 'unregistered') {
            const same = state.publicKey === p.publicKey && state.displayName === p.displayName && sameSet(state.roles, p.roles);
            if (same) return [];
            throw new DomainError('illegal_state', `agent ${p.agentId} is already registered`, { agentId: p.agentId });
          }
          return [
            {
              type: 'AgentRegistered',
              data: {
                agentId: p.agentId,
                publicKey: p.publicKey,
                displayName: p.displayName,
                roles: [...new Set(p.roles)],
                constitutions: [...new Set(p.constitutions)],
                specializations: [...new Set(p.specializations)],
                trustScore: p.trustScore,
                health: p.health,
                risk: p.risk,
                registeredAt: command.context.now,
              },
            },
          ];
        }
        case 'UpdateAgent': {
          const p = command.payload;
          const agent = active(state, payload.agentId);
          const changes: DataOf<typeof AgentUpdated> = { agentId: p.agentId };
          if (p.displayName !== undefined && p.displayName !== agent.displayName) changes.displayName = p.displayName;
          if (p.roles !== undefined && !sameSet(p.roles, agent.roles)) changes.roles = [...new Set(p.roles)];
          if (p.constitutions !== undefined && !sameSet(p.constitutions, agent.constitutions)) changes.constitutions = [...new Set(p.constitutions)];
          if (p.specializations !== undefined && !sameSet(p.specializations, agent.specializations)) changes.specializations = [...new Set(p.specializations)];
          if (p.trustScore !== undefined && p.trustScore !== agent.trustScore) changes.trustScore = p.trustScore;
          return Object.keys(changes).length === 1 ? [] : [{ type: 'AgentUpdated', data: changes }];
        }
        case 'RotateAgentKey': {
          const p = command.payload;
          const agent = active(state, p.agentId);
          if (agent.publicKey === p.publicKey) return [];
          return [{ type: 'AgentKeyRotated', data: { agentId: p.agentId, publicKey: p.publicKey, previousPublicKey: agent.publicKey } }];
        }
        case 'DisableAgent': {
          const p = command.payload;
          const agent = registered(state, p.agentId);
          if (agent.status === 'disabled') return [];
          return [{ type: 'AgentDisabled', data: { agentId: p.agentId, reason: p.reason, disabledAt: command.context.now } }];
        }
        case 'EnableAgent': {
          const p = command.payload;
          const agent = registered(state, p.agentId);
          const newKey = p.publicKey !== undefined && p.publicKey !== agent.publicKey ? p.publicKey : undefined;
          if (agent.status === 'active') {
            if (newKey === undefined) return [];
            throw new DomainError('illegal_state', `agent ${p.agentId} is active: RotateAgentKey changes its key`, { agentId: p.agentId });
          }
          return [
            ...(newKey === undefined ? [] : [{ type: 'AgentKeyRotated' as const, data: { agentId: p.agentId, publicKey: newKey, previousPublicKey: agent.publicKey } }]),
            { type: 'AgentEnabled' as const, data: { agentId: p.agentId, reason: p.reason, enabledAt: command.context.now } },
          ];
        }
        case 'AdjustTrust': {
          const p = command.payload;
          requireService(command.context, 'adjust trust');
          if (!Number.isSafeInteger(p.delta)) throw new DomainError('invalid_command', `trust delta ${p.delta} must be a whole number`, { delta: p.delta });
          // A disabled agent's score still records what it did; an unknown agent has no score.
          const agent = registered(state, p.agentId);
          const trustScore = Math.min(1000, Math.max(0, agent.trustScore + p.delta));
          if (trustScore === agent.trustScore) return [];
          return [{ type: 'AgentTrustAdjusted', data: { agentId: p.agentId, delta: trustScore - agent.trustScore, trustScore, reason: p.reason, cause: p.cause } }];
        }
        case 'ReportHealth':
          return breakerDecision(registered(state, command.payload.agentId), command, policy);
        case 'ResumeAgent':
          return resumeDecision(registered(state, command.payload.agentId), command, policy);
      }
    },
  };
}

/** The agent decider under the default breaker policy (trips at a risk of 0.60). */
export const agentDecider: Decider<AgentCommand, AgentEvent, AgentState> = createAgentDecider();
