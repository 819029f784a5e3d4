/** Seed 003's anonymous labels hold: an answer that names its own model is masked for the other panelists and the arbiter, kept verbatim in the log, and counted. */
import type { ChamberEvent } from '../src/index.js';
import { evolveChamberRecord, maskSelfIdentification, type ChamberRecord } from '../src/index.js';
import { answer, approve, arbiterLabel, lastOf, ok, propose, record, scenario, verdict } from './fixtures.js';

const play = scenario();

describe('self-identification', () => {
  it('masks model, product and maker names where an answer speaks of itself, and leaves content alone', () => {
    expect(maskSelfIdentification('I am Claude, made by Anthropic. Demand is growing.')).toEqual({ text: 'I am [a model], made by [a provider]. Demand is growing.', masked: ['Claude', 'Anthropic'] });
    expect(maskSelfIdentification('As an AI model developed by OpenAI (GPT-4o), I would enter.').masked).toEqual(['GPT-4o', 'OpenAI']);
    expect(maskSelfIdentification('My view as Gemini 1.5 Pro: wait a year.').text).toBe('My view as [a model]: wait a year.');
    expect(maskSelfIdentification("I'm a large language model trained by Google.").text).toBe("I'm a large language model trained by [a provider].");
    for (const content of ['Google revenue grew 10% in 2024.', 'I think Google will win the cloud market.', 'Version 1.5 shipped. Market X is flat.']) expect(maskSelfIdentification(content)).toEqual({ text: content, masked: [] });
  });

  it('keeps every other character of the text', () => {
    const text = 'Intro line\n\nI am Grok, from xAI...  Then 3.5% growth? Yes.\tEnd';
    const { text: out } = maskSelfIdentification(text);
    expect(out).toBe('Intro line\n\nI am [a model], from [a provider]...  Then 3.5% growth? Yes.\tEnd');
  });

  it('the cross-examination and arbiter prompts show the others masked; the log keeps the answer verbatim; the figure counts it by provider', () => {
    let h = play.play([], propose(), approve());
    const named = answer('no', ['I am Claude, made by Anthropic, and I see no demand'], { reasoning: 'As Claude I would wait.' });
    for (const call of play.stateOf(h).calls.filter((c) => c.status === 'pending')) {
      const i = call.request.panelist!;
      h = play.play(h, record(call.request.callId, ok(i === 1 ? named : answer(i === 0 ? 'yes' : 'no'))));
    }
    const completed = h.filter((e): e is Extract<ChamberEvent, { type: 'ChamberCallCompleted' }> => e.type === 'ChamberCallCompleted');
    expect(completed.find((e) => e.data.provider === 'anthropic')!.data.text).toContain('I am Claude, made by Anthropic');
    const cross = play.stateOf(h).calls.filter((c) => c.request.step === 'cross_exam').map((c) => c.request);
    expect(cross).toHaveLength(3);
    for (const r of cross.filter((x) => x.panelist !== 1)) {
      expect(r.prompt).toContain('I am [a model], made by [a provider], and I see no demand');
      expect(r.prompt).not.toMatch(/claude|anthropic/i);
    }
    for (const r of cross) h = play.play(h, record(r.callId, ok(r.panelist === 1 ? { ...named, revised: false, influencedBy: null } : answer(r.panelist === 0 ? 'yes' : 'no', ['demand is growing'], { revised: false, influencedBy: null })), 30));
    const s = play.stateOf(h);
    const arbiter = s.calls.at(-1)!.request;
    expect(arbiter.step).toBe('arbiter');
    expect(arbiter.prompt).toContain('As [a model] I would wait.');
    expect(arbiter.prompt).not.toMatch(/claude|anthropic/i);
    h = play.play(h, record(arbiter.callId, ok(verdict('no_consensus', [arbiterLabel(s, 0)])), 40));
    expect(lastOf(h, 'ChamberSessionConcluded')).toBeDefined();
    let r: ChamberRecord | undefined;
    for (const e of h) r = evolveChamberRecord(r, e);
    // The blind answer and the cross-examination answer of the anthropic panelist: twice.
    expect(r!.selfIdentified).toEqual({ anthropic: 2 });
  });
});
