// The proposal decider, the executive's side: submission, revision and withdrawal.
import { DomainError, requireRole } from '@agora/decider';
import { rulesFor, type TribunalPolicy } from './policy.js';
import { evolveProposal } from './proposal-evolve.js';
import { closeRound, Decision, existing, refuseEscalated, refuseFinal, requestRound, requireProposer } from './proposal-guards.js';
import { type CommandOf, event, openRound, type Proposal, type ProposalEvent, type ProposalState } from './proposal-state.js';

// Commands
// ---------------------------------------------------------------------------------------------

export const sameEvidence = (a: readonly { ref: string; summary: string }[], b: readonly { ref: string; summary: string }[]) =>
  a.length === b.length && a.every((e, i) => e.ref === b[i]!.ref && e.summary === b[i]!.summary);

export function submit(command: CommandOf<'SubmitProposal'>, state: ProposalState, policy: TribunalPolicy): ProposalEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'executive', 'submit a proposal');
  if (state.status !== 'unsubmitted') {
    const first = state.revisions[0]!;
    const same =
      state.proposer === context.actor &&
      state.proposalClass === p.proposalClass &&
      first.title === p.title &&
      first.body === p.body &&
      first.problem === p.problem &&
      sameEvidence(first.evidence, p.evidence) &&
      (p.reviewDeadlineMs === undefined || p.reviewDeadlineMs === state.rules.roundDeadlineMs) &&
      state.toolCall?.callDigest === p.toolCall?.callDigest;
    if (same) return [];
    throw new DomainError('illegal_state', `proposal ${p.proposalId} already exists (submitted by ${state.proposer} at ${state.submittedAt}); choose another id`, {
      proposalId: p.proposalId,
      proposer: state.proposer,
    });
  }
  const rules = rulesFor(policy, { proposalClass: p.proposalClass, reviewDeadlineMs: p.reviewDeadlineMs });
  const submitted = event('ProposalSubmitted', {
    proposalId: p.proposalId,
    proposer: context.actor,
    title: p.title,
    body: p.body,
    problem: p.problem,
    evidence: p.evidence.map((e) => ({ ref: e.ref, summary: e.summary })),
    proposalClass: p.proposalClass,
    rules,
    ...(p.toolCall === undefined ? {} : { toolCall: p.toolCall }),
    submittedAt: context.now,
  });
  const d = new Decision(evolveProposal({ status: 'unsubmitted' }, submitted) as Proposal);
  d.events.push(submitted); // applied just above: the decision starts from the new proposal
  requestRound(d, 'submitted', context.now);
  return d.events;
}

export function revise(command: CommandOf<'ReviseProposal'>, state: ProposalState): ProposalEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'executive', 'revise a proposal');
  const s = existing(state, p.proposalId);
  requireProposer(s, context, 'revise');
  const content = { title: p.title ?? s.title, body: p.body, problem: p.problem ?? s.problem, evidence: p.evidence ?? s.evidence };
  const answers = [...new Set(p.answers)];
  const unchanged = content.title === s.title && content.body === s.body && content.problem === s.problem && sameEvidence(content.evidence, s.evidence);
  if (unchanged) {
    // The same revision again: it is already recorded (as the latest revision, with these answers).
    const latest = s.revisions.at(-1)!;
    if (s.revision > 1 && answers.every((id) => latest.answers.includes(id))) return [];
    throw new DomainError('invalid_command', `the revision changes nothing: title, body, problem and evidence are those of revision ${s.revision}`, {
      proposalId: s.proposalId,
      revision: s.revision,
    });
  }
  refuseFinal(s, 'revise');
  refuseEscalated(s, 'revise');
  const unknown = answers.filter((id) => !s.objections.some((o) => o.objectionId === id));
  if (unknown.length > 0) {
    throw new DomainError('invalid_command', `the revision answers objections that do not exist: ${unknown.join(', ')}`, { proposalId: s.proposalId, unknownObjections: unknown });
  }
  const notOpen = s.objections.filter((o) => answers.includes(o.objectionId) && o.status !== 'open');
  if (notOpen.length > 0) {
    throw new DomainError('illegal_state', `the revision answers objections that are no longer open: ${notOpen.map((o) => `${o.objectionId} (${o.status})`).join(', ')}`, {
      proposalId: s.proposalId,
      notOpen: notOpen.map((o) => ({ objectionId: o.objectionId, status: o.status })),
    });
  }
  const d = new Decision(s).emit(
    event('ProposalRevised', {
      proposalId: s.proposalId,
      revision: s.revision + 1,
      title: content.title,
      body: content.body,
      problem: content.problem,
      evidence: content.evidence.map((e) => ({ ref: e.ref, summary: e.summary })),
      answers,
      revisedAt: context.now,
    }),
  );
  const current = openRound(d.state);
  if (current) closeRound(d, current.round, 'revised', context.now);
  // A round already requested and not opened yet will review this revision: no second request.
  if (d.state.status === 'review' && d.state.pendingRound === null) requestRound(d, 'revised', context.now);
  return d.events;
}

export function withdraw(command: CommandOf<'WithdrawProposal'>, state: ProposalState): ProposalEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'executive', 'withdraw a proposal');
  const s = existing(state, p.proposalId);
  requireProposer(s, context, 'withdraw');
  if (s.status === 'withdrawn') return [];
  refuseFinal(s, 'withdraw it');
  const d = new Decision(s).emit(event('ProposalWithdrawn', { proposalId: s.proposalId, revision: s.revision, reason: p.reason, withdrawnAt: context.now }));
  const current = openRound(d.state);
  if (current) closeRound(d, current.round, 'withdrawn', context.now);
  return d.events;
}

// Governed tool calls: an approval bound to one call's digest, released once
// ---------------------------------------------------------------------------------------------

export function releaseToolCall(command: CommandOf<'ReleaseProposalToolCall'>, state: ProposalState): ProposalEvent[] {
  const { payload: p, context } = command;
  const s = existing(state, p.proposalId);
  requireProposer(s, context, 'release the tool call of');
  const call = s.toolCall;
  if (call === undefined) throw new DomainError('illegal_state', `proposal ${s.proposalId} was not submitted for a tool call`, { proposalId: s.proposalId });
  if (p.callDigest !== call.callDigest) {
    throw new DomainError('illegal_state', `proposal ${s.proposalId} decided another call (${call.server}/${call.tool}, digest ${call.callDigest}), not ${p.callDigest}`, { proposalId: s.proposalId, callDigest: call.callDigest });
  }
  if (s.status !== 'approved') throw new DomainError('illegal_state', `proposal ${s.proposalId} has not approved the call (status ${s.status})`, { proposalId: s.proposalId, status: s.status });
  if (call.releasedAt !== null) throw new DomainError('illegal_state', `the approval of proposal ${s.proposalId} was already used, at ${call.releasedAt}: an approval releases its call once`, { proposalId: s.proposalId, releasedAt: call.releasedAt });
  return [event('ProposalToolCallReleased', { proposalId: s.proposalId, server: call.server, tool: call.tool, callDigest: call.callDigest, releasedBy: context.actor, releasedAt: context.now })];
}

export function recordToolCallResult(command: CommandOf<'RecordProposalToolCallResult'>, state: ProposalState): ProposalEvent[] {
  const { payload: p, context } = command;
  const s = existing(state, p.proposalId);
  requireProposer(s, context, 'record the tool call result of');
  const call = s.toolCall;
  if (call === undefined || call.releasedAt === null) throw new DomainError('illegal_state', `proposal ${s.proposalId} released no tool call`, { proposalId: s.proposalId });
  if (call.outcome !== null) {
    if (call.outcome === p.outcome && call.resultDigest === p.resultDigest) return [];
    throw new DomainError('illegal_state', `the result of proposal ${s.proposalId}'s tool call is recorded already (${call.outcome}, ${call.resultDigest})`, { proposalId: s.proposalId, outcome: call.outcome, resultDigest: call.resultDigest });
  }
  return [event('ProposalToolCallResultRecorded', { proposalId: s.proposalId, callDigest: call.callDigest, outcome: p.outcome, resultDigest: p.resultDigest, recordedBy: context.actor, recordedAt: context.now })];
}
