import { eventByType } from '@agora/contracts';
import type { Condition } from '@agora/contracts';
import type { Command, CommandContext } from '@agora/decider';
import {
  breakerDecision,
  evolveBreaker,
  initialBreaker,
  mayIssueWhilePaused,
  pausedRefusal,
  resumeDecision,
  resumePayloadOf,
  type Breaker,
  type BreakerCommand,
  type BreakerEvent,
  type BreakerSubject,
  type ResumeAgentPayload,
  DEFAULT_BREAKER_POLICY,
  defineBreakerPolicy,
} from '../src/breaker.js';

const T0 = '2026-11-25T10:00:00.000Z';
const at = (seconds: number): string => new Date(Date.parse(T0) + seconds * 1000).toISOString();
const AGENT = 'critical_agent';
let commandCounter = 0;
const ctx = (actor: string, now = T0, actorRoles: readonly string[] = actor === AGENT ? ['executive'] : []): CommandContext => ({ actor, now, actorRoles, commandId: `c${++commandCounter}` });
const threshold = (value: number): Condition => ({ operation: 'set_risk_threshold', parameters: { threshold: value } });

const policy = defineBreakerPolicy();
const report = (risk: number, now = T0, actor: string = AGENT, actorRoles?: string[]): Extract<BreakerCommand, { type: 'ReportHealth' }> => ({
  type: 'ReportHealth',
  context: ctx(actor, now, actorRoles),
  payload: { agentId: AGENT, health: 1 - risk, risk, tags: ['cascade'], metrics: { coherence: 0.45 } },
});
const subject = (breaker: Breaker = initialBreaker(), status: 'active' | 'disabled' = 'active'): BreakerSubject => ({ agentId: AGENT, status, breaker, health: 1, risk: 0 });
const fold = (events: readonly BreakerEvent[]): Breaker => events.reduce(evolveBreaker, initialBreaker());
const conforms = (e: BreakerEvent) => {
  expect(eventByType(e.type)?.category).toBe('agent');
  eventByType(e.type)!.data.parse(e.data);
};
const resume = (payload: Partial<ResumeAgentPayload> = {}, now = at(300)): Command<'ResumeAgent', ResumeAgentPayload> => ({
  type: 'ResumeAgent',
  context: ctx('service:registry', now, ['service']),
  payload: { agentId: AGENT, pause: 1, sessionId: `${AGENT}-p1`, decidedBy: 'dialectic', conditions: [threshold(0.48)], riskThreshold: 0.48, cause: { eventId: 'e-1', streamId: `dialectic_session-${AGENT}-p1`, type: 'RecoveryResolved' }, ...payload },
});

describe('ReportHealth: the circuit breaker', () => {
  it('records a report under the threshold, and nothing more', () => {
    const events = breakerDecision(subject(), report(0.3), policy);
    expect(events).toEqual([
      { type: 'AgentHealthReported', data: { agentId: AGENT, health: 0.7, risk: 0.3, tags: ['cascade'], metrics: { coherence: 0.45 }, note: null, reportedBy: AGENT, reportedAt: T0 } },
    ]);
    events.forEach(conforms);
  });

  it('trips at the threshold (risk 0.65 against 0.60, the seed): AgentPaused in the same decision, naming the recovery session', () => {
    const events = breakerDecision(subject(), report(0.65), policy);
    expect(events.map((e) => e.type)).toEqual(['AgentHealthReported', 'AgentPaused']);
    expect(events[1]).toEqual({
      type: 'AgentPaused',
      data: { agentId: AGENT, pause: 1, sessionId: `${AGENT}-p1`, risk: 0.65, health: 0.35, threshold: 0.6, tags: ['cascade'], reason: 'risk 0.65 reached the threshold 0.6', previousResume: null, pausedAt: T0 },
    });
    events.forEach(conforms);
    expect(breakerDecision(subject(), report(0.6), policy).map((e) => e.type)).toEqual(['AgentHealthReported', 'AgentPaused']);
  });

  it('does not pause a paused agent again', () => {
    const open = fold(breakerDecision(subject(), report(0.65), policy));
    expect(open).toMatchObject({ state: 'open', pauses: 1, sessionId: `${AGENT}-p1`, pausedAt: T0 });
    expect(breakerDecision(subject(open), report(0.9, at(60)), policy).map((e) => e.type)).toEqual(['AgentHealthReported']);
  });

  it('lets a monitor with the operator role report for the agent, nobody else', () => {
    expect(breakerDecision(subject(), report(0.2, T0, 'monitor', ['operator']), policy)[0]).toMatchObject({ data: { reportedBy: 'monitor' } });
    expect(() => breakerDecision(subject(), report(0.9, T0, 'mallory', ['observer']), policy)).toThrow(/mallory may not report the health of critical_agent/);
    expect(() => breakerDecision(subject(initialBreaker(), 'disabled'), report(0.2), policy)).toThrow(/is disabled/);
  });

  it("trips at the agent's own threshold once a resolution set one, and names the previous resume", () => {
    const paused = breakerDecision(subject(), report(0.65), policy);
    const resumed = [...paused, ...resumeDecision(subject(fold(paused)), resume(), policy)];
    const b = fold(resumed);
    expect(b).toMatchObject({ state: 'closed', riskThreshold: 0.48, lastResume: { pause: 1, sessionId: `${AGENT}-p1`, resumedAt: at(300) } });
    const again = breakerDecision(subject(b), report(0.5, at(3600)), policy);
    expect(again[1]).toMatchObject({ type: 'AgentPaused', data: { pause: 2, sessionId: `${AGENT}-p2`, threshold: 0.48, previousResume: { pause: 1, resumedAt: at(300) } } });
  });
});

describe('ResumeAgent', () => {
  const paused = () => fold(breakerDecision(subject(), report(0.65), policy));

  it("closes the breaker of the pause the resolution recovered, with the resolution's threshold", () => {
    const events = resumeDecision(subject(paused()), resume(), policy);
    expect(events).toEqual([
      {
        type: 'AgentResumed',
        data: { agentId: AGENT, pause: 1, sessionId: `${AGENT}-p1`, decidedBy: 'dialectic', conditions: [threshold(0.48)], riskThreshold: 0.48, cause: resume().payload.cause, resumedAt: at(300), enforced: { rateLimitPerMinute: null, probation: null }, obligations: [] },
      },
    ]);
    events.forEach(conforms);
  });

  it("keeps the agent's threshold when the resolution sets none", () => {
    expect(resumeDecision(subject(paused()), resume({ riskThreshold: null, conditions: [] }), policy)[0]).toMatchObject({ data: { riskThreshold: null } });
  });

  it('changes nothing the second time, and refuses another pause or an agent not paused', () => {
    const b = fold([...breakerDecision(subject(), report(0.65), policy), ...resumeDecision(subject(paused()), resume(), policy)]);
    expect(resumeDecision(subject(b), resume(), policy)).toEqual([]);
    expect(() => resumeDecision(subject(paused()), resume({ pause: 2, sessionId: `${AGENT}-p2` }), policy)).toThrow(/is not paused by pause 2/);
    expect(() => resumeDecision(subject(), resume(), policy)).toThrow(/its breaker is closed/);
  });

  it('is derived from RecoveryResolved, naming it as the cause', () => {
    const data = { sessionId: `${AGENT}-p1`, agentId: AGENT, pause: 1, resolution: { decidedBy: 'quorum', conditions: [threshold(0.45)] }, riskThreshold: 0.45 };
    expect(resumePayloadOf({ id: 'e-9', streamId: `dialectic_session-${AGENT}-p1`, type: 'RecoveryResolved', data })).toEqual({
      agentId: AGENT,
      pause: 1,
      sessionId: `${AGENT}-p1`,
      decidedBy: 'quorum',
      conditions: [threshold(0.45)],
      riskThreshold: 0.45,
      cause: { eventId: 'e-9', streamId: `dialectic_session-${AGENT}-p1`, type: 'RecoveryResolved' },
    });
    expect(resumePayloadOf({ id: 'e-1', streamId: 's', type: 'RecoveryOpened', data })).toBeUndefined();
  });
});

describe('a paused agent', () => {
  it('may only report its health and take its part in its recovery', () => {
    for (const type of ['ReportHealth', 'SubmitThesis', 'SubmitSynthesis', 'SignResolution', 'EscalateRecovery', 'ReserveModelCall', 'RecordModelCallOutcome']) expect(mayIssueWhilePaused(type)).toBe(true);
    for (const type of ['SubmitProposal', 'CastValidatorVote', 'SubmitReview', 'SubmitAntithesis', 'CreateVotingSession']) expect(mayIssueWhilePaused(type)).toBe(false);
    const b = fold(breakerDecision(subject(), report(0.65), policy));
    expect(pausedRefusal(AGENT, b, 'SubmitProposal')).toMatchObject({ code: 'forbidden', message: `${AGENT} is paused by its circuit breaker since ${T0} (recovery session ${AGENT}-p1): SubmitProposal is refused until it resumes` });
  });
});

describe("a resumed agent's conditions", () => {
  const paused = () => fold(breakerDecision(subject(), report(0.65), policy));
  const rate = (n: number) => ({ operation: 'rate_limit', parameters: { max_actions_per_minute: n } });
  const probation = (hours: number) => ({ operation: 'probation', parameters: { hours } });
  const monitoring = { operation: 'enable_monitoring', parameters: { target: 'tool calls' } };

  it('records what Agora enforces (rate_limit, probation) and announces the rest as obligations', () => {
    const [event] = resumeDecision(subject(paused()), resume({ conditions: [threshold(0.48), rate(30), probation(24), monitoring] }), policy);
    expect(event).toMatchObject({
      type: 'AgentResumed',
      data: {
        enforced: { rateLimitPerMinute: 30, probation: { since: at(300), until: new Date(Date.parse(at(300)) + 24 * 3_600_000).toISOString(), riskMargin: 0.1, reportEveryMs: 3_600_000 } },
        obligations: [monitoring],
      },
    });
    conforms(event!);
    expect(fold([...breakerDecision(subject(), report(0.65), policy), event!])).toMatchObject({ state: 'closed', riskThreshold: 0.48, enforced: { rateLimitPerMinute: 30 } });
  });

  it('on probation, the breaker trips the margin below the threshold in force, and no longer once it ends', () => {
    const b = fold([...breakerDecision(subject(), report(0.65), policy), ...resumeDecision(subject(paused()), resume({ conditions: [threshold(0.48), probation(2)] }), policy)]);
    // 0.40 is under 0.48, but at 0.48 - 0.10 = 0.38 on probation.
    expect(breakerDecision(subject(b), report(0.4, at(300 + 3600)), policy)[1]).toMatchObject({ type: 'AgentPaused', data: { threshold: 0.38, reason: expect.stringMatching(/on probation until/) } });
    expect(breakerDecision(subject(b), report(0.4, at(300 + 3 * 3600)), policy).map((e) => e.type)).toEqual(['AgentHealthReported']);
  });

  it('without rate_limit or probation, nothing is enforced beyond the threshold', () => {
    const b = fold([...breakerDecision(subject(), report(0.65), policy), ...resumeDecision(subject(paused()), resume({ conditions: [threshold(0.48), monitoring] }), policy)]);
    expect(b.enforced).toBeNull();
  });
});

describe('what the log keeps of reports that trip nothing (transitions and periodic samples)', () => {
  // The agent as of its last recorded report: risk 0.20, tags ['cascade'], recorded at T0.
  const recorded = fold(breakerDecision(subject(), report(0.2), policy));
  const agent = (breaker: Breaker = recorded): BreakerSubject => ({ agentId: AGENT, status: 'active', breaker, health: 0.8, risk: 0.2, reportTags: ['cascade'] });
  const types = (events: readonly BreakerEvent[]) => events.map((e) => e.type);
  const paused = () => fold(breakerDecision(subject(), report(0.65), policy));
  const probation = (hours: number) => ({ operation: 'probation', parameters: { hours } });

  it('records the first report, then drops one that repeats the last recorded within the change and the sample interval', () => {
    expect(types(breakerDecision(subject(), report(0.2), policy))).toEqual(['AgentHealthReported']);
    expect(breakerDecision(agent(), report(0.21, at(5)), policy)).toEqual([]);
    expect(breakerDecision(agent(), report(0.24, at(59)), policy)).toEqual([]);
  });

  it('records a move of health or risk by the minimum change, other tags, a note, and a sample once the last recorded is old enough', () => {
    expect(types(breakerDecision(agent(), report(0.25, at(5)), policy))).toEqual(['AgentHealthReported']);
    expect(types(breakerDecision(agent(), report(0.15, at(5)), policy))).toEqual(['AgentHealthReported']);
    expect(types(breakerDecision(agent(), { ...report(0.2, at(5)), payload: { ...report(0.2).payload, tags: ['drift'] } }, policy))).toEqual(['AgentHealthReported']);
    expect(types(breakerDecision(agent(), { ...report(0.2, at(5)), payload: { ...report(0.2).payload, note: 'rolled back a deploy' } }, policy))).toEqual(['AgentHealthReported']);
    expect(types(breakerDecision(agent(), report(0.2, at(60)), policy))).toEqual(['AgentHealthReported']);
  });

  it('always records the report that trips the breaker, however small the move, with the pause', () => {
    const near: BreakerSubject = { ...agent(), risk: 0.58, health: 0.42 };
    expect(types(breakerDecision(near, report(0.6, at(5)), policy))).toEqual(['AgentHealthReported', 'AgentPaused']);
  });

  it('records every report of a paused agent and of one on probation', () => {
    const open = fold([...breakerDecision(subject(), report(0.65), policy)]);
    expect(types(breakerDecision({ ...agent(open), risk: 0.65, health: 0.35 }, report(0.65, at(5)), policy))).toEqual(['AgentHealthReported']);
    const onProbation = fold([...breakerDecision(subject(), report(0.65), policy), ...resumeDecision(subject(paused()), resume({ conditions: [threshold(0.48), probation(2)] }), policy), ...breakerDecision(subject(), report(0.2, at(310)), policy)]);
    expect(types(breakerDecision(agent(onProbation), report(0.2, at(320)), policy))).toEqual(['AgentHealthReported']);
  });

  it('records every report when sampling is off (reportMinChange or reportSampleMs 0)', () => {
    expect(types(breakerDecision(agent(), report(0.2, at(5)), defineBreakerPolicy({ reportMinChange: 0 })))).toEqual(['AgentHealthReported']);
    expect(types(breakerDecision(agent(), report(0.2, at(5)), defineBreakerPolicy({ reportSampleMs: 0 })))).toEqual(['AgentHealthReported']);
  });
});

describe('breaker policy', () => {
  it('trips at 0.60 by default, or at the configured threshold', () => {
    expect(DEFAULT_BREAKER_POLICY).toEqual({ riskThreshold: 0.6, probationRiskMargin: 0.1, probationReportIntervalMs: 3_600_000, reportMinChange: 0.05, reportSampleMs: 60_000 });
    expect(defineBreakerPolicy({ riskThreshold: 0.5 }).riskThreshold).toBe(0.5);
    expect(() => defineBreakerPolicy({ riskThreshold: 1.2 })).toThrow(/invalid breaker policy: riskThreshold/);
  });
});
