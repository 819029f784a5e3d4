// The chamber and debate read models are saved to snapshots like the others (ProjectionRunner with
// the process's snapshot store): what a codec writes is JSON, and reading it back gives the model.
import type { ChamberRecord, MonthLedger } from '@agora/domain-chamber';
import { chamberFiguresProjection, chamberSessionsProjection, debatesProjection } from '../src/index.js';

const throughJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe('read-model snapshots of the chamber and the debate', () => {
  it('the chamber figures (sessions and month ledgers) come back from their snapshot as they were', () => {
    const codec = chamberFiguresProjection.snapshot!;
    const model = chamberFiguresProjection.initial();
    model.sessions.set('s-1', { sessionId: 's-1', status: 'concluded', costUsd: 0.42 } as unknown as ChamberRecord);
    model.ledgers.set('2026-11', { month: '2026-11', reservedUsd: 1.5, spentUsd: 0.42 } as unknown as MonthLedger);
    const restored = codec.decode(throughJson(codec.encode(model)));
    expect(restored.sessions).toEqual(model.sessions);
    expect(restored.ledgers).toEqual(model.ledgers);
    expect(restored.sessions).toBeInstanceOf(Map);
    expect(() => codec.decode({ sessions: [] })).toThrow(/sessions and ledgers/);
    expect(() => codec.decode(null)).toThrow(TypeError);
  });

  it('the chamber sessions and the debates have a snapshot codec (aggregate views)', () => {
    for (const projection of [chamberSessionsProjection, debatesProjection] as const) {
      const codec = projection.snapshot as unknown as { version: number; encode(m: Map<string, unknown>): unknown; decode(saved: unknown): Map<string, unknown> };
      expect(codec.version).toBeGreaterThanOrEqual(1);
      const model = new Map<string, unknown>([['x-1', { streamRevision: 3, status: 'open' }]]);
      expect(codec.decode(throughJson(codec.encode(model)))).toEqual(model);
    }
  });
});
