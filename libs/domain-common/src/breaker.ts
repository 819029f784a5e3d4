/**
 * The circuit breaker (seed 001, "Integration with actual circuit breaker triggers"), as pure rules
 * for the registry's agent decider to call (the dialectic recovers from what it trips, and reads
 * whether an agent is paused): the registry owns health and risk, so the breaker lives
 * in the `agent-<agentId>` stream, a `breaker` slice of the agent's state.
 *
 *   ReportHealth ─> AgentHealthReported, and when the breaker is closed and the risk is at or above
 *                   the agent's threshold (its own, set by a resolution, else the policy's 0.60):
 *                   AgentPaused in the same decision, naming the recovery session `<agentId>-p<n>`
 *   ResumeAgent (internal: the registry's answer to RecoveryResolved) ─> AgentResumed, with the
 *                   threshold the resolution set (set_risk_threshold), which then is the agent's own
 *
 * While the breaker is open the agent's commands to other services are refused with `forbidden`,
 * except those it needs to recover (`mayIssueWhilePaused`).
 */
import {
  BreakerPolicy,
  commands,
  ENFORCED_OPERATIONS,
  PROBATION,
  RATE_LIMIT,
  type AgentResumed,
  type BreakerPolicyInput,
  type BreakerView,
  type Condition,
  type dialecticContracts,
  type DataOf,
  type EnforcedConditions,
  type PayloadOf,
  type RecoveryResolved,
  type ReportHealth,
} from '@agora/contracts';
import { DomainError, round6, type Command, type CommandContext, type EventsOf } from '@agora/decider';

export type { BreakerPolicy, BreakerPolicyInput } from '@agora/contracts';

/** The recovery session of an agent's pause: `<agentId>-p<pause>` (one session per pause), named by the AgentPaused that opens it. */
export const recoverySessionId = (agentId: string, pause: number): string => `${agentId}-p${pause}`;

/** The circuit breaker's policy: trips at a risk of 0.60 unless configured (or a resolution set the agent its own threshold). */
export function defineBreakerPolicy(input: BreakerPolicyInput = {}): BreakerPolicy {
  const result = BreakerPolicy.safeParse(input);
  if (result.success) return result.data;
  throw new TypeError(`invalid breaker policy: ${result.error.issues.map((i) => `${i.path.map(String).join('.') || '(policy)'}: ${i.message}`).join('; ')}`);
}

export const DEFAULT_BREAKER_POLICY: BreakerPolicy = defineBreakerPolicy();

/** The breaker's events on an agent's stream, from the dialectic contracts (category `agent`). */
export type BreakerEvent = EventsOf<Extract<(typeof dialecticContracts.events)[number], { category: 'agent' }>>;

/** The breaker slice of an agent's state (the BreakerView contract). */
export type Breaker = BreakerView;

export const initialBreaker = (): Breaker => ({ state: 'closed', pauses: 0, riskThreshold: null, sessionId: null, pausedAt: null, lastResume: null, lastReportAt: null, enforced: null });

/** The internal command the registry issues in answer to RecoveryResolved (like AdjustTrust: never sent by an agent). */
export interface ResumeAgentPayload {
  agentId: string;
  pause: number;
  sessionId: string;
  decidedBy: DataOf<typeof AgentResumed>['decidedBy'];
  conditions: DataOf<typeof AgentResumed>['conditions'];
  /** The threshold the resolution sets; null leaves the agent's as it is. */
  riskThreshold: number | null;
  cause: DataOf<typeof AgentResumed>['cause'];
}

export type BreakerCommand = Command<'ReportHealth', PayloadOf<typeof ReportHealth>> | Command<'ResumeAgent', ResumeAgentPayload>;

/** What the breaker rules read of the agent. */
export interface BreakerSubject {
  agentId: string;
  status: 'active' | 'disabled';
  breaker: Breaker;
  /** As of the last recorded report (the registration's values before any). */
  health: number;
  risk: number;
  /** Tags of the last recorded report (none before any). */
  reportTags?: readonly string[];
}

/** The threshold in force for an agent: its own (set by a resolution), else the policy's. */
export const effectiveThreshold = (breaker: Breaker, policy: BreakerPolicy): number => breaker.riskThreshold ?? policy.riskThreshold;

export const isPaused = (breaker: Breaker): boolean => breaker.state === 'open';

/**
 * Commands a paused agent may still send (their definitions say `whilePaused`): its own health
 * reports, its part in its recovery, and the ledger of its own model calls (an agent played by a
 * model writes its thesis and syntheses with one: the reservation against its budget and the
 * outcome are the record of that call).
 */
export const ALLOWED_WHILE_PAUSED: ReadonlySet<string> = new Set(commands.filter((c) => c.whilePaused).map((c) => c.type));

/**
 * For the command gate: whether an agent whose breaker is open may send this command. Anything
 * else is refused with `forbidden` ("agent X is paused by its circuit breaker (session S)").
 */
export const mayIssueWhilePaused = (commandType: string): boolean => ALLOWED_WHILE_PAUSED.has(commandType);

/** The refusal the gate answers a paused agent with. */
export function pausedRefusal(agentId: string, breaker: Breaker, commandType: string): DomainError {
  return new DomainError('forbidden', `${agentId} is paused by its circuit breaker since ${breaker.pausedAt ?? '?'} (recovery session ${breaker.sessionId ?? '?'}): ${commandType} is refused until it resumes`, {
    agentId,
    sessionId: breaker.sessionId,
    commandType,
  });
}

/** How a breaker event changes the breaker. */
export function evolveBreaker(breaker: Breaker, e: BreakerEvent): Breaker {
  switch (e.type) {
    case 'AgentHealthReported':
      return { ...breaker, lastReportAt: e.data.reportedAt };
    case 'AgentPaused':
      return { ...breaker, state: 'open', pauses: e.data.pause, sessionId: e.data.sessionId, pausedAt: e.data.pausedAt };
    case 'AgentResumed': {
      const d = e.data;
      const enforced = d.enforced && (d.enforced.rateLimitPerMinute !== null || d.enforced.probation !== null) ? d.enforced : null;
      return { ...breaker, state: 'closed', riskThreshold: d.riskThreshold, sessionId: null, pausedAt: null, lastResume: { pause: d.pause, sessionId: d.sessionId, resumedAt: d.resumedAt }, enforced };
    }
  }
}

function requireReporter(agentId: string, context: Pick<CommandContext, 'actor' | 'actorRoles'>): void {
  if (context.actor === agentId || context.actorRoles.includes('operator')) return;
  throw new DomainError('forbidden', `${context.actor} may not report the health of ${agentId}: only the agent itself or an operator (a monitor) may`, { agentId, actor: context.actor });
}

/**
 * Whether the log keeps a report that trips nothing. Agents report often (10,000 agents every 5 s
 * is 2,000 reports a second) and most reports repeat the last one, so the log keeps transitions
 * and periodic samples: a report is recorded when it is the agent's first, when the breaker is
 * open (the recovery reads what a paused agent reports) or the agent is on probation (its
 * condition counts recorded reports), when its health or risk moved by `reportMinChange` or more
 * from the last recorded report, when its tags changed or it carries a note, and when the last
 * recorded report is `reportSampleMs` old. A report that trips the breaker is always recorded, with
 * the pause, in the same decision, so every breaker decision is in the log with its cause. A
 * report not recorded changes nothing and writes nothing: the command is answered with no events.
 */
function worthRecording(agent: BreakerSubject, report: PayloadOf<typeof ReportHealth>, tags: readonly string[], now: string, policy: BreakerPolicy): boolean {
  const { breaker } = agent;
  if (policy.reportMinChange === 0 || policy.reportSampleMs === 0) return true;
  if (breaker.lastReportAt === null || breaker.state === 'open' || onProbation(breaker, now)) return true;
  if (report.note !== undefined && report.note !== null) return true;
  if (Math.abs(report.health - agent.health) >= policy.reportMinChange || Math.abs(report.risk - agent.risk) >= policy.reportMinChange) return true;
  const last = agent.reportTags ?? [];
  if (tags.length !== last.length || tags.some((t) => !last.includes(t))) return true;
  return Date.parse(now) - Date.parse(breaker.lastReportAt) >= policy.reportSampleMs;
}

/**
 * ReportHealth: when the breaker is closed and the risk is at or above the threshold in force,
 * trips it (AgentHealthReported and AgentPaused in the same decision); otherwise records the
 * report if the log keeps it (`worthRecording`). An open breaker only records the report: it
 * closes only through a recovery. Refuses a reporter that is neither the agent nor an operator,
 * and a disabled agent.
 */
export function breakerDecision(agent: BreakerSubject, command: Command<'ReportHealth', PayloadOf<typeof ReportHealth>>, policy: BreakerPolicy): BreakerEvent[] {
  const { payload: p, context } = command;
  requireReporter(p.agentId, context);
  if (agent.status === 'disabled') throw new DomainError('illegal_state', `agent ${p.agentId} is disabled`, { agentId: p.agentId });
  const tags = [...new Set(p.tags)];
  const events: BreakerEvent[] = [
    { type: 'AgentHealthReported', data: { agentId: p.agentId, health: p.health, risk: p.risk, tags, metrics: p.metrics, note: p.note ?? null, reportedBy: context.actor, reportedAt: context.now } },
  ];
  const probation = onProbation(agent.breaker, context.now);
  // On probation (a resolution's condition), the breaker is stricter: it trips `riskMargin` below the threshold in force.
  const threshold = probation ? Math.max(0, round6(effectiveThreshold(agent.breaker, policy) - probation.riskMargin)) : effectiveThreshold(agent.breaker, policy);
  const trips = agent.breaker.state === 'closed' && p.risk >= threshold;
  if (!trips && !worthRecording(agent, p, tags, context.now, policy)) return [];
  if (trips) {
    const pause = agent.breaker.pauses + 1;
    events.push({
      type: 'AgentPaused',
      data: {
        agentId: p.agentId,
        pause,
        sessionId: recoverySessionId(p.agentId, pause),
        risk: p.risk,
        health: p.health,
        threshold,
        tags,
        reason: `risk ${p.risk} reached the threshold ${threshold}${probation ? ` (on probation until ${probation.until})` : ''}`,
        previousResume: agent.breaker.lastResume,
        pausedAt: context.now,
      },
    });
  }
  return events;
}

/**
 * ResumeAgent: closes the breaker of the pause the resolution recovered, with the threshold it sets
 * (or the agent's current one). The same resume again changes nothing; a resume for another pause,
 * or of an agent that is not paused, is refused.
 */
export function resumeDecision(agent: BreakerSubject, command: Command<'ResumeAgent', ResumeAgentPayload>, policy: BreakerPolicy): BreakerEvent[] {
  const { payload: p, context } = command;
  if (!context.actorRoles.includes('service')) {
    throw new DomainError('forbidden', `${context.actor} may not resume ${p.agentId}: only the registry service does, in answer to the recovery's resolution`, { actor: context.actor, agentId: p.agentId });
  }
  const b = agent.breaker;
  if (b.lastResume?.pause === p.pause && b.lastResume.sessionId === p.sessionId) return [];
  if (b.state !== 'open' || b.pauses !== p.pause || b.sessionId !== p.sessionId) {
    throw new DomainError('illegal_state', `agent ${p.agentId} is not paused by pause ${p.pause} (session ${p.sessionId}): its breaker is ${b.state}${b.state === 'open' ? ` for session ${b.sessionId}` : ''}`, {
      agentId: p.agentId,
      pause: p.pause,
      sessionId: p.sessionId,
      breaker: b.state,
    });
  }
  return [
    {
      type: 'AgentResumed',
      data: {
        agentId: p.agentId,
        pause: p.pause,
        sessionId: p.sessionId,
        decidedBy: p.decidedBy,
        conditions: p.conditions,
        riskThreshold: p.riskThreshold ?? b.riskThreshold,
        cause: p.cause,
        resumedAt: context.now,
        enforced: enforcedConditions(p.conditions, context.now, policy),
        obligations: p.conditions.filter((c) => !ENFORCED_OPERATIONS.includes(c.operation)),
      },
    },
  ];
}

/**
 * What Agora enforces of a resume's conditions (the last of each operation wins):
 * - `rate_limit {max_actions_per_minute}`: every service's command gate refuses the agent's
 *   commands beyond that many per minute (rate_limited), health reports excepted;
 * - `probation {hours}`: until `resumedAt + hours`, the breaker trips `probationRiskMargin` below
 *   the threshold in force, and the gates refuse anything but ReportHealth from an agent whose
 *   last health report is older than `probationReportIntervalMs`;
 * (`set_risk_threshold` is the breaker's own threshold, recorded as `riskThreshold`).
 */
export function enforcedConditions(conditions: readonly Condition[], resumedAt: string, policy: BreakerPolicy): EnforcedConditions {
  let rateLimitPerMinute: number | null = null;
  let hours: number | null = null;
  for (const c of conditions) {
    const limit = c.parameters['max_actions_per_minute'];
    if (c.operation === RATE_LIMIT && typeof limit === 'number') rateLimitPerMinute = Math.max(1, Math.floor(limit));
    const h = c.parameters['hours'];
    if (c.operation === PROBATION && typeof h === 'number') hours = h;
  }
  const probation =
    hours === null
      ? null
      : { since: resumedAt, until: new Date(Date.parse(resumedAt) + hours * 3_600_000).toISOString(), riskMargin: policy.probationRiskMargin, reportEveryMs: policy.probationReportIntervalMs };
  return { rateLimitPerMinute, probation };
}

/** The probation in force at `now`, if any. */
export function onProbation(breaker: Breaker, now: string): NonNullable<EnforcedConditions['probation']> | null {
  const probation = breaker.enforced?.probation ?? null;
  return probation !== null && Date.parse(now) < Date.parse(probation.until) ? probation : null;
}

/** The part of a stored event resumePayloadOf reads (a RecordedEvent fits). */
export interface CausingEvent {
  id: string;
  streamId: string;
  type: string;
  data: unknown;
}

/** The registry's reaction to RecoveryResolved: the ResumeAgent payload (undefined for any other event). */
export function resumePayloadOf(e: CausingEvent): ResumeAgentPayload | undefined {
  if (e.type !== 'RecoveryResolved') return undefined;
  const d = e.data as DataOf<typeof RecoveryResolved>;
  return {
    agentId: d.agentId,
    pause: d.pause,
    sessionId: d.sessionId,
    decidedBy: d.resolution.decidedBy,
    conditions: d.resolution.conditions,
    riskThreshold: d.riskThreshold,
    cause: { eventId: e.id, streamId: e.streamId, type: e.type },
  };
}
