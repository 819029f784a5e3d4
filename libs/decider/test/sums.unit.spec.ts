import { addSum, addSums, sumKey, sumOf, sumsOf, sumsUnder, TimedSums, windowSums, type Sums } from '../src/sums.js';

describe('sums: figures that add up over records', () => {
  const contribution = (r: { status: string; reviews: number }): Sums => {
    const s: Sums = new Map();
    addSum(s, 1, 'status', r.status);
    addSum(s, r.reviews, 'reviews');
    return s;
  };

  it('moving the sums by each update (after minus before) gives the sums of the records as they end', () => {
    const moved: Sums = new Map();
    const before = { status: 'review', reviews: 1 };
    addSums(moved, contribution(before));
    const after = { status: 'approved', reviews: 3 };
    addSums(moved, contribution(after));
    addSums(moved, contribution(before), -1);
    addSums(moved, contribution({ status: 'review', reviews: 0 }));
    expect(moved).toEqual(sumsOf([after, { status: 'review', reviews: 0 }], contribution));
    expect(sumOf(moved, 'status', 'approved')).toBe(1);
    expect(sumOf(moved, 'reviews')).toBe(3);
    // a sum back at 0 is gone, as in sums made in one pass
    expect(moved.has(sumKey('status', 'review'))).toBe(true);
    addSums(moved, contribution({ status: 'review', reviews: 0 }), -1);
    expect(moved.has(sumKey('status', 'review'))).toBe(false);
    expect(sumsUnder(moved, 'status')).toEqual([[['approved'], 1]]);
  });

  it('adds whole numbers only, and nothing for 0', () => {
    const s: Sums = new Map();
    addSum(s, 0, 'x');
    expect(s.size).toBe(0);
    expect(() => addSum(s, 0.5, 'x')).toThrow(RangeError);
  });

  it('sums timed contributions over a window, both ends included, and skips what has no time', () => {
    const timed = (r: { at: string | null }) => new TimedSums().add(r.at, 1, 'submitted').items;
    const records = [{ at: '2026-01-01T00:00:00.000Z' }, { at: '2026-01-02T00:00:00.000Z' }, { at: '2026-01-03T00:00:00.000Z' }, { at: null }, { at: 'not a time' }];
    const sums = windowSums(records, timed, Date.parse('2026-01-01T00:00:00.000Z'), Date.parse('2026-01-02T00:00:00.000Z'));
    expect(sumOf(sums, 'submitted')).toBe(2);
  });
});
