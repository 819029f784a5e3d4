import {
  AgoraError,
  commandsOf,
  DIALECTIC_SESSION_CATEGORY,
  GetAgent,
  GetModelCall,
  GetModelLedger,
  RecordModelCallOutcome,
  ReserveModelCall,
  SetModelBudget,
  ListAgents,
  GetConfiguredKeys,
  type AgentView,
  type DataOf,
  type ProceededDespiteObjections,
  type PayloadOf,
} from '@agora/contracts';
import { DEFAULT_BREAKER_POLICY, defineBreakerPolicy, resumePayloadOf } from '@agora/domain-common';
import { agentDecider, agentStreamId, createAgentDecider, ledgerMonth, modelBudgetStreamId, modelLedgerDecider, modelLedgerStreamId, type AgentCommand, type AgentEvent, type AgentState } from '@agora/domain-registry';
import type { Decider } from '@agora/decider';
import type { RecordedEvent } from '@agora/eventstore';
import { findModelCall, modelBudgetOf, modelCallView, modelLedgerOf, modelLedgerPage } from './model-ledger.js';
import { createServiceMicroservice, onAgentCommands, onCommand, onQuery, type ServiceMicroservice } from '@agora/messaging';
import { pageOf } from '@agora/read-models';
import { breakerPolicyFromEnv, deciderHandler, intSetting, KeyedLock, recordSettings, runReactor, startAll, startTogether, type InternalCommand, type KnownAgent, type Running, type ServiceContext } from '@agora/runtime';
import type { LoggerService, LogLevel } from '@nestjs/common';

export interface RegistryServiceOptions {
  /** Nest's logger setting; `false` silences it (tests). */
  logger?: LoggerService | LogLevel[] | false;
  /** Trust points an executive loses each time it proceeds despite objections. Default 100 (of 1000). */
  trustPenaltyProceeded?: number;
  /** Risk at or above which ReportHealth pauses an agent that has no threshold of its own. Default 0.60 (seed 001). */
  breakerRiskThreshold?: number;
  /** On probation (a resolution's condition), the breaker trips this much lower. Default 0.10. */
  probationRiskMargin?: number;
  /** On probation, the agent needs a health report at most this old (ms) to send anything else. Default 1 hour. */
  probationReportIntervalMs?: number;
  /** A health report that trips nothing is recorded when health or risk moved this much (0: every report). Default 0.05. */
  healthReportMinChange?: number;
  /** ...and at least once this often per agent (ms; 0: every report). Default 60 s. */
  healthReportSampleMs?: number;
}

export const DEFAULT_TRUST_PENALTY_PROCEEDED = 100;

export const REGISTRY_ENV_HELP = `AGORA_TRUST_PENALTY_PROCEEDED  trust points (of 1000) an executive loses each time it executes a
                               proposal that was not approved (default ${DEFAULT_TRUST_PENALTY_PROCEEDED})
AGORA_BREAKER_RISK_THRESHOLD   reported risk (0 to 1) at or above which an agent's circuit breaker
                               trips and pauses it, unless a recovery set it a threshold of its own
                               (default ${DEFAULT_BREAKER_POLICY.riskThreshold.toFixed(2)})
AGORA_PROBATION_RISK_MARGIN    how much lower the breaker trips for an agent on probation (a condition
                               of its recovery) (default ${DEFAULT_BREAKER_POLICY.probationRiskMargin.toFixed(2)})
AGORA_PROBATION_REPORT_INTERVAL_MS  how recent an agent on probation's last health report must be for
                               its other commands to be accepted (default ${DEFAULT_BREAKER_POLICY.probationReportIntervalMs})
AGORA_HEALTH_REPORT_MIN_CHANGE  a health report that trips nothing is recorded in the log when its
                               health or risk moved at least this much from the agent's last recorded
                               report (or its tags changed, or it has a note) (default ${DEFAULT_BREAKER_POLICY.reportMinChange.toFixed(2)};
                               0 = record every report)
AGORA_HEALTH_REPORT_SAMPLE_MS  ...and at least once this often per agent, whatever it says (default
                               ${DEFAULT_BREAKER_POLICY.reportSampleMs}; 0 = record every report). A report that trips the
                               breaker, and every report of a paused agent or one on probation, is
                               always recorded`;

/** The registry's settings from the environment (ConfigError naming a bad one). */
export function registryOptionsFromEnv(env: NodeJS.ProcessEnv): RegistryServiceOptions {
  const breaker = breakerPolicyFromEnv(env);
  return {
    trustPenaltyProceeded: intSetting(env, 'AGORA_TRUST_PENALTY_PROCEEDED', DEFAULT_TRUST_PENALTY_PROCEEDED, { min: 0, max: 1000, what: 'a number of trust points, 0 to 1000' }),
    breakerRiskThreshold: breaker.riskThreshold,
    probationRiskMargin: breaker.probationRiskMargin,
    probationReportIntervalMs: breaker.probationReportIntervalMs,
    healthReportMinChange: breaker.reportMinChange,
    healthReportSampleMs: breaker.reportSampleMs,
  };
}

/**
 * Provenance (seed 000, "what if the executive ignores the tribunal"): an executive that executes a
 * proposal that was not approved loses trust. The registry answers the event itself, through a
 * checkpointed subscription, never through a second write made by the proposal service.
 */
export function trustReactions(penalty: number) {
  return (event: RecordedEvent): InternalCommand[] => {
    if (event.type !== 'ProceededDespiteObjections' || penalty === 0) return [];
    const data = event.data as DataOf<typeof ProceededDespiteObjections>;
    const objections = data.openObjections.length;
    return [
      {
        streamId: agentStreamId(data.executive),
        decider: agentDecider,
        type: 'AdjustTrust',
        payload: {
          agentId: data.executive,
          delta: -penalty,
          reason: `executed proposal ${data.proposalId} while it was ${data.status}${objections > 0 ? ` with ${objections} open objection${objections === 1 ? '' : 's'}` : ''}`,
          cause: { eventId: event.id, streamId: event.streamId, type: event.type },
        },
      },
    ];
  };
}

/**
 * The circuit breaker's other half (seed 001): a recovery the dialectic service resolved resumes
 * the agent. The registry records AgentResumed itself, in answer to RecoveryResolved, through a
 * checkpointed subscription (the command id derived from the event), never by a second write of
 * the dialectic service.
 */
export function resumeReactions(decider: Decider<AgentCommand, AgentEvent, AgentState>) {
  return (event: RecordedEvent): InternalCommand[] => {
    const payload = resumePayloadOf(event);
    return payload ? [{ streamId: agentStreamId(payload.agentId), decider, type: 'ResumeAgent', payload }] : [];
  };
}

export function agentView(agent: KnownAgent): AgentView {
  const { agentId, publicKey, displayName, roles, constitutions, specializations, trustScore, health, risk, status, breaker, registeredAt, revision } = agent;
  return { agentId, publicKey, displayName, roles, constitutions, specializations, trustScore, health, risk, status, breaker, registeredAt, revision };
}

/**
 * The registry service: agents registered, updated, key-rotated and disabled by commands signed
 * with an operator key (the roles are in the contracts); health reports (the agent itself or an
 * operator's monitor) that trip the circuit breaker at the policy's threshold, and resumes in
 * answer to the dialectic's RecoveryResolved; and the agent queries, answered from the process's
 * live agent directory.
 */
export async function startRegistryService(context: ServiceContext, options: RegistryServiceOptions = {}): Promise<Running & { service: ServiceMicroservice }> {
  const locks = new KeyedLock();
  const policy = Object.fromEntries(
    Object.entries({
      riskThreshold: options.breakerRiskThreshold,
      probationRiskMargin: options.probationRiskMargin,
      probationReportIntervalMs: options.probationReportIntervalMs,
      reportMinChange: options.healthReportMinChange,
      reportSampleMs: options.healthReportSampleMs,
    }).filter(([, v]) => v !== undefined),
  );
  const breakerPolicy = defineBreakerPolicy(policy);
  // The bootstrap operators' ids are reserved to them (RegisterAgent, rules 4 on).
  const decider = createAgentDecider(breakerPolicy, { bootstrapOperators: context.config.operators.map((o) => o.agentId) });
  // The breaker's policy is what the agent decider reads: recorded in the log, so the audit decides under it.
  const settings = await recordSettings(context, 'breaker', breakerPolicy);
  const decide = deciderHandler({ store: context.store, decider, streamOf: (p: { agentId: string }) => agentStreamId(p.agentId), locks });
  // Agents' model calls: budgets set by operators (model_calls-<agentId>), and a ledger per agent and month
  // (model_calls-<agentId>@<YYYY-MM>) of the calls the agents reserve and record themselves.
  const month = () => ledgerMonth(new Date().toISOString());
  const setBudget = deciderHandler({
    store: context.store,
    decider: modelLedgerDecider,
    streamOf: async (p: { agentId: string }) => {
      if (!(await context.registry.agent(p.agentId))) throw new AgoraError('not_found', `no agent "${p.agentId}" is registered`, { agentId: p.agentId });
      return modelBudgetStreamId(p.agentId);
    },
    // The currency of this month's calls, which a budget cannot move from.
    toCommand: async (verified, ctx) => {
      const payload = verified.payload as PayloadOf<typeof SetModelBudget>;
      const { budget, calls } = await modelLedgerOf(context.store, payload.agentId, ledgerMonth(ctx.now));
      return { type: 'SetModelBudget' as const, payload: { ...payload, ...(budget && calls.length > 0 ? { reservedIn: budget.currency } : {}) }, context: ctx };
    },
    locks,
  });
  const reserve = deciderHandler({
    store: context.store,
    decider: modelLedgerDecider,
    streamOf: (p: { agentId: string }, _verified, ctx) => modelLedgerStreamId(p.agentId, ledgerMonth(ctx.now)),
    // The agent's budget now: the month's reservations are decided against it.
    toCommand: async (verified, ctx) => ({ type: 'ReserveModelCall' as const, payload: { ...(verified.payload as PayloadOf<typeof ReserveModelCall>), budget: await modelBudgetOf(context.store, (verified.payload as { agentId: string }).agentId) }, context: ctx }),
    locks,
  });
  // An outcome goes to the ledger of the month its call was reserved in.
  const record = deciderHandler({
    store: context.store,
    decider: modelLedgerDecider,
    streamOf: async (p: { agentId: string; callId: string }, _verified, ctx) => (await findModelCall(context.store, p.agentId, p.callId, ctx.now))?.streamId ?? modelLedgerStreamId(p.agentId, ledgerMonth(ctx.now)),
    locks,
  });
  // Trust adjustments and resumes are the registry's own commands, signed with its service key.
  const identity = context.serviceIdentity('registry');
  const penalty = options.trustPenaltyProceeded ?? DEFAULT_TRUST_PENALTY_PROCEEDED;
  let service: ServiceMicroservice | undefined;
  // The reactors catch up in the process's shared pass over the log; the service answers once the
  // agent directory it reads (ListAgents) has caught up too.
  const running = await startAll([
    () =>
      startTogether([
        () => runReactor(context, { name: 'registry-trust', as: identity, categories: ['proposal'], react: trustReactions(penalty) }),
        () => runReactor(context, { name: 'registry-breaker', as: identity, categories: [DIALECTIC_SESSION_CATEGORY], react: resumeReactions(decider) }),
      ]),
    async () => {
      await context.registry.caughtUp;
      service = await createServiceMicroservice({
        service: 'registry',
        ...context.transport,
        metadata: settings.metadata,
        directory: context.directory,
        maxClockSkewMs: context.config.maxClockSkewMs,
        description: 'Agora registry: agent identities, public keys, roles, constitutions, trust, health and circuit breakers',
        commands: new Map([
          // What agents send on an agent's stream (AdjustTrust and ResumeAgent the registry issues itself): the agent decider's.
          ...onAgentCommands(
            commandsOf('registry').filter((c) => c.aggregate === 'agent'),
            decide,
          ),
          onCommand(SetModelBudget, setBudget),
          onCommand(ReserveModelCall, reserve),
          onCommand(RecordModelCallOutcome, record),
        ]),
        queries: new Map([
          onQuery(ListAgents, async ({ role, includeDisabled, limit, cursor }) => {
            const matching = [...context.registry.all()].filter((a) => (includeDisabled || a.status === 'active') && (role === undefined || a.roles.includes(role)));
            const { items, nextCursor } = pageOf(matching, { key: (a) => [a.agentId], directions: ['asc'] }, { limit, cursor }, agentView);
            return { agents: items, ...(nextCursor === undefined ? {} : { nextCursor }) };
          }),
          onQuery(GetAgent, async ({ agentId }) => {
            const agent = await context.registry.agent(agentId);
            if (!agent) throw new AgoraError('not_found', `no agent "${agentId}" is registered`, { agentId });
            return agentView(agent);
          }),
          onQuery(GetModelLedger, async ({ agentId, month: asked, limit, cursor }) => modelLedgerPage(await modelLedgerOf(context.store, agentId, asked ?? month()), { limit, cursor })),
          onQuery(GetModelCall, async ({ agentId, callId }) => {
            const found = await findModelCall(context.store, agentId, callId, new Date().toISOString());
            if (!found) throw new AgoraError('not_found', `${agentId} reserved no call ${callId} this month or the month before`, { agentId, callId });
            return modelCallView(agentId, found.call);
          }),
          onQuery(GetConfiguredKeys, async () => ({
            operators: context.config.operators.map(({ agentId, publicKey }) => ({ agentId, publicKey })),
            services: Object.fromEntries(Object.entries(context.serviceKeys()).map(([service, entries]) => [service, entries.map((e) => ({ ...e }))])),
          })),
        ]),
        ...(options.logger === undefined ? {} : { logger: options.logger }),
      });
      const started = service;
      return { lines: [`registry service ${started.id}: agora.cmd.registry.agent.*, agora.cmd.registry.model_calls.*, agora.qry.registry.*`, settings.line], close: () => started.close() };
    },
  ]);
  return { ...running, service: service! };
}
