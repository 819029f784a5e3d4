import { drawOf } from '@agora/domain-common';
import { auditSample } from '../src/audit-sample.js';

describe('the audit sample', () => {
  it('samples about 10 % of resolutions for audit at the default rate, and none or all at 0 and 1', () => {
    let sampled = 0;
    for (let seed = 0; seed < 10_000; seed++) if (auditSample(seed, 0.1).sampled) sampled++;
    expect(sampled).toBeGreaterThan(900);
    expect(sampled).toBeLessThan(1100);
    expect(auditSample(7, 0)).toEqual({ rate: 0, draw: drawOf(7, 'audit'), sampled: false });
    expect(auditSample(7, 1).sampled).toBe(true);
    expect(() => auditSample(7, 1.5)).toThrow(/between 0 and 1/);
  });
});
