import { DeciderSpecification } from '@agora/decider';
import { charCount, createChamberDecider, panelProblem, type ChamberEvent } from '../src/index.js';
import { answer, approve, arbiterLabel, at, cmd, decider, failed, lastOf, ok, PANEL, pendingCallIds, POLICY, propose, record, scenario, SESSION, verdict } from './fixtures.js';

const play = scenario();
const spec = DeciderSpecification.for(decider());

function approved(): ChamberEvent[] {
  return play.play([], propose(), approve());
}

/** Answers every pending call of the blind phase with the given positions (by panelist index). */
function blind(history: ChamberEvent[], positions: string[], claims: string[][] = []): ChamberEvent[] {
  const state = play.stateOf(history);
  let h = history;
  for (const call of state.calls.filter((c) => c.status === 'pending')) {
    const i = call.request.panelist!;
    h = play.play(h, record(call.request.callId, ok(answer(positions[i]!, claims[i] ?? ['demand is growing']))));
  }
  return h;
}

describe('chamber session: proposal', () => {
  it('records the question, the resolved panel, arbiter, rules, maximum cost and the approval window; nothing is requested', () => {
    const [proposed, ...rest] = play.play([], propose());
    expect(rest).toEqual([]);
    expect(proposed!.type).toBe('ChamberSessionProposed');
    const d = (proposed as Extract<ChamberEvent, { type: 'ChamberSessionProposed' }>).data;
    expect(d.panel.map((p) => p.model)).toEqual(PANEL);
    expect(d.arbiter).toEqual({ model: 'anthropic:claude-sonnet-4-20250514', provider: 'anthropic' });
    expect(d.approvalExpiresAt).toBe(at(24 * 3600));
    expect(d.maxCost).toBeGreaterThan(0);
    expect(d.maxCost).toBeLessThanOrEqual(d.costCeiling);
    expect(play.stateOf([proposed!]).status).toBe('awaiting_approval');
  });

  it.each([
    [{ question: 'x'.repeat(4001) }, /more than the limit of 4000/, 'question_too_long'],
    [{ context: 'x'.repeat(20_001) }, /context has 20001 characters/, 'context_too_long'],
    [{ panel: ['openai:gpt-4.1', 'openai:gpt-4.1', 'google:gemini-2.5-pro'] }, /twice/, 'duplicate_model'],
    [{ panel: ['openai:gpt-4.1', 'openai:gpt-4o', 'google:gemini-2.5-pro'] }, /2 distinct providers.*at least 3/, 'panel_too_small'],
    [{ panel: ['openai:gpt-4.1', 'cohere:command', 'google:gemini-2.5-pro'] }, /unknown provider cohere/, 'unknown_model'],
    [{ panel: ['openai:gpt-5', 'anthropic:claude-sonnet-4-20250514', 'google:gemini-2.5-pro'] }, /no price/, 'no_price'],
    [{ costCeiling: 0.0001 }, /could cost up to .* more than its ceiling/, 'over_ceiling'],
    [{ costCeiling: 50 }, /above the per-session ceiling/, 'ceiling_too_high'],
  ])('refuses a proposal (%#: %p), nothing recorded', (extra, message, reason) => {
    const refusal = spec([]).when(propose(extra)).thenRefuses('invalid_command', message);
    expect(refusal.details?.['reason']).toBe(reason);
  });

  it('exclude_provider recusal drops the arbiter provider panelist, and refuses when fewer than 3 providers remain', () => {
    const strict = { ...POLICY, recusal: 'exclude_provider' as const };
    DeciderSpecification.for(createChamberDecider(strict))([]).when(propose()).thenRefuses('invalid_command', /at least 3/);
    const [proposed] = scenario(strict).play([], propose({ panel: [...PANEL, 'mistral:large'] }));
    const d = (proposed as Extract<ChamberEvent, { type: 'ChamberSessionProposed' }>).data;
    expect(d.panel.map((p) => p.provider)).toEqual(['openai', 'google', 'mistral']);
    expect(d.excluded).toEqual([{ model: 'anthropic:claude-sonnet-4-20250514', reason: expect.stringContaining('exclude_provider') }]);
  });

  it('rotate recusal draws the arbiter from the pool by the session seed', () => {
    const rotating = scenario({ ...POLICY, recusal: 'rotate' });
    const arbiters = new Set(
      Array.from({ length: 20 }, (_, i) => {
        const [p] = rotating.play([], propose({ sessionId: `r${i}` }));
        return (p as Extract<ChamberEvent, { type: 'ChamberSessionProposed' }>).data.arbiter.model;
      }),
    );
    expect(arbiters).toEqual(new Set(POLICY.arbiterPool));
  });

  it('a session id proposed twice is refused', () => {
    spec(play.play([], propose())).when(propose()).thenRefuses('illegal_state', /already exists/);
  });
});

describe('chamber session: the human gate', () => {
  it('approval by a non-operator is forbidden, and nothing is requested', () => {
    spec(play.play([], propose())).when(cmd('ApproveChamberSession', { sessionId: SESSION, reserved: 1, month: '2026-03' }, 'pipeline', ['executive'])).thenRefuses('forbidden');
  });

  it('an approval after the window is refused; the deadline expires the session', () => {
    const h = play.play([], propose());
    spec(h).when(approve(at(24 * 3600))).thenRefuses('illegal_state', /approval window/);
    spec(h).when(cmd('ExpireChamberApproval', { sessionId: SESSION, deadlineAt: at(24 * 3600) }, 'service:chamber', ['operator'], at(10))).thenNothing();
    const expired = play.play(h, cmd('ExpireChamberApproval', { sessionId: SESSION, deadlineAt: at(24 * 3600) }, 'service:chamber', ['operator'], at(24 * 3600)));
    expect(expired.at(-1)!.type).toBe('ChamberApprovalExpired');
    spec(expired).when(approve(at(30))).thenRefuses('illegal_state', /expired/);
  });

  it('approval records the reservation and requests the blind phase: one call per panelist, question and context only, no model names', () => {
    const h = approved();
    const requests = h.filter((e) => e.type === 'ChamberCallRequested').map((e) => (e as Extract<ChamberEvent, { type: 'ChamberCallRequested' }>).data);
    expect(h[1]).toMatchObject({ type: 'ChamberSessionApproved', data: { reserved: 1, month: '2026-03', approvedBy: 'root' } });
    expect(requests.map((r) => [r.step, r.panelist, r.model])).toEqual(PANEL.map((m, i) => ['blind', i, m]));
    for (const r of requests) {
      expect(r.prompt).toContain('Should we enter market X this year?');
      expect(r.prompt).toContain('Revenue is flat.');
      expect(r.prompt + r.system).not.toMatch(/openai|anthropic|google|gpt|claude|gemini/i);
    }
    spec(h).when(approve()).thenNothing();
  });

  it('rejection closes the session without a call; a rejected session cannot be approved', () => {
    const h = play.play([], propose(), cmd('RejectChamberSession', { sessionId: SESSION, reason: 'not worth it' }));
    expect(h.at(-1)!.type).toBe('ChamberSessionRejected');
    spec(h).when(approve()).thenRefuses('illegal_state', /rejected/);
  });
});

describe('chamber session: phases and outcomes', () => {
  it('consensus in the blind phase: divergence measured, no cross-examination, arbiter synthesis naming its answers', () => {
    let h = blind(approved(), ['Yes, enter.', 'yes enter', 'YES — enter!']);
    const measured = lastOf(h, 'ChamberDivergenceMeasured').data.divergence;
    expect(measured).toMatchObject({ stage: 'blind', divergent: false, score: 0, majority: { position: 'yes enter', count: 3, of: 3 } });
    const state = play.stateOf(h);
    expect(state.status).toBe('arbitration');
    const arbiterCall = state.calls.at(-1)!.request;
    expect(arbiterCall).toMatchObject({ step: 'arbiter', role: 'arbiter', model: 'anthropic:claude-sonnet-4-20250514' });
    expect(arbiterCall.prompt).toContain('ANSWER A');
    expect(arbiterCall.prompt).not.toMatch(/gpt|claude|gemini/i);
    const claudeLabel = arbiterLabel(state, 1);
    h = play.play(h, record(arbiterCall.callId, ok(verdict('consensus', [claudeLabel, arbiterLabel(state, 0)]))));
    const concluded = lastOf(h, 'ChamberSessionConcluded').data;
    expect(concluded).toMatchObject({ outcome: 'consensus', position: 'yes enter', ownProviderWin: true, blindMajority: { position: 'yes enter' }, changedFromBlindMajority: false, forcedSynthesisRefused: false, answered: 3 });
    expect(concluded.restsOn.map((r) => r.panelist).sort()).toEqual([0, 1]);
    expect(concluded.selfCheck?.leanedOn?.panelist).toBe(1);
    expect(concluded.cost).toBeCloseTo(0.04, 9);
    expect(h.some((e) => e.type === 'ChamberCallRequested' && e.data.step === 'cross_exam')).toBe(false);
  });

  it('divergence, one cross-examination round with shuffled labels, position changes recorded, then consensus', () => {
    let h = blind(approved(), ['yes', 'yes', 'no']);
    expect(lastOf(h, 'ChamberDivergenceMeasured').data.divergence).toMatchObject({ divergent: true, positionScore: 0.3333, majority: { position: 'yes', count: 2 } });
    const state = play.stateOf(h);
    expect(state.status).toBe('cross_exam');
    const cross = state.calls.filter((c) => c.request.step === 'cross_exam').map((c) => c.request);
    expect(cross).toHaveLength(3);
    const labels = cross[0]!.labels;
    expect(Object.keys(labels).sort()).toEqual(['A', 'B', 'C']);
    for (const r of cross) {
      expect(r.prompt).not.toMatch(/gpt|claude|gemini|openai|anthropic|google/i);
      const own = Object.entries(labels).find(([, p]) => p === r.panelist)![0];
      expect(r.prompt).not.toContain(`ANSWER ${own}\n`);
    }
    // panelist 2 moves to "yes"; the others keep theirs
    for (const r of cross) {
      const keep = r.panelist === 2 ? answer('yes', ['demand is growing'], { revised: true, influencedBy: 'A' }) : answer('yes', ['demand is growing'], { revised: false, influencedBy: null });
      h = play.play(h, record(r.callId, ok(keep), 30));
    }
    const change = lastOf(h, 'ChamberPositionChanged').data;
    expect(change).toMatchObject({ panelist: 2, from: 'no', to: 'yes', towardBlindMajority: true });
    expect([labels[change.towardLabel!]]).not.toContain(2);
    expect(lastOf(h, 'ChamberDivergenceMeasured').data.divergence).toMatchObject({ stage: 'final', divergent: false });
    const s2 = play.stateOf(h);
    h = play.play(h, record(s2.calls.at(-1)!.request.callId, ok(verdict('consensus', [arbiterLabel(s2, 0)])), 40));
    expect(lastOf(h, 'ChamberSessionConcluded').data).toMatchObject({ outcome: 'consensus', position: 'yes', ownProviderWin: false, changedFromBlindMajority: false });
  });

  it('a split that stays split: a claimed consensus is refused by the domain and recorded as no_consensus with the arbiter text kept', () => {
    let h = blind(approved(), ['yes', 'no', 'maybe later']);
    for (const c of play.stateOf(h).calls.filter((x) => x.status === 'pending')) {
      const keep = ['yes', 'no', 'maybe later'][c.request.panelist!]!;
      h = play.play(h, record(c.request.callId, ok(answer(keep, ['demand is growing'], { revised: false, influencedBy: null })), 30));
    }
    expect(h.filter((e) => e.type === 'ChamberPositionChanged')).toEqual([]);
    const s = play.stateOf(h);
    h = play.play(h, record(s.calls.at(-1)!.request.callId, ok(verdict('consensus', [arbiterLabel(s, 0)])), 40));
    const concluded = lastOf(h, 'ChamberSessionConcluded').data;
    expect(concluded).toMatchObject({ outcome: 'no_consensus', forcedSynthesisRefused: true, synthesis: 'Enter the market, carefully.', ownProviderWin: null, blindMajority: null });
    expect(concluded.reason).toMatch(/forced synthesis refused/);
    expect(concluded.arbiterText).toContain('Enter the market');
  });

  it('contradicting claims make answers divergent even with equal positions', () => {
    const h = blind(approved(), ['yes', 'yes', 'yes'], [['the market is saturated'], ['the market is not saturated'], ['demand is growing']]);
    expect(lastOf(h, 'ChamberDivergenceMeasured').data.divergence).toMatchObject({ divergent: true, positionScore: 0, contradictions: [{ a: 0, b: 1, claim: 'the market is saturated' }] });
  });

  it('one provider failing: its error verbatim, and fewer than 3 answers end in failed, never a synthesis', () => {
    let h = approved();
    const calls = play.stateOf(h).calls.map((c) => c.request.callId);
    h = play.play(h, record(calls[0]!, ok(answer('yes'))), record(calls[1]!, failed('http', 529, 'Overloaded')), record(calls[2]!, ok(answer('yes'))));
    const concluded = lastOf(h, 'ChamberSessionConcluded').data;
    expect(concluded).toMatchObject({ outcome: 'failed', answered: 2, synthesis: null });
    expect(concluded.reason).toMatch(/only 2 of 3 panelists answered/);
    expect(concluded.errors).toEqual([{ callId: calls[1], model: PANEL[1], provider: 'anthropic', error: expect.objectContaining({ status: 529, message: 'Overloaded', body: expect.stringContaining('Overloaded') }) }]);
    expect(h.some((e) => e.type === 'ChamberCallRequested' && e.data.step === 'arbiter')).toBe(false);
  });

  it('the arbiter failing hands over to the fallback arbiter; both failing ends in failed with the error', () => {
    let h = blind(approved(), ['yes', 'yes', 'yes']);
    const first = play.stateOf(h).calls.at(-1)!.request;
    h = play.play(h, record(first.callId, failed('http', 500, 'boom')));
    const fallback = play.stateOf(h).calls.at(-1)!.request;
    expect(fallback).toMatchObject({ role: 'fallback_arbiter', model: 'openai:gpt-4.1', step: 'arbiter' });
    const s = play.stateOf(h);
    const done = play.play(h, record(fallback.callId, ok(verdict('consensus', [arbiterLabel(s, 2)]))));
    expect(lastOf(done, 'ChamberSessionConcluded').data).toMatchObject({ outcome: 'consensus', arbiter: { model: 'openai:gpt-4.1', fallback: true }, ownProviderWin: false });
    const bothFail = play.play(h, record(fallback.callId, failed('http', 503, 'unavailable')));
    expect(lastOf(bothFail, 'ChamberSessionConcluded').data).toMatchObject({ outcome: 'failed', reason: expect.stringMatching(/fallback arbiter failed/) });
  });

  it('an interrupted call is requested again once (stepAttempts 2), counted at its estimated cost; a second interruption is final', () => {
    let h = approved();
    const [c0] = pendingCallIds(play.stateOf(h));
    h = play.play(h, record(c0!, failed('interrupted', 0, 'the process stopped during the call', 0.02)));
    const again = lastOf(h, 'ChamberCallRequested').data;
    expect(again).toMatchObject({ callId: 'blind-p0-a2', attempt: 2, panelist: 0 });
    expect(play.stateOf(h).cost).toBeCloseTo(0.02, 9);
    h = play.play(h, record('blind-p0-a2', failed('interrupted', 0, 'again', 0.02)));
    expect(h.filter((e) => e.type === 'ChamberCallRequested' && e.data.panelist === 0)).toHaveLength(2);
  });

  it('an outcome already recorded is not recorded again (cost counted once)', () => {
    const h = approved();
    const [c0] = pendingCallIds(play.stateOf(h));
    const once = play.play(h, record(c0!, ok(answer('yes'))));
    spec(once).when(record(c0!, ok(answer('no')))).thenNothing();
    spec(once).when(record('blind-p9-a1', ok(answer('no')))).thenRefuses('not_found');
  });

  it('a cancelled session records calls still in flight but makes no further request', () => {
    let h = play.play(approved(), cmd('CancelChamberSession', { sessionId: SESSION, reason: 'changed my mind' }, 'pipeline', ['executive']));
    expect(lastOf(h, 'ChamberSessionCancelled').data.pendingCalls).toHaveLength(3);
    for (const id of ['blind-p0-a1', 'blind-p1-a1', 'blind-p2-a1']) h = play.play(h, record(id, ok(answer('yes'))));
    expect(h.filter((e) => e.type === 'ChamberCallRequested')).toHaveLength(3);
    expect(play.stateOf(h).status).toBe('cancelled');
    spec(h).when(cmd('CancelChamberSession', { sessionId: SESSION, reason: 'x' }, 'stranger', ['executive'])).thenRefuses('forbidden');
  });

  it("the human's follow-up is recorded after the outcome only, by an operator", () => {
    const h = approved();
    spec(h).when(cmd('RecordChamberFollowUp', { sessionId: SESSION, decision: 'accepted', reason: 'fine' })).thenRefuses('illegal_state', /no outcome yet/);
    let done = blind(h, ['yes', 'yes', 'yes']);
    const s = play.stateOf(done);
    done = play.play(done, record(s.calls.at(-1)!.request.callId, ok(verdict('no_consensus', []))));
    expect(lastOf(done, 'ChamberSessionConcluded').data.outcome).toBe('no_consensus');
    spec(done).when(cmd('RecordChamberFollowUp', { sessionId: SESSION, decision: 'accepted', reason: 'ok' }, 'pipeline', ['executive'])).thenRefuses('forbidden');
    const followed = play.play(done, cmd('RecordChamberFollowUp', { sessionId: SESSION, decision: 'overridden', reason: 'I know better', position: 'No' }));
    expect(lastOf(followed, 'ChamberFollowUpRecorded').data).toMatchObject({ decision: 'overridden', position: 'No', by: 'root' });
    spec(followed).when(cmd('RecordChamberFollowUp', { sessionId: SESSION, decision: 'accepted', reason: 'other' })).thenRefuses('illegal_state', /already recorded/);
  });

  it("the reservation bounds the session: a next step it cannot cover is not requested, and the session fails saying so", async () => {
    let h = play.play([], propose(), { ...approve(), payload: { sessionId: SESSION, reserved: 0.01, month: '2026-03' } } as never);
    for (const c of play.stateOf(h).calls) h = play.play(h, record(c.request.callId, ok(answer('yes'), 0.003)));
    const concluded = lastOf(h, 'ChamberSessionConcluded').data;
    expect(concluded).toMatchObject({ outcome: 'failed', reason: expect.stringMatching(/reservation of 0.01 cannot cover its next step: 0.009 spent/) });
    expect(h.filter((e) => e.type === 'ChamberCallRequested')).toHaveLength(3);
  });

  it('an arbiter verdict without the labels of the answers is no_consensus', () => {
    let h = blind(approved(), ['yes', 'yes', 'yes']);
    const s = play.stateOf(h);
    h = play.play(h, record(s.calls.at(-1)!.request.callId, ok(verdict('consensus', ['Z']))));
    expect(lastOf(h, 'ChamberSessionConcluded').data).toMatchObject({ outcome: 'no_consensus', reason: expect.stringMatching(/names no answer/) });
  });
});

describe('chamber session: limits and recusal checked as documented', () => {
  it('counts the question and context limits in characters (code points), not UTF-16 units', () => {
    const policy = { ...POLICY, maxQuestionChars: 100, maxContextChars: 10 };
    const emoji = '😀'.repeat(100); // 100 characters, 200 UTF-16 units
    expect(emoji.length).toBe(200);
    const [proposed] = scenario(policy).play([], propose({ question: emoji, context: 'é'.repeat(10) }));
    expect(proposed!.type).toBe('ChamberSessionProposed');
    DeciderSpecification.for(createChamberDecider(policy))([]).when(propose({ question: `${emoji}x` })).thenRefuses('invalid_command', /the question has 101 characters, more than the limit of 100/);
    expect(charCount('a😀é')).toBe(3);
  });

  it('says at start, in one line, when exclude_provider leaves the configured panel too small', () => {
    expect(panelProblem({ ...POLICY, recusal: 'exclude_provider' })).toBe(
      "recusal exclude_provider leaves the panel 2 providers (openai, google) once the arbiter's provider anthropic is excluded, and 3 are needed: add panel models of other providers, or choose recusal monitor or rotate",
    );
    expect(panelProblem({ ...POLICY, recusal: 'exclude_provider', panel: [...PANEL, 'mistral:large'] })).toBeUndefined();
    expect(panelProblem({ ...POLICY, recusal: 'monitor' })).toBeUndefined();
  });
});
