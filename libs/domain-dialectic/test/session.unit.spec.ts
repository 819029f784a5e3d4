import { defineDialecticPolicy } from '../src/policy.js';
import { drawOf } from '@agora/domain-common';
import { resolutionPayload } from '../src/resolution.js';
import type { DialecticEvent } from '../src/session.js';
import {
  AGENT,
  antithesis,
  assignTieBreaker,
  at,
  c,
  candidate,
  candidates,
  converging,
  ctx,
  deadlocked,
  decideRecovery,
  escalate,
  example,
  expire,
  HOUR,
  inSynthesis,
  keysOf,
  last,
  MIN,
  open,
  opened,
  play,
  policy,
  proposedPayload,
  quorumResult,
  relapse,
  REVIEWER,
  SEED,
  sign,
  SID,
  spec,
  stateOf,
  synthesis,
  T0,
  thesis,
  threshold,
  tieBreak,
  typesOf,
  withRules,
} from './fixtures.js';

const recoveryOpened: DialecticEvent = {
  type: 'RecoveryOpened',
  data: {
    sessionId: SID,
    agentId: AGENT,
    pause: 1,
    reason: example.reason,
    trigger: { risk: 0.65, health: 0.5, threshold: 0.6 },
    tags: ['cascade'],
    rules: policy,
    seed: SEED,
    pausedAt: T0,
    openedAt: T0,
    sessionDeadlineAt: at(6 * HOUR),
  },
};

const resolution = (over: Partial<Parameters<typeof resolutionPayload>[0]> = {}) =>
  resolutionPayload({ sessionId: SID, agentId: AGENT, reviewer: REVIEWER, pause: 1, rootCause: 'External complexity spike', conditions: example.synthesis.proposedConditions, decidedBy: 'dialectic', ...over });

/** Every phase used almost all its time: round 4 (the reviewer's) would be due at 6 h 10, the session limit is 6 h. */
const nearTheLimit = () =>
  play(
    opened(),
    thesis(at(50 * MIN)),
    antithesis(at(160 * MIN)),
    synthesis(1, AGENT, at(210 * MIN), { agrees: false }),
    synthesis(2, REVIEWER, at(260 * MIN), { agrees: false }),
    synthesis(3, AGENT, at(310 * MIN), { agrees: false }),
  );

describe('OpenRecovery', () => {
  it('records the request with its rules and draws the reviewer from the healthy pool, recording the seed, the draw and every exclusion', () => {
    spec([])
      .when(open())
      .then([
        recoveryOpened,
        {
          type: 'ReviewerSelected',
          data: {
            sessionId: SID,
            reviewer: REVIEWER,
            selection: {
              seed: SEED,
              draw: drawOf(SEED, 'reviewer'),
              candidates: 7,
              pool: [{ agentId: REVIEWER, health: 1, trackRecord: 0.9, expertise: 1, freshness: 1, authority: 0.97 }],
              excluded: [
                { agentId: 'colluder', reason: 'collusion_flagged' },
                { agentId: AGENT, reason: 'self' },
                { agentId: 'old_friend', reason: 'recently_reviewed' },
                { agentId: 'paused_peer', reason: 'paused' },
                { agentId: 'retired', reason: 'inactive' },
                { agentId: 'shaky', reason: 'unhealthy' },
              ],
            },
            selectedAt: T0,
            deadlineAt: at(HOUR),
          },
        },
      ]);
  });

  it('never re-selects: the same pause again changes nothing, whatever the registry says now', () => {
    spec(opened()).when(open({ candidates: [candidate('sage')] })).thenNothing();
    expect(stateOf(opened()).reviewer).toBe(REVIEWER);
  });

  it('escalates straight to an operator when nobody is eligible: no positions for a tie-breaker or a quorum', () => {
    spec([])
      .when(open({ candidates: candidates.filter((x) => x.agentId !== REVIEWER) }))
      .thenEvents((events) => {
        expect(typesOf(events)).toEqual(['RecoveryOpened', 'NoCandidateEligible', 'RecoveryEscalated']);
        expect(events[2]).toMatchObject({ data: { escalation: 1, tier: 'operator', reason: 'no_reviewer', deadlineAt: null } });
      });
  });

  it('refuses a session id other than <agentId>-p<pause>, a pause already opened, and any actor but the dialectic service (an operator included)', () => {
    spec([]).when(open({ sessionId: 'whatever' })).thenRefuses('invalid_command', /the recovery session of pause 1 of critical_agent is critical_agent-p1, not whatever/);
    spec(opened()).when(open({ agentId: 'someone_else', sessionId: 'someone_else-p1' })).thenRefuses('illegal_state', /already exists/);
    spec([]).when(open({}, ctx(AGENT))).thenRefuses('forbidden', /needs the role service/);
    spec([]).when(open({}, ctx('root'))).thenRefuses('forbidden', /root may not open a recovery session: that needs the role service/);
  });
});

describe('SubmitThesis', () => {
  it("records the paused agent's thesis and gives the reviewer 2 h for the antithesis", () => {
    spec(opened())
      .when(thesis(at(60)))
      .then([
        {
          type: 'ThesisSubmitted',
          data: { sessionId: SID, author: AGENT, rootCause: example.thesis.rootCause, conditions: example.thesis.proposedConditions, reasoning: example.thesis.reasoning, violations: [], submittedAt: at(60), deadlineAt: at(60 + 2 * HOUR) },
        },
      ]);
  });

  it('records (does not refuse) the hard limits the proposed conditions would break', () => {
    spec(opened())
      .when(thesis(at(60), { proposedConditions: [c('disable_governance')] }))
      .thenEvents(([e]) => expect(e).toMatchObject({ data: { violations: [{ index: 0, operation: 'disable_governance', rule: 'forbidden_operation' }] } }));
  });

  it('refuses a thesis from anyone but the paused agent, the reviewer included', () => {
    spec(opened()).when(thesis(at(60), {}, REVIEWER)).thenRefuses('forbidden', /only the paused agent critical_agent submits the thesis of session critical_agent-p1; reviewer_b is not it/);
    spec(opened()).when(thesis(at(60), {}, 'mallory')).thenRefuses('forbidden', /only the paused agent/);
  });

  it('treats the same thesis again as done, and refuses a second, different one', () => {
    const h = play(opened(), thesis());
    spec(h).when(thesis()).thenNothing();
    spec(h).when(thesis(at(70), { reasoning: 'on second thought' })).thenRefuses('illegal_state', /already submitted the thesis/);
  });

  it('refuses after the thesis deadline, and on an unknown session', () => {
    spec(opened()).when(thesis(at(HOUR))).thenRefuses('illegal_state', /the deadline of session critical_agent-p1 passed at 2026-11-25T11:00:00.000Z/);
    spec([]).when(thesis()).thenRefuses('not_found', /recovery session critical_agent-p1 does not exist/);
  });
});

describe('SubmitAntithesis', () => {
  it("records the reviewer's observed metrics, concerns, reasoning and counter-proposal; synthesis round 1 is due in 1 h", () => {
    const h = play(opened(), thesis());
    spec(h)
      .when(antithesis(at(120)))
      .then([
        {
          type: 'AntithesisSubmitted',
          data: {
            sessionId: SID,
            author: REVIEWER,
            observedMetrics: { risk_score: 0.65, coherence: 0.45 },
            concerns: ['Risk too high', 'Need monitoring'],
            reasoning: example.antithesis.reasoning,
            counterProposal: { rootCause: 'External complexity spike', conditions: example.antithesis.counterProposal.proposedConditions },
            violations: [],
            submittedAt: at(120),
            deadlineAt: at(120 + HOUR),
          },
        },
      ]);
    expect(stateOf(play(h, antithesis())).awaiting).toEqual([AGENT]);
  });

  it('refuses an antithesis from anyone but the reviewer, the paused agent included', () => {
    const h = play(opened(), thesis());
    spec(h).when(antithesis(at(120), {}, AGENT)).thenRefuses('forbidden', /only the reviewer reviewer_b submits the antithesis/);
    spec(h).when(antithesis(at(120), {}, 'sage')).thenRefuses('forbidden', /sage is not it/);
  });

  it('refuses an antithesis before the thesis (wrong phase), and after its deadline', () => {
    spec(opened()).when(antithesis(at(30))).thenRefuses('illegal_state', /is awaiting_thesis, not awaiting_antithesis: the antithesis answers the thesis, and critical_agent has not submitted it yet/);
    spec(play(opened(), thesis(at(60)))).when(antithesis(at(60 + 2 * HOUR))).thenRefuses('illegal_state', /deadline .* passed/);
  });

  it('treats the same antithesis again as done', () => {
    spec(inSynthesis()).when(antithesis()).thenNothing();
    spec(inSynthesis()).when(antithesis(at(130), { concerns: ['something else'] })).thenRefuses('illegal_state', /already submitted the antithesis/);
  });
});

describe('SubmitSynthesis', () => {
  it("records a round and hands the next one to the other party, with a 1 h deadline", () => {
    spec(inSynthesis())
      .when(synthesis(1, AGENT, at(150), { agrees: false }))
      .thenEvents(([e, ...rest]) => {
        expect(rest).toEqual([]);
        expect(e).toMatchObject({ type: 'SynthesisSubmitted', data: { round: 1, party: 'agent', author: AGENT, agrees: false, deadlineAt: at(150 + HOUR) } });
      });
    expect(stateOf(play(inSynthesis(), synthesis(1, AGENT, at(150)))).awaiting).toEqual([REVIEWER]);
  });

  it('converges when both latest messages agree on the same root cause (any case or spacing) and the same conditions (any order)', () => {
    const h = converging();
    expect(typesOf(h.slice(-2))).toEqual(['SynthesisSubmitted', 'ResolutionProposed']);
    expect(last(h, 'SynthesisSubmitted').data.deadlineAt).toBeNull();
    expect(last(h, 'ResolutionProposed').data).toMatchObject({ resolution: resolution(), proposedAt: at(180), deadlineAt: at(180 + HOUR) });
    expect(stateOf(h)).toMatchObject({ status: 'awaiting_signatures', awaiting: [AGENT, REVIEWER] });
  });

  it('does not converge while one side disagrees, or names other conditions', () => {
    const h = play(inSynthesis(), synthesis(1, AGENT, at(150)));
    spec(h).when(synthesis(2, REVIEWER, at(180), { agrees: false })).thenEvents((events) => expect(typesOf(events)).toEqual(['SynthesisSubmitted']));
    spec(h).when(synthesis(2, REVIEWER, at(180), { proposedConditions: [threshold(0.5)] })).thenEvents((events) => expect(typesOf(events)).toEqual(['SynthesisSubmitted']));
    spec(h).when(synthesis(2, REVIEWER, at(180), { rootCause: 'An internal failure' })).thenEvents((events) => expect(typesOf(events)).toEqual(['SynthesisSubmitted']));
  });

  it('blocks a converged resolution that breaks a hard limit, logs it, and sends the recovery to an operator: the agent stays paused', () => {
    const unsafe = { proposedConditions: [threshold(0.95)] };
    const h = play(inSynthesis(), synthesis(1, AGENT, at(150), unsafe));
    spec(h)
      .when(synthesis(2, REVIEWER, at(180), unsafe))
      .thenEvents((events) => {
        expect(typesOf(events)).toEqual(['SynthesisSubmitted', 'ResolutionBlocked', 'RecoveryEscalated']);
        expect(events[1]).toMatchObject({ data: { violations: [{ rule: 'risk_threshold_above_max', operation: 'set_risk_threshold', parameter: 'threshold' }] } });
        expect(events[2]).toMatchObject({ data: { tier: 'operator', reason: 'hard_limit_violation', deadlineAt: null } });
      });
  });

  it('refuses a party submitting out of turn: round 1 is the agent\'s, round 2 the reviewer\'s', () => {
    spec(inSynthesis()).when(synthesis(1, REVIEWER, at(150))).thenRefuses('illegal_state', /out of turn: round 1 of session critical_agent-p1 is critical_agent's \(agent\)/);
    spec(play(inSynthesis(), synthesis(1, AGENT, at(150)))).when(synthesis(2, AGENT, at(160))).thenRefuses('illegal_state', /out of turn: round 2 .* is reviewer_b's/);
  });

  it('refuses a round other than the next, a synthesis before the antithesis, and anyone not a party', () => {
    spec(inSynthesis()).when(synthesis(2, REVIEWER, at(150))).thenRefuses('illegal_state', /is at synthesis round 1, not 2/);
    spec(play(opened(), thesis())).when(synthesis(1, AGENT, at(100))).thenRefuses('illegal_state', /the synthesis follows the thesis and the antithesis/);
    spec(inSynthesis()).when(synthesis(1, 'mallory', at(150))).thenRefuses('forbidden', /only the paused agent critical_agent and its reviewer reviewer_b take part/);
  });

  it('escalates after the last round without convergence, and refuses a synthesis after the round cap', () => {
    const h = deadlocked();
    expect(typesOf(h.slice(-2))).toEqual(['SynthesisSubmitted', 'RecoveryEscalated']);
    expect(last(h, 'RecoveryEscalated').data).toMatchObject({ tier: 'tie_break', reason: 'no_convergence', deadlineAt: at(120 + 300 + 2 * HOUR) });
    spec(h).when(synthesis(6, REVIEWER, at(500))).thenRefuses('illegal_state', /the synthesis of session critical_agent-p1 is over: it is capped at 5 rounds, all used/);
    spec(inSynthesis()).when(synthesis(6, AGENT, at(150))).thenRefuses('illegal_state', /capped at 5 rounds/);
  });

  it('treats the same round again as done, and refuses another message for a round already submitted', () => {
    const h = play(inSynthesis(), synthesis(1, AGENT, at(150)));
    spec(h).when(synthesis(1, AGENT, at(150))).thenNothing();
    spec(h).when(synthesis(1, AGENT, at(155), { reasoning: 'changed' })).thenRefuses('illegal_state', /round 1 of session critical_agent-p1 was already submitted by critical_agent/);
  });

  it('refuses a round after its deadline; the session limit caps every phase', () => {
    spec(inSynthesis()).when(synthesis(1, AGENT, at(120 + HOUR))).thenRefuses('illegal_state', /deadline .* passed/);
    expect(stateOf(nearTheLimit()).deadlineAt).toBe(at(6 * HOUR)); // round 4's hour, capped by the 6 h session
  });
});

describe('SignResolution', () => {
  it('records a verified signature; the second one resolves the recovery, with both signatures and the new threshold', () => {
    const h = converging();
    const payload = proposedPayload(h);
    const one = play(h, sign(AGENT, payload, at(200)));
    expect(one.at(-1)).toEqual({ type: 'ResolutionSigned', data: { sessionId: SID, signer: AGENT, party: 'agent', publicKey: keysOf(AGENT).publicKey, signature: expect.any(String), signedAt: at(200) } });
    expect(stateOf(one).awaiting).toEqual([REVIEWER]);
    spec(one)
      .when(sign(REVIEWER, payload, at(230)))
      .thenEvents((events) => {
        expect(typesOf(events)).toEqual(['ResolutionSigned', 'RecoveryResolved']);
        expect(events[1]).toMatchObject({
          data: { agentId: AGENT, pause: 1, resolution: payload, riskThreshold: 0.48, resolvedAt: at(230), signatures: [{ signer: AGENT, role: 'agent' }, { signer: REVIEWER, role: 'reviewer' }] },
        });
      });
  });

  it('refuses a forged signature with bad_signature, and writes nothing', () => {
    const h = converging();
    const payload = proposedPayload(h);
    // Signed by the reviewer's key, presented as the agent's.
    spec(h).when(sign(AGENT, payload, at(200), { publicKey: keysOf(REVIEWER).publicKey })).thenRefuses('bad_signature', /the signature of critical_agent does not verify the resolution of session critical_agent-p1/);
    // The reviewer's own signature replayed by the agent: the signer is in the signed bytes.
    const reviewerSignature = sign(REVIEWER, payload).payload as { signature: string };
    spec(h).when(sign(AGENT, payload, at(200), { signature: reviewerSignature.signature })).thenRefuses('bad_signature');
    // A signature of another resolution.
    spec(h).when(sign(AGENT, { ...payload, conditions: [threshold(0.9)] }, at(200))).thenRefuses('bad_signature');
  });

  it('refuses a signature before convergence, from a non-party, or after the signature deadline', () => {
    spec(inSynthesis()).when(sign(AGENT, resolution(), at(200))).thenRefuses('illegal_state', /the parties have not converged yet/);
    spec(converging()).when(sign('mallory', resolution(), at(200))).thenRefuses('forbidden', /only the paused agent/);
    spec(converging()).when(sign(AGENT, resolution(), at(180 + HOUR))).thenRefuses('illegal_state', /deadline .* passed/);
  });

  it('treats the same signature again as done, even once resolved', () => {
    const h = converging();
    const payload = proposedPayload(h);
    const signedOnce = play(h, sign(AGENT, payload));
    spec(signedOnce).when(sign(AGENT, payload)).thenNothing();
    spec(play(signedOnce, sign(REVIEWER, payload))).when(sign(REVIEWER, payload)).thenNothing();
  });
});

describe('ExpireDialecticPhase', () => {
  it('escalates when the paused agent lets the thesis deadline pass: with no position, straight to an operator', () => {
    spec(opened())
      .when(expire(at(HOUR)))
      .then([
        { type: 'DialecticPhaseExpired', data: { sessionId: SID, status: 'awaiting_thesis', late: [AGENT], sessionLimit: false, deadlineAt: at(HOUR), expiredAt: at(HOUR) } },
        {
          type: 'RecoveryEscalated',
          data: { sessionId: SID, escalation: 1, tier: 'operator', reason: 'timeout', requestedBy: null, note: null, proposal: null, votingSessionId: null, quorumSize: null, escalatedAt: at(HOUR), deadlineAt: null },
        },
      ]);
  });

  it('escalates a silent reviewer to a tie-breaker (the thesis is a position to side with)', () => {
    const h = play(opened(), thesis(at(60)));
    spec(h)
      .when(expire(at(60 + 2 * HOUR)))
      .thenEvents(([expired, escalated]) => {
        expect(expired).toMatchObject({ data: { status: 'awaiting_antithesis', late: [REVIEWER] } });
        expect(escalated).toMatchObject({ data: { tier: 'tie_break', reason: 'timeout', deadlineAt: at(60 + 4 * HOUR) } });
      });
  });

  it('names the party whose synthesis round it was, and the parties that had not signed', () => {
    spec(inSynthesis()).when(expire(at(120 + HOUR))).thenEvents(([e]) => expect(e).toMatchObject({ data: { status: 'synthesis', late: [AGENT] } }));
    const h = converging();
    const oneSigned = play(h, sign(REVIEWER, proposedPayload(h)));
    spec(oneSigned).when(expire(at(180 + HOUR))).thenEvents(([e]) => expect(e).toMatchObject({ data: { status: 'awaiting_signatures', late: [AGENT] } }));
  });

  it('reports the session limit when it is what fell due', () => {
    spec(nearTheLimit())
      .when(expire(at(6 * HOUR)))
      .thenEvents(([expired, escalated]) => {
        expect(expired).toMatchObject({ data: { sessionLimit: true, late: [REVIEWER] } });
        expect(escalated).toMatchObject({ data: { reason: 'session_timeout' } });
      });
  });

  it('changes nothing for a deadline that moved on, and refuses one not yet due', () => {
    spec(inSynthesis()).when(expire(at(HOUR))).thenNothing(); // the thesis deadline: the phase moved on
    spec(converging()).when(expire(at(180 + HOUR), at(180 + HOUR - 1))).thenRefuses('illegal_state', /is due at 2026-11-25T11:03:00.000Z, not yet/);
  });
});

describe('EscalateRecovery', () => {
  it('lets a party give up on the dialectic: the recovery climbs to the next tier', () => {
    spec(inSynthesis())
      .when(escalate(REVIEWER, at(150)))
      .thenEvents(([e]) => expect(e).toMatchObject({ type: 'RecoveryEscalated', data: { tier: 'tie_break', reason: 'requested', requestedBy: REVIEWER, note: 'we are going in circles' } }));
  });

  it('lets an operator go straight to tier 3, and nobody else', () => {
    spec(inSynthesis()).when(escalate('root', at(150), true)).thenEvents(([e]) => expect(e).toMatchObject({ data: { tier: 'operator', requestedBy: 'root' } }));
    spec(inSynthesis()).when(escalate(AGENT, at(150), true)).thenRefuses('forbidden', /straight to an operator: that needs the role operator/);
    spec(inSynthesis()).when(escalate('mallory', at(150))).thenRefuses('forbidden', /only its parties/);
  });

  it('refuses a party once the dialectic is over, and anyone at the last tier', () => {
    const h = play(inSynthesis(), escalate(REVIEWER, at(150)));
    spec(h).when(escalate(AGENT, at(160))).thenRefuses('forbidden', /the dialectic is over \(tie_break\)/);
    spec(play(h, escalate('root', at(170), true))).when(escalate('root', at(180))).thenRefuses('illegal_state', /already waits for an operator/);
  });
});

describe('the escalation ladder', () => {
  const tieBreakPending = () => deadlocked(); // escalation 1, tie_break, due at T0 + 7 min + 2 h
  const withTieBreaker = () => play(tieBreakPending(), assignTieBreaker(1, at(430)));

  it('draws the tie-breaker like the reviewer, the reviewer excluded as a party', () => {
    spec(tieBreakPending())
      .when(assignTieBreaker(1, at(430)))
      .thenEvents(([e]) => {
        expect(e).toMatchObject({ type: 'TieBreakerSelected', data: { escalation: 1, tieBreaker: 'sage', selection: { draw: drawOf(SEED, 'tie_breaker:1') } } });
        const selection = (e as Extract<DialecticEvent, { type: 'TieBreakerSelected' }>).data.selection;
        expect(selection.excluded).toContainEqual({ agentId: REVIEWER, reason: 'party' });
      });
    spec(withTieBreaker()).when(assignTieBreaker(1, at(440))).thenNothing();
  });

  it('climbs to the quorum when nobody can break the tie', () => {
    spec(tieBreakPending())
      .when(assignTieBreaker(1, at(430), candidates))
      .thenEvents((events) => {
        expect(typesOf(events)).toEqual(['NoCandidateEligible', 'RecoveryEscalated']);
        expect(events[1]).toMatchObject({ data: { escalation: 2, tier: 'quorum', reason: 'no_tie_breaker', votingSessionId: `${SID}-q2`, quorumSize: 5, proposal: { conditions: [threshold(0.45)] } } });
      });
  });

  it("resolves on the side the tie-breaker picks, signed by the tie-breaker", () => {
    const h = withTieBreaker();
    const reviewerSide = resolution({ rootCause: example.synthesis.rootCause, conditions: [threshold(0.45)], decidedBy: 'tie_break', escalation: 1, decider: 'sage' });
    spec(h)
      .when(tieBreak(1, 'reviewer', at(500), reviewerSide))
      .thenEvents((events) => {
        expect(typesOf(events)).toEqual(['TieBreakRecorded', 'RecoveryResolved']);
        expect(events[1]).toMatchObject({ data: { resolution: reviewerSide, riskThreshold: 0.45, signatures: [{ signer: 'sage', role: 'tie_breaker' }] } });
      });
  });

  it('refuses a tie-break from anyone but the tie-breaker, unsigned, or with a forged signature', () => {
    const h = withTieBreaker();
    const agentSide = resolution({ rootCause: example.synthesis.rootCause, conditions: [threshold(0.7)], decidedBy: 'tie_break', escalation: 1, decider: 'sage' });
    spec(h).when(tieBreak(1, 'agent', at(500), agentSide, REVIEWER)).thenRefuses('forbidden', /only the tie-breaker of escalation 1 \(sage\)/);
    spec(h).when(tieBreak(1, 'agent', at(500))).thenRefuses('invalid_command', /sign its resolution/);
    spec(h).when(tieBreak(1, 'agent', at(500), { ...agentSide, conditions: [threshold(0.45)] })).thenRefuses('bad_signature');
  });

  it('climbs to the quorum when the tie-breaker sides with neither, then resolves on an approved vote of at least 5', () => {
    const h = play(withTieBreaker(), tieBreak(1, 'neither', at(500)));
    expect(last(h, 'RecoveryEscalated').data).toMatchObject({ escalation: 2, tier: 'quorum', reason: 'tie_break_declined', deadlineAt: at(500 + HOUR) });
    spec(h)
      .when(quorumResult(2, 'approve', at(800)))
      .thenEvents((events) => {
        expect(typesOf(events)).toEqual(['QuorumResultRecorded', 'RecoveryResolved']);
        expect(events[1]).toMatchObject({ data: { resolution: { decidedBy: 'quorum', escalation: 2, decider: `${SID}-q2`, conditions: [threshold(0.45)] }, signatures: [] } });
      });
  });

  it('sends a denied, escalated or short quorum to an operator, and ignores a late or repeated result', () => {
    const h = play(withTieBreaker(), tieBreak(1, 'neither', at(500)));
    for (const cmd of [quorumResult(2, 'deny', at(800)), quorumResult(2, 'escalate', at(800)), quorumResult(2, 'approve', at(800), { votes: 3, approve: 3, deny: 0 })]) {
      spec(h)
        .when(cmd)
        .thenEvents((events) => expect(events.at(-1)).toMatchObject({ type: 'RecoveryEscalated', data: { tier: 'operator', reason: 'quorum_not_approved' } }));
    }
    spec(h).when(quorumResult(2, 'approve', at(800), { votingSessionId: 'other' })).thenRefuses('invalid_command', /is voted in critical_agent-p1-q2, not other/);
    const expired = play(h, expire(at(500 + HOUR)));
    expect(stateOf(expired).status).toBe('awaiting_operator');
    spec(expired).when(quorumResult(2, 'approve', at(500 + HOUR + 1))).thenNothing();
  });

  it("waits at tier 3 with no deadline; an operator's signed decision resumes the agent, or keeps it paused", () => {
    const h = play(inSynthesis(), escalate('root', at(150), true));
    expect(stateOf(h)).toMatchObject({ status: 'awaiting_operator', deadlineAt: null });
    const operatorResolution = resolution({ rootCause: 'External complexity spike', conditions: [threshold(0.5), c('probation', { hours: 24 })], decidedBy: 'operator', escalation: 1, decider: 'root' });
    spec(h)
      .when(decideRecovery('resume', at(300), operatorResolution))
      .thenEvents((events) => {
        expect(typesOf(events)).toEqual(['RecoveryDecided', 'RecoveryResolved']);
        expect(events[1]).toMatchObject({ data: { resolution: operatorResolution, signatures: [{ signer: 'root', role: 'operator' }], riskThreshold: 0.5 } });
      });
    const kept = play(h, decideRecovery('stay_paused', at(300)));
    expect(stateOf(kept)).toMatchObject({ status: 'stayed_paused', closedAt: at(300) });
    spec(kept).when(decideRecovery('stay_paused', at(400))).thenNothing();
    // A human may still reverse it later.
    spec(kept).when(decideRecovery('resume', at(900), { ...operatorResolution })).thenEvents((events) => expect(typesOf(events)).toEqual(['RecoveryDecided', 'RecoveryResolved']));
  });

  it("applies the hard limits to an operator's resolution too, and refuses an unsigned or forged one", () => {
    const h = play(inSynthesis(), escalate('root', at(150), true));
    const unsafe = resolution({ conditions: [c('bypass_safety')], decidedBy: 'operator', escalation: 1, decider: 'root' });
    spec(h)
      .when(decideRecovery('resume', at(300), unsafe))
      .thenEvents((events) => {
        expect(typesOf(events)).toEqual(['RecoveryDecided', 'ResolutionBlocked']);
      });
    expect(stateOf(play(h, decideRecovery('resume', at(300), unsafe))).status).toBe('awaiting_operator');
    spec(h).when(decideRecovery('resume', at(300), undefined, { rootCause: 'x', conditions: [] })).thenRefuses('invalid_command', /needs publicKey, signature/);
    const fine = resolution({ decidedBy: 'operator', escalation: 1, decider: 'root' });
    spec(h).when(decideRecovery('resume', at(300), fine, { conditions: [threshold(0.3)] })).thenRefuses('bad_signature');
  });

  it('refuses an operator decision below tier 3 and from a non-operator', () => {
    spec(inSynthesis()).when(decideRecovery('stay_paused', at(300))).thenRefuses('illegal_state', /an operator decides at tier 3/);
    const h = play(inSynthesis(), escalate('root', at(150), true));
    spec(h).when(decideRecovery('stay_paused', at(300), undefined, {}, REVIEWER)).thenRefuses('forbidden', /needs the role operator/);
  });

  it('skips the disabled tiers: with neither tie-break nor quorum, a deadlock goes to an operator', () => {
    const strict = withRules(deadlocked().slice(0, -2), defineDialecticPolicy({ escalation: { tieBreak: false, quorum: false } }));
    spec(strict)
      .when(synthesis(5, AGENT, at(420), { proposedConditions: [threshold(0.7)], agrees: false, reasoning: 'I stand by 0.70' }))
      .thenEvents((events) => expect(events.at(-1)).toMatchObject({ type: 'RecoveryEscalated', data: { tier: 'operator', reason: 'no_convergence' } }));
  });
});

describe('RecordRelapse', () => {
  const resolved = () => {
    const h = converging();
    const payload = proposedPayload(h);
    return play(h, sign(AGENT, payload, at(200)), sign(REVIEWER, payload, at(230)));
  };

  it('records a pause within the relapse window (24 h) after the resolution', () => {
    spec(resolved())
      .when(relapse(2, at(230 + 3 * HOUR)))
      .then([{ type: 'RecoveryRelapsed', data: { sessionId: SID, agentId: AGENT, pause: 2, risk: 0.7, resumedAt: at(230), relapsedAt: at(230 + 3 * HOUR), afterMs: 3 * HOUR * 1000 } }]);
  });

  it('records nothing for a pause after the window, or a second relapse', () => {
    spec(resolved()).when(relapse(2, at(230 + 25 * HOUR))).thenNothing();
    spec(play(resolved(), relapse(2, at(1000)))).when(relapse(3, at(2000))).thenNothing();
  });

  it('refuses a relapse of a session that did not resume its agent, or of an earlier pause', () => {
    spec(inSynthesis()).when(relapse(2, at(1000))).thenRefuses('illegal_state', /did not resume its agent/);
    spec(resolved()).when(relapse(1, at(1000))).thenRefuses('invalid_command', /pause 1 is not after pause 1/);
  });
});

describe('the audit sample', () => {
  const resolvedSampled = () => {
    const h = withRules(converging(), defineDialecticPolicy({ auditRate: 1 }));
    const payload = proposedPayload(h);
    return play(h, sign(AGENT, payload, at(200)), sign(REVIEWER, payload, at(230)));
  };
  const assign = (now: string, pool = [candidate('auditor_c'), ...candidates]) => ({ type: 'AssignAuditor' as const, context: ctx('dialectic', now), payload: { sessionId: SID, candidates: pool } });
  const audit = (actor: string, verdict: 'sound' | 'unsound', now: string) => ({ type: 'SubmitAudit' as const, context: ctx(actor, now), payload: { sessionId: SID, verdict, reasoning: 'checked the metrics' } });

  it('draws the audit at the seeded rate and records it in the resolution', () => {
    const h = resolvedSampled();
    expect(last(h, 'RecoveryResolved').data.audit).toEqual({ rate: 1, draw: drawOf(SEED, 'audit'), sampled: true });
    const none = converging();
    const payload = proposedPayload(none);
    const unsampled = play(none, sign(AGENT, payload), sign(REVIEWER, payload));
    // This session's audit draw is 0.10002...: just above the default 10 %, so not sampled.
    expect(last(unsampled, 'RecoveryResolved').data.audit).toEqual({ rate: 0.1, draw: drawOf(SEED, 'audit'), sampled: false });
  });

  it('assigns a second reviewer (never a party) who submits a verdict', () => {
    const h = play(resolvedSampled(), assign(at(300)));
    expect(last(h, 'AuditorAssigned').data).toMatchObject({ auditor: 'auditor_c' });
    expect(last(h, 'AuditorAssigned').data.selection.excluded).toContainEqual({ agentId: REVIEWER, reason: 'party' });
    spec(h).when(assign(at(310))).thenNothing();
    spec(h).when(audit('auditor_c', 'unsound', at(400))).then([{ type: 'AuditSubmitted', data: { sessionId: SID, auditor: 'auditor_c', verdict: 'unsound', reasoning: 'checked the metrics', submittedAt: at(400) } }]);
    spec(h).when(audit(REVIEWER, 'sound', at(400))).thenRefuses('forbidden', /only the auditor of session critical_agent-p1 \(auditor_c\)/);
  });

  it('refuses to assign an auditor to a resolution the sample did not draw', () => {
    const h = converging();
    const payload = proposedPayload(h);
    const resolved = play(h, sign(AGENT, payload), sign(REVIEWER, payload));
    spec(resolved).when(assign(at(300))).thenRefuses('illegal_state', /the audit sample did not draw it/);
    spec(inSynthesis()).when(assign(at(300))).thenRefuses('illegal_state', /it is synthesis, not resolved/);
  });
});

describe('the state', () => {
  it('keeps the whole transcript, in order, with each party and round', () => {
    const s = stateOf(converging());
    expect(s.messages.map((m) => [m.kind, m.party, m.round, m.agrees])).toEqual([
      ['thesis', 'agent', null, null],
      ['antithesis', 'reviewer', null, null],
      ['synthesis', 'agent', 1, true],
      ['synthesis', 'reviewer', 2, true],
    ]);
    expect(s.round).toBe(2);
  });

  it('ignores events before RecoveryOpened', () => {
    const stray = { type: 'ThesisSubmitted', data: { sessionId: SID } } as DialecticEvent;
    expect(stateOf([stray])).toEqual({ status: 'unopened' });
  });
});
