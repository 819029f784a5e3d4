import { converged, type MessageLike } from '../src/convergence.js';
import { c, threshold } from './fixtures.js';

const thesis: MessageLike = { kind: 'thesis', party: 'agent', rootCause: 'spike', conditions: [threshold(0.7)], agrees: null };
const antithesis: MessageLike = { kind: 'antithesis', party: 'reviewer', rootCause: 'spike', conditions: [threshold(0.7)], agrees: null };
const synth = (party: 'agent' | 'reviewer', over: Partial<MessageLike> = {}): MessageLike => ({ kind: 'synthesis', party, rootCause: 'External spike', conditions: [threshold(0.48), c('enable_cascade_detection')], agrees: true, ...over });

describe('converged', () => {
  it('needs both latest messages to be syntheses: agreement in the thesis and antithesis is not convergence', () => {
    expect(converged([thesis, antithesis])).toEqual({ converged: false, reason: 'awaiting_synthesis' });
    expect(converged([thesis, antithesis, synth('agent')])).toEqual({ converged: false, reason: 'awaiting_synthesis' });
  });

  it('needs both to agree, on the same root cause and the same conditions', () => {
    expect(converged([thesis, antithesis, synth('agent'), synth('reviewer', { agrees: false })])).toEqual({ converged: false, reason: 'not_agreed' });
    expect(converged([thesis, antithesis, synth('agent'), synth('reviewer', { rootCause: 'Internal bug' })])).toEqual({ converged: false, reason: 'different_root_cause' });
    expect(converged([thesis, antithesis, synth('agent'), synth('reviewer', { conditions: [threshold(0.48)] })])).toEqual({ converged: false, reason: 'different_conditions' });
  });

  it("reads each party's latest message only: an earlier agreement superseded does not count", () => {
    const h = [thesis, antithesis, synth('agent'), synth('reviewer', { agrees: false }), synth('agent', { agrees: false })];
    expect(converged(h)).toEqual({ converged: false, reason: 'not_agreed' });
  });

  it('converges on the root cause as the earlier message words it, and the conditions in canonical order', () => {
    expect(converged([thesis, antithesis, synth('agent'), synth('reviewer', { rootCause: 'external  SPIKE', conditions: [c('enable_cascade_detection'), threshold(0.48)] })])).toEqual({
      converged: true,
      rootCause: 'External spike',
      conditions: [c('enable_cascade_detection'), threshold(0.48)],
    });
  });
});
