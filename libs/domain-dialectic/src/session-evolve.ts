// The recovery session decider's evolve: how each event changes a session.
import type { DialecticMessageView, EscalationTier, EscalationView, Party } from '@agora/contracts';
import { type DialecticEvent, type DialecticSession, type DialecticSessionState, partyId, pendingEscalation, turnOf } from './session-state.js';

// ---------------------------------------------------------------------------------------------
// Evolve
// ---------------------------------------------------------------------------------------------

const mapEscalation = (s: DialecticSession, escalation: number, change: (e: EscalationView) => EscalationView): EscalationView[] =>
  s.escalations.map((e) => (e.escalation === escalation ? change(e) : e));

/** Settles the pending escalation (if any) with an outcome. */
function settlePending(s: DialecticSession, outcome: NonNullable<EscalationView['outcome']>, at: string, onlyTiers: readonly EscalationTier[] = ['tie_break', 'quorum', 'operator']): EscalationView[] {
  const pending = pendingEscalation(s);
  if (!pending || !onlyTiers.includes(pending.tier)) return s.escalations;
  return mapEscalation(s, pending.escalation, (e) => ({ ...e, outcome, outcomeAt: at }));
}

function message(kind: DialecticMessageView['kind'], party: Party, d: { author: string; reasoning: string; violations: DialecticMessageView['violations']; submittedAt: string }, rest: Partial<DialecticMessageView>): DialecticMessageView {
  return {
    kind,
    round: null,
    author: d.author,
    party,
    rootCause: null,
    conditions: null,
    reasoning: d.reasoning,
    observedMetrics: null,
    concerns: null,
    agrees: null,
    violations: d.violations,
    at: d.submittedAt,
    ...rest,
  };
}

export function evolveSession(state: DialecticSessionState, e: DialecticEvent): DialecticSessionState {
  if (e.type === 'RecoveryOpened') {
    const d = e.data;
    return {
      sessionId: d.sessionId,
      agentId: d.agentId,
      pause: d.pause,
      reason: d.reason,
      trigger: d.trigger,
      tags: d.tags,
      rules: d.rules,
      seed: d.seed,
      status: 'awaiting_thesis',
      reviewer: null,
      reviewerSelection: null,
      messages: [],
      round: 0,
      awaiting: [],
      deadlineAt: null,
      sessionDeadlineAt: d.sessionDeadlineAt,
      proposed: null,
      blocked: [],
      escalations: [],
      expiries: [],
      operatorDecision: null,
      resolved: null,
      relapse: null,
      audit: null,
      pausedAt: d.pausedAt,
      openedAt: d.openedAt,
      closedAt: null,
      updatedAt: d.openedAt,
    };
  }
  if (state.status === 'unopened') return state;
  const s = state;
  switch (e.type) {
    case 'ReviewerSelected': {
      const d = e.data;
      return { ...s, reviewer: d.reviewer, reviewerSelection: d.selection, awaiting: [s.agentId], deadlineAt: d.deadlineAt, updatedAt: d.selectedAt };
    }
    case 'NoCandidateEligible': {
      const d = e.data;
      if (d.purpose === 'reviewer') return { ...s, reviewerSelection: d.selection, updatedAt: d.at };
      if (d.purpose === 'tie_breaker') {
        const pending = pendingEscalation(s);
        const escalations = pending ? mapEscalation(s, pending.escalation, (x) => ({ ...x, tieBreakerSelection: d.selection, outcome: 'no_candidate', outcomeAt: d.at })) : s.escalations;
        return { ...s, escalations, updatedAt: d.at };
      }
      return { ...s, audit: s.audit && { ...s.audit, noCandidate: true, selection: d.selection }, updatedAt: d.at };
    }
    case 'ThesisSubmitted': {
      const d = e.data;
      const m = message('thesis', 'agent', d, { rootCause: d.rootCause, conditions: d.conditions });
      return { ...s, status: 'awaiting_antithesis', messages: [...s.messages, m], awaiting: s.reviewer === null ? [] : [s.reviewer], deadlineAt: d.deadlineAt, updatedAt: d.submittedAt };
    }
    case 'AntithesisSubmitted': {
      const d = e.data;
      const m = message('antithesis', 'reviewer', d, {
        rootCause: d.counterProposal?.rootCause ?? null,
        conditions: d.counterProposal?.conditions ?? null,
        observedMetrics: d.observedMetrics,
        concerns: d.concerns,
      });
      return { ...s, status: 'synthesis', messages: [...s.messages, m], awaiting: [s.agentId], deadlineAt: d.deadlineAt, updatedAt: d.submittedAt };
    }
    case 'SynthesisSubmitted': {
      const d = e.data;
      const m = message('synthesis', d.party, d, { round: d.round, rootCause: d.rootCause, conditions: d.conditions, agrees: d.agrees });
      const awaiting = d.deadlineAt === null ? [] : [partyId(s, turnOf(d.round + 1))];
      return { ...s, messages: [...s.messages, m], round: d.round, awaiting, deadlineAt: d.deadlineAt, updatedAt: d.submittedAt };
    }
    case 'ResolutionProposed': {
      const d = e.data;
      return {
        ...s,
        status: 'awaiting_signatures',
        proposed: { payload: d.resolution, digest: d.digest, proposedAt: d.proposedAt, signatures: [] },
        awaiting: [s.agentId, ...(s.reviewer === null ? [] : [s.reviewer])],
        deadlineAt: d.deadlineAt,
        updatedAt: d.proposedAt,
      };
    }
    case 'ResolutionBlocked': {
      const d = e.data;
      return {
        ...s,
        blocked: [...s.blocked, { resolution: d.resolution, violations: d.violations, blockedAt: d.blockedAt }],
        escalations: settlePending(s, 'blocked', d.blockedAt, ['tie_break', 'quorum']),
        updatedAt: d.blockedAt,
      };
    }
    case 'ResolutionSigned': {
      const d = e.data;
      if (!s.proposed) return s;
      const signature = { signer: d.signer, role: d.party, publicKey: d.publicKey, signature: d.signature, signedAt: d.signedAt };
      return { ...s, proposed: { ...s.proposed, signatures: [...s.proposed.signatures, signature] }, awaiting: s.awaiting.filter((a) => a !== d.signer), updatedAt: d.signedAt };
    }
    case 'RecoveryResolved': {
      const d = e.data;
      const escalations = d.resolution.escalation === null ? s.escalations : mapEscalation(s, d.resolution.escalation, (x) => ({ ...x, outcome: 'resolved', outcomeAt: d.resolvedAt }));
      const audit = d.audit.sampled ? { auditor: null, selection: null, noCandidate: false, verdict: null, reasoning: null, assignedAt: null, submittedAt: null } : null;
      return {
        ...s,
        status: 'resolved',
        resolved: { resolution: d.resolution, signatures: d.signatures, riskThreshold: d.riskThreshold, audit: d.audit, resolvedAt: d.resolvedAt },
        escalations,
        audit,
        awaiting: [],
        deadlineAt: null,
        closedAt: d.resolvedAt,
        updatedAt: d.resolvedAt,
      };
    }
    case 'DialecticPhaseExpired': {
      const d = e.data;
      const expiry = { status: d.status, late: d.late, sessionLimit: d.sessionLimit, deadlineAt: d.deadlineAt, expiredAt: d.expiredAt };
      return { ...s, expiries: [...s.expiries, expiry], escalations: settlePending(s, 'expired', d.expiredAt), awaiting: [], deadlineAt: null, updatedAt: d.expiredAt };
    }
    case 'RecoveryEscalated': {
      const d = e.data;
      const view: EscalationView = {
        escalation: d.escalation,
        tier: d.tier,
        reason: d.reason,
        requestedBy: d.requestedBy,
        note: d.note,
        escalatedAt: d.escalatedAt,
        deadlineAt: d.deadlineAt,
        proposal: d.proposal,
        votingSessionId: d.votingSessionId,
        quorumSize: d.quorumSize,
        tieBreaker: null,
        tieBreakerSelection: null,
        tieBreak: null,
        quorumResult: null,
        outcome: null,
        outcomeAt: null,
      };
      const status = d.tier === 'tie_break' ? 'tie_break' : d.tier === 'quorum' ? 'quorum' : 'awaiting_operator';
      return { ...s, status, escalations: [...settlePending(s, 'superseded', d.escalatedAt), view], awaiting: [], deadlineAt: d.deadlineAt, updatedAt: d.escalatedAt };
    }
    case 'TieBreakerSelected': {
      const d = e.data;
      return { ...s, escalations: mapEscalation(s, d.escalation, (x) => ({ ...x, tieBreaker: d.tieBreaker, tieBreakerSelection: d.selection })), awaiting: [d.tieBreaker], updatedAt: d.selectedAt };
    }
    case 'TieBreakRecorded': {
      const d = e.data;
      const tieBreak = { side: d.side, reasoning: d.reasoning, decidedAt: d.decidedAt };
      const escalations = mapEscalation(s, d.escalation, (x) => ({ ...x, tieBreak, ...(d.side === 'neither' ? { outcome: 'declined' as const, outcomeAt: d.decidedAt } : {}) }));
      return { ...s, escalations, awaiting: [], updatedAt: d.decidedAt };
    }
    case 'QuorumResultRecorded': {
      const d = e.data;
      const quorumResult = { decision: d.decision, votes: d.votes, approve: d.approve, deny: d.deny, approved: d.approved, reason: d.reason, recordedAt: d.recordedAt };
      const escalations = mapEscalation(s, d.escalation, (x) => ({ ...x, quorumResult, ...(d.approved ? {} : { outcome: 'not_approved' as const, outcomeAt: d.recordedAt }) }));
      return { ...s, escalations, updatedAt: d.recordedAt };
    }
    case 'RecoveryDecided': {
      const d = e.data;
      const operatorDecision = { operator: d.operator, decision: d.decision, reasoning: d.reasoning, decidedAt: d.decidedAt };
      if (d.decision === 'resume') return { ...s, status: 'awaiting_operator', operatorDecision, closedAt: null, updatedAt: d.decidedAt };
      return { ...s, status: 'stayed_paused', operatorDecision, escalations: settlePending(s, 'stayed_paused', d.decidedAt), awaiting: [], deadlineAt: null, closedAt: d.decidedAt, updatedAt: d.decidedAt };
    }
    case 'RecoveryRelapsed': {
      const d = e.data;
      return { ...s, relapse: { pause: d.pause, risk: d.risk, relapsedAt: d.relapsedAt, afterMs: d.afterMs }, updatedAt: d.relapsedAt };
    }
    case 'AuditorAssigned': {
      const d = e.data;
      const audit = { auditor: d.auditor, selection: d.selection, noCandidate: false, verdict: null, reasoning: null, assignedAt: d.assignedAt, submittedAt: null };
      return { ...s, audit, awaiting: [d.auditor], updatedAt: d.assignedAt };
    }
    case 'AuditSubmitted': {
      const d = e.data;
      return { ...s, audit: s.audit && { ...s.audit, verdict: d.verdict, reasoning: d.reasoning, submittedAt: d.submittedAt }, awaiting: [], updatedAt: d.submittedAt };
    }
  }
}
