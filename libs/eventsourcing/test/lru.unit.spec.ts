import { LruMap } from '../src/index.js';

describe('LruMap', () => {
  it('drops the least recently used key beyond its capacity', () => {
    const lru = new LruMap<string, number>(3);
    for (const [i, k] of ['a', 'b', 'c', 'd'].entries()) lru.set(k, i);
    expect([...lru.keys()]).toEqual(['b', 'c', 'd']);
    expect(lru.size).toBe(3);
    expect(lru.get('a')).toBeUndefined();
  });

  it('counts a get or a set as a use, a peek not', () => {
    const lru = new LruMap<string, number>(3);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.set('c', 3);
    expect(lru.get('a')).toBe(1);
    expect(lru.peek('b')).toBe(2);
    lru.set('d', 4);
    expect([...lru.keys()]).toEqual(['c', 'a', 'd']);
    lru.set('c', 30);
    lru.set('e', 5);
    expect([...lru.keys()]).toEqual(['d', 'c', 'e']);
    expect(lru.peek('c')).toBe(30);
  });

  it('deletes and clears, keeping its order sound', () => {
    const lru = new LruMap<number, number>(4);
    for (let i = 0; i < 4; i++) lru.set(i, i);
    expect(lru.delete(0)).toBe(true);
    expect(lru.delete(3)).toBe(true);
    expect(lru.delete(3)).toBe(false);
    expect([...lru.keys()]).toEqual([1, 2]);
    lru.set(5, 5);
    lru.get(1);
    expect([...lru.keys()]).toEqual([2, 5, 1]);
    lru.clear();
    expect(lru.size).toBe(0);
    expect([...lru.keys()]).toEqual([]);
    lru.set(7, 7);
    expect([...lru.keys()]).toEqual([7]);
  });

  it('stays within its capacity under many sets and gets', () => {
    const lru = new LruMap<number, number>(100);
    for (let i = 0; i < 10_000; i++) {
      lru.set(i, i);
      lru.get(i - (i % 50));
    }
    expect(lru.size).toBe(100);
    expect(new Set(lru.keys()).size).toBe(100);
  });

  it('refuses a capacity that is not a positive integer', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => new LruMap(bad)).toThrow(RangeError);
  });
});
