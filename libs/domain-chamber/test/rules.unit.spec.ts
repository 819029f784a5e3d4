import { DeciderSpecification, scenarioOf } from '@agora/decider';
import { budgetDecider, chamberStats, claimCore, evolveChamberRecord, measureDivergence, normalizeText, shuffledLabels, type BudgetCommand, type ChamberEvent, type ChamberRecord } from '../src/index.js';
import { answer, approve, arbiterLabel, ok, propose, record, scenario, verdict } from './fixtures.js';

const limits = { sessionsPerDay: 2, monthlyBudget: 1, currency: 'USD' };
const reserve = (sessionId: string, amount: number, day = '2026-03-10'): BudgetCommand => ({ type: 'ReserveChamberBudget', payload: { month: '2026-03', sessionId, amount, day, limits }, context: { now: `${day}T10:00:00.000Z`, actor: 'service:chamber', actorRoles: ['operator'], commandId: `r-${sessionId}` } });
const settle = (sessionId: string, actual: number): BudgetCommand => ({ type: 'SettleChamberBudget', payload: { month: '2026-03', sessionId, actual }, context: { now: '2026-03-10T11:00:00.000Z', actor: 'service:chamber', actorRoles: ['operator'], commandId: `s-${sessionId}` } });

describe('the month ledger', () => {
  const ledger = scenarioOf(budgetDecider, 'chamber_budget');
  const spec = DeciderSpecification.for(budgetDecider);

  it('reserves within the caps, once per session, with the figures after it', () => {
    const h = ledger.play([], reserve('a', 0.4));
    expect(h).toEqual([{ type: 'ChamberBudgetReserved', data: { month: '2026-03', sessionId: 'a', day: '2026-03-10', amount: 0.4, limits, sessionsThatDay: 1, committed: 0.4 } }]);
    spec(h).when(reserve('a', 0.4)).thenNothing();
  });

  it('refuses the session over the daily cap, and the one the monthly budget cannot cover', () => {
    const h = ledger.play([], reserve('a', 0.4), reserve('b', 0.4));
    expect(spec(h).when(reserve('c', 0.1)).thenRefuses('illegal_state', /daily session limit reached: 2 of 2/).details).toMatchObject({ reason: 'daily_limit' });
    const refusal = spec(h).when(reserve('c', 0.3, '2026-03-11')).thenRefuses('illegal_state', /monthly budget exhausted: 0 USD spent and 0.8 USD reserved of 1 USD.*needs up to 0.3/);
    expect(refusal.details).toMatchObject({ reason: 'budget_exhausted' });
  });

  it('settling replaces a reservation by the actual cost, once, freeing the rest', () => {
    const h = ledger.play([], reserve('a', 0.4), reserve('b', 0.4), settle('a', 0.05));
    expect(h.at(-1)).toEqual({ type: 'ChamberBudgetSettled', data: { month: '2026-03', sessionId: 'a', reserved: 0.4, actual: 0.05 } });
    spec(h).when(settle('a', 0.07)).thenNothing();
    spec(h).when(settle('never-reserved', 0)).thenNothing();
    expect(ledger.play(h, reserve('c', 0.5, '2026-03-11')).at(-1)).toMatchObject({ data: { committed: 0.95 } });
  });
});

describe('the divergence measure', () => {
  it('normalizes positions and reads negations in claims', () => {
    expect(normalizeText('  Yes — enter, NOW! ')).toBe('yes enter now');
    expect(claimCore("The market isn't saturated")).toEqual({ core: 'the market is saturated', negated: true });
    expect(claimCore('It is not, not safe')).toEqual({ core: 'it is safe', negated: false });
  });

  it('scores positions by the largest agreeing group, claims by contradicting pairs, and finds the majority', () => {
    const three = (p: string[], c: string[][] = [[], [], []]) => p.map((position, i) => ({ panelist: i, position, claims: c[i]! }));
    expect(measureDivergence('blind', three(['a', 'a', 'a']), 0.3)).toMatchObject({ score: 0, divergent: false, majority: { position: 'a', count: 3, of: 3 } });
    expect(measureDivergence('blind', three(['a', 'a', 'b']), 0.3)).toMatchObject({ positionScore: 0.3333, divergent: true, majority: { position: 'a', count: 2 } });
    expect(measureDivergence('blind', three(['a', 'a', 'b']), 0.34)).toMatchObject({ divergent: false });
    expect(measureDivergence('blind', three(['a', 'b', 'c']), 0.3)).toMatchObject({ positionScore: 0.6667, majority: null });
    const claims = measureDivergence('final', three(['a', 'a', 'a'], [['x is safe'], ['x is not safe'], ['x is never safe']]), 0.3);
    expect(claims).toMatchObject({ claimScore: 0.6667, score: 0.6667, divergent: true });
    expect(claims.contradictions).toHaveLength(2);
  });
});

describe('labels', () => {
  it('are a seeded permutation: the same seed gives the same labels, other seeds shuffle', () => {
    const a = shuffledLabels(42, 'arbiter', [0, 1, 2]);
    expect(shuffledLabels(42, 'arbiter', [2, 1, 0])).toEqual(a);
    expect(Object.values(a).sort()).toEqual([0, 1, 2]);
    const orders = new Set(Array.from({ length: 30 }, (_, seed) => Object.values(shuffledLabels(seed, 'arbiter', [0, 1, 2])).join('')));
    expect(orders.size).toBeGreaterThan(3);
  });
});

describe('the figures', () => {
  function session(id: string, positions: string[], winLabel: (s: ReturnType<ReturnType<typeof scenario>['stateOf']>) => string[]): ChamberRecord {
    const play = scenario();
    let h: ChamberEvent[] = play.play([], propose({ sessionId: id }), { ...approve(), payload: { sessionId: id, reserved: 1, month: '2026-03' } } as never);
    for (const c of play.stateOf(h).calls) h = play.play(h, { ...record(c.request.callId, ok(answer(positions[c.request.panelist!]!))), payload: { sessionId: id, callId: c.request.callId, outcome: ok(answer(positions[c.request.panelist!]!)), at: '2026-03-10T10:01:00.000Z' } } as never);
    const s = play.stateOf(h);
    const last = s.calls.at(-1)!.request;
    h = play.play(h, { ...record(last.callId, ok(verdict('consensus', winLabel(s)))), payload: { sessionId: id, callId: last.callId, outcome: ok(verdict('consensus', winLabel(s))), at: '2026-03-10T10:02:00.000Z' } } as never);
    return h.reduce<ChamberRecord | undefined>((r, e) => evolveChamberRecord(r, e), undefined)!;
  }

  it("own-provider win share over the window, only from the minimum sample; sessions by outcome", () => {
    const own = session('a', ['yes', 'yes', 'yes'], (s) => [arbiterLabel(s, 1)]);
    const other = session('b', ['yes', 'yes', 'yes'], (s) => [arbiterLabel(s, 0)]);
    expect(own).toMatchObject({ status: 'consensus', ownProviderWin: true, blindDivergent: false });
    const now = new Date('2026-03-11T00:00:00.000Z');
    expect(chamberStats([own, other], now, 30, 3)).toMatchObject({ ownProviderWinShare: null, ownProviderSample: 2, sessionsByStatus: { consensus: 2 } });
    expect(chamberStats([own, own, other], now, 30, 3)).toMatchObject({ ownProviderWinShare: 0.6667, noConsensusRate: 0, divergenceRate: 0, lift: 0 });
  });

  it('conformity: a change toward the blind majority, and whether the abandoned answer was later chosen', () => {
    const base = session('c', ['yes', 'yes', 'yes'], (s) => [arbiterLabel(s, 0)]);
    const conformed = { ...base, conformed: ['no'], position: 'no' };
    expect(chamberStats([conformed, { ...base, conformed: ['no'], followUp: { decision: 'overridden' as const, position: 'no' } }, { ...base, conformed: ['maybe'] }], new Date('2026-03-11T00:00:00.000Z'), 30, 1)).toMatchObject({
      conformityChanges: 3,
      conformityAbandonedChosen: 2,
    });
  });
});
