import { UpdateAgent } from '@agora/contracts';
import { DeciderSpecification, type CommandContext } from '@agora/decider';
import { defineBreakerPolicy } from '@agora/domain-common';
import { agentDecider, createAgentDecider, type Agent, type AgentCommand, type AgentEvent, type AgentState } from '../src/agent.js';

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
  it.each(['gateway', 'registry', 'proposal', 'debate', 'auditor', 'observer', 'service', 'agent', 'service_voting'])('refuses the id %s, reserved for a process of Agora, saying why', (agentId) => {
    spec([]).when(register({ agentId })).thenRefuses('invalid_command', new RegExp(`agent id "${agentId}" is reserved: .*choose another id`));
  });
  it('registered a reserved id under rules before 3, so that an older log audits as it was decided', () => {
    spec([]).when({ ...register({ agentId: 'gateway' }), context: { ...context, rules: 2 } } as AgentCommand).then([{ ...registered, data: { ...registered.data, agentId: 'gateway' } } as AgentEvent]);
  });
  it("refuses the bootstrap operator's id to any other operator (rules 4 on), not to that operator itself, and registered it under rules 3", () => {
    const guarded = DeciderSpecification.for(createAgentDecider(undefined, { bootstrapOperators: ['root'] }));
    const byOther = { ...register({ agentId: 'root', roles: ['operator'] }), context: { ...context, actor: 'opal' } } as AgentCommand;
    const rootRegistered = { ...registered, data: { ...registered.data, agentId: 'root', roles: ['operator'] } } as AgentEvent;
    guarded([]).when(byOther).thenRefuses('invalid_command', /agent id root is reserved for the bootstrap operator .*only root itself may register it/);
    guarded([]).when(register({ agentId: 'root', roles: ['operator'] })).then([rootRegistered]);
    guarded([]).when({ ...byOther, context: { ...byOther.context, rules: 3 } } as AgentCommand).then([rootRegistered]);
    // A decider that knows no bootstrap operator reserves nothing more.
    spec([]).when(byOther).then([rootRegistered]);
  });
  it('accepts ids that only resemble a reserved one', () => {
    for (const agentId of ['gateway2', 'my-registry', 'service_bot', 'auditor_1']) spec([]).when(register({ agentId })).then([{ ...registered, data: { ...registered.data, agentId } } as AgentEvent]);
  });
  it('updates only what changed', () => {
    spec([registered])
      .when({ type: 'UpdateAgent', context, payload: { agentId: 'harbinger', displayName: 'Harbinger', trustScore: 700, constitutions: ['risk', 'premise'] } })
      .then([{ type: 'AgentUpdated', data: { agentId: 'harbinger', trustScore: 700, constitutions: ['risk', 'premise'] } }]);
    spec([registered]).when({ type: 'UpdateAgent', context, payload: { agentId: 'harbinger', roles: ['reviewer'] } }).thenNothing();
  });
  it('takes no health or risk in UpdateAgent: ReportHealth is their one way in', () => {
    expect(UpdateAgent.payload.safeParse({ agentId: 'harbinger', health: 0.4, risk: 0.65 }).success).toBe(false);
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

  it('enables a disabled agent again, under a new key when given (rotated first), and an active one not at all', () => {
    const disabled: AgentEvent = { type: 'AgentDisabled', data: { agentId: 'harbinger', reason: 'key leaked', disabledAt: context.now } };
    const enabled: AgentEvent = { type: 'AgentEnabled', data: { agentId: 'harbinger', reason: 'new key', enabledAt: context.now } };
    const enable = (over: { publicKey?: string } = {}): AgentCommand => ({ type: 'EnableAgent', context, payload: { agentId: 'harbinger', reason: 'new key', ...over } });
    spec([registered, disabled]).when(enable()).then([enabled]);
    spec([registered, disabled])
      .when(enable({ publicKey: key2 }))
      .then([{ type: 'AgentKeyRotated', data: { agentId: 'harbinger', publicKey: key2, previousPublicKey: key1 } }, enabled]);
    // The same key is no rotation.
    spec([registered, disabled]).when(enable({ publicKey: key1 })).then([enabled]);
    spec([registered, disabled, enabled]).when(enable()).thenNothing();
    spec([registered]).when(enable({ publicKey: key1 })).thenNothing();
    spec([registered]).when(enable({ publicKey: key2 })).thenRefuses('illegal_state', /RotateAgentKey/);
    spec([]).when(enable()).thenRefuses('not_found');
    // Enabled again, it is active: its updates are taken, and it may be disabled again.
    spec([registered, disabled, enabled]).when({ type: 'UpdateAgent', context, payload: { agentId: 'harbinger', trustScore: 600 } }).then([{ type: 'AgentUpdated', data: { agentId: 'harbinger', trustScore: 600 } }]);
    spec([registered, disabled, enabled]).when({ type: 'DisableAgent', context, payload: { agentId: 'harbinger', reason: 'again' } }).then([{ type: 'AgentDisabled', data: { agentId: 'harbinger', reason: 'again', disabledAt: context.now } }]);
  });
  it('adjusts trust within 0..1000, recording the cause, and not at all when already at the bound', () => {
    const cause = { eventId: 'e1', streamId: 'proposal-p1', type: 'ProceededDespiteObjections' };
    const adjust = (delta: number, roles: string[] = ['service']): AgentCommand => ({ type: 'AdjustTrust', context: { ...context, actor: 'service:registry', actorRoles: roles }, payload: { agentId: 'harbinger', delta, reason: 'proceeded despite objections', cause } });
    spec([registered]).when(adjust(-100)).then([{ type: 'AgentTrustAdjusted', data: { agentId: 'harbinger', delta: -100, trustScore: 400, reason: 'proceeded despite objections', cause } }]);
    spec([registered]).when(adjust(-900)).then([{ type: 'AgentTrustAdjusted', data: { agentId: 'harbinger', delta: -500, trustScore: 0, reason: 'proceeded despite objections', cause } }]);
    const atZero: AgentEvent = { type: 'AgentTrustAdjusted', data: { agentId: 'harbinger', delta: -500, trustScore: 0, reason: 'r', cause } };
    spec([registered, atZero]).when(adjust(-100)).thenNothing();
    spec([]).when(adjust(-100)).thenRefuses('not_found');
    // Only the registry service adjusts trust: an operator is refused.
    spec([registered]).when(adjust(-100, ['operator'])).thenRefuses('forbidden', /only the registry service/);
  });
  it('folds to the current agent', () => {
    const state = [registered, { type: 'AgentKeyRotated', data: { agentId: 'harbinger', publicKey: key2, previousPublicKey: key1 } } as AgentEvent].reduce(agentDecider.evolve, agentDecider.initialState());
    expect(state).toMatchObject({ status: 'active', publicKey: key2, roles: ['reviewer'] });
  });
});

describe('agent decider: the circuit breaker', () => {
  const self: CommandContext = { ...context, actor: 'harbinger', actorRoles: ['reviewer'] };
  const report = (risk: number, ctx: CommandContext = self, now = context.now): AgentCommand => ({
    type: 'ReportHealth',
    context: { ...ctx, now },
    payload: { agentId: 'harbinger', health: 1 - risk, risk, tags: ['cascade'], metrics: { coherence: 0.45 } },
  });
  const reported = (risk: number, by = 'harbinger', at = context.now): AgentEvent => ({
    type: 'AgentHealthReported',
    data: { agentId: 'harbinger', health: 1 - risk, risk, tags: ['cascade'], metrics: { coherence: 0.45 }, note: null, reportedBy: by, reportedAt: at },
  });
  const paused: AgentEvent = {
    type: 'AgentPaused',
    data: { agentId: 'harbinger', pause: 1, sessionId: 'harbinger-p1', risk: 0.65, health: 0.35, threshold: 0.6, tags: ['cascade'], reason: 'risk 0.65 reached the threshold 0.6', previousResume: null, pausedAt: context.now },
  };
  const resumedAt = '2026-11-22T10:04:00.000Z';
  const cause = { eventId: 'e1', streamId: 'dialectic_session-harbinger-p1', type: 'RecoveryResolved' };
  const resume = (over: Partial<Extract<AgentCommand, { type: 'ResumeAgent' }>['payload']> = {}): AgentCommand => ({
    type: 'ResumeAgent',
    context: { ...context, actor: 'service:registry', actorRoles: ['service'], now: resumedAt },
    payload: { agentId: 'harbinger', pause: 1, sessionId: 'harbinger-p1', decidedBy: 'dialectic', conditions: [{ operation: 'set_risk_threshold', parameters: { threshold: 0.48 } }], riskThreshold: 0.48, cause, ...over },
  });
  const resumed: AgentEvent = {
    type: 'AgentResumed',
    data: { agentId: 'harbinger', pause: 1, sessionId: 'harbinger-p1', decidedBy: 'dialectic', conditions: [{ operation: 'set_risk_threshold', parameters: { threshold: 0.48 } }], riskThreshold: 0.48, cause, resumedAt, enforced: { rateLimitPerMinute: null, probation: null }, obligations: [] },
  };
  const fold = (events: AgentEvent[]): Agent => events.reduce<AgentState>((s, e) => agentDecider.evolve(s, e), agentDecider.initialState()) as Agent;

  it('starts every agent with a closed breaker', () => {
    expect(fold([registered]).breaker).toEqual({ state: 'closed', pauses: 0, riskThreshold: null, sessionId: null, pausedAt: null, lastResume: null, lastReportAt: null, enforced: null });
  });
  it('records a report below the threshold, which becomes the agent\'s health and risk', () => {
    spec([registered]).when(report(0.3)).then([reported(0.3)]);
    expect(fold([registered, reported(0.3)])).toMatchObject({ health: 0.7, risk: 0.3, breaker: { state: 'closed', lastReportAt: context.now } });
  });
  it('trips the breaker at the threshold (0.60 by default): AgentPaused in the same decision', () => {
    spec([registered]).when(report(0.65)).then([reported(0.65), paused]);
    expect(fold([registered, reported(0.65), paused]).breaker).toMatchObject({ state: 'open', pauses: 1, sessionId: 'harbinger-p1', pausedAt: context.now });
  });
  it('uses the configured policy', () => {
    const strict = DeciderSpecification.for(createAgentDecider(defineBreakerPolicy({ riskThreshold: 0.5 })));
    strict([registered]).when(report(0.55)).then([reported(0.55), { ...paused, data: { ...paused.data, risk: 0.55, health: 1 - 0.55, threshold: 0.5, reason: 'risk 0.55 reached the threshold 0.5' } } as AgentEvent]);
    spec([registered]).when(report(0.55)).then([reported(0.55)]);
  });
  it('only records reports while open: the breaker closes through a recovery', () => {
    spec([registered, reported(0.65), paused]).when(report(0.1)).then([reported(0.1)]);
  });
  it('takes reports from the agent itself or an operator, not from another agent, and none for a disabled agent', () => {
    spec([registered]).when(report(0.2, context)).then([reported(0.2, 'root')]);
    spec([registered]).when(report(0.2, { ...context, actor: 'mallory', actorRoles: ['reviewer'] })).thenRefuses('forbidden', /may not report the health/);
    spec([]).when(report(0.2)).thenRefuses('not_found');
    spec([registered, { type: 'AgentDisabled', data: { agentId: 'harbinger', reason: 'r', disabledAt: context.now } }]).when(report(0.2)).thenRefuses('illegal_state', /disabled/);
  });
  it('resumes the pause a resolution recovered, with its threshold, once', () => {
    spec([registered, reported(0.65), paused]).when(resume()).then([resumed]);
    spec([registered, reported(0.65), paused, resumed]).when(resume()).thenNothing();
    expect(fold([registered, reported(0.65), paused, resumed]).breaker).toMatchObject({ state: 'closed', riskThreshold: 0.48, sessionId: null, lastResume: { pause: 1, sessionId: 'harbinger-p1', resumedAt } });
  });
  it('refuses a resume of another pause, of an agent that is not paused, or of an unknown agent', () => {
    spec([registered, reported(0.65), paused]).when(resume({ pause: 2, sessionId: 'harbinger-p2' })).thenRefuses('illegal_state');
    spec([registered]).when(resume()).thenRefuses('illegal_state', /not paused/);
    spec([]).when(resume()).thenRefuses('not_found');
  });
  it('trips at the agent\'s own threshold after a resume, naming the previous resume (a relapse)', () => {
    const again = spec([registered, reported(0.65), paused, resumed]).when(report(0.5, self, '2026-11-22T10:10:00.000Z'));
    again.then([
      reported(0.5, 'harbinger', '2026-11-22T10:10:00.000Z'),
      {
        type: 'AgentPaused',
        data: {
          agentId: 'harbinger',
          pause: 2,
          sessionId: 'harbinger-p2',
          risk: 0.5,
          health: 0.5,
          threshold: 0.48,
          tags: ['cascade'],
          reason: 'risk 0.5 reached the threshold 0.48',
          previousResume: { pause: 1, sessionId: 'harbinger-p1', resumedAt },
          pausedAt: '2026-11-22T10:10:00.000Z',
        },
      },
    ]);
  });
  it('still folds health and risk of AgentUpdated events recorded before ReportHealth took them over', () => {
    expect(fold([registered, { type: 'AgentUpdated', data: { agentId: 'harbinger', health: 0.4, risk: 0.3 } }])).toMatchObject({ health: 0.4, risk: 0.3 });
  });
});
