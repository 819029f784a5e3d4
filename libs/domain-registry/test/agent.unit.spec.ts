import { DeciderSpecification, type CommandContext } from '@agora/decider';
import { agentDecider, type AgentCommand, type AgentEvent } from '../src/agent.js';

const spec = DeciderSpecification.for(agentDecider);
const context: CommandContext = { now: '2026-11-22T10:00:00.000Z', actor: 'root', actorRoles: ['operator'], commandId: 'c1' };
const key1 = `ed25519:${'A'.repeat(43)}`;
const key2 = `ed25519:${'B'.repeat(43)}`;

const register = (over: Partial<Extract<AgentCommand, { type: 'RegisterAgent' }>['payload']> = {}): AgentCommand => ({
  type: 'RegisterAgent',
  context,
  payload: { agentId: 'harbinger', publicKey: key1, displayName: 'Harbinger', roles: ['reviewer'], constitutions: ['risk'], specializations: [], trustScore: 500, health: 1, risk: 0, ...over },
});
const registered: AgentEvent = {
  type: 'AgentRegistered',
  data: { agentId: 'harbinger', publicKey: key1, displayName: 'Harbinger', roles: ['reviewer'], constitutions: ['risk'], specializations: [], trustScore: 500, health: 1, risk: 0, registeredAt: context.now },
};

describe('agent decider', () => {
  it('registers a new agent at the command time', () => {
    spec([]).when(register()).then([registered]);
  });
  it('treats the same registration again as already done', () => {
    spec([registered]).when(register()).thenNothing();
  });
  it('refuses a different registration under a taken id', () => {
    spec([registered]).when(register({ publicKey: key2 })).thenRefuses('illegal_state', /already registered/);
  });
  it('updates only what changed', () => {
    spec([registered])
      .when({ type: 'UpdateAgent', context, payload: { agentId: 'harbinger', displayName: 'Harbinger', trustScore: 700, constitutions: ['risk', 'premise'] } })
      .then([{ type: 'AgentUpdated', data: { agentId: 'harbinger', trustScore: 700, constitutions: ['risk', 'premise'] } }]);
    spec([registered]).when({ type: 'UpdateAgent', context, payload: { agentId: 'harbinger', roles: ['reviewer'] } }).thenNothing();
  });
  it('records reported health and risk when they change', () => {
    spec([registered])
      .when({ type: 'UpdateAgent', context, payload: { agentId: 'harbinger', health: 0.4, risk: 0.65 } })
      .then([{ type: 'AgentUpdated', data: { agentId: 'harbinger', health: 0.4, risk: 0.65 } }]);
    spec([registered]).when({ type: 'UpdateAgent', context, payload: { agentId: 'harbinger', health: 1, risk: 0 } }).thenNothing();
  });
  it('refuses to update an unknown or disabled agent', () => {
    spec([]).when({ type: 'UpdateAgent', context, payload: { agentId: 'harbinger', trustScore: 1 } }).thenRefuses('not_found');
    spec([registered, { type: 'AgentDisabled', data: { agentId: 'harbinger', reason: 'r', disabledAt: context.now } }])
      .when({ type: 'UpdateAgent', context, payload: { agentId: 'harbinger', trustScore: 1 } })
      .thenRefuses('illegal_state', /disabled/);
  });
  it('rotates a key, recording the previous one', () => {
    spec([registered])
      .when({ type: 'RotateAgentKey', context, payload: { agentId: 'harbinger', publicKey: key2 } })
      .then([{ type: 'AgentKeyRotated', data: { agentId: 'harbinger', publicKey: key2, previousPublicKey: key1 } }]);
    spec([registered]).when({ type: 'RotateAgentKey', context, payload: { agentId: 'harbinger', publicKey: key1 } }).thenNothing();
  });
  it('disables once', () => {
    const disabled: AgentEvent = { type: 'AgentDisabled', data: { agentId: 'harbinger', reason: 'compromised', disabledAt: context.now } };
    spec([registered]).when({ type: 'DisableAgent', context, payload: { agentId: 'harbinger', reason: 'compromised' } }).then([disabled]);
    spec([registered, disabled]).when({ type: 'DisableAgent', context, payload: { agentId: 'harbinger', reason: 'again' } }).thenNothing();
    spec([]).when({ type: 'DisableAgent', context, payload: { agentId: 'harbinger', reason: 'x' } }).thenRefuses('not_found');
  });
  it('adjusts trust within 0..1000, recording the cause, and not at all when already at the bound', () => {
    const cause = { eventId: 'e1', streamId: 'proposal-p1', type: 'ProceededDespiteObjections' };
    const adjust = (delta: number): AgentCommand => ({ type: 'AdjustTrust', context, payload: { agentId: 'harbinger', delta, reason: 'proceeded despite objections', cause } });
    spec([registered]).when(adjust(-100)).then([{ type: 'AgentTrustAdjusted', data: { agentId: 'harbinger', delta: -100, trustScore: 400, reason: 'proceeded despite objections', cause } }]);
    spec([registered]).when(adjust(-900)).then([{ type: 'AgentTrustAdjusted', data: { agentId: 'harbinger', delta: -500, trustScore: 0, reason: 'proceeded despite objections', cause } }]);
    const atZero: AgentEvent = { type: 'AgentTrustAdjusted', data: { agentId: 'harbinger', delta: -500, trustScore: 0, reason: 'r', cause } };
    spec([registered, atZero]).when(adjust(-100)).thenNothing();
    spec([]).when(adjust(-100)).thenRefuses('not_found');
  });
  it('folds to the current agent', () => {
    const state = [registered, { type: 'AgentKeyRotated', data: { agentId: 'harbinger', publicKey: key2, previousPublicKey: key1 } } as AgentEvent].reduce(agentDecider.evolve, agentDecider.initialState());
    expect(state).toMatchObject({ status: 'active', publicKey: key2, roles: ['reviewer'] });
  });
});
