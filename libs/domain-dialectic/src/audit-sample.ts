/** The seed's 10 % audit: whether a resolution goes to a second reviewer, by a seeded draw. */
import { drawOf } from '@agora/domain-common';

export interface AuditSample {
  rate: number;
  draw: number;
  /** draw < rate: a second reviewer audits the resolution. */
  sampled: boolean;
}

/** Whether a resolution goes to a second reviewer: a seeded draw under `rate` (default 10 %). */
export function auditSample(seed: number, rate: number): AuditSample {
  if (!(rate >= 0 && rate <= 1)) throw new RangeError(`an audit rate is between 0 and 1, got ${String(rate)}`);
  const draw = drawOf(seed, 'audit');
  return { rate, draw, sampled: draw < rate };
}
