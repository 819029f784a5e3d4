/**
 * Shared givens for the dialectic specs: the fleet of seed 001 (critical_agent paused at risk 0.65,
 * reviewer_b healthy), the seed's default policy, keys for everyone who signs, command builders,
 * and `play`, which runs commands through the decider (checking every event it produces against
 * its zod contract) to build the history of the next test.
 */
import { type Condition, type RecoveryCandidate } from '@agora/contracts';
import { DeciderSpecification, scenarioOf, type CommandContext } from '@agora/decider';
import { generateKeyPair, type KeyPair } from '@agora/identity';
import { defineDialecticPolicy } from '../src/policy.js';
import { signResolution, type ResolutionPayload } from '../src/resolution.js';
import { createDialecticDecider, type DialecticCommand, type DialecticEvent, type DialecticSession } from '../src/session.js';

export const T0 = '2026-11-25T10:00:00.000Z';
/** T0 plus `seconds`. */
export const at = (seconds: number): string => new Date(Date.parse(T0) + seconds * 1000).toISOString();
export const MIN = 60;
export const HOUR = 3600;

/** The seed's defaults: thesis 1 h, antithesis 2 h, synthesis rounds 1 h, signatures 1 h, session 6 h, 5 rounds. */
export const policy = defineDialecticPolicy();
export const decider = createDialecticDecider(policy);
export const spec = DeciderSpecification.for(decider);

export const AGENT = 'critical_agent';
export const REVIEWER = 'reviewer_b';
export const SID = 'critical_agent-p1';
export const SEED = 20251125;

export const roles = {
  critical_agent: ['executive'],
  reviewer_b: ['reviewer'],
  sage: ['reviewer'],
  auditor_c: ['reviewer'],
  dialectic: ['service'],
  root: ['operator'],
  mallory: ['observer'],
} as const;
export type Actor = keyof typeof roles;

let commandCounter = 0;
export function ctx(actor: Actor | string, now = T0, actorRoles?: readonly string[]): CommandContext {
  return { actor, now, actorRoles: actorRoles ?? roles[actor as Actor] ?? [], commandId: `c${++commandCounter}` };
}

const keyring = new Map<string, KeyPair>();
/** Each agent's key pair (made once per test file). */
export function keysOf(agentId: string): KeyPair {
  let keys = keyring.get(agentId);
  if (!keys) keyring.set(agentId, (keys = generateKeyPair()));
  return keys;
}
/** `{publicKey, signature}` of `signer` over the payload. */
export const signed = (payload: ResolutionPayload, signer: string) => ({ publicKey: keysOf(signer).publicKey, signature: signResolution(payload, signer, keysOf(signer).secretKey) });

export const candidate = (agentId: string, over: Partial<RecoveryCandidate> = {}): RecoveryCandidate => ({
  agentId,
  status: 'active',
  paused: false,
  risk: 0.1,
  health: 0.95,
  lastReportAt: T0,
  trackRecord: { reviews: 10, successful: 9 },
  expertise: ['cascade'],
  lastReviewedAgentAt: null,
  collusionFlagged: false,
  ...over,
});

/** The registry's agents: reviewer_b is the only one eligible, each of the others is excluded for one of the seed's reasons. */
export const candidates: RecoveryCandidate[] = [
  candidate(REVIEWER),
  candidate(AGENT, { risk: 0.65 }),
  candidate('shaky', { risk: 0.4 }),
  candidate('paused_peer', { paused: true }),
  candidate('old_friend', { lastReviewedAgentAt: at(-2 * HOUR) }),
  candidate('retired', { status: 'disabled' }),
  candidate('colluder', { collusionFlagged: true }),
];

export const c = (operation: string, parameters: Condition['parameters'] = {}): Condition => ({ operation, parameters });
export const threshold = (value: number): Condition => c('set_risk_threshold', { threshold: value });

/** The seed's worked example. */
export const example = {
  reason: 'risk 0.65 reached the threshold 0.6',
  thesis: { rootCause: 'AGI discussion triggered a complexity spike', proposedConditions: [threshold(0.7), c('enable_monitoring', { target: 'cascade' })], reasoning: 'External spike, not internal failure' },
  antithesis: {
    observedMetrics: { risk_score: 0.65, coherence: 0.45 },
    concerns: ['Risk too high', 'Need monitoring'],
    reasoning: 'Raising the threshold to 0.70 is too permissive; 0.45 keeps it honest',
    counterProposal: { rootCause: 'External complexity spike', proposedConditions: [threshold(0.45), c('enable_monitoring', { target: 'cascade' })] },
  },
  synthesis: { rootCause: 'External complexity spike', proposedConditions: [threshold(0.48), c('enable_cascade_detection')], reasoning: "Compromise on the reviewer's threshold" },
};

type Payload<T extends DialecticCommand['type']> = Extract<DialecticCommand, { type: T }>['payload'];

export const open = (over: Partial<Payload<'OpenRecovery'>> = {}, cx = ctx('dialectic')): DialecticCommand => ({
  type: 'OpenRecovery',
  context: cx,
  payload: { sessionId: SID, agentId: AGENT, pause: 1, reason: example.reason, risk: 0.65, health: 0.5, threshold: 0.6, tags: ['cascade'], pausedAt: T0, seed: SEED, candidates, ...over },
});
export const thesis = (now = at(60), over: Partial<Payload<'SubmitThesis'>> = {}, actor: string = AGENT): DialecticCommand => ({
  type: 'SubmitThesis',
  context: ctx(actor, now),
  payload: { sessionId: SID, ...example.thesis, ...over },
});
export const antithesis = (now = at(120), over: Partial<Payload<'SubmitAntithesis'>> = {}, actor: string = REVIEWER): DialecticCommand => ({
  type: 'SubmitAntithesis',
  context: ctx(actor, now),
  payload: { sessionId: SID, ...example.antithesis, ...over },
});
export const synthesis = (round: number, actor: string, now: string, over: Partial<Payload<'SubmitSynthesis'>> = {}): DialecticCommand => ({
  type: 'SubmitSynthesis',
  context: ctx(actor, now),
  payload: { sessionId: SID, round, ...example.synthesis, agrees: true, ...over },
});
export const sign = (actor: string, payload: ResolutionPayload, now = at(240), over: Partial<Payload<'SignResolution'>> = {}): DialecticCommand => ({
  type: 'SignResolution',
  context: ctx(actor, now),
  payload: { sessionId: SID, ...signed(payload, actor), ...over },
});
export const expire = (deadlineAt: string, now = deadlineAt, cx?: CommandContext): DialecticCommand => ({
  type: 'ExpireDialecticPhase',
  context: cx ?? ctx('dialectic', now),
  payload: { sessionId: SID, deadlineAt },
});
export const escalate = (actor: string, now: string, toOperator = false): DialecticCommand => ({
  type: 'EscalateRecovery',
  context: ctx(actor, now),
  payload: { sessionId: SID, reason: 'we are going in circles', toOperator },
});
export const assignTieBreaker = (escalation: number, now: string, pool: RecoveryCandidate[] = [candidate('sage'), ...candidates]): DialecticCommand => ({
  type: 'AssignTieBreaker',
  context: ctx('dialectic', now),
  payload: { sessionId: SID, escalation, candidates: pool },
});
export const tieBreak = (escalation: number, side: 'agent' | 'reviewer' | 'neither', now: string, payload?: ResolutionPayload, actor = 'sage'): DialecticCommand => ({
  type: 'RecordTieBreak',
  context: ctx(actor, now),
  payload: { sessionId: SID, escalation, side, reasoning: `siding with ${side}`, ...(payload ? signed(payload, actor) : {}) },
});
export const quorumResult = (escalation: number, decision: 'approve' | 'deny' | 'escalate', now: string, over: Partial<Payload<'RecordQuorumResult'>> = {}): DialecticCommand => ({
  type: 'RecordQuorumResult',
  context: ctx('dialectic', now),
  payload: { sessionId: SID, escalation, votingSessionId: `${SID}-q${escalation}`, decision, votes: 5, approve: decision === 'approve' ? 4 : 1, deny: decision === 'approve' ? 1 : 4, reason: `the quorum said ${decision}`, ...over },
});
export const decideRecovery = (decision: 'resume' | 'stay_paused', now: string, payload?: ResolutionPayload, over: Partial<Payload<'DecideRecovery'>> = {}, actor = 'root'): DialecticCommand => ({
  type: 'DecideRecovery',
  context: ctx(actor, now),
  payload: {
    sessionId: SID,
    decision,
    reasoning: decision === 'resume' ? 'the spike was external; resume under watch' : 'not safe to resume',
    ...(payload ? { rootCause: payload.rootCause, conditions: payload.conditions, ...signed(payload, actor) } : {}),
    ...over,
  },
});
export const relapse = (pause: number, pausedAt: string): DialecticCommand => ({
  type: 'RecordRelapse',
  context: ctx('dialectic', pausedAt),
  payload: { sessionId: SID, pause, risk: 0.7, pausedAt },
});

const scenario = scenarioOf(decider, 'dialectic_session');
/** Checks an event against its contract: the schema parses it and it is plain JSON (no undefined anywhere). */
export const conforms = scenario.conforms;
/** Runs commands in order on top of `history`; returns the history with the events they produced appended. */
export const play = scenario.play;
export const stateOf = (history: readonly DialecticEvent[]): DialecticSession => scenario.stateOf(history) as DialecticSession;
export const typesOf = (events: readonly DialecticEvent[]): string[] => events.map((e) => e.type);
export const last = <T extends DialecticEvent['type']>(history: readonly DialecticEvent[], type: T): Extract<DialecticEvent, { type: T }> =>
  history.findLast((e) => e.type === type) as Extract<DialecticEvent, { type: T }>;

/** The session opened at T0 with reviewer_b drawn. */
export const opened = (): DialecticEvent[] => play([], open());
/** ... and the thesis (T0 + 1 min) and antithesis (T0 + 2 min) submitted: synthesis round 1 is the agent's. */
export const inSynthesis = (): DialecticEvent[] => play(opened(), thesis(), antithesis());
/** ... and both parties agreed at round 2 (T0 + 3 min): the resolution waits for signatures. */
export const converging = (): DialecticEvent[] =>
  play(inSynthesis(), synthesis(1, AGENT, at(150)), synthesis(2, REVIEWER, at(180), { rootCause: '  external   COMPLEXITY spike ', proposedConditions: [c('enable_cascade_detection'), threshold(0.48)] }));
export const proposedPayload = (history: readonly DialecticEvent[]): ResolutionPayload => last(history, 'ResolutionProposed').data.resolution;
/** Five rounds of disagreement: the agent insists on 0.70, the reviewer on 0.45. Ends escalated at T0 + 10 min. */
export function deadlocked(): DialecticEvent[] {
  let h = inSynthesis();
  for (let round = 1; round <= 5; round++) {
    const agent = round % 2 === 1;
    h = play(h, synthesis(round, agent ? AGENT : REVIEWER, at(120 + round * 60), { proposedConditions: [threshold(agent ? 0.7 : 0.45)], agrees: false, reasoning: agent ? 'I stand by 0.70' : '0.45 or nothing' }));
  }
  return h;
}

/** The history with other rules recorded at opening (the rules are read from RecoveryOpened only). */
export const withRules = (history: readonly DialecticEvent[], rules: DialecticSession['rules']): DialecticEvent[] =>
  history.map((e) => (e.type === 'RecoveryOpened' ? { ...e, data: { ...e.data, rules } } : e));
