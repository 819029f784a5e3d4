import { selectReviewers, type ReviewerCandidateLike } from '../src/selection.js';

const agent = (agentId: string, constitutions: string[], trustScore = 500, status = 'active'): ReviewerCandidateLike => ({ agentId, constitutions, trustScore, status });
const REQUIRED = ['risk', 'premise', 'evidence', 'execution'];

describe('selectReviewers', () => {
  it('assigns one reviewer per required constitution, in the order of the requirement', () => {
    const pool = [agent('zealot', ['execution']), agent('harbinger', ['risk']), agent('sentinel', ['evidence']), agent('heretic', ['premise'])];
    expect(selectReviewers(pool, REQUIRED, [])).toEqual({
      assignments: [
        { constitution: 'risk', reviewer: 'harbinger' },
        { constitution: 'premise', reviewer: 'heretic' },
        { constitution: 'evidence', reviewer: 'sentinel' },
        { constitution: 'execution', reviewer: 'zealot' },
      ],
      uncovered: [],
    });
  });

  it('prefers the highest trust, then the smallest id', () => {
    const pool = [agent('b_risk', ['risk'], 700), agent('a_risk', ['risk'], 700), agent('c_risk', ['risk'], 900), agent('d_risk', ['risk'], 100)];
    expect(selectReviewers(pool, ['risk'], []).assignments).toEqual([{ constitution: 'risk', reviewer: 'c_risk' }]);
    expect(selectReviewers(pool.filter((c) => c.agentId !== 'c_risk'), ['risk'], []).assignments).toEqual([{ constitution: 'risk', reviewer: 'a_risk' }]);
  });

  it('does not depend on the order of the candidates', () => {
    const pool = [agent('x', ['risk', 'premise'], 800), agent('y', ['premise', 'evidence'], 800), agent('z', ['evidence', 'risk'], 800), agent('w', ['execution'], 10)];
    const expected = selectReviewers(pool, REQUIRED, []);
    expect(selectReviewers([...pool].reverse(), REQUIRED, [])).toEqual(expected);
    expect(selectReviewers([pool[2]!, pool[0]!, pool[3]!, pool[1]!], REQUIRED, [])).toEqual(expected);
    expect(expected.uncovered).toEqual([]);
  });

  it('gives each reviewer at most one constitution in a round', () => {
    const pool = [agent('polymath', ['risk', 'premise', 'evidence', 'execution'], 1000), agent('harbinger', ['risk'], 100)];
    const { assignments, uncovered } = selectReviewers(pool, REQUIRED, []);
    expect(assignments).toEqual([
      { constitution: 'risk', reviewer: 'harbinger' },
      { constitution: 'premise', reviewer: 'polymath' },
    ]);
    expect(uncovered).toEqual(['evidence', 'execution']);
  });

  it('maximises coverage before trust: a versatile agent does not starve a constitution only it can cover', () => {
    // Greedy by trust would give risk to the versatile agent and leave premise uncovered.
    const pool = [agent('versatile', ['risk', 'premise'], 900), agent('harbinger', ['risk'], 500)];
    expect(selectReviewers(pool, ['risk', 'premise'], [])).toEqual({
      assignments: [
        { constitution: 'risk', reviewer: 'harbinger' },
        { constitution: 'premise', reviewer: 'versatile' },
      ],
      uncovered: [],
    });
  });

  it('leaves the later constitutions uncovered when not all can be covered', () => {
    const pool = [agent('one', ['risk', 'premise'], 500)];
    expect(selectReviewers(pool, ['risk', 'premise'], [])).toEqual({ assignments: [{ constitution: 'risk', reviewer: 'one' }], uncovered: ['premise'] });
    expect(selectReviewers(pool, ['premise', 'risk'], [])).toEqual({ assignments: [{ constitution: 'premise', reviewer: 'one' }], uncovered: ['risk'] });
  });

  it('never selects an excluded agent (the proposer) nor one that is not active', () => {
    const pool = [agent('seldon', ['risk'], 1000), agent('paused_one', ['risk'], 900, 'disabled'), agent('harbinger', ['risk'], 100)];
    expect(selectReviewers(pool, ['risk'], ['seldon']).assignments).toEqual([{ constitution: 'risk', reviewer: 'harbinger' }]);
    expect(selectReviewers(pool, ['risk'], ['seldon', 'harbinger'])).toEqual({ assignments: [], uncovered: ['risk'] });
  });

  it('counts a duplicate agent once (its best entry) and a duplicate constitution once', () => {
    const pool = [agent('dup', ['risk'], 100), agent('dup', ['risk', 'premise'], 900)];
    expect(selectReviewers(pool, ['risk', 'risk', 'premise'], [])).toEqual({ assignments: [{ constitution: 'risk', reviewer: 'dup' }], uncovered: ['premise'] });
  });

  it('covers nothing from an empty pool', () => {
    expect(selectReviewers([], REQUIRED, [])).toEqual({ assignments: [], uncovered: REQUIRED });
  });
});
