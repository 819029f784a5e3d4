/**
 * How a session moves on once a phase's calls are all settled: the blind answers are measured
 * for divergence; a divergent panel gets its one cross-examination round (when the rules allow it),
 * then the arbiter; the arbiter's verdict is checked by the domain (no synthesis while the final
 * answers still diverge, none on fewer than minPanelists answers); a failed arbiter hands over to
 * the fallback; an interrupted call is made again, at most stepAttempts times per step.
 */
import { ArbiterVerdict, CrossExamAnswer, PanelAnswer, type ChamberCallRequested, type ChamberSessionConcluded, type DataOf, type Divergence } from '@agora/contracts';
import { measureDivergence, normalizeText } from './divergence.js';
import type { ChamberEvent } from './events.js';
import { callMaxCost, type ModelPriceData } from './proposal.js';
import { ARBITER_SYSTEM, arbiterPrompt, blindPrompt, crossExamPrompt, labelOf, PANELIST_SYSTEM, shuffledLabels } from './prompts.js';
import { evolveChamber, type CallState, type ChamberSessionState } from './state.js';

type Prices = Readonly<Record<string, ModelPriceData>>;
type Request = DataOf<typeof ChamberCallRequested>;

function request(state: ChamberSessionState, prices: Prices, now: string, fields: Omit<Request, 'sessionId' | 'maxOutputTokens' | 'maxCost' | 'requestedAt' | 'callId'> & { callId?: string }): ChamberEvent {
  const p = state.proposal!;
  const price = prices[fields.model] ?? { inputPerMTok: 0, outputPerMTok: 0 };
  const callId = fields.callId ?? callIdOf(fields.step, fields.role, fields.panelist, fields.attempt);
  const maxCost = callMaxCost(price, fields.system.length + fields.prompt.length, p.rules.maxOutputTokens);
  return { type: 'ChamberCallRequested', data: { sessionId: p.sessionId, ...fields, callId, maxOutputTokens: p.rules.maxOutputTokens, maxCost, requestedAt: now } };
}

export function callIdOf(step: Request['step'], role: Request['role'], panelist: number | null, attempt: number): string {
  const who = role === 'panelist' ? `p${panelist}` : role === 'arbiter' ? 'arb' : 'fb';
  return `${step}-${who}-a${attempt}`;
}

/** The blind phase's requests, one per panelist (on approval). */
export function blindRequests(state: ChamberSessionState, prices: Prices, now: string): ChamberEvent[] {
  const p = state.proposal!;
  const prompt = blindPrompt(p.question, p.context);
  return p.panel.map((panelist) => request(state, prices, now, { step: 'blind', attempt: 1, panelist: panelist.index, role: 'panelist', model: panelist.model, provider: panelist.provider, system: PANELIST_SYSTEM, prompt, schema: 'PanelAnswer', labels: {} }));
}

/** The latest call of each (step, role, panelist): later attempts replace earlier ones. */
function latestOf(calls: readonly CallState[], step: Request['step']): Map<string, CallState> {
  const latest = new Map<string, CallState>();
  for (const call of calls) if (call.request.step === step) latest.set(`${call.request.role}:${call.request.panelist}`, call);
  return latest;
}

function answersOf<T>(calls: readonly CallState[], step: Request['step'], schema: { safeParse(x: unknown): { success: boolean; data?: T } }): Map<number, T> {
  const answers = new Map<number, T>();
  for (const call of latestOf(calls, step).values()) {
    if (call.status !== 'completed' || call.request.panelist === null) continue;
    const parsed = schema.safeParse(call.completed!.output);
    if (parsed.success) answers.set(call.request.panelist, parsed.data as T);
  }
  return answers;
}

/** Interrupted calls of a step (recorded failed) that may be made again. */
function retries(state: ChamberSessionState, prices: Prices, now: string, step: Request['step']): ChamberEvent[] {
  const events: ChamberEvent[] = [];
  for (const call of latestOf(state.calls, step).values()) {
    if (call.status !== 'failed' || call.failed!.error.kind !== 'interrupted' || call.request.attempt >= state.proposal!.rules.stepAttempts) continue;
    const r = call.request;
    events.push(request(state, prices, now, { step: r.step, attempt: r.attempt + 1, panelist: r.panelist, role: r.role, model: r.model, provider: r.provider, system: r.system, prompt: r.prompt, schema: r.schema, labels: r.labels }));
  }
  return events;
}

function errorsOf(state: ChamberSessionState): DataOf<typeof ChamberSessionConcluded>['errors'] {
  return state.calls.filter((c) => c.status === 'failed').map((c) => ({ callId: c.request.callId, model: c.request.model, provider: c.request.provider, error: c.failed!.error }));
}

function conclude(state: ChamberSessionState, now: string, fields: Partial<DataOf<typeof ChamberSessionConcluded>> & Pick<DataOf<typeof ChamberSessionConcluded>, 'outcome' | 'reason' | 'answered'>): ChamberEvent {
  const blind = state.divergences.find((d) => d.stage === 'blind');
  const approvedAt = state.approval ? Date.parse(state.approval.approvedAt) : Date.parse(now);
  return {
    type: 'ChamberSessionConcluded',
    data: {
      sessionId: state.proposal!.sessionId,
      position: null,
      synthesis: null,
      restsOn: [],
      arbiter: null,
      arbiterText: null,
      forcedSynthesisRefused: false,
      selfCheck: null,
      ownProviderWin: null,
      blindMajority: blind?.majority ?? null,
      changedFromBlindMajority: null,
      errors: errorsOf(state),
      cost: state.cost,
      wallTimeMs: Math.max(0, Date.parse(now) - approvedAt),
      concludedAt: now,
      ...fields,
    },
  };
}

function arbiterRequest(state: ChamberSessionState, prices: Prices, now: string, finals: Map<number, PanelAnswer>, fallback: boolean): ChamberEvent {
  const p = state.proposal!;
  const labels = shuffledLabels(p.seed, 'arbiter', [...finals.keys()]);
  const shown = Object.entries(labels).map(([label, panelist]) => ({ label, answer: finals.get(panelist)! }));
  const who = fallback ? p.fallbackArbiter! : p.arbiter;
  return request(state, prices, now, { step: 'arbiter', attempt: 1, panelist: null, role: fallback ? 'fallback_arbiter' : 'arbiter', model: who.model, provider: who.provider, system: ARBITER_SYSTEM, prompt: arbiterPrompt(p.question, p.context, shown), schema: 'ArbiterVerdict', labels });
}

/** The final answers: the cross-examination answer of a panelist when it gave one, else its blind answer. */
function finalAnswers(state: ChamberSessionState): Map<number, PanelAnswer> {
  const finals = answersOf<PanelAnswer>(state.calls, 'blind', PanelAnswer);
  for (const [panelist, answer] of answersOf<CrossExamAnswer>(state.calls, 'cross_exam', CrossExamAnswer)) if (finals.has(panelist)) finals.set(panelist, answer);
  return finals;
}

const asInputs = (answers: Map<number, PanelAnswer>) => [...answers.entries()].map(([panelist, a]) => ({ panelist, position: a.position, claims: a.keyClaims }));

/**
 * The session's reservation bounds what it may call: when the calls already settled, those still
 * pending and those about to be requested could cost more than was reserved, nothing more is
 * requested and the session fails, saying so (the reservation is its maximum cost, so this only
 * happens when answers ran longer than estimated).
 */
export function withinReservation(state: ChamberSessionState, events: ChamberEvent[], now: string): ChamberEvent[] {
  const reserved = state.approval?.reserved;
  const requested = events.reduce((sum, e) => sum + (e.type === 'ChamberCallRequested' ? e.data.maxCost : 0), 0);
  if (reserved === undefined || requested === 0) return events;
  const pending = state.calls.reduce((sum, c) => sum + (c.status === 'pending' ? c.request.maxCost : 0), 0);
  const needed = Math.round((state.cost + pending + requested) * 1_000_000) / 1_000_000;
  if (needed <= reserved + 1e-9) return events;
  const kept = events.filter((e) => e.type !== 'ChamberCallRequested');
  const folded = kept.reduce(evolveChamber, state);
  return [
    ...kept,
    conclude(folded, now, {
      outcome: 'failed',
      reason: `the session's reservation of ${reserved} cannot cover its next step: ${state.cost} spent, up to ${Math.round((pending + requested) * 1_000_000) / 1_000_000} more needed; nothing more was called`,
      answered: finalAnswers(folded).size,
    }),
  ];
}

/** The events that follow a call's outcome, given the state with that outcome folded in (bounded by the reservation). */
export function advance(state: ChamberSessionState, prices: Prices, now: string): ChamberEvent[] {
  return withinReservation(state, next(state, prices, now), now);
}

function next(state: ChamberSessionState, prices: Prices, now: string): ChamberEvent[] {
  const p = state.proposal!;
  const phase = state.status;
  if (phase !== 'blind' && phase !== 'cross_exam' && phase !== 'arbitration') return [];
  const step = phase === 'blind' ? 'blind' : phase === 'cross_exam' ? 'cross_exam' : 'arbiter';
  const again = retries(state, prices, now, step);
  if (again.length > 0) return again;
  if (state.calls.some((c) => c.status === 'pending')) return [];

  if (phase === 'blind') {
    const answers = answersOf<PanelAnswer>(state.calls, 'blind', PanelAnswer);
    if (answers.size < p.rules.minPanelists) return [tooFew(state, now, answers.size)];
    const divergence = measureDivergence('blind', asInputs(answers), p.rules.divergenceThreshold);
    const measured: ChamberEvent = { type: 'ChamberDivergenceMeasured', data: { sessionId: p.sessionId, divergence, measuredAt: now } };
    const next = evolveChamber(state, measured);
    if (divergence.divergent && p.rules.crossExamination) {
      const labels = shuffledLabels(p.seed, 'cross_exam', [...answers.keys()]);
      const requests = p.panel
        .filter((panelist) => answers.has(panelist.index))
        .map((panelist) => {
          const others = Object.entries(labels)
            .filter(([, other]) => other !== panelist.index)
            .map(([label, other]) => ({ label, answer: answers.get(other)! }));
          const prompt = crossExamPrompt(p.question, p.context, answers.get(panelist.index)!, others);
          return request(next, prices, now, { step: 'cross_exam', attempt: 1, panelist: panelist.index, role: 'panelist', model: panelist.model, provider: panelist.provider, system: PANELIST_SYSTEM, prompt, schema: 'CrossExamAnswer', labels });
        });
      return [measured, ...requests];
    }
    return [measured, arbiterRequest(next, prices, now, answers, false)];
  }

  if (phase === 'cross_exam') {
    const blind = answersOf<PanelAnswer>(state.calls, 'blind', PanelAnswer);
    const revised = answersOf<CrossExamAnswer>(state.calls, 'cross_exam', CrossExamAnswer);
    const blindDivergence = state.divergences.find((d) => d.stage === 'blind');
    const majority = blindDivergence?.majority?.position ?? null;
    const labels = [...latestOf(state.calls, 'cross_exam').values()][0]?.request.labels ?? {};
    const events: ChamberEvent[] = [];
    for (const [panelist, answer] of revised) {
      const from = normalizeText(blind.get(panelist)!.position);
      const to = normalizeText(answer.position);
      if (from === to) continue;
      const holder = Object.entries(labels).find(([, other]) => other !== panelist && normalizeText(blind.get(other)?.position ?? '') === to)?.[0];
      const named = answer.influencedBy && labels[answer.influencedBy] !== undefined && labels[answer.influencedBy] !== panelist ? answer.influencedBy : undefined;
      events.push({
        type: 'ChamberPositionChanged',
        data: { sessionId: p.sessionId, panelist, label: labelOf(labels, panelist) ?? 'A', from, to, towardLabel: holder ?? named ?? null, towardBlindMajority: majority !== null && to === majority && from !== majority, influencedBy: answer.influencedBy },
      });
    }
    const finals = finalAnswers(state);
    const divergence = measureDivergence('final', asInputs(finals), p.rules.divergenceThreshold);
    const measured: ChamberEvent = { type: 'ChamberDivergenceMeasured', data: { sessionId: p.sessionId, divergence, measuredAt: now } };
    events.push(measured);
    events.push(arbiterRequest(evolveChamber(state, measured), prices, now, finals, false));
    return events;
  }

  // arbitration
  const arbiterCalls = state.calls.filter((c) => c.request.step === 'arbiter');
  const last = arbiterCalls[arbiterCalls.length - 1]!;
  if (last.status === 'failed') {
    if (last.request.role === 'arbiter' && p.fallbackArbiter) return [arbiterRequest(state, prices, now, finalAnswers(state), true)];
    return [conclude(state, now, { outcome: 'failed', reason: `the arbiter${last.request.role === 'fallback_arbiter' ? ' and the fallback arbiter' : ''} failed: ${last.failed!.error.message}`, answered: finalAnswers(state).size })];
  }
  return [verdictOf(state, last, now)];
}

function tooFew(state: ChamberSessionState, now: string, answered: number): ChamberEvent {
  const p = state.proposal!;
  const failed = errorsOf(state).length > 0;
  return conclude(state, now, {
    outcome: failed ? 'failed' : 'no_consensus',
    reason: `only ${answered} of ${p.panel.length} panelists answered; at least ${p.rules.minPanelists} are needed for an arbitrated outcome${failed ? ' (provider errors below, verbatim)' : ''}`,
    answered,
  });
}

function verdictOf(state: ChamberSessionState, call: CallState, now: string): ChamberEvent {
  const p = state.proposal!;
  const finals = finalAnswers(state);
  const labels = call.request.labels;
  const arbiter = { model: call.request.model, provider: call.request.provider, fallback: call.request.role === 'fallback_arbiter' };
  const parsed = ArbiterVerdict.safeParse(call.completed!.output);
  const arbiterText = call.completed!.text;
  if (!parsed.success) return conclude(state, now, { outcome: 'no_consensus', reason: 'the arbiter did not return a verdict in the required form; founder review recommended', arbiter, arbiterText, answered: finals.size });
  const verdict = parsed.data;
  const refOf = (label: string | null) => {
    if (label === null || labels[label] === undefined) return null;
    const panelist = p.panel.find((x) => x.index === labels[label])!;
    return { label, panelist: panelist.index, model: panelist.model, provider: panelist.provider };
  };
  const restsOn = [...new Set(verdict.restsOn)].map(refOf).filter((r): r is NonNullable<typeof r> => r !== null);
  const selfCheck = { leanedOn: refOf(verdict.selfCheck.leanedOn), why: verdict.selfCheck.why };
  const latest: Divergence = state.divergences[state.divergences.length - 1]!;
  const blindMajority = state.divergences.find((d) => d.stage === 'blind')?.majority ?? null;
  const common = { arbiter, arbiterText, selfCheck, answered: finals.size };
  if (verdict.verdict === 'no_consensus') return conclude(state, now, { ...common, outcome: 'no_consensus', reason: 'the arbiter found no consensus; founder review recommended', synthesis: verdict.synthesis });
  if (latest.divergent) {
    return conclude(state, now, {
      ...common,
      outcome: 'no_consensus',
      forcedSynthesisRefused: true,
      synthesis: verdict.synthesis,
      reason: `the arbiter claimed a consensus while the final answers still diverge (score ${latest.score} > threshold ${latest.threshold}): forced synthesis refused; founder review recommended`,
    });
  }
  if (restsOn.length === 0) return conclude(state, now, { ...common, outcome: 'no_consensus', synthesis: verdict.synthesis, reason: 'the synthesis names no answer it rests on; founder review recommended' });
  const positions = new Set(restsOn.map((r) => normalizeText(finals.get(r.panelist)?.position ?? '')));
  const position = positions.size === 1 ? [...positions][0]! : normalizeText(verdict.position);
  return conclude(state, now, {
    ...common,
    outcome: 'consensus',
    reason: `the arbiter's synthesis rests on ${restsOn.map((r) => r.label).join(', ')}`,
    position,
    synthesis: verdict.synthesis,
    restsOn,
    ownProviderWin: restsOn.some((r) => r.provider === arbiter.provider),
    changedFromBlindMajority: blindMajority ? position !== blindMajority.position : null,
  });
}
