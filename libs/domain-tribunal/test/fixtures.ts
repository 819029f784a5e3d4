/**
 * Shared givens for the tribunal specs: the Space-OS fleet of seed 000, a policy with deadlines in
 * seconds, command builders, and `play`, which runs commands through the decider (checking every
 * event it produces against its zod contract) to build the history of the next test.
 */
import { type ReviewerCandidate } from '@agora/contracts';
import { DeciderSpecification, scenarioOf, type CommandContext } from '@agora/decider';
import { defineTribunalPolicy } from '../src/policy.js';
import { createProposalDecider, type Proposal, type ProposalCommand, type ProposalEvent } from '../src/proposal.js';

export const T0 = '2026-11-22T10:00:00.000Z';
/** T0 plus `seconds`. */
export const at = (seconds: number): string => new Date(Date.parse(T0) + seconds * 1000).toISOString();

/** Deadlines in seconds: a 60 s round, proposals may ask for 5 s to 1 h. */
export const policy = defineTribunalPolicy({
  requiredConstitutions: { default: ['risk', 'premise', 'evidence', 'execution'], frame: ['premise', 'evidence', 'risk', 'ethics'] },
  roundDeadlineMs: 60_000,
  roundDeadlineMsByClass: { frame: 120_000 },
  minRoundDeadlineMs: 5_000,
  maxRoundDeadlineMs: 3_600_000,
  maxRoundsBeforeEscalation: 3,
});
export const decider = createProposalDecider(policy);
export const spec = DeciderSpecification.for(decider);

export const roles = {
  seldon: ['executive'],
  harbinger: ['reviewer'],
  heretic: ['reviewer'],
  sentinel: ['reviewer'],
  zealot: ['reviewer'],
  prime: ['reviewer'],
  root: ['operator'],
  tribunal: ['service'],
  mallory: ['observer'],
} as const;
export type Actor = keyof typeof roles;

let commandCounter = 0;
export function ctx(actor: Actor | string, now = T0, actorRoles?: readonly string[]): CommandContext {
  return { actor, now, actorRoles: actorRoles ?? roles[actor as Actor] ?? [], commandId: `c${++commandCounter}` };
}

/** The registry's reviewers: one per constitution, and prime (evidence, lower trust). */
export const candidates: ReviewerCandidate[] = [
  { agentId: 'harbinger', constitutions: ['risk'], trustScore: 700, status: 'active' },
  { agentId: 'heretic', constitutions: ['premise'], trustScore: 650, status: 'active' },
  { agentId: 'sentinel', constitutions: ['evidence', 'grounding'], trustScore: 800, status: 'active' },
  { agentId: 'prime', constitutions: ['evidence'], trustScore: 600, status: 'active' },
  { agentId: 'zealot', constitutions: ['execution'], trustScore: 550, status: 'active' },
  // The proposer is in the registry too, and holds a constitution: it must never be selected.
  { agentId: 'seldon', constitutions: ['execution'], trustScore: 990, status: 'active' },
];

export const assignments: { constitution: string; reviewer: Actor }[] = [
  { constitution: 'risk', reviewer: 'harbinger' },
  { constitution: 'premise', reviewer: 'heretic' },
  { constitution: 'evidence', reviewer: 'sentinel' },
  { constitution: 'execution', reviewer: 'zealot' },
];

export const PID = 'space-os-roadmap';
export const plan = {
  title: 'Space-OS: the next three weeks',
  body: 'Week 1: bounties. Week 2: demo. Week 3: distribution.',
  problem: 'Space-OS has no users yet; all three steps or none will get them.',
  evidence: [{ ref: 'brr/threads/004', summary: 'Bounties drew contributors to similar projects' }],
};

type Payload<T extends ProposalCommand['type']> = Extract<ProposalCommand, { type: T }>['payload'];

export const submit = (over: Partial<Payload<'SubmitProposal'>> = {}, c = ctx('seldon')): ProposalCommand => ({
  type: 'SubmitProposal',
  context: c,
  payload: { proposalId: PID, ...plan, proposalClass: 'default', ...over },
});
export const openRound = (round: number, c = ctx('tribunal'), pool: ReviewerCandidate[] = candidates): ProposalCommand => ({
  type: 'OpenReviewRound',
  context: c,
  payload: { proposalId: PID, round, candidates: pool },
});
export const approve = (reviewer: Actor, constitution: string, round: number, now = at(10), over: Partial<Payload<'SubmitReview'>> = {}): ProposalCommand => ({
  type: 'SubmitReview',
  context: ctx(reviewer, now),
  payload: { proposalId: PID, round, constitution, verdict: 'approve', reasoning: `${constitution}: no objection`, citations: [], ...over },
});
export const object = (reviewer: Actor, constitution: string, round: number, now = at(10), over: Partial<Payload<'SubmitReview'>> = {}): ProposalCommand => ({
  type: 'SubmitReview',
  context: ctx(reviewer, now),
  payload: {
    proposalId: PID,
    round,
    constitution,
    verdict: 'object',
    reasoning: `${constitution}: the plan fails`,
    citations: [],
    constraint: `${constitution} constraint`,
    scenario: `a scenario in which the ${constitution} constraint breaks`,
    suggestedRevision: `fix the ${constitution} problem`,
    ...over,
  },
});
export const revise = (answers: string[], body: string, now = at(100), over: Partial<Payload<'ReviseProposal'>> = {}, c?: CommandContext): ProposalCommand => ({
  type: 'ReviseProposal',
  context: c ?? ctx('seldon', now),
  payload: { proposalId: PID, body, answers, ...over },
});
export const expire = (round: number, now: string, c?: CommandContext): ProposalCommand => ({
  type: 'ExpireReviewRound',
  context: c ?? ctx('tribunal', now),
  payload: { proposalId: PID, round },
});
export const withdrawObjection = (reviewer: Actor, objectionId: string, now = at(200)): ProposalCommand => ({
  type: 'WithdrawObjection',
  context: ctx(reviewer, now),
  payload: { proposalId: PID, objectionId, reason: 'the concern no longer applies' },
});
export const decide = (escalation: number, decision: 'approve' | 'reject' | 'send_back', reason: string, c = ctx('root', at(5000))): ProposalCommand => ({
  type: 'DecideEscalation',
  context: c,
  payload: { proposalId: PID, escalation, decision, reason },
});
export const recordExecution = (summary: string, c = ctx('seldon', at(9000)), ref?: string): ProposalCommand => ({
  type: 'RecordExecution',
  context: c,
  payload: ref === undefined ? { proposalId: PID, summary } : { proposalId: PID, summary, ref },
});
export const reportOutcome = (outcome: 'worked' | 'failed', note: string, c = ctx('seldon', at(10_000)), proposalId = PID): ProposalCommand => ({
  type: 'ReportOutcome',
  context: c,
  payload: { proposalId, outcome, note },
});

const scenario = scenarioOf(decider, 'proposal');
/** Checks an event against its contract: the schema parses it and it is plain JSON (no undefined anywhere). */
export const conforms = scenario.conforms;
/** Runs commands in order on top of `history`; returns the history with the events they produced appended. */
export const play = scenario.play;
export const stateOf = (history: readonly ProposalEvent[]): Proposal => scenario.stateOf(history) as Proposal;
export const typesOf = (events: readonly ProposalEvent[]): string[] => events.map((e) => e.type);

/** Submitted, round 1 open with the four Space-OS reviewers (deadline T0 + 60 s). */
export const inRound1 = (): ProposalEvent[] => play([], submit(), openRound(1));
