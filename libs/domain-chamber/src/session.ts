/**
 * The chamber session decider (seed 003): proposal, the human gate, the phases, the outcome, the
 * human's follow-up. Calls are steps of the session: the decider writes ChamberCallRequested (the
 * prompt verbatim) before the service makes a call, and takes its outcome with
 * RecordChamberCallOutcome; the first outcome of a call stands, so a call is never settled twice.
 */
import { DomainError, type Decider } from '@agora/decider';
import { seedFrom } from '@agora/domain-common';
import type { ChamberCommand, ChamberEvent } from './events.js';
import { advance, blindRequests } from './progress.js';
import { resolveProposal, type ChamberPolicy } from './proposal.js';
import { evolveChamber, initialChamberState, isFinal, isInProgress, pendingCalls, type ChamberSessionState } from './state.js';

export type ChamberDecider = Decider<ChamberCommand, ChamberEvent, ChamberSessionState>;

function fold(state: ChamberSessionState, events: readonly ChamberEvent[]): ChamberSessionState {
  return events.reduce(evolveChamber, state);
}

export function createChamberDecider(policy: ChamberPolicy): ChamberDecider {
  return {
    initialState: initialChamberState,
    evolve: evolveChamber,
    decide(command, state) {
      const { now, actor, actorRoles, commandId } = command.context;
      const operator = actorRoles.includes('operator');
      switch (command.type) {
        case 'ProposeChamberSession': {
          const p = command.payload;
          if (state.status !== 'none') throw new DomainError('illegal_state', `chamber session ${p.sessionId} already exists`, { sessionId: p.sessionId });
          const seed = seedFrom(`${p.sessionId}:${commandId}`);
          const resolved = resolveProposal(p, policy, now, seed);
          return [
            {
              type: 'ChamberSessionProposed',
              data: { sessionId: p.sessionId, question: p.question, context: p.context, rationale: p.rationale, proposedBy: actor, proposedAt: now, ...resolved, seed, link: p.link ?? null },
            },
          ];
        }
        case 'ApproveChamberSession': {
          const p = command.payload;
          if (state.status === 'none') throw new DomainError('not_found', `chamber session ${p.sessionId} does not exist`);
          if (!operator) throw new DomainError('forbidden', 'only an operator approves a chamber session');
          if (state.approval) return [];
          if (state.status !== 'awaiting_approval') throw new DomainError('illegal_state', `chamber session ${p.sessionId} is ${state.status}, not awaiting approval`);
          if (now >= state.proposal!.approvalExpiresAt) throw new DomainError('illegal_state', `the approval window of chamber session ${p.sessionId} closed at ${state.proposal!.approvalExpiresAt}`, { reason: 'approval_expired' });
          const approved: ChamberEvent = { type: 'ChamberSessionApproved', data: { sessionId: p.sessionId, approvedBy: actor, approvedAt: now, note: p.note ?? null, reserved: p.reserved, month: p.month } };
          return [approved, ...blindRequests(fold(state, [approved]), policy.prices, now)];
        }
        case 'RejectChamberSession': {
          const p = command.payload;
          if (state.status === 'none') throw new DomainError('not_found', `chamber session ${p.sessionId} does not exist`);
          if (!operator) throw new DomainError('forbidden', 'only an operator rejects a chamber session');
          if (state.status === 'rejected') return [];
          if (state.status !== 'awaiting_approval') throw new DomainError('illegal_state', `chamber session ${p.sessionId} is ${state.status}, not awaiting approval`);
          return [{ type: 'ChamberSessionRejected', data: { sessionId: p.sessionId, rejectedBy: actor, rejectedAt: now, reason: p.reason } }];
        }
        case 'ExpireChamberApproval': {
          const p = command.payload;
          if (state.status !== 'awaiting_approval' || now < state.proposal!.approvalExpiresAt) return [];
          return [{ type: 'ChamberApprovalExpired', data: { sessionId: p.sessionId, expiredAt: now } }];
        }
        case 'CancelChamberSession': {
          const p = command.payload;
          if (state.status === 'none') throw new DomainError('not_found', `chamber session ${p.sessionId} does not exist`);
          if (!operator && actor !== state.proposal!.proposedBy) throw new DomainError('forbidden', 'only the proposer or an operator cancels a chamber session');
          if (state.status === 'cancelled') return [];
          if (state.status !== 'awaiting_approval' && !isInProgress(state)) throw new DomainError('illegal_state', `chamber session ${p.sessionId} is already ${state.status}`);
          return [{ type: 'ChamberSessionCancelled', data: { sessionId: p.sessionId, cancelledBy: actor, cancelledAt: now, reason: p.reason, pendingCalls: pendingCalls(state).map((c) => c.request.callId) } }];
        }
        case 'RecordChamberCallOutcome': {
          const p = command.payload;
          const call = state.calls.find((c) => c.request.callId === p.callId);
          if (!call) throw new DomainError('not_found', `chamber session ${p.sessionId} has no call ${p.callId}`);
          if (call.status !== 'pending') return [];
          const r = call.request;
          const o = p.outcome;
          const base = { sessionId: p.sessionId, callId: p.callId, step: r.step, model: r.model, provider: r.provider };
          const settled: ChamberEvent = o.ok
            ? { type: 'ChamberCallCompleted', data: { ...base, text: o.text, output: o.output, responseModel: o.responseModel, finishReason: o.finishReason, usage: o.usage, cost: o.cost, latencyMs: o.latencyMs, attempts: o.attempts, retried: o.retried, completedAt: p.at } }
            : { type: 'ChamberCallFailed', data: { ...base, error: o.error, usage: o.usage, cost: o.cost, costEstimated: o.costEstimated, latencyMs: o.latencyMs, attempts: o.attempts, retried: o.retried, failedAt: p.at } };
          const next = fold(state, [settled]);
          return isInProgress(next) ? [settled, ...advance(next, policy.prices, p.at)] : [settled];
        }
        case 'RecordChamberFollowUp': {
          const p = command.payload;
          if (state.status === 'none') throw new DomainError('not_found', `chamber session ${p.sessionId} does not exist`);
          if (!operator) throw new DomainError('forbidden', 'only an operator records the follow-up');
          if (!state.conclusion) throw new DomainError('illegal_state', `chamber session ${p.sessionId} has no outcome yet (${state.status})`);
          if (state.followUp) {
            if (state.followUp.decision === p.decision && state.followUp.reason === p.reason) return [];
            throw new DomainError('illegal_state', `the follow-up of chamber session ${p.sessionId} is already recorded (${state.followUp.decision})`);
          }
          const position = p.position ?? (p.decision === 'accepted' ? state.conclusion.position : null);
          return [{ type: 'ChamberFollowUpRecorded', data: { sessionId: p.sessionId, decision: p.decision, reason: p.reason, position: position ?? null, by: actor, at: now } }];
        }
        default:
          return [];
      }
    },
  };
}

export { isFinal, isInProgress, pendingCalls };
