/**
 * The seed's stories, end to end through the decider: Space-OS (two objections, a revision, approval
 * in round 2), a time-boxed round with a silent reviewer, a deadlock escalated to a human, and an
 * executive proceeding despite objections.
 */
import { deadlineOf, parseRoundDeadlineKey, proposalStreamId } from '../src/deadlines.js';
import type { ProposalCommand, ProposalEvent } from '../src/proposal.js';
import { approve, assignments, at, ctx, decide, expire, object, openRound, PID, play, recordExecution, revise, spec, stateOf, submit, typesOf } from './fixtures.js';

const review = (reviewer: string, now: string, payload: Omit<Extract<ProposalCommand, { type: 'SubmitReview' }>['payload'], 'proposalId' | 'citations'> & { citations?: { ref: string; summary: string }[] }): ProposalCommand => ({
  type: 'SubmitReview',
  context: ctx(reviewer, now),
  payload: { proposalId: PID, citations: [], ...payload },
});

describe('Space-OS: the executive frame is corrected before workers execute it', () => {
  const proposal = submit({
    title: 'Space-OS: three-week plan',
    body: 'Week 1: bounties. Week 2: demo. Week 3: distribution.',
    problem: 'Space-OS needs users; all three steps or none.',
    evidence: [{ ref: 'brr/threads/004', summary: 'bounties drew contributors elsewhere' }],
    reviewDeadlineMs: 3_600_000,
  });

  const round1 = [
    review('harbinger', at(600), {
      round: 1,
      constitution: 'risk',
      verdict: 'object',
      reasoning: 'Frame incomplete.',
      constraint: 'Risk: every step must have a path that exists today',
      scenario: 'Week 3 assumes distribution path exists. GitHub private, PyPI blocked.',
      suggestedRevision: 'Do not make distribution depend on weeks 1 and 2; find a channel first.',
    }),
    review('heretic', at(900), {
      round: 1,
      constitution: 'premise',
      verdict: 'object',
      reasoning: 'The premise is invented.',
      constraint: 'Premise: the frame must rest on recorded decisions',
      scenario: "'All three or none' not in ledger. Cascade assumption fabricated.",
      suggestedRevision: 'Drop the cascade: no sequential dependency between the weeks.',
    }),
    review('sentinel', at(1200), {
      round: 1,
      constitution: 'evidence',
      verdict: 'approve',
      reasoning: "Check decisions: d/0fd09b4f says 'swarm builds, human converts.' No cascade.",
      citations: [{ ref: 'd/0fd09b4f', summary: 'swarm builds, human converts' }],
    }),
    review('zealot', at(1500), { round: 1, constitution: 'execution', verdict: 'approve', reasoning: 'Each week can ship on its own.' }),
  ];

  it('is challenged in round 1, revised in answer to both objections, and approved in round 2', () => {
    let h = play([], proposal, openRound(1, ctx('tribunal', at(1))));
    expect(stateOf(h).rounds[0]!.assignments).toEqual(assignments);

    h = play(h, ...round1);
    expect(h.at(-1)).toMatchObject({
      type: 'ReviewRoundClosed',
      data: { round: 1, reason: 'all_reviewed', outcome: 'blocked', satisfied: ['evidence', 'execution'], raisedObjections: ['r1-risk', 'r1-premise'], openObjections: ['r1-risk', 'r1-premise'], contested: true },
    });
    expect(stateOf(h).status).toBe('review');
    // Workers must not start: executing now would be recorded as proceeding despite objections.
    spec(h).when(recordExecution('start week 1', ctx('seldon', at(1600)))).thenEvents((events) => expect(typesOf(events)).toContain('ProceededDespiteObjections'));

    h = play(h, revise(['r1-risk', 'r1-premise'], 'No sequential dependency. Continue building regardless of bounty outcome.', at(2000), { problem: 'Space-OS needs users; each step is worth doing on its own.' }));
    expect(typesOf(h.slice(-2))).toEqual(['ProposalRevised', 'ReviewRoundRequested']);
    expect(stateOf(h).objections.map((o) => [o.objectionId, o.status, o.answeredByRevision])).toEqual([
      ['r1-risk', 'answered', 2],
      ['r1-premise', 'answered', 2],
    ]);

    h = play(h, openRound(2, ctx('tribunal', at(2001))));
    expect(h.at(-1)).toMatchObject({ type: 'ReviewRoundOpened', data: { round: 2, revision: 2, assignments } });

    h = play(
      h,
      review('harbinger', at(2100), { round: 2, constitution: 'risk', verdict: 'approve', reasoning: 'Nothing depends on a channel that does not exist.' }),
      review('heretic', at(2200), { round: 2, constitution: 'premise', verdict: 'approve', reasoning: 'No fabricated cascade left.' }),
      review('sentinel', at(2300), { round: 2, constitution: 'evidence', verdict: 'approve', reasoning: 'Consistent with d/0fd09b4f.', citations: [{ ref: 'd/0fd09b4f', summary: 'swarm builds, human converts' }] }),
      review('zealot', at(2400), { round: 2, constitution: 'execution', verdict: 'approve', reasoning: 'Ships.' }),
    );
    expect(h.at(-1)).toEqual({
      type: 'ProposalApproved',
      data: { proposalId: PID, revision: 2, round: 2, decidedBy: 'tribunal', operator: null, satisfied: ['risk', 'premise', 'evidence', 'execution'], deemed: [], overriddenObjections: [], approvedAt: at(2400) },
    });
    expect(typesOf(h)).toEqual([
      'ProposalSubmitted',
      'ReviewRoundRequested',
      'ReviewRoundOpened',
      'ReviewSubmitted',
      'ReviewSubmitted',
      'ReviewSubmitted',
      'ReviewSubmitted',
      'ReviewRoundClosed',
      'ProposalRevised',
      'ReviewRoundRequested',
      'ReviewRoundOpened',
      'ReviewSubmitted',
      'ReviewSubmitted',
      'ReviewSubmitted',
      'ReviewSubmitted',
      'ReviewRoundClosed',
      'ProposalApproved',
    ]);
    const state = stateOf(h);
    expect(state).toMatchObject({ status: 'approved', revision: 2, body: 'No sequential dependency. Continue building regardless of bounty outcome.', contestedRounds: 1 });
    expect(state.objections.find((o) => o.objectionId === 'r1-premise')).toMatchObject({
      reviewer: 'heretic',
      constraint: 'Premise: the frame must rest on recorded decisions',
      scenario: "'All three or none' not in ledger. Cascade assumption fabricated.",
    });

    // Now the workers may execute: no ProceededDespiteObjections.
    spec(h).when(recordExecution('Bounties posted; demo building in parallel', ctx('seldon', at(3000)))).thenEvents((events) => expect(typesOf(events)).toEqual(['ExecutionRecorded']));
  });
});

describe('time-box: silence counts as approval, explicitly', () => {
  it('deems the silent reviewer approved at the deadline the scheduler reads off the log', () => {
    let h = play([], submit({ reviewDeadlineMs: 30_000 }), openRound(1, ctx('tribunal', at(5))));
    const opened = h.at(-1)!;
    const due = deadlineOf({ ...opened, streamId: proposalStreamId(PID) });
    expect(due).toEqual({ key: `proposal-${PID}:round:1`, dueAt: at(35) });

    h = play(h, approve('harbinger', 'risk', 1, at(10)), approve('heretic', 'premise', 1, at(11)), approve('sentinel', 'evidence', 1, at(12)));
    expect(stateOf(h).rounds[0]!.status).toBe('open'); // zealot is silent

    // The scheduler fires ExpireReviewRound for the key, with context.now = the due time.
    const { key, dueAt } = due as { key: string; dueAt: string };
    const target = parseRoundDeadlineKey(key)!;
    spec(h).when(expire(target.round, at(34))).thenRefuses('illegal_state', /not yet/);
    h = play(h, expire(target.round, dueAt));
    expect(h.slice(-3)).toEqual([
      { type: 'ReviewDeemedApproved', data: { proposalId: PID, round: 1, revision: 1, constitution: 'execution', reviewer: 'zealot', deadlineAt: at(35), deemedAt: at(35) } },
      {
        type: 'ReviewRoundClosed',
        data: { proposalId: PID, round: 1, revision: 1, reason: 'deadline', outcome: 'approved', satisfied: ['risk', 'premise', 'evidence', 'execution'], deemed: ['execution'], raisedObjections: [], openObjections: [], contested: false, closedAt: at(35) },
      },
      {
        type: 'ProposalApproved',
        data: { proposalId: PID, revision: 1, round: 1, decidedBy: 'tribunal', operator: null, satisfied: ['risk', 'premise', 'evidence', 'execution'], deemed: ['execution'], overriddenObjections: [], approvedAt: at(35) },
      },
    ]);
    // The close cancels the deadline; a second firing (another replica, a restart) changes nothing.
    expect(deadlineOf({ ...h.at(-2)!, streamId: proposalStreamId(PID) })).toEqual({ cancel: key });
    spec(h).when(expire(1, dueAt)).thenNothing();
    expect(stateOf(h).rounds[0]!.reviews.find((r) => r.reviewer === 'zealot')).toMatchObject({ deemed: true, verdict: 'approve', reasoning: null });
  });
});

describe('deadlock: orthogonal constitutions cannot converge, a human decides', () => {
  /** harbinger objects in every round; seldon revises each time; the other three approve. */
  function threeRounds(): ProposalEvent[] {
    let h = play([], submit({ reviewDeadlineMs: 3_600_000 }), openRound(1));
    for (let round = 1; round <= 3; round++) {
      const t = round * 1000;
      if (round > 1) h = play(h, revise([`r${round - 1}-risk`], `Attempt ${round}: distribution via a mirror`, at(t - 10)), openRound(round, ctx('tribunal', at(t))));
      h = play(
        h,
        object('harbinger', 'risk', round, at(t + 10), { scenario: `Attempt ${round} still needs a channel that is blocked`, suggestedRevision: undefined, rejectReason: 'No distribution channel exists: do not plan on one' }),
        approve('heretic', 'premise', round, at(t + 20)),
        approve('sentinel', 'evidence', round, at(t + 20)),
        approve('zealot', 'execution', round, at(t + 20)),
      );
    }
    return h;
  }

  it('escalates after 3 contested rounds and waits; the operator approves over the objection, which stays on record', () => {
    const h = threeRounds();
    expect(h.at(-1)).toEqual({
      type: 'ProposalEscalated',
      data: { proposalId: PID, escalation: 1, reason: 'deadlock', revision: 3, round: 3, contestedRounds: 3, openObjections: ['r3-risk'], uncovered: [], escalatedAt: at(3020) },
    });
    // Nothing proceeds until a human decides: no revision, no new round, and an agent cannot decide.
    spec(h).when(revise(['r3-risk'], 'Attempt 4')).thenRefuses('illegal_state', /waits for an operator's decision/);
    spec(h).when(decide(1, 'approve', 'I decide', ctx('seldon', at(4000)))).thenRefuses('forbidden', /needs the role operator/);

    const decided = play(h, decide(1, 'approve', 'Accept the risk: distribution is handled by the human operator', ctx('root', at(4000))));
    expect(typesOf(decided.slice(-2))).toEqual(['EscalationDecided', 'ProposalApproved']);
    expect(decided.at(-1)).toMatchObject({ data: { decidedBy: 'operator', operator: 'root', overriddenObjections: ['r3-risk'] } });
    expect(stateOf(decided).escalations).toEqual([
      expect.objectContaining({ escalation: 1, reason: 'deadlock', decision: 'approve', operator: 'root', decidedAt: at(4000), decisionReason: 'Accept the risk: distribution is handled by the human operator' }),
    ]);
    // Executing an operator-approved proposal is not proceeding despite objections.
    spec(decided).when(recordExecution('Done', ctx('seldon', at(5000)))).thenEvents((events) => expect(typesOf(events)).toEqual(['ExecutionRecorded']));
  });

  it('or sends it back for another round', () => {
    const h = play(threeRounds(), decide(1, 'send_back', 'harbinger and seldon: agree on a channel first', ctx('root', at(4000))), openRound(4, ctx('tribunal', at(4001))));
    expect(h.at(-1)).toMatchObject({ type: 'ReviewRoundOpened', data: { round: 4, revision: 3, openedAt: at(4001) } });
    expect(stateOf(h)).toMatchObject({ status: 'review', contestedRounds: 0 });
  });
});

describe('an executive that ignores the tribunal', () => {
  it('leaves an audit trail: ProceededDespiteObjections names the executive and the open objections', () => {
    const h = play([], submit(), openRound(1), object('harbinger', 'risk', 1, at(10)), object('heretic', 'premise', 1, at(20)), approve('sentinel', 'evidence', 1, at(30)));
    spec(h)
      .when(recordExecution('Posted the bounties anyway', ctx('seldon', at(40)), 'https://example.org/bounties'))
      .thenEvents((events) => {
        expect(typesOf(events)).toEqual(['ExecutionRecorded', 'ProceededDespiteObjections']);
        expect(events[1]!.data).toEqual({
          proposalId: PID,
          executive: 'seldon',
          revision: 1,
          status: 'review',
          round: 1,
          openObjections: [
            { objectionId: 'r1-risk', constitution: 'risk', reviewer: 'harbinger', constraint: 'risk constraint' },
            { objectionId: 'r1-premise', constitution: 'premise', reviewer: 'heretic', constraint: 'premise constraint' },
          ],
          unheard: ['execution'],
          recordedAt: at(40),
        });
      });
  });
});
