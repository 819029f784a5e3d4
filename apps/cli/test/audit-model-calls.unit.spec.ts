import type { RecordedEvent } from '@agora/eventstore';
import { ModelCallAttribution } from '../src/audit/model-calls.js';

const event = (type: string, data: Record<string, unknown>, revision = 0): RecordedEvent => ({ id: `${type}-${revision}`, type, streamId: 'chamber_session-s1', revision, position: String(revision), recordedAt: '2026-11-26T10:00:00.000Z', data, metadata: {} });
const error = (kind: string) => ({ kind, message: kind, retryable: kind === 'interrupted' });

describe("the audit's attribution of the chamber's model calls", () => {
  it("counts each call against the month's budget its session was approved under, interrupted calls at their recorded cost", () => {
    const attribution = new ModelCallAttribution();
    attribution.chamberEvent(event('ChamberSessionProposed', { sessionId: 's1' }, 0));
    attribution.chamberEvent(event('ChamberSessionApproved', { sessionId: 's1', month: '2026-11' }, 1));
    attribution.chamberEvent(event('ChamberCallCompleted', { sessionId: 's1', callId: 'b0', cost: 0.012 }, 3));
    attribution.chamberEvent(event('ChamberCallFailed', { sessionId: 's1', callId: 'b1', cost: 0.03, error: error('interrupted') }, 4));
    attribution.chamberEvent(event('ChamberCallFailed', { sessionId: 's1', callId: 'b2', cost: 0, error: error('http') }, 5));
    expect(attribution.ledgers()).toEqual([{ caller: 'service:chamber', budget: 'chamber_budget-2026-11', amount: null, currency: null, calls: 3, interrupted: 1, open: 0, spent: 0.042 }]);
  });
});
