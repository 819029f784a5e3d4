import { ProposalRecord } from '@agora/contracts';
import { outcomeCounts, reviewerCalibration } from '../src/calibration.js';
import type { ProposalEvent } from '../src/proposal.js';
import { approve, assignments, at, ctx, inRound1, object, openRound, PID, play, recordExecution, reportOutcome, revise, spec, stateOf, withdrawObjection } from './fixtures.js';

const approveAll = (round: number, now = at(10)) => assignments.map((a) => approve(a.reviewer, a.constitution, round, now));
/** Approved in round 1 and executed. */
const executed = (): ProposalEvent[] => play(inRound1(), ...approveAll(1), recordExecution('Bounties posted'));

describe('ReportOutcome', () => {
  it('records the outcome the proposer reports for its executed proposal', () => {
    spec(executed())
      .when(reportOutcome('failed', 'No contributor came', ctx('seldon', at(10_000))))
      .then([{ type: 'OutcomeReported', data: { proposalId: PID, outcome: 'failed', note: 'No contributor came', reporter: 'seldon', reportedAs: 'executive', revision: 1, reportedAt: at(10_000) } }]);
  });

  it('records the outcome an operator reports, and the read model shows it', () => {
    const h = play(executed(), reportOutcome('worked', 'Twelve contributors', ctx('root', at(11_000))));
    expect(h.at(-1)).toEqual({ type: 'OutcomeReported', data: expect.objectContaining({ reporter: 'root', reportedAs: 'operator', outcome: 'worked' }) });
    const state = stateOf(h);
    expect(state.outcome).toEqual({ outcome: 'worked', note: 'Twelve contributors', reporter: 'root', reportedAs: 'operator', reportedAt: at(11_000) });
    ProposalRecord.parse(state);
  });

  it('accepts a report on a proposal executed despite objections', () => {
    const h = play(inRound1(), object('harbinger', 'risk', 1), recordExecution('Shipped anyway', ctx('seldon', at(20))));
    spec(h).when(reportOutcome('failed', 'It broke')).thenEvents((events) => expect(events.map((e) => e.type)).toEqual(['OutcomeReported']));
  });

  it('refuses an unknown proposal, one not executed yet, and anyone but the proposer or an operator', () => {
    spec([]).when(reportOutcome('worked', 'fine')).thenRefuses('not_found', /proposal space-os-roadmap does not exist/);
    spec(play(inRound1(), ...approveAll(1))).when(reportOutcome('worked', 'fine')).thenRefuses('illegal_state', /has not been executed: record its execution \(RecordExecution\) before reporting its outcome/);
    spec(executed()).when(reportOutcome('worked', 'fine', ctx('harbinger', at(10_000)))).thenRefuses('forbidden', /only the proposer seldon or an operator may report the outcome of proposal space-os-roadmap; harbinger is neither/);
    // Another executive is not the proposer.
    spec(executed()).when(reportOutcome('worked', 'fine', ctx('mallory', at(10_000), ['executive']))).thenRefuses('forbidden', /mallory is neither/);
  });

  it('is reported once: the same report again changes nothing, a different one is refused', () => {
    const reported = play(executed(), reportOutcome('failed', 'No contributor came'));
    spec(reported).when(reportOutcome('failed', 'No contributor came')).thenNothing();
    spec(reported).when(reportOutcome('worked', 'Actually fine', ctx('root', at(12_000)))).thenRefuses('illegal_state', /the outcome of proposal space-os-roadmap was already reported \(failed\) by seldon at .*; a report is final/);
  });
});

describe('reviewerCalibration', () => {
  // harbinger objects in round 1 (answered by revision 2), heretic objects and withdraws, zealot objects
  // in round 2 and stays open; the proposal is executed despite zealot's objection and fails.
  const history = () =>
    play(
      inRound1(),
      object('harbinger', 'risk', 1),
      object('heretic', 'premise', 1),
      approve('sentinel', 'evidence', 1),
      approve('zealot', 'execution', 1),
      withdrawObjection('heretic', 'r1-premise', at(20)),
      revise(['r1-risk'], 'Week 1: bounties with a budget cap.', at(100)),
      openRound(2, ctx('tribunal', at(101))),
      approve('harbinger', 'risk', 2, at(110)),
      approve('heretic', 'premise', 2, at(110)),
      approve('sentinel', 'evidence', 2, at(110)),
      object('zealot', 'execution', 2, at(110)),
      recordExecution('Shipped anyway', ctx('seldon', at(200))),
    );

  it('gives each objection one fate and compares final verdicts with the outcome', () => {
    const before = reviewerCalibration([stateOf(history())]);
    expect(before.map((r) => [r.reviewer, r.constitution, r.objections, r.upheldByRevision, r.pending, r.upheldRate])).toEqual([
      ['harbinger', 'risk', 1, 1, 0, 1],
      ['heretic', 'premise', 1, 0, 1, null],
      ['sentinel', 'evidence', 0, 0, 0, null],
      ['zealot', 'execution', 1, 0, 1, null],
    ]);
    expect(before.every((r) => r.approvalsWorked + r.approvalsFailed + r.objectionsWorked + r.objectionsFailed === 0)).toBe(true);

    const failed = stateOf(play(history(), reportOutcome('failed', 'It broke')));
    const byReviewer = Object.fromEntries(reviewerCalibration([failed]).map((r) => [r.reviewer, r]));
    expect(byReviewer['harbinger']).toMatchObject({ approvals: 1, objections: 1, upheldByRevision: 1, upheldByOutcome: 0, approvalsFailed: 1, upheldRate: 1 });
    expect(byReviewer['heretic']).toMatchObject({ approvals: 1, objections: 1, upheldByOutcome: 1, withdrawn: 1, pending: 0, approvalsFailed: 1, upheldRate: 1 });
    expect(byReviewer['sentinel']).toMatchObject({ approvals: 2, objections: 0, approvalsFailed: 1, upheldRate: null });
    expect(byReviewer['zealot']).toMatchObject({ approvals: 1, objections: 1, upheldByOutcome: 1, objectionsFailed: 1, approvalsFailed: 0 });

    const worked = stateOf(play(history(), reportOutcome('worked', 'Fine after all')));
    const w = Object.fromEntries(reviewerCalibration([worked]).map((r) => [r.reviewer, r]));
    expect(w['heretic']).toMatchObject({ notUpheld: 1, upheldByOutcome: 0, upheldRate: 0, approvalsWorked: 1 });
    expect(w['zealot']).toMatchObject({ notUpheld: 1, objectionsWorked: 1, upheldRate: 0 });
    expect(w['harbinger']).toMatchObject({ upheldByRevision: 1, upheldRate: 1, approvalsWorked: 1 });
  });

  it('sums the four fates to the objections raised, filters by reviewer and constitution, and counts outcomes', () => {
    const records = [stateOf(play(history(), reportOutcome('failed', 'It broke'))), stateOf(executed()), stateOf(inRound1())];
    for (const r of reviewerCalibration(records)) expect(r.upheldByRevision + r.upheldByOutcome + r.notUpheld + r.pending).toBe(r.objections);
    expect(reviewerCalibration(records, { reviewer: 'zealot' }).map((r) => r.reviewer)).toEqual(['zealot']);
    expect(reviewerCalibration(records, { constitution: 'risk' }).map((r) => r.reviewer)).toEqual(['harbinger']);
    expect(reviewerCalibration(records, { reviewer: 'nobody' })).toEqual([]);
    expect(outcomeCounts(records)).toEqual({ executed: 2, worked: 0, failed: 1 });
  });
});
