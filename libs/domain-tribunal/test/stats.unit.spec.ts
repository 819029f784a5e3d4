/**
 * The tribunal's health figures over records the real decider produced (fixtures' `play`): every
 * TribunalStats figure, its window edges, the nulls when nothing was reviewed, the seed's coverage
 * measurement and the health bands.
 */
import { TribunalStats } from '@agora/contracts';
import type { ProposalCommand, ProposalEvent, Proposal } from '../src/proposal.js';
import { approvingConstitutionsInLastRound, constitutionalCoverage, DAY_MS, decidedAt, healthBand, reviewedConstitutions, tribunalStats, tribunalTotals } from '../src/stats.js';
import { approve, at, candidates, ctx, decide, expire, object, openRound, PID, play, recordExecution, revise, stateOf, submit, T0, withdrawObjection } from './fixtures.js';

/** The record the decider folds from `history`, under its own id (the fixtures always use PID). */
const record = (proposalId: string, history: readonly ProposalEvent[]): Proposal => ({ ...stateOf(history), proposalId });
const plus = (time: string, msAfter: number): string => new Date(Date.parse(time) + msAfter).toISOString();

const allApprove = (round: number, now: string): ProposalCommand[] => [
  approve('harbinger', 'risk', round, now),
  approve('heretic', 'premise', round, now),
  approve('sentinel', 'evidence', round, now),
  approve('zealot', 'execution', round, now),
];

/** Approved in round 1 by all four constitutions at at(10). */
const clean = () => play([], submit(), openRound(1, ctx('tribunal', at(1))), ...allApprove(1, at(10)));

/** Two objections in round 1, a revision answering both, approved in round 2 at at(110). */
const challenged = () =>
  play(
    [],
    submit(),
    openRound(1, ctx('tribunal', at(1))),
    object('harbinger', 'risk', 1, at(10)),
    object('heretic', 'premise', 1, at(10)),
    approve('sentinel', 'evidence', 1, at(10)),
    approve('zealot', 'execution', 1, at(10)),
    revise(['r1-risk', 'r1-premise'], 'No sequential dependency', at(100)),
    openRound(2, ctx('tribunal', at(101))),
    ...allApprove(2, at(110)),
  );

/** Two reviewers answer, two stay silent: deemed approved at the deadline at(61), approved then. */
const silent = () => play([], submit(), openRound(1, ctx('tribunal', at(1))), approve('harbinger', 'risk', 1, at(10)), approve('heretic', 'premise', 1, at(10)), expire(1, at(61)));

/** harbinger objects in three rounds: escalated (deadlock) at at(3020). */
function deadlocked(): ProposalEvent[] {
  let h = play([], submit({ reviewDeadlineMs: 3_600_000 }), openRound(1));
  for (let round = 1; round <= 3; round++) {
    const t = round * 1000;
    if (round > 1) h = play(h, revise([`r${round - 1}-risk`], `Attempt ${round}`, at(t - 10)), openRound(round, ctx('tribunal', at(t))));
    h = play(
      h,
      object('harbinger', 'risk', round, at(t + 10)),
      object('heretic', 'premise', round, at(t + 10)),
      approve('sentinel', 'evidence', round, at(t + 20)),
      approve('zealot', 'execution', round, at(t + 20)),
    );
    // the premise objection is withdrawn each round: only risk keeps the deadlock going
    h = play(h, withdrawObjection('heretic', `r${round}-premise`, at(t + 30)));
  }
  return h;
}

/** Submitted, round 1 open, one review in. */
const pending = () => play([], submit(), openRound(1, ctx('tribunal', at(1))), approve('harbinger', 'risk', 1, at(10)));

/** The fleet of the metrics scenario: 5 proposals, 2 challenged, 2 deemed approvals, 1 deadlock rejected and executed anyway. */
function fleet(): Proposal[] {
  return [
    record('p1-clean', clean()),
    record('p2-challenged', challenged()),
    record('p3-silent', silent()),
    record('p4-deadlock', play(deadlocked(), decide(1, 'reject', 'the channel does not exist', ctx('root', at(5000))), recordExecution('did it anyway', ctx('seldon', at(9000))))),
    record('p5-pending', pending()),
  ];
}

describe('tribunalStats', () => {
  const now = at(10_000);

  it('gives zeros and nulls for an empty fleet, with the window it looked at', () => {
    const stats = tribunalStats([], now);
    expect(TribunalStats.parse(stats)).toEqual(stats);
    expect(stats).toEqual({
      window: { from: new Date(Date.parse(now) - 30 * DAY_MS).toISOString(), to: now, days: 30 },
      proposals: { submitted: 0, reviewed: 0, challenged: 0 },
      challengeRate: null,
      reviewedWithFewerThanMinConstitutions: 0,
      deemedApprovals: 0,
      deadlocksEscalated: 0,
      coverageEscalations: 0,
      proceededDespiteObjections: 0,
      outcomes: { review: 0, escalated: 0, approved: 0, approvedByOperator: 0, rejected: 0, withdrawn: 0 },
      operatorDecisions: { approve: 0, reject: 0, send_back: 0 },
      meanRoundsToApproval: null,
    });
  });

  it('computes every figure for the seed-shaped fleet (2 of 5 challenged: 0.4, healthy)', () => {
    const stats = tribunalStats(fleet(), new Date(now), 7);
    expect(TribunalStats.parse(stats)).toEqual(stats);
    expect(stats).toEqual({
      window: { from: new Date(Date.parse(now) - 7 * DAY_MS).toISOString(), to: now, days: 7 },
      proposals: { submitted: 5, reviewed: 5, challenged: 2 },
      challengeRate: 0.4,
      // p4 was rejected with 2 constitutions approving in its last round (risk objected, premise withdrew)
      reviewedWithFewerThanMinConstitutions: 1,
      deemedApprovals: 2,
      deadlocksEscalated: 1,
      coverageEscalations: 0,
      proceededDespiteObjections: 1,
      outcomes: { review: 1, escalated: 0, approved: 3, approvedByOperator: 0, rejected: 1, withdrawn: 0 },
      operatorDecisions: { approve: 0, reject: 1, send_back: 0 },
      // p1: 1 round, p2: 2, p3: 1
      meanRoundsToApproval: 4 / 3,
    });
    expect(healthBand(stats.challengeRate)).toBe('healthy');
  });

  it('gives a null challenge rate when proposals were submitted but none reviewed yet', () => {
    const waiting = record('waiting', play([], submit()));
    const stats = tribunalStats([waiting], now);
    expect(stats.proposals).toEqual({ submitted: 1, reviewed: 0, challenged: 0 });
    expect(stats.challengeRate).toBeNull();
    expect(stats.meanRoundsToApproval).toBeNull();
    expect(stats.outcomes.review).toBe(1);
    expect(healthBand(stats.challengeRate)).toBe('unknown');
  });

  it('counts coverage escalations, operator decisions and operator approvals', () => {
    const thin = candidates.filter((c) => c.agentId === 'harbinger' || c.agentId === 'heretic');
    const coverage = play([], submit(), openRound(1, ctx('tribunal', at(1)), thin));
    expect(stateOf(coverage)).toMatchObject({ status: 'escalated', escalations: [{ reason: 'insufficient_coverage' }] });
    const sentBack = play(coverage, decide(1, 'send_back', 'reviewers registered now', ctx('root', at(50))), openRound(1, ctx('tribunal', at(51))), ...allApprove(1, at(60)));
    const overridden = play(deadlocked(), decide(1, 'approve', 'accept the risk', ctx('root', at(4000))));
    const approvedBlind = play(coverage, decide(1, 'approve', 'urgent', ctx('root', at(70))));
    const records = [record('sent-back', sentBack), record('overridden', overridden), record('blind', approvedBlind)];

    const stats = tribunalStats(records, now);
    expect(stats.coverageEscalations).toBe(2);
    expect(stats.deadlocksEscalated).toBe(1);
    expect(stats.operatorDecisions).toEqual({ approve: 2, reject: 0, send_back: 1 });
    expect(stats.outcomes).toEqual({ review: 0, escalated: 0, approved: 3, approvedByOperator: 2, rejected: 0, withdrawn: 0 });
    // overridden: 2 approving in round 3; blind: no round at all; sent-back: 4 approving
    expect(stats.reviewedWithFewerThanMinConstitutions).toBe(2);
    expect(records.map(approvingConstitutionsInLastRound)).toEqual([4, 2, 0]);
    // sent-back: 1 round (the one that could not open does not count), overridden: 3, blind: 0
    expect(stats.meanRoundsToApproval).toBe(4 / 3);
    // blind was never put to a round: not reviewed, so it does not weigh on the challenge rate
    expect(stats.proposals).toEqual({ submitted: 3, reviewed: 2, challenged: 1 });
  });

  it('counts withdrawals in the outcomes and an execution before approval as proceeding despite objections', () => {
    const withdrawn = play([], submit(), openRound(1, ctx('tribunal', at(1))), {
      type: 'WithdrawProposal',
      context: ctx('seldon', at(20)),
      payload: { proposalId: PID, reason: 'obsolete' },
    });
    const early = play(pending(), recordExecution('could not wait', ctx('seldon', at(30))));
    const afterApproval = play(clean(), recordExecution('done', ctx('seldon', at(30))));
    const stats = tribunalStats([record('w', withdrawn), record('early', early), record('fine', afterApproval)], now);
    expect(stats.outcomes).toMatchObject({ withdrawn: 1, review: 1, approved: 1 });
    expect(stats.proceededDespiteObjections).toBe(1);
  });

  describe('window edges (both ends included)', () => {
    const p3 = () => [record('p3-silent', silent())];
    const days = (n: number) => n * DAY_MS;

    it('counts a proposal submitted exactly at the window start, not one a millisecond before', () => {
      expect(tribunalStats(p3(), plus(T0, days(30))).proposals.submitted).toBe(1);
      expect(tribunalStats(p3(), plus(T0, days(30) + 1)).proposals.submitted).toBe(0);
      expect(tribunalStats(p3(), plus(T0, days(1)), 1).proposals.submitted).toBe(1);
    });

    it('counts an event exactly at `now` and nothing after it', () => {
      expect(tribunalStats(p3(), T0).proposals.submitted).toBe(1);
      expect(tribunalStats(p3(), plus(T0, -1)).proposals.submitted).toBe(0);
      // deemed at at(61): not yet at at(60)
      expect(tribunalStats(p3(), at(61)).deemedApprovals).toBe(2);
      expect(tribunalStats(p3(), at(60)).deemedApprovals).toBe(0);
    });

    it('times each event by its own time: a deemed approval, an escalation, a decision and an execution at the window start', () => {
      const p4 = [record('p4', play(deadlocked(), decide(1, 'reject', 'no', ctx('root', at(5000))), recordExecution('anyway', ctx('seldon', at(9000)))))];
      const startingAt = (time: string) => tribunalStats(p4, plus(time, days(30)));
      const justAfter = (time: string) => tribunalStats(p4, plus(time, days(30) + 1));
      expect(startingAt(at(3020)).deadlocksEscalated).toBe(1);
      expect(justAfter(at(3020)).deadlocksEscalated).toBe(0);
      expect(startingAt(at(5000)).operatorDecisions.reject).toBe(1);
      expect(startingAt(at(5000)).reviewedWithFewerThanMinConstitutions).toBe(1);
      expect(justAfter(at(5000)).operatorDecisions.reject).toBe(0);
      expect(justAfter(at(5000)).reviewedWithFewerThanMinConstitutions).toBe(0);
      expect(startingAt(at(9000)).proceededDespiteObjections).toBe(1);
      expect(justAfter(at(9000)).proceededDespiteObjections).toBe(0);
      // submitted at T0, so out of the proposal counts long before
      expect(startingAt(at(9000)).proposals.submitted).toBe(0);

      expect(tribunalStats(p3(), plus(at(61), days(30))).deemedApprovals).toBe(2);
      expect(tribunalStats(p3(), plus(at(61), days(30) + 1)).deemedApprovals).toBe(0);
    });

    it('times meanRoundsToApproval by the approval, not the submission', () => {
      const records = [record('p2', challenged())]; // approved at at(110)
      expect(tribunalStats(records, plus(at(110), days(30))).meanRoundsToApproval).toBe(2);
      expect(tribunalStats(records, plus(at(110), days(30) + 1)).meanRoundsToApproval).toBeNull();
      expect(tribunalStats(records, at(109)).meanRoundsToApproval).toBeNull();
    });
  });

  it('refuses a window that is not a whole number of days and a time that is not one', () => {
    expect(() => tribunalStats([], T0, 0)).toThrow(RangeError);
    expect(() => tribunalStats([], T0, 1.5)).toThrow(RangeError);
    expect(() => tribunalStats([], 'yesterday')).toThrow(RangeError);
    expect(() => tribunalStats([], new Date(Number.NaN))).toThrow(RangeError);
  });
});

describe('decidedAt', () => {
  it('is the approval time by the tribunal, by an operator, after a late withdrawal; the rejection time; null otherwise', () => {
    expect(decidedAt(record('a', clean()))).toBe(at(10));
    expect(decidedAt(record('a', silent()))).toBe(at(61));
    // round 1 closes blocked at at(10); the only objection is withdrawn at at(200): approved then
    const late = play([], submit(), openRound(1, ctx('tribunal', at(1))), object('harbinger', 'risk', 1, at(10)), approve('heretic', 'premise', 1, at(10)), approve('sentinel', 'evidence', 1, at(10)), approve('zealot', 'execution', 1, at(10)), withdrawObjection('harbinger', 'r1-risk', at(200)));
    expect(stateOf(late).status).toBe('approved');
    expect(decidedAt(record('a', late))).toBe(at(200));
    expect(decidedAt(record('a', play(deadlocked(), decide(1, 'approve', 'ok', ctx('root', at(4000))))))).toBe(at(4000));
    expect(decidedAt(record('a', play(deadlocked(), decide(1, 'reject', 'no', ctx('root', at(4500))))))).toBe(at(4500));
    expect(decidedAt(record('a', deadlocked()))).toBeNull();
    expect(decidedAt(record('a', pending()))).toBeNull();
  });
});

describe('constitutionalCoverage (the seed: COUNT(DISTINCT constitution) < 3)', () => {
  it('counts explicit reviews only, distinct over every round; deemed approvals are not coverage', () => {
    const records = fleet();
    expect(records.map((p) => [p.proposalId, reviewedConstitutions(p).sort()])).toEqual([
      ['p1-clean', ['evidence', 'execution', 'premise', 'risk']],
      ['p2-challenged', ['evidence', 'execution', 'premise', 'risk']],
      ['p3-silent', ['premise', 'risk']],
      ['p4-deadlock', ['evidence', 'execution', 'premise', 'risk']],
      ['p5-pending', ['risk']],
    ]);
    // p5's first round is still open: not measured yet
    expect(constitutionalCoverage(records)).toEqual([{ proposalId: 'p3-silent', constitutionalCoverage: 2 }]);
    expect(constitutionalCoverage(records, 5)).toEqual([
      { proposalId: 'p3-silent', constitutionalCoverage: 2 },
      { proposalId: 'p1-clean', constitutionalCoverage: 4 },
      { proposalId: 'p2-challenged', constitutionalCoverage: 4 },
      { proposalId: 'p4-deadlock', constitutionalCoverage: 4 },
    ]);
    expect(constitutionalCoverage(records, 2)).toEqual([]);
  });

  it('measures a proposal whose rounds all closed in silence, with 0, fewest first', () => {
    const allSilent = play([], submit(), openRound(1, ctx('tribunal', at(1))), expire(1, at(61)));
    expect(stateOf(allSilent).status).toBe('approved');
    const records = [record('z-two', silent()), record('a-none', allSilent)];
    expect(constitutionalCoverage(records)).toEqual([
      { proposalId: 'a-none', constitutionalCoverage: 0 },
      { proposalId: 'z-two', constitutionalCoverage: 2 },
    ]);
    expect(constitutionalCoverage(records, 1)).toEqual([{ proposalId: 'a-none', constitutionalCoverage: 0 }]);
  });

  it('sums constitutions across rounds: two in round 1 and two others in round 2 make four', () => {
    const split = play(
      [],
      submit(),
      openRound(1, ctx('tribunal', at(1))),
      object('harbinger', 'risk', 1, at(10)),
      approve('heretic', 'premise', 1, at(10)),
      revise(['r1-risk'], 'Revised before the others answered', at(20)),
      openRound(2, ctx('tribunal', at(21))),
      approve('sentinel', 'evidence', 2, at(30)),
      approve('zealot', 'execution', 2, at(30)),
    );
    expect(reviewedConstitutions(record('s', split)).sort()).toEqual(['evidence', 'execution', 'premise', 'risk']);
    expect(constitutionalCoverage([record('s', split)], 4)).toEqual([]);
    expect(constitutionalCoverage([record('s', split)], 5)).toEqual([{ proposalId: 's', constitutionalCoverage: 4 }]);
  });

  it('leaves out proposals never put to a round', () => {
    const thin = candidates.filter((c) => c.agentId === 'harbinger');
    const escalated = play([], submit(), openRound(1, ctx('tribunal', at(1)), thin));
    expect(constitutionalCoverage([record('w', play([], submit())), record('e', escalated)], 16)).toEqual([]);
  });

  it('refuses a threshold that is not a positive whole number', () => {
    expect(() => constitutionalCoverage([], 0)).toThrow(RangeError);
    expect(() => constitutionalCoverage([], 2.5)).toThrow(RangeError);
  });
});

describe('tribunalTotals (all time, for the counters)', () => {
  it('counts statuses, decisions by whom, escalations, deemed approvals, executions despite objections, open objections and rounds to resolution', () => {
    const overridden = play(deadlocked(), decide(1, 'approve', 'accept the risk', ctx('root', at(4000))));
    const records = [...fleet(), record('overridden', overridden), record('escalated', deadlocked())];
    const totals = tribunalTotals(records);
    expect(totals).toEqual({
      proposalsByStatus: { review: 1, escalated: 1, approved: 4, rejected: 1, withdrawn: 0 },
      decisions: { approvedByTribunal: 3, approvedByOperator: 1, rejected: 1, withdrawn: 0 },
      deemedApprovals: 2,
      deadlocksEscalated: 3,
      coverageEscalations: 0,
      operatorDecisions: { approve: 1, reject: 1, send_back: 0 },
      proceededDespiteObjections: 1,
      // the escalated proposal's r3-risk; overridden ones are resolved, and the rejected p4's r3-risk blocks nothing any more
      openObjections: 1,
      // p1, p2, p3, p4 (rejected), overridden
      resolutionRounds: [
        { rounds: 1, proposals: 2 },
        { rounds: 2, proposals: 1 },
        { rounds: 3, proposals: 2 },
      ],
      underCovered: constitutionalCoverage(records).length,
    });
    // over a window that holds everything, the windowed figures agree with the totals
    const stats = tribunalStats(records, at(10_000));
    expect(stats.deemedApprovals).toBe(totals.deemedApprovals);
    expect(stats.deadlocksEscalated).toBe(totals.deadlocksEscalated);
    expect(stats.operatorDecisions).toEqual(totals.operatorDecisions);
    expect(stats.outcomes.approvedByOperator).toBe(totals.decisions.approvedByOperator);
  });
});

describe('healthBand', () => {
  it.each([
    [0, 'rubber_stamping'],
    [0.1999, 'rubber_stamping'],
    [0.2, 'healthy'],
    [0.4, 'healthy'],
    [0.6, 'healthy'],
    [0.6001, 'overhead'],
    [1, 'overhead'],
    [null, 'unknown'],
    [Number.NaN, 'unknown'],
  ] as const)('%p is %s', (rate, band) => {
    expect(healthBand(rate)).toBe(band);
  });
});
