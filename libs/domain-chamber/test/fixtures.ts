import type { CallOutcomeRecord, PanelAnswer } from '@agora/contracts';
import { scenarioOf } from '@agora/decider';
import { createChamberDecider, DEFAULT_CHAMBER_RULES, type ChamberCommand, type ChamberEvent, type ChamberPolicy, type ChamberSessionState } from '../src/index.js';

export const PANEL = ['openai:gpt-4.1', 'anthropic:claude-sonnet-4-20250514', 'google:gemini-2.5-pro'];

export const POLICY: ChamberPolicy = {
  ...DEFAULT_CHAMBER_RULES,
  panel: PANEL,
  arbiter: 'anthropic:claude-sonnet-4-20250514',
  fallbackArbiter: 'openai:gpt-4.1',
  arbiterPool: ['anthropic:claude-sonnet-4-20250514', 'openai:gpt-4.1'],
  recusal: 'monitor',
  currency: 'USD',
  providers: ['openai', 'anthropic', 'google', 'mistral'],
  prices: {
    'openai:gpt-4.1': { inputPerMTok: 2, outputPerMTok: 8 },
    'anthropic:claude-sonnet-4-20250514': { inputPerMTok: 3, outputPerMTok: 15 },
    'google:gemini-2.5-pro': { inputPerMTok: 1.25, outputPerMTok: 10 },
    'openai:gpt-4o': { inputPerMTok: 2.5, outputPerMTok: 10 },
    'mistral:large': { inputPerMTok: 2, outputPerMTok: 6 },
  },
};

export const SESSION = 's1';
export const T0 = '2026-03-10T10:00:00.000Z';
export const at = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000).toISOString();

export const decider = (policy: ChamberPolicy = POLICY) => createChamberDecider(policy);
export const scenario = (policy: ChamberPolicy = POLICY) => scenarioOf(decider(policy), 'chamber_session');

let n = 0;
export function cmd<T extends ChamberCommand['type']>(type: T, payload: Extract<ChamberCommand, { type: T }>['payload'], actor = 'root', roles: string[] = ['operator'], now = T0): ChamberCommand {
  return { type, payload, context: { now, actor, actorRoles: roles, commandId: `c${++n}` } } as ChamberCommand;
}

export const propose = (extra: Record<string, unknown> = {}, actor = 'pipeline', roles = ['executive']) =>
  cmd('ProposeChamberSession', { sessionId: SESSION, question: 'Should we enter market X this year?', context: 'Revenue is flat.', rationale: 'High stakes', ...extra } as never, actor, roles);

export const approve = (now = at(10)) => cmd('ApproveChamberSession', { sessionId: SESSION, reserved: 1, month: '2026-03' }, 'root', ['operator'], now);

export const answer = (position: string, claims: string[] = ['demand is growing'], extra: Record<string, unknown> = {}): PanelAnswer & Record<string, unknown> => ({ position, confidence: 0.7, keyClaims: claims, evidence: ['a survey'], reasoning: `because ${position}`, ...extra });

export function ok(output: unknown, cost = 0.01, latencyMs = 1200): CallOutcomeRecord {
  return { ok: true, text: JSON.stringify(output), output, responseModel: null, finishReason: 'stop', usage: { inputTokens: 100, outputTokens: 50 }, cost, latencyMs, attempts: 1, retried: [] };
}

export function failed(kind: 'http' | 'interrupted' = 'http', status = 500, message = 'Internal server error', cost = 0): CallOutcomeRecord {
  return { ok: false, error: { kind, message, ...(kind === 'http' ? { status, body: `{"error":{"message":"${message}"}}` } : {}), retryable: false }, usage: { inputTokens: 0, outputTokens: 0 }, cost, costEstimated: kind === 'interrupted', latencyMs: 10, attempts: 1, retried: [] };
}

export const record = (callId: string, outcome: CallOutcomeRecord, seconds = 20) => cmd('RecordChamberCallOutcome', { sessionId: SESSION, callId, outcome, at: at(seconds) }, 'service:chamber', ['operator'], at(seconds));

export function pendingCallIds(state: ChamberSessionState): string[] {
  return state.calls.filter((c) => c.status === 'pending').map((c) => c.request.callId);
}

export function lastOf<T extends ChamberEvent['type']>(events: readonly ChamberEvent[], type: T): Extract<ChamberEvent, { type: T }> {
  const found = [...events].reverse().find((e) => e.type === type);
  if (!found) throw new Error(`no ${type} in ${events.map((e) => e.type).join(', ')}`);
  return found as Extract<ChamberEvent, { type: T }>;
}

/** The label the arbiter call shows for a panelist. */
export function arbiterLabel(state: ChamberSessionState, panelist: number): string {
  const call = [...state.calls].reverse().find((c) => c.request.step === 'arbiter')!;
  return Object.entries(call.request.labels).find(([, p]) => p === panelist)![0];
}

export const verdict = (v: 'consensus' | 'no_consensus', restsOn: string[], leanedOn: string | null = restsOn[0] ?? null) => ({
  verdict: v,
  position: v === 'consensus' ? 'yes' : '',
  synthesis: v === 'consensus' ? 'Enter the market, carefully.' : 'The panel disagrees.',
  restsOn,
  reasoning: 'weighed the evidence',
  selfCheck: { leanedOn, why: 'best evidence' },
});
