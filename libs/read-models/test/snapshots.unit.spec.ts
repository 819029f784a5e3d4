// The chamber and debate read models are saved to snapshots like the others (ProjectionRunner with
// the process's snapshot store): what a codec writes is JSON, and reading it back gives the model.
import { chamberSessionsProjection, debatesProjection } from '../src/index.js';

const throughJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe('read-model snapshots of the chamber and the debate', () => {
  it('the chamber sessions and the debates have a snapshot codec (aggregate views)', () => {
    for (const projection of [chamberSessionsProjection, debatesProjection] as const) {
      const codec = projection.snapshot as unknown as { version: number; encode(m: Map<string, unknown>): unknown; decode(saved: unknown): Map<string, unknown> };
      expect(codec.version).toBeGreaterThanOrEqual(1);
      const model = new Map<string, unknown>([['x-1', { streamRevision: 3, status: 'open' }]]);
      expect(codec.decode(throughJson(codec.encode(model)))).toEqual(model);
    }
  });
});
