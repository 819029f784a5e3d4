import fc from 'fast-check';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../src/index.js';

/** Nesting depth of a JSON value: 0 for a scalar, 1 for a flat array or object. */
function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (value !== null && typeof value === 'object') return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

describe('jsonDepthExceeds', () => {
  it('agrees with the depth of any JSON value, on its text and on its UTF-8 bytes (strings full of brackets, quotes and escapes included)', () => {
    const text = fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', 'a', 'é', '\n') });
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), text, (value, s) => {
        const json = JSON.stringify([s, value, { [s]: s }]);
        const depth = depthOf([s, value, { [s]: s }]);
        const bytes = new TextEncoder().encode(json);
        expect(jsonDepthExceeds(json, depth)).toBe(false);
        expect(jsonDepthExceeds(bytes, depth)).toBe(false);
        expect(jsonDepthExceeds(json, depth - 1)).toBe(true);
        expect(jsonDepthExceeds(bytes, depth - 1)).toBe(true);
      }),
      { seed: 20_261_123, numRuns: 300 },
    );
  });

  it(`stops at the limit (${MAX_JSON_DEPTH} by default) without reading the rest`, () => {
    expect(jsonDepthExceeds('['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonDepthExceeds('['.repeat(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(jsonDepthExceeds('['.repeat(1_000_000))).toBe(true);
  });
});
