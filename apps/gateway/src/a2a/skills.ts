/**
 * Agora's four A2A skills: which signed command starts each (and which one cancels it), the
 * aggregate its task follows, and how that aggregate's view reads as an A2A task state. A task is
 * `working` while reviewers, validators, the panel or the recovery's parties act, `input-required`
 * when a person (or the caller itself) must act, and ends `completed` with the outcome as its
 * artifact, `canceled` when the caller withdrew or cancelled it, `rejected` when Agora decided not
 * to go on (the chamber's operator declined), `failed` when it could not finish.
 */
import { CHAMBER_SESSION_CATEGORY, DIALECTIC_SESSION_CATEGORY, PROPOSAL_CATEGORY, VOTING_SESSION_CATEGORY, type ChamberSessionView, type DialecticSessionView, type ProposalView, type VotingSessionView } from '@agora/contracts';
import { recoverySessionId } from '@agora/domain-common';
import { randomUUID } from 'node:crypto';
import { readAt, viewIfFound, type Agora } from '@agora/sdk';

/** The A2A task states a skill's view maps to (the names of the A2A specification). */
export type SkillState = 'working' | 'input-required' | 'completed' | 'canceled' | 'rejected' | 'failed';

export const FINAL_STATES: ReadonlySet<SkillState> = new Set(['completed', 'canceled', 'rejected', 'failed']);

/** Where an aggregate stands, as an A2A task says it. */
export interface SkillStatus {
  state: SkillState;
  /** A sentence for the task's status message. */
  text: string;
  /** What is waiting on whom: a new status update is sent when it changes, even in the same state. */
  progress: string;
}

/** The aggregate a task follows. */
export interface Followed {
  category: string;
  streamId: string;
  /** The id its query takes. */
  id: string;
}

export interface AgoraSkill<V = unknown> {
  id: string;
  name: string;
  description: string;
  tags: string[];
  /** Commands of the caller that start this skill's task. */
  starts: readonly string[];
  /** Commands of the caller that end its task as `canceled` (A2A tasks/cancel carries one, signed). */
  cancels: readonly string[];
  /** Commands of the caller a later message of the same task may carry (its own turns). */
  turns: readonly string[];
  /** The example payloads of the Agent Card: one per start command, without what Agora fills in itself (`fills`). */
  examples: { type: string; payload: Record<string, unknown>; text: string }[];
  /** What a drafted start command's payload gets when the message leaves it out: a fresh aggregate id, or the caller itself. */
  fills(actor: string): Record<string, unknown>;
  /** The category of the aggregates its tasks follow. */
  category: string;
  /** The aggregate a start command names in its payload, when it names one before it is sent (task-id.ts names the task by it), and the payload's field that does. */
  named?(payload: Record<string, unknown>): Followed | undefined;
  idField?: string;
  /**
   * The aggregate a signed start command that does not name it would open if sent now, foreseen from
   * the log as the caller reads it (the recovery a report of the caller opens): the task is named by
   * it (task-id.ts). Undefined when the command would open none.
   */
  foreseen?(agora: Agora, command: { actor: string; payload: Record<string, unknown> }): Promise<Followed | undefined>;
  /** The aggregate a start command acts on; undefined when it opened none (`reason` says why). */
  followed(agora: Agora, command: { actor: string; payload: Record<string, unknown> }, events: readonly string[]): Promise<Followed | { reason: string }>;
  /** The aggregate's view as the caller may read it, from a read model that holds `minPosition` when given (readAt); undefined while it does not exist yet. */
  read(agora: Agora, id: string, minPosition?: string): Promise<V | undefined>;
  status(view: V, caller: string): SkillStatus;
  /** The agent whose start command opened the aggregate: a task is its caller's (task-id.ts rebuilds it for that agent only). */
  startedBy(view: V): string;
}

const count = (items: readonly unknown[], of: number) => `${items.length} of ${of}`;

/** The aggregate of a category with the given id. */
export const aggregateOf = (category: string, id: string): Followed => ({ category, streamId: `${category}-${id}`, id });

/** A skill whose start command names its aggregate in its payload (`<category>-<payload[field]>`): the category, `named` and `followed`. */
const namedBy = (category: string, field: string): Pick<AgoraSkill, 'category' | 'named' | 'idField' | 'followed'> => {
  const named = (payload: Record<string, unknown>) => (typeof payload[field] === 'string' && payload[field] !== '' ? aggregateOf(category, payload[field]) : undefined);
  return {
    category,
    named,
    idField: field,
    followed: async (_agora, { payload }) => named(payload) ?? { reason: `the command names no ${field}` },
  };
};

const tribunalReview: AgoraSkill<ProposalView> = {
  id: 'tribunal-review',
  name: 'Review by the tribunal',
  description:
    "Have a proposal (a plan and the problem it solves) reviewed by the tribunal: reviewers with orthogonal constitutions challenge it in time-boxed rounds. The task is working during the rounds, input-required while an operator decides a deadlock, and completed with the verdict (approved or rejected, every review and objection) as its artifact. Send a signed SubmitProposal (role executive) as a data part; tasks/cancel with a signed WithdrawProposal in metadata.command withdraws it; a later message of the task may carry a signed ReviseProposal that answers objections.",
  tags: ['governance', 'review', 'tribunal'],
  starts: ['SubmitProposal'],
  cancels: ['WithdrawProposal'],
  turns: ['ReviseProposal'],
  examples: [{ type: 'SubmitProposal', payload: { title: 'Onboarding', body: 'Add tutorial tooltips', problem: 'Users drop off in the first session' }, text: 'Have the tribunal review this proposal' }],
  fills: () => ({ proposalId: randomUUID() }),
  ...namedBy(PROPOSAL_CATEGORY, 'proposalId'),
  read: (agora, id, at) => viewIfFound(agora.tryQuery('GetProposal', { proposalId: id }, readAt(at))),
  startedBy: (view) => view.proposer,
  status(view) {
    const round = view.rounds[view.rounds.length - 1];
    const progress = `${view.status}:${view.rounds.length}:${round?.reviews.length ?? 0}`;
    switch (view.status) {
      case 'review':
        return { state: 'working', progress, text: round ? `In review: round ${round.round}, ${count(round.reviews, round.assignments.length)} reviews in` : 'Submitted: the first review round is being opened' };
      case 'escalated':
        return { state: 'input-required', progress, text: 'Escalated: the tribunal is deadlocked and an operator must decide (DecideEscalation)' };
      case 'withdrawn':
        return { state: 'canceled', progress, text: 'Withdrawn by its proposer' };
      default:
        return { state: 'completed', progress, text: `The tribunal's verdict: ${view.status}` };
    }
  },
};

const validatorVote: AgoraSkill<VotingSessionView> = {
  id: 'validator-vote',
  name: 'Vote of validators',
  description:
    'Put a high-risk action to a weighted vote of validators drawn from the registry. The task is working while they vote, input-required while the recommendation needs a person, and completed with the decision (the votes, the tally, the recommendation and the final decision) as its artifact. Send a signed CreateVotingSession (role executive) as a data part; tasks/cancel with a signed CancelVotingSession in metadata.command cancels it.',
  tags: ['governance', 'vote', 'validators'],
  starts: ['CreateVotingSession'],
  cancels: ['CancelVotingSession'],
  turns: [],
  examples: [{ type: 'CreateVotingSession', payload: { actionType: 'deploy_production', riskLevel: 'high', summary: 'Roll out release 4.2' }, text: 'Put this deployment to a vote' }],
  fills: () => ({ requestId: randomUUID() }),
  ...namedBy(VOTING_SESSION_CATEGORY, 'requestId'),
  read: (agora, id, at) => viewIfFound(agora.tryQuery('GetVotingSession', { sessionId: id }, readAt(at))),
  startedBy: (view) => view.createdBy,
  status(view) {
    const progress = `${view.status}:${view.votes.length}:${view.awaitingOperator}:${view.finalDecision}`;
    if (view.status === 'cancelled') return { state: 'canceled', progress, text: `Cancelled: ${view.cancellation?.reason ?? ''}` };
    if (view.finalDecision !== null) return { state: 'completed', progress, text: `Decided: ${view.finalDecision}${view.resolution ? ' (by an operator)' : ''}` };
    if (view.awaitingOperator) return { state: 'input-required', progress, text: `The recommendation (${view.recommendation?.decision ?? 'none'}) needs a person: an operator must decide (DecideVotingEscalation)` };
    return { state: 'working', progress, text: `Voting: ${count(view.votes, view.validators.length)} validators have voted` };
  },
};

const CHAMBER_RUNNING = new Set(['blind', 'cross_exam', 'arbitration']);

const chamberConsultation: AgoraSkill<ChamberSessionView> = {
  id: 'chamber-consultation',
  name: 'Consult the chamber',
  description:
    "Consult the Deliberation Chamber, a panel of models from distinct providers with an arbiter, on a question one model should not answer alone. Nothing is called before an operator approves: the task is input-required until then, working while the panel deliberates, and completed with the arbiter's synthesis (consensus or no consensus, the transcript's outcome) as its artifact; rejected when the operator declines or the approval window passes. Send a signed ProposeChamberSession as a data part; tasks/cancel with a signed CancelChamberSession in metadata.command cancels it.",
  tags: ['deliberation', 'chamber', 'models'],
  starts: ['ProposeChamberSession'],
  cancels: ['CancelChamberSession'],
  turns: [],
  examples: [{ type: 'ProposeChamberSession', payload: { question: 'Should we migrate the orders table online or in a maintenance window?', rationale: 'A wrong call loses orders; one model is not enough' }, text: 'Consult the chamber on this question' }],
  fills: () => ({ sessionId: randomUUID() }),
  ...namedBy(CHAMBER_SESSION_CATEGORY, 'sessionId'),
  read: (agora, id, at) => viewIfFound(agora.tryQuery('GetChamberSession', { sessionId: id }, readAt(at))),
  startedBy: (view) => view.summary.proposedBy,
  status({ summary }) {
    const progress = `${summary.status}:${summary.answered.length}:${summary.pendingCalls}`;
    if (summary.status === 'awaiting_approval') return { state: 'input-required', progress, text: 'Awaiting approval: an operator must approve (ApproveChamberSession) before any model is called' };
    if (CHAMBER_RUNNING.has(summary.status)) return { state: 'working', progress, text: `The panel deliberates: ${summary.status.replace('_', '-')}` };
    if (summary.status === 'rejected') return { state: 'rejected', progress, text: 'An operator declined the consultation: nothing was called' };
    if (summary.status === 'expired') return { state: 'rejected', progress, text: 'Nobody approved the consultation in time: nothing was called' };
    if (summary.status === 'cancelled') return { state: 'canceled', progress, text: 'Cancelled' };
    if (summary.status === 'failed') return { state: 'failed', progress, text: 'The consultation failed: the transcript has the providers\' errors verbatim' };
    return { state: 'completed', progress, text: `The chamber concluded: ${summary.status.replace('_', ' ')}` };
  },
};

const DIALECTIC_PARTIES = new Set(['awaiting_thesis', 'awaiting_antithesis', 'synthesis', 'awaiting_signatures']);

const dialecticRecovery: AgoraSkill<DialecticSessionView> = {
  id: 'dialectic-recovery',
  name: 'Dialectic recovery',
  description:
    "Request a recovery by dialectic: a health report of the caller itself at or above its risk threshold pauses it and opens a recovery, where the paused agent and a reviewer drawn for it converge on a signed resolution (thesis, antithesis, synthesis). The task is input-required when it is the caller's turn (a later message of the task carries its signed SubmitThesis, SubmitSynthesis or SignResolution) or an operator's, working while others act, and completed with the resolution (or the operator's decision) as its artifact; rejected when the report trips no breaker. Send a signed ReportHealth about the caller itself as a data part.",
  tags: ['recovery', 'dialectic', 'circuit-breaker'],
  starts: ['ReportHealth'],
  cancels: [],
  turns: ['SubmitThesis', 'SubmitSynthesis', 'SignResolution'],
  examples: [{ type: 'ReportHealth', payload: { health: 0.35, risk: 0.65, tags: ['cascade'], metrics: { risk_score: 0.65 } }, text: 'I am at risk: pause me and open a recovery' }],
  fills: (actor) => ({ agentId: actor }),
  category: DIALECTIC_SESSION_CATEGORY,
  async followed(agora, { actor, payload }, events) {
    if (payload['agentId'] !== actor) return { reason: 'a recovery is requested by the agent itself: ReportHealth must be about the caller (agentId = actor)' };
    if (!events.includes('AgentPaused')) return { reason: 'the report tripped no circuit breaker (its risk is under the threshold, or the agent is already paused): no recovery was opened' };
    const agent = await agora.query('GetAgent', { agentId: actor });
    const id = agent.breaker.sessionId ?? recoverySessionId(actor, agent.breaker.pauses);
    return aggregateOf(DIALECTIC_SESSION_CATEGORY, id);
  },
  // A report that trips the breaker pauses the agent for its next pause, whose recovery it names (the breaker's rules).
  async foreseen(agora, { actor, payload }) {
    if (payload['agentId'] !== actor) return undefined;
    const agent = await agora.query('GetAgent', { agentId: actor });
    return agent.breaker.state === 'closed' ? aggregateOf(DIALECTIC_SESSION_CATEGORY, recoverySessionId(actor, agent.breaker.pauses + 1)) : undefined;
  },
  read: (agora, id, at) => viewIfFound(agora.tryQuery('GetDialecticSession', { sessionId: id }, readAt(at))),
  startedBy: (view) => view.agentId,
  status(view, caller) {
    const progress = `${view.status}:${view.round}:${view.awaiting.join(',')}`;
    if (view.status === 'resolved') return { state: 'completed', progress, text: 'Resolved: the agent resumes under the signed resolution' };
    if (view.status === 'stayed_paused') return { state: 'completed', progress, text: 'An operator decided the agent stays paused' };
    if (view.status === 'awaiting_operator') return { state: 'input-required', progress, text: 'Escalated: an operator must decide the recovery (DecideRecovery)' };
    if (view.awaiting.includes(caller) && DIALECTIC_PARTIES.has(view.status)) return { state: 'input-required', progress, text: `Your turn (${view.status.replace('_', ' ')}): send the signed command in a message of this task` };
    return { state: 'working', progress, text: `Recovery under way: ${view.status.replace('_', ' ')}${view.awaiting.length > 0 ? `, waiting for ${view.awaiting.join(', ')}` : ''}` };
  },
};

export const AGORA_SKILLS: readonly AgoraSkill[] = [tribunalReview, validatorVote, chamberConsultation, dialecticRecovery] as AgoraSkill[];

/** The skill a command starts, or undefined. */
export function skillStartedBy(type: string): AgoraSkill | undefined {
  return AGORA_SKILLS.find((skill) => skill.starts.includes(type));
}
