import { ProposalRecord } from '@agora/contracts';
import type { ProposalEvent } from '../src/proposal.js';
import {
  approve,
  assignments,
  at,
  candidates,
  ctx,
  decide,
  expire,
  inRound1,
  object,
  openRound,
  PID,
  plan,
  play,
  recordExecution,
  revise,
  spec,
  stateOf,
  submit,
  T0,
  typesOf,
  withdrawObjection,
} from './fixtures.js';

const RULES = { requiredConstitutions: ['risk', 'premise', 'evidence', 'execution'], minConstitutions: 3, roundDeadlineMs: 60_000, maxRoundsBeforeEscalation: 3 };
const ALL = ['risk', 'premise', 'evidence', 'execution'];

const submitted: ProposalEvent = { type: 'ProposalSubmitted', data: { proposalId: PID, proposer: 'seldon', ...plan, proposalClass: 'default', rules: RULES, submittedAt: T0 } };
const requested = (round: number, revision: number, reason: 'submitted' | 'revised' | 'sent_back', requestedAt: string): ProposalEvent => ({
  type: 'ReviewRoundRequested',
  data: { proposalId: PID, round, revision, reason, requiredConstitutions: ALL, exclude: ['seldon'], requestedAt },
});
const opened = (round: number, revision: number, openedAt: string, deadlineAt: string): ProposalEvent => ({
  type: 'ReviewRoundOpened',
  data: { proposalId: PID, round, revision, assignments, uncovered: [], openedAt, deadlineAt },
});
const closed = (data: Partial<Extract<ProposalEvent, { type: 'ReviewRoundClosed' }>['data']>): ProposalEvent => ({
  type: 'ReviewRoundClosed',
  data: { proposalId: PID, round: 1, revision: 1, reason: 'all_reviewed', outcome: 'approved', satisfied: ALL, deemed: [], raisedObjections: [], openObjections: [], contested: false, closedAt: at(10), ...data },
});

const approveAll = (round: number, now = at(10)) => assignments.map((a) => approve(a.reviewer, a.constitution, round, now));
/** Round 1 closed blocked: harbinger (risk) objected, the three others approved. */
const blocked1 = () => play(inRound1(), object('harbinger', 'risk', 1), approve('heretic', 'premise', 1), approve('sentinel', 'evidence', 1), approve('zealot', 'execution', 1));
/** Each round: harbinger objects, the others approve; then the proposer revises answering it. Ends escalated after round 3. */
function deadlocked(): ProposalEvent[] {
  let h = inRound1();
  for (let round = 1; round <= 3; round++) {
    const t = (round - 1) * 1000;
    h = play(h, object('harbinger', 'risk', round, at(t + 10)), approve('heretic', 'premise', round, at(t + 10)), approve('sentinel', 'evidence', round, at(t + 10)), approve('zealot', 'execution', round, at(t + 10)));
    if (round < 3) h = play(h, revise([`r${round}-risk`], `${plan.body} (revision ${round + 1})`, at(t + 500)), openRound(round + 1, ctx('tribunal', at(t + 1000))));
  }
  return h;
}

describe('SubmitProposal', () => {
  it('records the proposal with the rules that will decide it, and requests the first round', () => {
    spec([]).when(submit()).then([submitted, requested(1, 1, 'submitted', T0)]);
  });

  it("resolves the class's constitutions and deadline, or the proposal's own deadline", () => {
    spec([])
      .when(submit({ proposalClass: 'frame' }))
      .thenEvents(([e]) => expect(e).toMatchObject({ data: { proposalClass: 'frame', rules: { requiredConstitutions: ['premise', 'evidence', 'risk', 'ethics'], roundDeadlineMs: 120_000 } } }));
    spec([])
      .when(submit({ reviewDeadlineMs: 30_000 }))
      .thenEvents(([e]) => expect(e).toMatchObject({ data: { rules: { roundDeadlineMs: 30_000 } } }));
  });

  it('refuses an agent without the executive role', () => {
    const refusal = spec([]).when(submit({}, ctx('harbinger'))).thenRefuses('forbidden', /^harbinger may not submit a proposal: that needs the role executive, and harbinger has reviewer$/);
    expect(refusal.details).toEqual({ actor: 'harbinger', requiredRoles: ['executive'], actorRoles: ['reviewer'] });
  });

  it('refuses an unknown class and a deadline the policy does not allow, naming the field', () => {
    spec([]).when(submit({ proposalClass: 'budget' })).thenRefuses('invalid_command', /unknown proposal class "budget": the tribunal policy knows default, frame/);
    const refusal = spec([]).when(submit({ reviewDeadlineMs: 2000 })).thenRefuses('invalid_command', /reviewDeadlineMs 2000 is outside what the tribunal policy allows: 5000 to 3600000 ms/);
    expect(refusal.details).toMatchObject({ field: 'reviewDeadlineMs' });
  });

  it('treats the same submission again as done, and refuses another under a taken id', () => {
    spec(inRound1()).when(submit()).thenNothing();
    spec(play(blocked1(), revise(['r1-risk'], 'Revised body'))).when(submit()).thenNothing();
    spec(inRound1()).when(submit({ title: 'Another plan' })).thenRefuses('illegal_state', /proposal space-os-roadmap already exists \(submitted by seldon/);
  });
});

describe('OpenReviewRound', () => {
  it('selects one reviewer per constitution, never the proposer, and records them with the deadline', () => {
    spec([submitted, requested(1, 1, 'submitted', T0)])
      .when(openRound(1, ctx('tribunal', at(1))))
      .then([opened(1, 1, at(1), at(61))]);
  });

  it('never re-selects: the round is answered once, whatever the registry says later', () => {
    const reshuffled = candidates.map((c) => ({ ...c, trustScore: 1000 - c.trustScore }));
    spec(inRound1()).when(openRound(1, ctx('tribunal'), reshuffled)).thenNothing();
    expect(stateOf(inRound1()).rounds[0]!.assignments).toEqual(assignments);
  });

  it('opens with at least 3 constitutions and records the ones it could not cover', () => {
    const noExecution = candidates.filter((c) => c.agentId !== 'zealot'); // seldon holds execution, but proposes
    spec([submitted, requested(1, 1, 'submitted', T0)])
      .when(openRound(1, ctx('tribunal'), noExecution))
      .then([{ type: 'ReviewRoundOpened', data: { proposalId: PID, round: 1, revision: 1, assignments: assignments.slice(0, 3), uncovered: ['execution'], openedAt: T0, deadlineAt: at(60) } }]);
  });

  it('escalates explicitly, instead of opening, when fewer than 3 constitutions can be covered', () => {
    const two = candidates.filter((c) => c.agentId === 'harbinger' || c.agentId === 'heretic' || c.agentId === 'seldon');
    spec([submitted, requested(1, 1, 'submitted', T0)])
      .when(openRound(1, ctx('tribunal', at(1)), two))
      .then([
        {
          type: 'ProposalEscalated',
          data: { proposalId: PID, escalation: 1, reason: 'insufficient_coverage', revision: 1, round: 1, contestedRounds: 0, openObjections: [], uncovered: ['evidence', 'execution'], escalatedAt: at(1) },
        },
      ]);
  });

  it('answers a superseded request with nothing, and an operator can send it back once reviewers exist', () => {
    const escalated = play([submitted, requested(1, 1, 'submitted', T0)], openRound(1, ctx('tribunal'), []));
    expect(stateOf(escalated).status).toBe('escalated');
    spec(escalated).when(openRound(1)).thenNothing(); // the request was answered by the escalation
    const sentBack = play(escalated, decide(1, 'send_back', 'reviewers registered since', ctx('root', at(100))));
    expect(sentBack.slice(-1)).toEqual([requested(1, 1, 'sent_back', at(100))]);
    spec(sentBack).when(openRound(1, ctx('tribunal', at(101)))).then([opened(1, 1, at(101), at(161))]);
  });

  it('refuses a round that was never requested, an actor but the tribunal service (an operator included), and an unknown proposal', () => {
    spec(inRound1()).when(openRound(3)).thenRefuses('illegal_state', /round 3 cannot open: proposal space-os-roadmap has had 1 rounds, the next is 2/);
    spec([submitted, requested(1, 1, 'submitted', T0)]).when(openRound(1, ctx('harbinger'))).thenRefuses('forbidden', /needs the role service/);
    spec([submitted, requested(1, 1, 'submitted', T0)]).when(openRound(1, ctx('root'))).thenRefuses('forbidden', /needs the role service/);
    spec([]).when(openRound(1)).thenRefuses('not_found', /proposal space-os-roadmap does not exist/);
  });
});

describe('SubmitReview', () => {
  it('records an approval with its reasoning and citations', () => {
    const citations = [{ ref: 'd/0fd09b4f', summary: 'swarm builds, human converts' }];
    spec(inRound1())
      .when(approve('sentinel', 'evidence', 1, at(5), { reasoning: 'Grounded.', citations }))
      .then([
        {
          type: 'ReviewSubmitted',
          data: { proposalId: PID, round: 1, revision: 1, constitution: 'evidence', reviewer: 'sentinel', verdict: 'approve', reasoning: 'Grounded.', citations, objection: null, submittedAt: at(5) },
        },
      ]);
  });

  it('records an objection with its constraint, scenario and suggested revision, as objection r<round>-<constitution>', () => {
    spec(inRound1())
      .when(object('harbinger', 'risk', 1, at(5), { rejectReason: 'or drop week 3' }))
      .then([
        {
          type: 'ReviewSubmitted',
          data: {
            proposalId: PID,
            round: 1,
            revision: 1,
            constitution: 'risk',
            reviewer: 'harbinger',
            verdict: 'object',
            reasoning: 'risk: the plan fails',
            citations: [],
            objection: { objectionId: 'r1-risk', constraint: 'risk constraint', scenario: 'a scenario in which the risk constraint breaks', suggestedRevision: 'fix the risk problem', rejectReason: 'or drop week 3' },
            submittedAt: at(5),
          },
        },
      ]);
  });

  it('accepts the reason to reject outright instead of a suggested revision', () => {
    spec(inRound1())
      .when(object('harbinger', 'risk', 1, at(5), { suggestedRevision: undefined, rejectReason: 'The distribution path does not exist at all.' }))
      .thenEvents(([e]) => expect(e).toMatchObject({ data: { objection: { suggestedRevision: null, rejectReason: 'The distribution path does not exist at all.' } } }));
  });

  describe('refuses a vague objection, naming exactly what it lacks', () => {
    const cases: [string, Record<string, string | undefined>, string[], RegExp][] = [
      [
        'everything',
        { constraint: undefined, scenario: '', suggestedRevision: '   ' },
        ['constraint', 'scenario', 'suggestedRevision or rejectReason'],
        /^objection by harbinger lacks the violated constitutional constraint \(constraint\) and a concrete scenario in which the proposal fails \(scenario\) and a suggested revision or the reason to reject outright \(suggestedRevision or rejectReason\)\. /,
      ],
      ['the constraint', { constraint: undefined }, ['constraint'], /^objection by harbinger lacks the violated constitutional constraint \(constraint\)\. /],
      ['the scenario', { scenario: ' \n ' }, ['scenario'], /^objection by harbinger lacks a concrete scenario in which the proposal fails \(scenario\)\. /],
      [
        'a suggested revision or reason to reject',
        { suggestedRevision: undefined, rejectReason: '' },
        ['suggestedRevision or rejectReason'],
        /^objection by harbinger lacks a suggested revision or the reason to reject outright \(suggestedRevision or rejectReason\)\. /,
      ],
      ['the scenario and the suggestion', { scenario: undefined, suggestedRevision: undefined }, ['scenario', 'suggestedRevision or rejectReason'], /^objection by harbinger lacks a concrete scenario .* and a suggested revision or the reason to reject outright/],
    ];
    it.each(cases)('lacking %s', (_what, over, missing, message) => {
      const refusal = spec(inRound1()).when(object('harbinger', 'risk', 1, at(5), over)).thenRefuses('invalid_command', message);
      expect(refusal.details).toEqual({ verdict: 'object', missing });
      expect(refusal.message).toMatch(/vague disagreement blocks nothing/);
    });
  });

  it('refuses an approval that carries objection fields', () => {
    const refusal = spec(inRound1())
      .when(approve('heretic', 'premise', 1, at(5), { constraint: 'premise', scenario: 'x' }))
      .thenRefuses('invalid_command', /an approval carries no objection, yet this one has constraint, scenario/);
    expect(refusal.details).toEqual({ verdict: 'approve', unexpected: ['constraint', 'scenario'] });
  });

  it('refuses an agent without the reviewer role, and the proposer reviewing its own proposal', () => {
    spec(inRound1()).when({ ...approve('harbinger', 'risk', 1), context: ctx('harbinger', at(5), ['observer']) }).thenRefuses('forbidden', /harbinger may not review a proposal: that needs the role reviewer, and harbinger has observer/);
    spec(inRound1()).when({ ...approve('harbinger', 'execution', 1), context: ctx('seldon', at(5), ['executive', 'reviewer']) }).thenRefuses('forbidden', /seldon may not review proposal space-os-roadmap: it is its own proposal/);
  });

  it('refuses a reviewer not assigned to the round, or reviewing another constitution than its own', () => {
    spec(inRound1()).when(approve('prime', 'evidence', 1)).thenRefuses('forbidden', /^prime is not a reviewer of round 1 of proposal space-os-roadmap \(assigned: risk harbinger, premise heretic, evidence sentinel, execution zealot\)$/);
    const refusal = spec(inRound1()).when(approve('harbinger', 'premise', 1)).thenRefuses('forbidden', /^harbinger reviews risk in round 1 of proposal space-os-roadmap, not premise$/);
    expect(refusal.details).toMatchObject({ assigned: 'risk', constitution: 'premise' });
  });

  it('takes one review per reviewer and round: the same again changes nothing, another is refused', () => {
    const reviewed = play(inRound1(), object('harbinger', 'risk', 1, at(5)));
    spec(reviewed).when(object('harbinger', 'risk', 1, at(6))).thenNothing();
    spec(reviewed).when(approve('harbinger', 'risk', 1, at(6))).thenRefuses('illegal_state', /harbinger already reviewed round 1 of proposal space-os-roadmap \(object at .*\); a reviewer reviews once per round/);
    spec(reviewed).when(object('harbinger', 'risk', 1, at(6), { scenario: 'another scenario' })).thenRefuses('illegal_state', /already reviewed round 1/);
  });

  it('refuses a review of an unknown round, a closed round, and a round past its deadline', () => {
    spec(inRound1()).when(approve('harbinger', 'risk', 2)).thenRefuses('not_found', /proposal space-os-roadmap has no round 2 \(it has had 1\)/);
    spec(inRound1()).when(approve('harbinger', 'risk', 1, at(60))).thenRefuses('illegal_state', /round 1 of proposal space-os-roadmap timed out at 2026-11-22T10:01:00.000Z: it closes at expiry, where silence counts as approval/);
    const expired = play(inRound1(), object('harbinger', 'risk', 1), expire(1, at(60)));
    spec(expired).when(approve('heretic', 'premise', 1, at(61))).thenRefuses('illegal_state', /round 1 of proposal space-os-roadmap is closed \(deadline\); heretic stayed silent until the deadline, which counted as approval/);
    const revised = play(play(inRound1(), object('harbinger', 'risk', 1)), revise(['r1-risk'], 'New body', at(20)));
    spec(revised).when(approve('heretic', 'premise', 1, at(21))).thenRefuses('illegal_state', /round 1 of proposal space-os-roadmap is closed \(revised\)/);
  });

  it('closes the round with the last review and approves the proposal when every constitution approved', () => {
    const last = approve('zealot', 'execution', 1, at(30));
    spec(play(inRound1(), ...approveAll(1).slice(0, 3)))
      .when(last)
      .thenEvents((events) => {
        expect(typesOf(events)).toEqual(['ReviewSubmitted', 'ReviewRoundClosed', 'ProposalApproved']);
        expect(events[1]).toEqual(closed({ closedAt: at(30) }));
        expect(events[2]).toEqual({
          type: 'ProposalApproved',
          data: { proposalId: PID, revision: 1, round: 1, decidedBy: 'tribunal', operator: null, satisfied: ALL, deemed: [], overriddenObjections: [], approvedAt: at(30) },
        });
      });
  });

  it('lets one objection block the proposal however many approve: objections are never outvoted', () => {
    spec(play(inRound1(), object('harbinger', 'risk', 1), approve('heretic', 'premise', 1), approve('sentinel', 'evidence', 1)))
      .when(approve('zealot', 'execution', 1))
      .thenEvents((events) => {
        expect(typesOf(events)).toEqual(['ReviewSubmitted', 'ReviewRoundClosed']);
        expect(events[1]).toEqual(closed({ outcome: 'blocked', satisfied: ['premise', 'evidence', 'execution'], raisedObjections: ['r1-risk'], openObjections: ['r1-risk'], contested: true }));
      });
    expect(stateOf(blocked1())).toMatchObject({ status: 'review', contestedRounds: 1, pendingRound: null });
  });
});

describe('WithdrawObjection', () => {
  it('approves a blocked round once its last open objection is withdrawn by its author', () => {
    spec(blocked1())
      .when(withdrawObjection('harbinger', 'r1-risk', at(200)))
      .then([
        { type: 'ObjectionWithdrawn', data: { proposalId: PID, objectionId: 'r1-risk', round: 1, constitution: 'risk', reviewer: 'harbinger', reason: 'the concern no longer applies', withdrawnAt: at(200) } },
        { type: 'ProposalApproved', data: { proposalId: PID, revision: 1, round: 1, decidedBy: 'tribunal', operator: null, satisfied: ALL, deemed: [], overriddenObjections: [], approvedAt: at(200) } },
      ]);
  });

  it('in an open round, only records the withdrawal: the round concludes when it closes', () => {
    const withdrawn = play(inRound1(), object('harbinger', 'risk', 1, at(5)), withdrawObjection('harbinger', 'r1-risk', at(6)));
    expect(typesOf(withdrawn.slice(-1))).toEqual(['ObjectionWithdrawn']);
    const done = play(withdrawn, ...approveAll(1).slice(1));
    expect(typesOf(done.slice(-2))).toEqual(['ReviewRoundClosed', 'ProposalApproved']);
    expect(done.at(-2)).toEqual(closed({ raisedObjections: ['r1-risk'] }));
  });

  it('may be done only by the author, once', () => {
    spec(blocked1()).when({ ...withdrawObjection('harbinger', 'r1-risk'), context: ctx('heretic') }).thenRefuses('forbidden', /only its author harbinger may withdraw objection r1-risk; objections are never outvoted/);
    spec(blocked1()).when(withdrawObjection('harbinger', 'r1-premise')).thenRefuses('not_found', /proposal space-os-roadmap has no objection r1-premise/);
    spec(play(blocked1(), withdrawObjection('harbinger', 'r1-risk'))).when(withdrawObjection('harbinger', 'r1-risk')).thenNothing();
    spec(play(blocked1(), revise(['r1-risk'], 'New body'))).when(withdrawObjection('harbinger', 'r1-risk')).thenNothing(); // answered already
  });

  it('while escalated, records the withdrawal and still waits for the operator', () => {
    const h = play(deadlocked(), withdrawObjection('harbinger', 'r3-risk', at(4000)));
    expect(typesOf(h.slice(-1))).toEqual(['ObjectionWithdrawn']);
    expect(stateOf(h).status).toBe('escalated');
  });

  it('is refused once the proposal is final', () => {
    const withdrawnProposal = play(blocked1(), { type: 'WithdrawProposal', context: ctx('seldon', at(300)), payload: { proposalId: PID, reason: 'dropped' } });
    spec(withdrawnProposal).when(withdrawObjection('harbinger', 'r1-risk')).thenRefuses('illegal_state', /cannot withdraw objection r1-risk: proposal space-os-roadmap is withdrawn/);
  });
});

describe('ReviseProposal', () => {
  it('answers objections and requests a new round for the new revision', () => {
    spec(blocked1())
      .when(revise(['r1-risk'], 'Week 1: bounties. Week 2: demo. Week 3: distribution, once a channel exists.', at(100), { evidence: [] }))
      .then([
        {
          type: 'ProposalRevised',
          data: { proposalId: PID, revision: 2, title: plan.title, body: 'Week 1: bounties. Week 2: demo. Week 3: distribution, once a channel exists.', problem: plan.problem, evidence: [], answers: ['r1-risk'], revisedAt: at(100) },
        },
        requested(2, 2, 'revised', at(100)),
      ]);
    const h = play(blocked1(), revise(['r1-risk'], 'New body'));
    expect(stateOf(h).objections[0]).toMatchObject({ objectionId: 'r1-risk', status: 'answered', answeredByRevision: 2 });
  });

  it('supersedes an open round; the round counts as contested when it drew objections', () => {
    spec(play(inRound1(), object('harbinger', 'risk', 1, at(5))))
      .when(revise(['r1-risk'], 'New body', at(20)))
      .thenEvents((events) => {
        expect(typesOf(events)).toEqual(['ProposalRevised', 'ReviewRoundClosed', 'ReviewRoundRequested']);
        expect(events[1]).toEqual(closed({ reason: 'revised', outcome: 'superseded', satisfied: [], raisedObjections: ['r1-risk'], openObjections: [], contested: true, closedAt: at(20) }));
      });
    spec(inRound1())
      .when(revise([], 'Typo fixed', at(20)))
      .thenEvents((events) => expect(events[1]).toEqual(closed({ reason: 'revised', outcome: 'superseded', satisfied: [], contested: false, closedAt: at(20) })));
  });

  it('leaves the objections it does not answer open: they block the next round even if everyone approves', () => {
    const twoObjections = play(inRound1(), object('harbinger', 'risk', 1), object('heretic', 'premise', 1), approve('sentinel', 'evidence', 1), approve('zealot', 'execution', 1));
    const round2 = play(twoObjections, revise(['r1-risk'], 'Answers risk only', at(100)), openRound(2, ctx('tribunal', at(101))));
    const h = play(round2, ...approveAll(2, at(110)));
    expect(h.at(-1)).toEqual(closed({ round: 2, revision: 2, outcome: 'blocked', openObjections: ['r1-premise'], contested: true, closedAt: at(110) }));
    expect(stateOf(h).status).toBe('review');
    // heretic withdrawing its round-1 objection unblocks the concluded round 2.
    spec(h).when(withdrawObjection('heretic', 'r1-premise', at(120))).thenEvents((events) => expect(typesOf(events)).toEqual(['ObjectionWithdrawn', 'ProposalApproved']));
  });

  it('does not request a second round while the requested one has not opened yet', () => {
    spec([submitted, requested(1, 1, 'submitted', T0)])
      .when(revise([], 'Before any review', at(1)))
      .thenEvents((events) => expect(typesOf(events)).toEqual(['ProposalRevised']));
  });

  it('may be done only by the proposer, as an executive', () => {
    spec(blocked1()).when(revise(['r1-risk'], 'Hijacked', at(100), {}, ctx('mallory', at(100), ['executive']))).thenRefuses('forbidden', /only the proposer seldon may revise proposal space-os-roadmap; mallory is not its proposer/);
    spec(blocked1()).when(revise(['r1-risk'], 'New body', at(100), {}, ctx('seldon', at(100), ['reviewer']))).thenRefuses('forbidden', /seldon may not revise a proposal: that needs the role executive/);
  });

  it('refuses answers to objections that do not exist or are no longer open', () => {
    const refusal = spec(blocked1()).when(revise(['r1-risk', 'r9-risk'], 'New body')).thenRefuses('invalid_command', /the revision answers objections that do not exist: r9-risk/);
    expect(refusal.details).toMatchObject({ unknownObjections: ['r9-risk'] });
    const withdrawn = play(inRound1(), object('harbinger', 'risk', 1), withdrawObjection('harbinger', 'r1-risk', at(20)));
    spec(withdrawn).when(revise(['r1-risk'], 'New body')).thenRefuses('illegal_state', /the revision answers objections that are no longer open: r1-risk \(withdrawn\)/);
  });

  it('refuses a revision that changes nothing, and treats the same revision again as done', () => {
    spec(blocked1()).when(revise(['r1-risk'], plan.body)).thenRefuses('invalid_command', /the revision changes nothing: title, body, problem and evidence are those of revision 1/);
    const revised = play(blocked1(), revise(['r1-risk'], 'New body'));
    spec(revised).when(revise(['r1-risk'], 'New body')).thenNothing();
  });

  it('is refused while escalated, and once final', () => {
    spec(deadlocked()).when(revise(['r3-risk'], 'Another try', at(4000))).thenRefuses('illegal_state', /cannot revise: proposal space-os-roadmap is escalated and waits for an operator's decision \(escalation 1\)/);
    const approved = play(inRound1(), ...approveAll(1));
    spec(approved).when(revise([], 'After the fact')).thenRefuses('illegal_state', /cannot revise: proposal space-os-roadmap is approved/);
  });
});

describe('ExpireReviewRound', () => {
  it('records every silent reviewer as an explicit deemed approval, then closes the round', () => {
    spec(play(inRound1(), approve('harbinger', 'risk', 1), approve('heretic', 'premise', 1)))
      .when(expire(1, at(60)))
      .then([
        { type: 'ReviewDeemedApproved', data: { proposalId: PID, round: 1, revision: 1, constitution: 'evidence', reviewer: 'sentinel', deadlineAt: at(60), deemedAt: at(60) } },
        { type: 'ReviewDeemedApproved', data: { proposalId: PID, round: 1, revision: 1, constitution: 'execution', reviewer: 'zealot', deadlineAt: at(60), deemedAt: at(60) } },
        closed({ reason: 'deadline', deemed: ['evidence', 'execution'], closedAt: at(60) }),
        { type: 'ProposalApproved', data: { proposalId: PID, revision: 1, round: 1, decidedBy: 'tribunal', operator: null, satisfied: ALL, deemed: ['evidence', 'execution'], overriddenObjections: [], approvedAt: at(60) } },
      ]);
  });

  it('keeps an objection blocking when the others are silent', () => {
    spec(play(inRound1(), object('harbinger', 'risk', 1)))
      .when(expire(1, at(61)))
      .thenEvents((events) => {
        expect(typesOf(events)).toEqual(['ReviewDeemedApproved', 'ReviewDeemedApproved', 'ReviewDeemedApproved', 'ReviewRoundClosed']);
        expect(events[3]).toEqual(closed({ reason: 'deadline', outcome: 'blocked', satisfied: ['premise', 'evidence', 'execution'], deemed: ['premise', 'evidence', 'execution'], raisedObjections: ['r1-risk'], openObjections: ['r1-risk'], contested: true, closedAt: at(61) }));
      });
  });

  it('is refused before the deadline, and changes nothing once the round is closed', () => {
    spec(inRound1()).when(expire(1, at(59))).thenRefuses('illegal_state', /round 1 of proposal space-os-roadmap is due at 2026-11-22T10:01:00.000Z, not yet at 2026-11-22T10:00:59.000Z/);
    spec(play(inRound1(), expire(1, at(60)))).when(expire(1, at(60))).thenNothing();
    spec(play(inRound1(), ...approveAll(1))).when(expire(1, at(60))).thenNothing();
  });

  it('is refused to any actor but the tribunal service (an operator included), and for an unknown round', () => {
    spec(inRound1()).when(expire(1, at(60), ctx('harbinger', at(60)))).thenRefuses('forbidden', /harbinger may not expire a review round: that needs the role service/);
    spec(inRound1()).when(expire(1, at(60), ctx('root', at(60)))).thenRefuses('forbidden', /root may not expire a review round: that needs the role service/);
    spec(inRound1()).when(expire(2, at(60))).thenRefuses('not_found', /has no round 2/);
  });
});

describe('escalation', () => {
  it('escalates to a human after 3 contested rounds', () => {
    const h = deadlocked();
    expect(typesOf(h.slice(-3))).toEqual(['ReviewSubmitted', 'ReviewRoundClosed', 'ProposalEscalated']);
    expect(h.at(-1)).toEqual({
      type: 'ProposalEscalated',
      data: { proposalId: PID, escalation: 1, reason: 'deadlock', revision: 3, round: 3, contestedRounds: 3, openObjections: ['r3-risk'], uncovered: [], escalatedAt: at(2010) },
    });
    expect(stateOf(h)).toMatchObject({ status: 'escalated', pendingRound: null });
  });

  it('counts rounds superseded after drawing objections: revising on every objection cannot loop forever', () => {
    let h = inRound1();
    for (let round = 1; round <= 3; round++) {
      h = play(h, object('harbinger', 'risk', round, at(round * 10)), revise([`r${round}-risk`], `Body ${round + 1}`, at(round * 10 + 1)));
      if (round < 3) h = play(h, openRound(round + 1, ctx('tribunal', at(round * 10 + 2))));
    }
    expect(typesOf(h.slice(-3))).toEqual(['ProposalRevised', 'ReviewRoundClosed', 'ProposalEscalated']);
    expect(h.at(-1)).toMatchObject({ data: { reason: 'deadlock', revision: 4, round: 3, contestedRounds: 3, openObjections: [] } });
  });

  it('lets an operator approve over the open objections, which are recorded as overridden', () => {
    spec(deadlocked())
      .when(decide(1, 'approve', 'Risk accepted: week 3 is gated by a manual check', ctx('root', at(5000))))
      .then([
        { type: 'EscalationDecided', data: { proposalId: PID, escalation: 1, decision: 'approve', operator: 'root', reason: 'Risk accepted: week 3 is gated by a manual check', openObjections: ['r3-risk'], decidedAt: at(5000) } },
        {
          type: 'ProposalApproved',
          data: { proposalId: PID, revision: 3, round: 3, decidedBy: 'operator', operator: 'root', satisfied: ['premise', 'evidence', 'execution'], deemed: [], overriddenObjections: ['r3-risk'], approvedAt: at(5000) },
        },
      ]);
    const h = play(deadlocked(), decide(1, 'approve', 'accepted'));
    expect(stateOf(h).objections.find((o) => o.objectionId === 'r3-risk')).toMatchObject({ status: 'overridden' });
  });

  it('lets an operator reject', () => {
    spec(deadlocked())
      .when(decide(1, 'reject', 'No distribution path: drop the plan'))
      .then([
        { type: 'EscalationDecided', data: { proposalId: PID, escalation: 1, decision: 'reject', operator: 'root', reason: 'No distribution path: drop the plan', openObjections: ['r3-risk'], decidedAt: at(5000) } },
        { type: 'ProposalRejected', data: { proposalId: PID, revision: 3, escalation: 1, operator: 'root', reason: 'No distribution path: drop the plan', rejectedAt: at(5000) } },
      ]);
  });

  it('lets an operator send it back for a new round, with a fresh budget of contested rounds', () => {
    const h = play(deadlocked(), decide(1, 'send_back', 'Talk to harbinger first'));
    expect(h.slice(-1)).toEqual([requested(4, 3, 'sent_back', at(5000))]);
    expect(stateOf(h)).toMatchObject({ status: 'review', contestedRounds: 0, pendingRound: 4 });
    const blocked4 = play(h, openRound(4, ctx('tribunal', at(5001))), object('harbinger', 'risk', 4, at(5002)), ...approveAll(4, at(5002)).slice(1));
    expect(typesOf(blocked4.slice(-1))).toEqual(['ReviewRoundClosed']); // blocked, not escalated again
    expect(stateOf(blocked4)).toMatchObject({ status: 'review', contestedRounds: 1 });
  });

  it('takes a decision from an operator only, once per escalation', () => {
    spec(deadlocked()).when(decide(1, 'approve', 'me', ctx('seldon', at(5000)))).thenRefuses('forbidden', /seldon may not decide an escalation: that needs the role operator, and seldon has executive/);
    spec(deadlocked()).when(decide(2, 'approve', 'x')).thenRefuses('not_found', /proposal space-os-roadmap has no escalation 2 \(it has had 1\)/);
    const decided = play(deadlocked(), decide(1, 'reject', 'no'));
    spec(decided).when(decide(1, 'reject', 'no')).thenNothing();
    spec(decided).when(decide(1, 'approve', 'changed my mind')).thenRefuses('illegal_state', /escalation 1 of proposal space-os-roadmap was already decided: reject by root/);
    spec(inRound1()).when(decide(1, 'approve', 'x')).thenRefuses('not_found', /has no escalation 1/);
  });

  it('lets nothing proceed until the operator decides', () => {
    const h = deadlocked();
    spec(h).when(openRound(4)).thenNothing(); // no round was requested: none opens
    spec(h).when(openRound(5)).thenRefuses('illegal_state', /round 5 cannot open/);
    spec(h).when(revise(['r3-risk'], 'x')).thenRefuses('illegal_state', /escalated/);
    const withdrawn = play(h, { type: 'WithdrawProposal', context: ctx('seldon', at(4500)), payload: { proposalId: PID, reason: 'giving up' } });
    spec(withdrawn).when(decide(1, 'approve', 'too late')).thenRefuses('illegal_state', /proposal space-os-roadmap is withdrawn: escalation 1 can no longer be decided/);
  });
});

describe('WithdrawProposal', () => {
  const withdraw = (c = ctx('seldon', at(30))) => ({ type: 'WithdrawProposal' as const, context: c, payload: { proposalId: PID, reason: 'superseded by another plan' } });

  it('withdraws and closes the open round', () => {
    spec(play(inRound1(), object('harbinger', 'risk', 1)))
      .when(withdraw())
      .then([
        { type: 'ProposalWithdrawn', data: { proposalId: PID, revision: 1, reason: 'superseded by another plan', withdrawnAt: at(30) } },
        closed({ reason: 'withdrawn', outcome: 'withdrawn', satisfied: [], raisedObjections: ['r1-risk'], openObjections: ['r1-risk'], contested: false, closedAt: at(30) }),
      ]);
  });

  it('answers a round request left pending with nothing', () => {
    spec(play([submitted, requested(1, 1, 'submitted', T0)], withdraw())).when(openRound(1)).thenNothing();
  });

  it('may be done only by the proposer, once, and not after approval', () => {
    spec(inRound1()).when(withdraw(ctx('mallory', at(30), ['executive']))).thenRefuses('forbidden', /only the proposer seldon may withdraw/);
    spec(play(inRound1(), withdraw())).when(withdraw()).thenNothing();
    spec(play(inRound1(), ...approveAll(1))).when(withdraw()).thenRefuses('illegal_state', /cannot withdraw it: proposal space-os-roadmap is approved/);
  });
});

describe('RecordExecution', () => {
  it('records the execution of an approved proposal, and nothing else', () => {
    spec(play(inRound1(), ...approveAll(1)))
      .when(recordExecution('Bounties posted', ctx('seldon', at(100)), 'https://example.org/bounties'))
      .then([{ type: 'ExecutionRecorded', data: { proposalId: PID, executive: 'seldon', revision: 1, status: 'approved', summary: 'Bounties posted', ref: 'https://example.org/bounties', recordedAt: at(100) } }]);
  });

  it('records ProceededDespiteObjections when the proposal was not approved, with the open objections and silent constitutions', () => {
    spec(play(inRound1(), object('harbinger', 'risk', 1), approve('heretic', 'premise', 1)))
      .when(recordExecution('Shipped anyway', ctx('seldon', at(20))))
      .then([
        { type: 'ExecutionRecorded', data: { proposalId: PID, executive: 'seldon', revision: 1, status: 'review', summary: 'Shipped anyway', ref: null, recordedAt: at(20) } },
        {
          type: 'ProceededDespiteObjections',
          data: {
            proposalId: PID,
            executive: 'seldon',
            revision: 1,
            status: 'review',
            round: 1,
            openObjections: [{ objectionId: 'r1-risk', constitution: 'risk', reviewer: 'harbinger', constraint: 'risk constraint' }],
            unheard: ['evidence', 'execution'],
            recordedAt: at(20),
          },
        },
      ]);
  });

  it('records it too for an escalated, rejected or withdrawn proposal, or one not reviewed yet', () => {
    const histories = {
      escalated: deadlocked(),
      rejected: play(deadlocked(), decide(1, 'reject', 'no')),
      withdrawn: play(inRound1(), { type: 'WithdrawProposal', context: ctx('seldon', at(30)), payload: { proposalId: PID, reason: 'x' } }),
      review: [submitted, requested(1, 1, 'submitted', T0)],
    };
    for (const [status, h] of Object.entries(histories)) {
      spec(h)
        .when(recordExecution('Did it'))
        .thenEvents((events) => {
          expect(typesOf(events)).toEqual(['ExecutionRecorded', 'ProceededDespiteObjections']);
          expect(events[1]!.data).toMatchObject({ status });
        });
    }
    expect(stateOf(play(deadlocked(), recordExecution('Did it'))).execution).toMatchObject({ despiteObjections: true, statusAtExecution: 'escalated' });
  });

  it('may be done only by the proposer, once', () => {
    spec(inRound1()).when(recordExecution('Did it', ctx('mallory', at(50), ['executive']))).thenRefuses('forbidden', /only the proposer seldon may record the execution of proposal space-os-roadmap/);
    const done = play(inRound1(), recordExecution('Did it'));
    spec(done).when(recordExecution('Did it')).thenNothing();
    spec(done).when(recordExecution('Did something else')).thenRefuses('illegal_state', /the execution of proposal space-os-roadmap was already recorded at/);
    spec([]).when(recordExecution('Did it')).thenRefuses('not_found', /does not exist/);
  });
});

describe('state', () => {
  it('is a ProposalRecord (the read model of proposals.get) at every step', () => {
    const h = play(deadlocked(), decide(1, 'send_back', 'again'), openRound(4, ctx('tribunal', at(5001))), object('heretic', 'premise', 4, at(5002)), withdrawObjection('heretic', 'r4-premise', at(5003)));
    for (let n = 1; n <= h.length; n++) ProposalRecord.parse(stateOf(h.slice(0, n)));
    expect(stateOf(h).revisions.map((r) => r.answers)).toEqual([[], ['r1-risk'], ['r2-risk']]);
  });
});
