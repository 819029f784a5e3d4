/**
 * The seed's stories, end to end: the worked example (risk 0.65 trips the breaker at 0.60; the
 * agent proposes raising its threshold, the reviewer 0.45, they converge on 0.48; both sign; the
 * agent resumes), its relapse, and the AGI cascade (several agents critical at once).
 */
import { eventByType, type RecoveryCandidate } from '@agora/contracts';
import type { Command } from '@agora/decider';
import { auditSession } from '../src/audit.js';
import { breakerDecision, DEFAULT_BREAKER_POLICY, evolveBreaker, initialBreaker, resumeDecision, resumePayloadOf, seedFrom, type Breaker, type BreakerEvent, type ResumeAgentPayload } from '@agora/domain-common';
import { deadlineOf, parseSessionDeadlineKey } from '../src/deadlines.js';
import { reviewerOutcomes, trackRecord } from '../src/history.js';
import { dialecticStreamId } from '../src/ids.js';
import type { DialecticEvent } from '../src/session.js';
import { AGENT, antithesis, at, c, candidate, ctx, HOUR, last, open, play, relapse, REVIEWER, sign, SID, stateOf, synthesis, T0, thesis, threshold, typesOf } from './fixtures.js';

describe('the worked example: circuit breaker to resumption', () => {
  it('pauses at 0.65, converges on a 0.48 threshold, is signed by both, resumes, and relapses at 0.50', () => {
    // 1. Circuit breaker: critical_agent reports risk 0.65; its threshold is 0.60.
    let breaker: Breaker = initialBreaker();
    const agent = () => ({ agentId: AGENT, status: 'active' as const, breaker, health: 1, risk: 0 });
    const apply = (events: BreakerEvent[]) => {
      for (const e of events) {
        eventByType(e.type)!.data.parse(e.data);
        breaker = evolveBreaker(breaker, e);
      }
      return events;
    };
    const tripped = apply(breakerDecision(agent(), { type: 'ReportHealth', context: ctx(AGENT, T0), payload: { agentId: AGENT, health: 0.5, risk: 0.65, tags: ['cascade'], metrics: { coherence: 0.45 } } }, DEFAULT_BREAKER_POLICY));
    const paused = tripped[1]!;
    expect(paused).toMatchObject({ type: 'AgentPaused', data: { pause: 1, sessionId: SID, threshold: 0.6, risk: 0.65 } });

    // 2. The dialectic service opens the recovery with a seed from the AgentPaused event's id.
    const seed = seedFrom('evt-agent-paused-1');
    let h = play([], open({ seed, reason: (paused.data as { reason: string }).reason }));
    expect(last(h, 'ReviewerSelected').data).toMatchObject({ reviewer: REVIEWER, selection: { seed } });

    // 3-5. Thesis (raise to 0.70), antithesis (0.45), synthesis: the agent offers 0.48, the reviewer agrees.
    h = play(h, thesis(at(60)), antithesis(at(120)));
    expect(stateOf(h).messages.map((m) => m.conditions?.find((x) => x.operation === 'set_risk_threshold')?.parameters['threshold'])).toEqual([0.7, 0.45]);
    h = play(h, synthesis(1, AGENT, at(150)), synthesis(2, REVIEWER, at(180), { reasoning: '0.48 with cascade detection is acceptable' }));
    const proposed = last(h, 'ResolutionProposed').data.resolution;
    expect(proposed).toEqual({
      sessionId: SID,
      agentId: AGENT,
      reviewer: REVIEWER,
      pause: 1,
      rootCause: 'External complexity spike',
      conditions: [c('enable_cascade_detection'), threshold(0.48)],
      decidedBy: 'dialectic',
      escalation: null,
      decider: null,
    });

    // 6. Both sign; the signatures are verified; the recovery is resolved within 5 minutes of the pause.
    h = play(h, sign(AGENT, proposed, at(200)), sign(REVIEWER, proposed, at(230)));
    expect(typesOf(h.slice(-3))).toEqual(['ResolutionSigned', 'ResolutionSigned', 'RecoveryResolved']);
    const resolvedEvent = { id: 'evt-resolved-1', streamId: dialecticStreamId(SID), ...last(h, 'RecoveryResolved') };
    expect(resolvedEvent.data).toMatchObject({ riskThreshold: 0.48, resolvedAt: at(230) });
    expect(auditSession(h).ok).toBe(true);

    // 7. The registry resumes the agent, whose own threshold is now 0.48.
    const resume: Command<'ResumeAgent', ResumeAgentPayload> = { type: 'ResumeAgent', context: ctx('service:registry', at(231), ['service']), payload: resumePayloadOf(resolvedEvent)! };
    apply(resumeDecision(agent(), resume, DEFAULT_BREAKER_POLICY));
    expect(breaker).toMatchObject({ state: 'closed', riskThreshold: 0.48 });

    // 8. Three hours later it reports 0.50: under the old 0.60, but at or above its 0.48 -- a relapse.
    const again = apply(breakerDecision(agent(), { type: 'ReportHealth', context: ctx(AGENT, at(3 * HOUR)), payload: { agentId: AGENT, health: 0.6, risk: 0.5, tags: [], metrics: {} } }, DEFAULT_BREAKER_POLICY));
    expect(again[1]).toMatchObject({ type: 'AgentPaused', data: { pause: 2, threshold: 0.48, previousResume: { pause: 1, sessionId: SID } } });
    h = play(h, relapse(2, at(3 * HOUR)));
    expect(last(h, 'RecoveryRelapsed').data).toMatchObject({ pause: 2, afterMs: (3 * HOUR - 230) * 1000 });
    expect(trackRecord(reviewerOutcomes([stateOf(h)], at(100 * HOUR)).filter((o) => o.reviewer === REVIEWER))).toEqual({ reviews: 1, successful: 0, score: 0 });
  });

  it('keeps every deadline in the log: a restarted scheduler finds the pending one and the command it fires', () => {
    const h = play([], open(), thesis(at(60)));
    const pending = new Map<string, string>();
    for (const e of h) {
      const change = deadlineOf({ ...e, streamId: dialecticStreamId(SID) });
      if (change && 'key' in change) pending.set(change.key, change.dueAt);
      else if (change) pending.delete(change.cancel);
    }
    expect([...pending]).toEqual([[`dialectic_session-${SID}:deadline`, at(60 + 2 * HOUR)]]);
    const [key, dueAt] = [...pending][0]!;
    expect(parseSessionDeadlineKey(key)).toEqual({ sessionId: SID });
    // ExpireDialecticPhase {sessionId, deadlineAt: dueAt} at dueAt: the silent reviewer is late.
    const expired = play(h, { type: 'ExpireDialecticPhase', context: ctx('dialectic', dueAt), payload: { sessionId: SID, deadlineAt: dueAt } });
    expect(last(expired, 'DialecticPhaseExpired').data.late).toEqual([REVIEWER]);
  });
});

describe('the AGI cascade: several agents critical at once', () => {
  it('never draws a paused agent: each recovery gets a healthy reviewer, or goes to an operator instead of locking up', () => {
    const fleet: RecoveryCandidate[] = [candidate('agent_1', { paused: true, risk: 0.7 }), candidate('agent_2', { paused: true, risk: 0.8 }), candidate('agent_3', { paused: true, risk: 0.66 }), candidate('calm')];
    for (const id of ['agent_1', 'agent_2', 'agent_3']) {
      const h = play([], open({ sessionId: `${id}-p1`, agentId: id, candidates: fleet }));
      expect((h[1] as Extract<DialecticEvent, { type: 'ReviewerSelected' }>).data.reviewer).toBe('calm');
    }
    const nobodyCalm = fleet.slice(0, 3);
    const h = play([], open({ sessionId: 'agent_1-p1', agentId: 'agent_1', candidates: nobodyCalm }));
    expect(typesOf(h)).toEqual(['RecoveryOpened', 'NoCandidateEligible', 'RecoveryEscalated']);
    expect(stateOf(h)).toMatchObject({ status: 'awaiting_operator' });
  });
});
