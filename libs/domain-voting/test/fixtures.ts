/**
 * Shared givens for the voting specs: the seed's validators, command builders, and `play`, which
 * runs commands through the decider (checking every event it produces against its zod contract) to
 * build the history of the next test.
 */
import { type ValidatorCandidate, type VoteDecision } from '@agora/contracts';
import { DeciderSpecification, scenarioOf, type CommandContext } from '@agora/decider';
import { DEFAULT_CONFIG, defineVotingConfig, type VotingConfig } from '../src/config.js';
import { votingSessionDecider, type VotingSession, type VotingSessionCommand, type VotingSessionEvent } from '../src/session.js';

export const T0 = '2026-11-22T10:00:00.000Z';
/** T0 plus `seconds`. */
export const at = (seconds: number): string => new Date(Date.parse(T0) + seconds * 1000).toISOString();

export const decider = votingSessionDecider;
export const spec = DeciderSpecification.for(decider);

export const roles: Record<string, readonly string[]> = {
  deployer: ['executive'],
  other_exec: ['executive'],
  root: ['operator'],
  'service:voting': ['service'],
  security_bot: ['validator'],
  compliance_bot: ['validator'],
  ops_bot: ['validator'],
  risk_bot: ['validator'],
  ethics_bot: ['validator'],
  junior_bot: ['validator'],
  mallory: ['observer'],
};

let commandCounter = 0;
export function ctx(actor: string, now = T0, actorRoles?: readonly string[]): CommandContext {
  return { actor, now, actorRoles: actorRoles ?? roles[actor] ?? [], commandId: `c${++commandCounter}` };
}

const candidate = (agentId: string, trustScore: number, specializations: string[], status = 'active'): ValidatorCandidate => ({
  agentId,
  displayName: agentId.replace(/_bot$/, '').replace(/^./, (c) => c.toUpperCase()) + ' Validator',
  trustScore,
  specializations,
  status,
});

/** The registry's validators: six of them, the five most trusted are selected by default. */
export const candidates: ValidatorCandidate[] = [
  candidate('security_bot', 900, ['security']),
  candidate('compliance_bot', 850, ['compliance']),
  candidate('ops_bot', 800, ['operations']),
  candidate('risk_bot', 750, ['risk', 'security']),
  candidate('ethics_bot', 720, ['ethics']),
  candidate('junior_bot', 300, ['security']),
];
export const FIVE = ['security_bot', 'compliance_bot', 'ops_bot', 'risk_bot', 'ethics_bot'];

export const RID = 'req-deploy-42';

type Payload<T extends VotingSessionCommand['type']> = Extract<VotingSessionCommand, { type: T }>['payload'];

export interface CreateOptions {
  payload?: Partial<Payload<'CreateVotingSession'>>;
  config?: Partial<VotingConfig>;
  pool?: ValidatorCandidate[];
}

export const create = (options: CreateOptions = {}, c = ctx('deployer')): VotingSessionCommand => ({
  type: 'CreateVotingSession',
  context: c,
  payload: {
    requestId: RID,
    actionType: 'deploy_production',
    riskLevel: 'high',
    criteria: { minTrustScore: 0, excludeAgents: [], preferredSpecializations: [] },
    candidates: options.pool ?? candidates,
    config: options.config ? defineVotingConfig(options.config) : DEFAULT_CONFIG,
    configRevision: options.config ? 0 : -1,
    ...options.payload,
  },
});

export const vote = (validator: string, decision: VoteDecision, confidence = 0.9, now = at(10), over: Partial<Payload<'CastValidatorVote'>> = {}, c?: CommandContext): VotingSessionCommand => ({
  type: 'CastValidatorVote',
  context: c ?? ctx(validator, now),
  payload: { sessionId: RID, decision, reasoning: `${validator}: ${decision}`, confidence, ...over },
});
export const expire = (now: string, c?: CommandContext): VotingSessionCommand => ({ type: 'ExpireVotingSession', context: c ?? ctx('service:voting', now), payload: { sessionId: RID } });
export const cancel = (reason: string, c = ctx('root', at(20))): VotingSessionCommand => ({ type: 'CancelVotingSession', context: c, payload: { sessionId: RID, reason } });
export const decide = (decision: 'approve' | 'deny', reason: string, c = ctx('root', at(400))): VotingSessionCommand => ({
  type: 'DecideVotingEscalation',
  context: c,
  payload: { sessionId: RID, decision, reason },
});

const scenario = scenarioOf(decider, 'voting_session');
/** Checks an event against its contract: the schema parses it and it is plain JSON (no undefined anywhere). */
export const conforms = scenario.conforms;
/** Runs commands in order on top of `history`; returns the history with the events they produced appended. */
export const play = scenario.play;
export const stateOf = (history: readonly VotingSessionEvent[]): VotingSession => scenario.stateOf(history) as VotingSession;
export const typesOf = (events: readonly VotingSessionEvent[]): string[] => events.map((e) => e.type);

/** A session with the five most trusted validators, created at T0 (timeout T0 + 300 s). */
export const created = (options: CreateOptions = {}): VotingSessionEvent[] => play([], create(options));

/** Votes of the five validators in order, all at `at(10 + i)`. */
export function votesOf(decisions: VoteDecision[], confidence: number | number[] = 0.9, validators = FIVE): VotingSessionCommand[] {
  return decisions.map((d, i) => vote(validators[i]!, d, Array.isArray(confidence) ? confidence[i]! : confidence, at(10 + i)));
}
