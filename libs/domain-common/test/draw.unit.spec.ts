import { drawOf, mulberry32, seedFrom } from '../src/draw.js';

describe('seeded randomness', () => {
  it('mulberry32 gives the reference sequence for a seed, in [0, 1)', () => {
    const next = mulberry32(1);
    expect([next(), next(), next()]).toEqual([0.6270739405881613, 0.002735721180215478, 0.5274470399599522]);
    const again = mulberry32(1);
    expect(again()).toBe(0.6270739405881613);
    const other = mulberry32(0xffffffff);
    for (let i = 0; i < 1000; i++) {
      const x = other();
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
    }
  });

  it('draws one value per purpose: the same seed and purpose always give the same draw, other purposes another', () => {
    expect(drawOf(42, 'reviewer')).toBe(drawOf(42, 'reviewer'));
    expect(drawOf(42, 'reviewer')).not.toBe(drawOf(42, 'tie_breaker:1'));
    expect(drawOf(42, 'tie_breaker:1')).not.toBe(drawOf(42, 'tie_breaker:2'));
    expect(drawOf(42, 'reviewer')).not.toBe(drawOf(43, 'reviewer'));
  });

  it('seeds from a text (the id of the AgentPaused event): 32 bits of its SHA-256', () => {
    expect(seedFrom('evt-1')).toBe(2067832723);
    expect(seedFrom('evt-1')).toBe(seedFrom('evt-1'));
    expect(seedFrom('evt-2')).not.toBe(seedFrom('evt-1'));
    expect(Number.isInteger(seedFrom('x')) && seedFrom('x') >= 0 && seedFrom('x') <= 0xffffffff).toBe(true);
  });
});
