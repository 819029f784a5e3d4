import { categoryOf, positiveInt } from '../src/common.js';

describe('categoryOf', () => {
  it('is the part of the stream id before the first dash; a name without one is its own category', () => {
    expect(categoryOf('tribunal_review-123e4567-e89b')).toBe('tribunal_review');
    expect(categoryOf('nodash')).toBe('nodash');
  });
});

describe('positiveInt', () => {
  it('returns a whole number of at least 1 and refuses anything else, naming it', () => {
    expect(positiveInt(3, 'rounds')).toBe(3);
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => positiveInt(bad, 'rounds')).toThrow(new RangeError(`rounds must be a positive whole number, got ${String(bad)}`));
  });
});
