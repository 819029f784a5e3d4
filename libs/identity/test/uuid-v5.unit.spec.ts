import { uuidV5 } from '../src/index.js';

describe('uuidV5', () => {
  it('matches the RFC test vector (www.example.com in the DNS namespace)', () => {
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });
  it('refuses a namespace that is not a UUID', () => {
    expect(() => uuidV5('x', 'not-a-uuid')).toThrow(TypeError);
  });
});
