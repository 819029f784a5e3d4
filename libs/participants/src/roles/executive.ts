/**
 * The executive (seed 000) played by a model: when a review round of a proposal it submitted closes
 * blocked by open objections, it revises the plan in answer to them (ReviseProposal, naming the
 * objections the revision answers; a new round follows), at most `maxRevisions` times per proposal
 * (every loop has a cap). With no answer that fits, it does not revise: the proposal stays blocked
 * for a person to decide (withdraw, or an operator once the tribunal escalates).
 */
import { PROPOSAL_CATEGORY, type ObjectionView, type ProposalView } from '@agora/contracts';
import { readAt, replyError, runRoleLoop, type Agora, type RoleLoop, type RoleLoopOptions } from '@agora/sdk';
import { z } from 'zod';
import { actionOf, ask, blank, listed, type ParticipantSettings } from './participant.js';

export const ModelRevision = z.object({
  title: z.string().nullable().describe('The new title, or null when unchanged'),
  problem: z.string().nullable().describe('The new problem statement, or null when unchanged'),
  body: z.string().describe('The whole revised plan'),
  answers: z.array(z.string()).describe('Ids of the open objections this revision answers'),
  note: z.string().describe('What changed, in a sentence or two'),
});
export type ModelRevision = z.infer<typeof ModelRevision>;

/** Revisions the executive makes of one proposal at most (default). */
export const DEFAULT_MAX_REVISIONS = 3;

const openObjections = (proposal: ProposalView): ObjectionView[] => proposal.objections.filter((o) => o.status === 'open');

/** What the ReviseProposal contract and a useful revision ask beyond the schema. */
export function revisionProblem(revision: ModelRevision, proposal: ProposalView): string | undefined {
  if (blank(revision.body)) return 'body is empty: give the whole revised plan';
  const open = new Set(openObjections(proposal).map((o) => o.objectionId));
  const unknown = revision.answers.filter((id) => !open.has(id));
  if (unknown.length > 0) return `answers names ${unknown.join(', ')}, which ${unknown.length === 1 ? 'is not an open objection' : 'are not open objections'} (open: ${[...open].join(', ')})`;
  if (revision.answers.length === 0) return 'answers is empty: name the open objections your revision answers';
  if (revision.body.trim() === proposal.body.trim()) return 'the plan is unchanged: a revision changes the plan itself';
  return undefined;
}

export function revisionValues(proposal: ProposalView): Record<string, string | number> {
  return {
    proposalId: proposal.proposalId,
    revision: proposal.revision,
    nextRevision: proposal.revision + 1,
    title: proposal.title,
    problem: proposal.problem,
    body: proposal.body,
    objections: listed(openObjections(proposal).map((o) => `${o.objectionId} (${o.constitution}, by ${o.reviewer}): constraint: ${o.constraint} Scenario: ${o.scenario}${o.suggestedRevision ? ` Suggested revision: ${o.suggestedRevision}` : ''}${o.rejectReason ? ` Reject because: ${o.rejectReason}` : ''}`)),
  };
}

/** Revises this agent's blocked proposals with its model. */
export function runExecutive(agora: Agora, settings: ParticipantSettings & { maxRevisions?: number }, options: RoleLoopOptions = {}): RoleLoop {
  const maxRevisions = settings.maxRevisions ?? DEFAULT_MAX_REVISIONS;
  return runRoleLoop(
    agora,
    {
      role: 'executive',
      categories: [PROPOSAL_CATEGORY],
      types: ['ReviewRoundClosed'],
      async act(event) {
        const data = event.data as { proposalId: string; outcome: string };
        if (data.outcome !== 'blocked') return undefined;
        // Where reads are scoped to the parties (closed reads), another executive's proposal is refused as forbidden: not this agent's to revise.
        const read = await agora.tryQuery('GetProposal', { proposalId: data.proposalId }, readAt(event.position));
        if (!read.ok && read.error.code === 'forbidden') return undefined;
        if (!read.ok) throw replyError(read.error);
        const proposal = read.result;
        if (proposal.proposer !== settings.agentId || proposal.status !== 'review' || proposal.pendingRound !== null || openObjections(proposal).length === 0) return undefined;
        const where = `${proposal.proposalId} revision ${proposal.revision}`;
        if (proposal.revision - 1 >= maxRevisions) {
          settings.report?.({ agent: settings.agentId, role: 'executive', outcome: 'silent', what: `no further revision of ${where}: ${maxRevisions} revisions made`, model: settings.model, calls: 0, cost: 0 });
          return undefined;
        }
        const asked = await ask(settings, {
          key: `revise:${proposal.proposalId}:${proposal.revision}:${settings.agentId}`,
          purpose: `revise proposal ${proposal.proposalId} (revision ${proposal.revision + 1})`,
          system: settings.prompts.render('executive', { agent: settings.agentId }),
          prompt: settings.prompts.render('revise-request', revisionValues(proposal)),
          schema: ModelRevision,
          schemaName: 'revision',
          check: (revision) => revisionProblem(revision, proposal),
        });
        if (!asked.ok) {
          settings.report?.(actionOf(settings, 'executive', asked, 'silent', `no revision of ${where}: it stays blocked`));
          return undefined;
        }
        const r = asked.output;
        settings.report?.(actionOf(settings, 'executive', asked, 'acted', `revised ${proposal.proposalId} (revision ${proposal.revision + 1}), answering ${r.answers.join(', ')}`));
        return [
          {
            type: 'ReviseProposal',
            key: `${proposal.proposalId}:revise:${proposal.revision}`,
            payload: {
              proposalId: proposal.proposalId,
              body: r.body.trim().slice(0, 20_000),
              answers: r.answers,
              ...(blank(r.title) ? {} : { title: r.title!.trim().slice(0, 200) }),
              ...(blank(r.problem) ? {} : { problem: r.problem!.trim().slice(0, 5000) }),
            },
          },
        ];
      },
    },
    options,
  );
}
