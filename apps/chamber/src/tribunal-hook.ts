/**
 * A tribunal deadlock can ask the chamber: when a proposal is escalated to an operator because
 * its reviewers deadlocked, the chamber proposes a consultation of the panel about it, linked to the
 * proposal. Like any session it waits for an operator's approval: nothing is called, nothing spent,
 * unless the operator wants the panel's view before deciding the escalation.
 */
import type { PayloadOf, ProposalView, ProposeChamberSession } from '@agora/contracts';
import { charCount } from '@agora/domain-chamber';

export const CHAMBER_TRIBUNAL_ENV_HELP = `AGORA_CHAMBER_TRIBUNAL_DEADLOCKS  on or off: a tribunal deadlock attaches a chamber consultation that an
                           operator may approve (default on; nothing is called before approval)`;

/** The id of the consultation escalation `escalation` of a proposal attaches. */
export const deadlockConsultationId = (proposalId: string, escalation: number): string => `deadlock-${proposalId.slice(0, 80)}-e${escalation}`;

/** The consultation a deadlock attaches: the proposal as written and the objections still open, within the context limit. */
export function deadlockConsultation(proposal: ProposalView, escalation: number, maxContextChars: number): PayloadOf<typeof ProposeChamberSession> {
  const open = proposal.objections.filter((o) => o.status === 'open');
  const objections = open.map((o, i) => `${i + 1}. ${o.constraint}: ${o.scenario}${o.suggestedRevision ? ` (suggested: ${o.suggestedRevision})` : ''}`).join('\n');
  const context = [`PROPOSAL: ${proposal.title}`, `PROBLEM: ${proposal.problem}`, `PLAN:\n${proposal.body}`, `OPEN OBJECTIONS OF THE REVIEWERS:\n${objections || '(none recorded)'}`].join('\n\n');
  return {
    sessionId: deadlockConsultationId(proposal.proposalId, escalation),
    question: `The reviewers of the proposal "${proposal.title.slice(0, 200)}" deadlocked. Should it proceed as written, be revised (how), or be rejected?`,
    context: charCount(context) > maxContextChars ? `${[...context].slice(0, Math.max(0, maxContextChars - 20)).join('')}\n…(truncated)` : context,
    rationale: `The tribunal deadlocked (escalation ${escalation}, ${proposal.contestedRounds} contested rounds); an independent panel's view before the operator decides the escalation.`,
    link: { kind: 'proposal', id: proposal.proposalId },
  };
}
