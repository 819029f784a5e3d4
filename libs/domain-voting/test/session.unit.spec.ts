// The session decider, behaviour by behaviour, grouped as the seed's test table (session creation,
// voting, timeout, session management, lifecycle). Consensus, weighting and the recommendation
// rules are in consensus.unit.spec.ts; selection and tiers in selection.unit.spec.ts.
import { VotingSessionRecord } from '@agora/contracts';
import { DEFAULT_CONFIG } from '../src/config.js';
import type { VotingSessionCommand, VotingSessionEvent } from '../src/session.js';
import { at, cancel, candidates, create, created, ctx, decide, expire, FIVE, play, RID, spec, stateOf, T0, typesOf, vote, votesOf } from './fixtures.js';

const selected = (agentId: string, trustScore: number, tier: string, specializations: string[], displayName: string) => ({ agentId, displayName, trustScore, tier, specializations });
const FIVE_SELECTED = [
  selected('security_bot', 900, 'ELITE', ['security'], 'Security Validator'),
  selected('compliance_bot', 850, 'TRUSTED', ['compliance'], 'Compliance Validator'),
  selected('ops_bot', 800, 'TRUSTED', ['operations'], 'Ops Validator'),
  selected('risk_bot', 750, 'TRUSTED', ['risk', 'security'], 'Risk Validator'),
  selected('ethics_bot', 720, 'TRUSTED', ['ethics'], 'Ethics Validator'),
];
const createdEvent = (over: Record<string, unknown> = {}): VotingSessionEvent => ({
  type: 'VotingSessionCreated',
  data: {
    sessionId: RID,
    requestId: RID,
    requestingAgent: 'deployer',
    createdBy: 'deployer',
    actionType: 'deploy_production',
    riskLevel: 'high',
    critical: false,
    summary: null,
    criteria: { minTrustScore: 0, excludeAgents: [], preferredSpecializations: [] },
    rules: DEFAULT_CONFIG,
    configRevision: -1,
    candidates: 6,
    validators: FIVE_SELECTED,
    createdAt: T0,
    deadlineAt: at(300),
    ...over,
  } as Extract<VotingSessionEvent, { type: 'VotingSessionCreated' }>['data'],
});

describe('session creation', () => {
  it('selects the five most trusted validators and records them with their tier, the rules in force and the timeout', () => {
    spec([]).when(create()).then([createdEvent()]);
    const s = stateOf(created());
    expect(s).toMatchObject({ status: 'pending', votes: [], recommendation: null, awaitingOperator: false, finalDecision: null });
    expect(VotingSessionRecord.parse(s)).toEqual(s);
  });

  it('keeps one session per request id: a second create by its requesting agent or an operator returns the first, whatever it asks; anyone else is refused', () => {
    spec(created()).when(create()).thenNothing();
    spec(created()).when(create({ payload: { actionType: 'delete_database', riskLevel: 'critical' } })).thenNothing();
    spec(created()).when(create({ payload: { actionType: 'delete_database', riskLevel: 'critical' } }, ctx('other_exec'))).thenRefuses('illegal_state', /exists already/);
    expect(stateOf(play(created(), create({ payload: { riskLevel: 'low' } }))).riskLevel).toBe('high');
  });

  it('never selects the requesting agent, nor an excluded agent, nor one under the minimum trust score', () => {
    const pool = [...candidates, { agentId: 'deployer', displayName: 'Deployer', trustScore: 990, specializations: ['security'], status: 'active' }];
    spec([])
      .when(create({ pool, payload: { criteria: { minTrustScore: 760, excludeAgents: ['compliance_bot'], preferredSpecializations: [] } } }))
      .thenEvents(([e]) => {
        const data = (e as Extract<VotingSessionEvent, { type: 'VotingSessionCreated' }>).data;
        expect(data.validators.map((v) => v.agentId)).toEqual(['security_bot', 'ops_bot']);
        expect(data.candidates).toBe(7);
      });
  });

  it('takes the timeout of the request, a critical flag (default: risk level critical), and the requester named by an operator', () => {
    spec([])
      .when(create({ payload: { votingTimeoutMs: 60_000, riskLevel: 'critical', requestingAgent: 'deployer', summary: 'roll out v2' } }, ctx('root')))
      .then([
        createdEvent({
          createdBy: 'root',
          riskLevel: 'critical',
          critical: true,
          summary: 'roll out v2',
          rules: { ...DEFAULT_CONFIG, votingTimeoutMs: 60_000 },
          deadlineAt: at(60),
        }),
      ]);
    spec([])
      .when(create({ payload: { riskLevel: 'critical', critical: false } }))
      .thenEvents(([e]) => expect(e!.data).toMatchObject({ riskLevel: 'critical', critical: false }));
  });

  it('decides at once as no_quorum when fewer than minValidators qualify: escalate, a human required', () => {
    const minTrust = (minTrustScore: number) => create({ payload: { criteria: { minTrustScore, excludeAgents: [], preferredSpecializations: [] } } });
    // security 900 and compliance 850 qualify: two, under minValidators 3.
    const history = play([], minTrust(850));
    expect(typesOf(history)).toEqual(['VotingSessionCreated', 'VotingSessionDecided']);
    expect(history[1]!.data).toMatchObject({
      trigger: 'no_quorum_at_creation',
      votingTimeMs: 0,
      decidedAt: T0,
      tally: { validators: 2, votes: 0, quorum: 3 },
      recommendation: { decision: 'escalate', consensus: 'no_quorum', confidence: 0, requiresHitl: true, escalationReason: 'no_quorum', dissent: [] },
    });
    expect(stateOf(history)).toMatchObject({ status: 'decided', awaitingOperator: true, concludedAt: T0, closedAt: null });
    // ops 800 makes three: exactly minValidators, the session votes.
    expect(typesOf(play([], minTrust(800)))).toEqual(['VotingSessionCreated']);
  });

  it('selects nobody for a person to decide (decider: person): decided at once, waiting for a human, and the operator\'s decision is final', () => {
    const history = play([], create({ payload: { decider: 'person' } }));
    expect(typesOf(history)).toEqual(['VotingSessionCreated', 'VotingSessionDecided']);
    expect(history[0]!.data).toMatchObject({ decider: 'person', validators: [] });
    expect(history[1]!.data).toMatchObject({
      trigger: 'person_decides',
      votingTimeMs: 0,
      recommendation: { decision: 'escalate', requiresHitl: true, escalationReason: 'person_decides', reasoning: [expect.stringMatching(/created for a person to decide/)] },
    });
    expect(stateOf(history)).toMatchObject({ status: 'decided', awaitingOperator: true });
    // Without it, the same request is put to the validators.
    expect(play([], create())[0]!.data).not.toHaveProperty('decider');
  });

  it('lets an executive put only its own requests to a vote, and nobody else but an operator create one', () => {
    spec([]).when(create({ payload: { requestingAgent: 'other_exec' } })).thenRefuses('forbidden', /deployer may only put its own action requests to a vote/);
    spec([]).when(create({}, ctx('mallory'))).thenRefuses('forbidden', /mallory may not create a voting session: that needs the role executive or operator/);
    spec([]).when(create({}, ctx('security_bot'))).thenRefuses('forbidden');
  });
});

describe('voting', () => {
  it('records a vote with its reasoning, confidence, risk assessment and weight (trust/1000 × confidence); the session is then voting', () => {
    spec(created())
      .when(vote('security_bot', 'approve', 0.8, at(5), { riskAssessment: 'low blast radius' }))
      .then([
        {
          type: 'ValidatorVoteReceived',
          data: {
            sessionId: RID,
            validator: 'security_bot',
            validatorName: 'Security Validator',
            decision: 'approve',
            reasoning: 'security_bot: approve',
            confidence: 0.8,
            riskAssessment: 'low blast radius',
            trustScore: 900,
            weight: 0.72,
            votedAt: at(5),
          },
        },
      ]);
    const s = stateOf(play(created(), vote('security_bot', 'abstain', 0.5)));
    expect(s.status).toBe('voting');
    expect(s.votes).toEqual([expect.objectContaining({ validator: 'security_bot', decision: 'abstain', riskAssessment: null, weight: 0.45 })]);
  });

  it('takes votes only from the selected validators', () => {
    const refusal = spec(created()).when(vote('junior_bot', 'approve')).thenRefuses('forbidden', /junior_bot was not selected to vote on session req-deploy-42/);
    expect(refusal.details).toMatchObject({ validator: 'junior_bot', validators: FIVE });
    spec(created()).when(vote('mallory', 'approve')).thenRefuses('forbidden', /needs the role validator/);
  });

  it('takes one vote per validator: the same vote again changes nothing, a changed mind is refused', () => {
    const once = play(created(), vote('ops_bot', 'approve', 0.7));
    spec(once).when(vote('ops_bot', 'approve', 0.7, at(30))).thenNothing();
    const refusal = spec(once).when(vote('ops_bot', 'deny', 0.7, at(30))).thenRefuses('illegal_state', /ops_bot already voted approve .* a changed mind is not a second vote/);
    expect(refusal.details).toMatchObject({ reason: 'already_voted', vote: 'approve' });
    spec(once).when(vote('ops_bot', 'approve', 0.75, at(30))).thenRefuses('illegal_state', /already voted/);
  });

  it('refuses a vote on a closed session: decided, expired or cancelled', () => {
    const decided = play(created(), ...votesOf(['approve', 'approve', 'approve', 'approve', 'approve']));
    const cancelled = play(created(), cancel('request withdrawn'));
    const expired = play(created(), expire(at(300)));
    const four = ['security_bot', 'compliance_bot', 'ops_bot', 'risk_bot'];
    spec(play(created(), ...votesOf(['approve', 'approve', 'approve', 'approve'], 0.9, four), expire(at(300))))
      .when(vote('ethics_bot', 'approve'))
      .thenRefuses('illegal_state', /voting session req-deploy-42 is expired/);
    spec(cancelled).when(vote('ethics_bot', 'approve')).thenRefuses('illegal_state', /is cancelled/);
    spec(expired).when(vote('ethics_bot', 'approve')).thenRefuses('illegal_state', /is expired/);
    // A validator that voted sends the same vote again after the decision: already recorded.
    spec(decided).when(vote('security_bot', 'approve', 0.9, at(10))).thenNothing();
  });

  it('refuses a confidence outside 0..1, a vote from the deadline on, and a vote on no session', () => {
    spec(created()).when(vote('ops_bot', 'approve', 1.2)).thenRefuses('invalid_command', /confidence 1.2 is outside 0..1/);
    spec(created()).when(vote('ops_bot', 'approve', -0.1)).thenRefuses('invalid_command');
    spec(created()).when(vote('ops_bot', 'approve', 0.9, at(300))).thenRefuses('illegal_state', /timed out at/);
    spec([]).when(vote('ops_bot', 'approve')).thenRefuses('not_found', /voting session req-deploy-42 does not exist/);
  });

  it('decides with the last vote: consensus reached, then the session decided, in one commit', () => {
    const four = play(created(), ...votesOf(['approve', 'approve', 'deny', 'approve']));
    spec(four)
      .when(vote('ethics_bot', 'approve', 0.9, at(60)))
      .thenEvents((events) => {
        expect(typesOf(events)).toEqual(['ValidatorVoteReceived', 'VotingConsensusReached', 'VotingSessionDecided']);
        expect(events[1]!.data).toMatchObject({ consensus: 'majority_approve', reachedAt: at(60), tally: { validators: 5, votes: 5, approve: 4, deny: 1, abstain: 0 } });
        expect(events[2]!.data).toMatchObject({ trigger: 'all_voted', votingTimeMs: 60_000, decidedAt: at(60), recommendation: { decision: 'approve', consensus: 'majority_approve', requiresHitl: false } });
      });
  });
});

describe('session timeout', () => {
  it('is refused before the deadline', () => {
    spec(created()).when(expire(at(299))).thenRefuses('illegal_state', /times out at 2026-11-22T10:05:00.000Z, not yet at/);
  });

  it('decides on the partial votes at the deadline, and always requires a human', () => {
    const four = ['security_bot', 'compliance_bot', 'ops_bot', 'risk_bot'];
    const history = play(created(), ...votesOf(['approve', 'approve', 'approve', 'approve'], 0.9, four));
    spec(history)
      .when(expire(at(300)))
      .thenEvents(([e]) => {
        expect(e).toMatchObject({
          type: 'VotingSessionExpired',
          data: {
            missing: ['ethics_bot'],
            deadlineAt: at(300),
            expiredAt: at(300),
            votingTimeMs: 300_000,
            // four approvals of five: not unanimous (ethics_bot never voted); the partial votes point to approve
            recommendation: { decision: 'escalate', consensus: 'majority_approve', confidence: 0.9, requiresHitl: true, escalationReason: 'expired' },
          },
        });
        expect((e!.data as { recommendation: { reasoning: string[] } }).recommendation.reasoning[0]).toMatch(/the partial votes point to approve/);
      });
    const few = play(created(), vote('ops_bot', 'deny'), expire(at(301)));
    expect(stateOf(few)).toMatchObject({ status: 'expired', consensus: 'no_quorum', awaitingOperator: true, recommendation: { escalationReason: 'no_quorum' } });
  });

  it('changes nothing on a session that is decided or cancelled already, or expired', () => {
    spec(play(created(), ...votesOf(['deny', 'deny', 'deny', 'deny', 'deny']))).when(expire(at(300))).thenNothing();
    spec(play(created(), cancel('withdrawn'))).when(expire(at(300))).thenNothing();
    spec(play(created(), expire(at(300)))).when(expire(at(300))).thenNothing();
    spec(created()).when(expire(at(300), ctx('deployer', at(300)))).thenRefuses('forbidden');
  });
});

describe('session management', () => {
  it('gets a session by its id, which is its request id, with every vote and the outcome', () => {
    const s = stateOf(play(created(), ...votesOf(['approve', 'deny', 'approve', 'abstain', 'approve'])));
    expect(s).toMatchObject({ sessionId: RID, requestId: RID, status: 'decided', consensus: 'majority_approve', finalDecision: 'approve', concludedAt: at(14), closedAt: at(14) });
    expect(s.votes.map((v) => v.validator)).toEqual(FIVE);
    expect(VotingSessionRecord.parse(s)).toEqual(s);
  });

  it('lets an operator or the requesting agent cancel a session still collecting votes', () => {
    spec(play(created(), vote('ops_bot', 'approve')))
      .when(cancel('request withdrawn', ctx('deployer', at(20))))
      .then([{ type: 'VotingSessionCancelled', data: { sessionId: RID, reason: 'request withdrawn', cancelledBy: 'deployer', votesReceived: 1, cancelledAt: at(20) } }]);
    expect(stateOf(play(created(), cancel('ops says no')))).toMatchObject({ status: 'cancelled', cancellation: { cancelledBy: 'root' }, closedAt: at(20), finalDecision: null });
    spec(play(created(), cancel('once'))).when(cancel('twice')).thenNothing();
  });

  it('lets the requesting agent withdraw a session that waits for a person (a governed call it gave up on): it leaves the inbox', () => {
    const person = play([], create({ payload: { decider: 'person' } }));
    spec(person)
      .when(cancel('the agent gave up on its tool call', ctx('deployer', at(20))))
      .then([{ type: 'VotingSessionCancelled', data: { sessionId: RID, reason: 'the agent gave up on its tool call', cancelledBy: 'deployer', votesReceived: 0, cancelledAt: at(20) } }]);
    expect(stateOf(play(person, cancel('gave up', ctx('deployer', at(20)))))).toMatchObject({ status: 'cancelled', awaitingOperator: false, finalDecision: null });
    // Once a person decided, it is closed: nothing to withdraw.
    spec(play(person, decide('approve', 'fine'))).when(cancel('too late', ctx('deployer', at(30)))).thenRefuses('illegal_state', /is decided/);
  });

  it('refuses to cancel for another executive, or once decided', () => {
    spec(created()).when(cancel('mine now', ctx('other_exec'))).thenRefuses('forbidden', /only an operator or the requesting agent deployer may cancel/);
    spec(play(created(), ...votesOf(['approve', 'approve', 'approve', 'approve', 'approve']))).when(cancel('too late')).thenRefuses('illegal_state', /is decided/);
    spec([]).when(cancel('nothing')).thenRefuses('not_found');
  });

  it("closes an escalated session with an operator's signed decision: the final decision", () => {
    const split = play(created({ config: { weightByTrustScore: false } }), ...votesOf(['approve', 'deny', 'approve', 'deny', 'abstain']));
    expect(stateOf(split)).toMatchObject({ status: 'decided', consensus: 'split', awaitingOperator: true, finalDecision: null, closedAt: null });
    spec(split)
      .when(decide('deny', 'not during the freeze'))
      .then([{ type: 'VotingEscalationResolved', data: { sessionId: RID, decision: 'deny', operator: 'root', reason: 'not during the freeze', escalationReason: 'split', resolvedAt: at(400) } }]);
    const resolved = play(split, decide('deny', 'not during the freeze'));
    expect(stateOf(resolved)).toMatchObject({ awaitingOperator: false, finalDecision: 'deny', closedAt: at(400), resolution: { operator: 'root', decision: 'deny' } });
    spec(resolved).when(decide('deny', 'not during the freeze')).thenNothing();
    spec(resolved).when(decide('approve', 'changed my mind')).thenRefuses('illegal_state', /was already decided by root: deny/);
    const expired = play(created(), vote('ops_bot', 'approve'), expire(at(300)));
    expect(stateOf(play(expired, decide('approve', 'checked by hand')))).toMatchObject({ status: 'expired', finalDecision: 'approve', closedAt: at(400) });
  });

  it('takes an operator decision only on a session waiting for one, and only from an operator', () => {
    spec(created()).when(decide('approve', 'early')).thenRefuses('illegal_state', /not waiting for an operator: it is still collecting votes/);
    spec(play(created(), ...votesOf(['approve', 'approve', 'approve', 'approve', 'approve']))).when(decide('deny', 'no')).thenRefuses('illegal_state', /its recommendation \(approve\) needs no human/);
    spec(play(created(), cancel('gone'))).when(decide('deny', 'no')).thenRefuses('illegal_state', /it was cancelled/);
    const split = play(created({ config: { weightByTrustScore: false } }), ...votesOf(['approve', 'deny', 'approve', 'deny', 'abstain']));
    spec(split).when(decide('approve', 'me', ctx('deployer', at(400)))).thenRefuses('forbidden', /needs the role operator/);
  });

  it('keeps the rules a session was created with, whatever the configuration says later', () => {
    const strict = created({ config: { minConfidence: 0.95 } });
    expect(stateOf(strict).rules).toEqual({ ...DEFAULT_CONFIG, minConfidence: 0.95 });
    // Five confident approvals (0.9) under minConfidence 0.95: escalated for low confidence.
    const decided = play(strict, ...votesOf(['approve', 'approve', 'approve', 'approve', 'approve']));
    expect(stateOf(decided).recommendation).toMatchObject({ decision: 'escalate', consensus: 'unanimous_approve', escalationReason: 'low_confidence' });
  });
});

describe('lifecycle', () => {
  it('goes pending -> voting -> decided, and an escalation waits for a human', () => {
    const statuses: string[] = [];
    let history = created({ payload: { riskLevel: 'critical' } });
    statuses.push(stateOf(history).status);
    for (const command of votesOf(['approve', 'approve', 'approve', 'approve', 'deny'])) {
      history = play(history, command);
      statuses.push(stateOf(history).status);
    }
    expect(statuses).toEqual(['pending', 'voting', 'voting', 'voting', 'voting', 'decided']);
    expect(stateOf(history)).toMatchObject({ recommendation: { decision: 'escalate', escalationReason: 'critical_not_unanimous' }, awaitingOperator: true });
    history = play(history, decide('approve', 'the dissent is about a staging box'));
    expect(stateOf(history)).toMatchObject({ status: 'decided', finalDecision: 'approve', awaitingOperator: false });
    expect(typesOf(history)).toEqual([
      'VotingSessionCreated',
      'ValidatorVoteReceived',
      'ValidatorVoteReceived',
      'ValidatorVoteReceived',
      'ValidatorVoteReceived',
      'ValidatorVoteReceived',
      'VotingConsensusReached',
      'VotingSessionDecided',
      'VotingEscalationResolved',
    ]);
  });
});

describe('governed tool calls: an approval bound to one call, released once', () => {
  const DIGEST = 'a'.repeat(64);
  const toolCall = { server: 'memory', tool: 'create_entities', callDigest: DIGEST };
  const release = (callDigest = DIGEST, c = ctx('deployer', at(30))): VotingSessionCommand => ({ type: 'ReleaseToolCall', context: c, payload: { sessionId: RID, callDigest } });
  const result = (outcome: 'ok' | 'tool_error' | 'failed', resultDigest = 'b'.repeat(64), c = ctx('deployer', at(31))): VotingSessionCommand => ({ type: 'RecordToolCallResult', context: c, payload: { sessionId: RID, outcome, resultDigest } });
  const approved = () => play(created({ payload: { toolCall } }), ...votesOf(['approve', 'approve', 'approve', 'approve', 'approve']));

  it('records the call a session is created for, and shows it unreleased', () => {
    spec([]).when(create({ payload: { toolCall } })).then([createdEvent({ toolCall })]);
    expect(stateOf(created({ payload: { toolCall } })).toolCall).toEqual({ ...toolCall, releasedAt: null, outcome: null, resultDigest: null, completedAt: null });
    expect(stateOf(created()).toolCall).toBeUndefined();
  });

  it('releases an approved call for its own digest, once; then records its result once', () => {
    spec(approved()).when(release()).then([{ type: 'ToolCallReleased', data: { sessionId: RID, server: 'memory', tool: 'create_entities', callDigest: DIGEST, releasedBy: 'deployer', releasedAt: at(30) } }]);
    const released = play(approved(), release());
    spec(released).when(release()).thenRefuses('illegal_state', /already used, at .*: an approval releases its call once/);
    spec(released).when(result('ok')).then([{ type: 'ToolCallResultRecorded', data: { sessionId: RID, callDigest: DIGEST, outcome: 'ok', resultDigest: 'b'.repeat(64), recordedBy: 'deployer', recordedAt: at(31) } }]);
    const done = play(released, result('ok'));
    spec(done).when(result('ok')).thenNothing();
    spec(done).when(result('tool_error')).thenRefuses('illegal_state', /recorded already/);
    const s = stateOf(done);
    expect(s.toolCall).toEqual({ ...toolCall, releasedAt: at(30), outcome: 'ok', resultDigest: 'b'.repeat(64), completedAt: at(31) });
    expect(VotingSessionRecord.parse(s)).toEqual(s);
  });

  it('refuses to release another call, an undecided, denied or escalated session, a session made for no call, or for another agent', () => {
    spec(approved()).when(release('c'.repeat(64))).thenRefuses('illegal_state', /decided another call \(memory\/create_entities/);
    spec(created({ payload: { toolCall } })).when(release()).thenRefuses('illegal_state', /has not approved the call \(status pending/);
    spec(play(created({ payload: { toolCall } }), ...votesOf(['deny', 'deny', 'deny', 'deny', 'deny']))).when(release()).thenRefuses('illegal_state', /final decision deny/);
    const escalated = play(created({ payload: { toolCall, riskLevel: 'critical' } }), ...votesOf(['approve', 'approve', 'approve', 'approve', 'deny']));
    expect(stateOf(escalated)).toMatchObject({ awaitingOperator: true, finalDecision: null });
    spec(escalated).when(release()).thenRefuses('illegal_state', /final decision none/);
    spec(play(created(), ...votesOf(['approve', 'approve', 'approve', 'approve', 'approve']))).when(release()).thenRefuses('illegal_state', /was not created for a tool call/);
    spec(approved()).when(release(DIGEST, ctx('other_exec', at(30)))).thenRefuses('forbidden', /only the requesting agent deployer may/);
    spec(approved()).when(result('ok')).thenRefuses('illegal_state', /released no tool call/);
  });

  it('releases a call a person approved after the vote escalated', () => {
    const escalated = play(created({ payload: { toolCall, riskLevel: 'critical' } }), ...votesOf(['approve', 'approve', 'approve', 'approve', 'deny']), decide('approve', 'checked the staging token by hand'));
    spec(escalated).when(release(DIGEST, ctx('deployer', at(500)))).thenEvents(([e]) => expect(e).toMatchObject({ type: 'ToolCallReleased' }));
  });
});
