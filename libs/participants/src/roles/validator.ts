/**
 * A validator (seed 002) played by a model: for each voting session that draws it, it votes
 * approve, deny or abstain from its specializations, with its reasoning, a confidence and a risk
 * assessment. With no answer that fits, it casts an explicit abstention (confidence 0) whose
 * reasoning says why: the vote is the protocol's own way to say "I cannot judge this", and it
 * breaks unanimity as any abstention does.
 */
import type { VotingSessionView } from '@agora/contracts';
import { onVoteRequested, type Agora, type RoleLoop, type RoleLoopOptions, type VoteAnswer } from '@agora/sdk';
import { z } from 'zod';
import { actionOf, ask, blank, type ParticipantSettings } from './participant.js';

export const ModelVote = z.object({
  decision: z.enum(['approve', 'deny', 'abstain']),
  reasoning: z.string().describe('What you checked and what decided your vote'),
  confidence: z.number().min(0).max(1),
  riskAssessment: z.string().nullable().describe('The risk you see, in a sentence or two'),
});
export type ModelVote = z.infer<typeof ModelVote>;

export function voteValues(session: VotingSessionView, specializations: readonly string[]): Record<string, string | number> {
  return {
    sessionId: session.sessionId,
    requester: session.requestingAgent,
    actionType: session.actionType,
    riskLevel: session.riskLevel,
    critical: session.critical ? ', critical: a human decides unless the vote is unanimous' : '',
    summary: session.summary ?? '(none given)',
    toolCall: session.toolCall ? `The governed tool call: ${JSON.stringify(session.toolCall)}\n` : '',
    validators: session.validators.map((v) => `${v.agentId}${v.specializations.length > 0 ? ` (${v.specializations.join(', ')})` : ''}`).join(', '),
    specializations: specializations.join(', ') || 'none declared',
  };
}

/** The vote cast when the model gave no answer that fits: an explicit abstention saying why. */
export function abstentionOf(model: string, error: string): VoteAnswer {
  return { decision: 'abstain', reasoning: `No vote from ${model}: ${error}`.slice(0, 5000), confidence: 0 };
}

/** Votes in the sessions that draw this agent, with its model. */
export function runValidator(agora: Agora, settings: ParticipantSettings & { specializations: readonly string[] }, options: RoleLoopOptions = {}): RoleLoop {
  return onVoteRequested(
    agora,
    async ({ session }) => {
      const asked = await ask(settings, {
        key: `vote:${session.sessionId}:${settings.agentId}`,
        purpose: `vote in session ${session.sessionId} (${session.actionType})`,
        system: settings.prompts.render('validator', { agent: settings.agentId, specializations: settings.specializations.join(', ') || 'none declared' }),
        prompt: settings.prompts.render('vote-request', voteValues(session, settings.specializations)),
        schema: ModelVote,
        schemaName: 'vote',
        check: (vote) => (blank(vote.reasoning) ? 'reasoning is empty' : undefined),
      });
      if (!asked.ok) {
        settings.report?.(actionOf(settings, 'validator', asked, 'abstained', `abstained in ${session.sessionId} (${session.actionType})`));
        return abstentionOf(settings.model, asked.error);
      }
      const v = asked.output;
      settings.report?.(actionOf(settings, 'validator', asked, 'acted', `voted ${v.decision} (${v.confidence}) in ${session.sessionId} (${session.actionType})`));
      return { decision: v.decision, reasoning: v.reasoning.trim().slice(0, 5000), confidence: v.confidence, ...(blank(v.riskAssessment) ? {} : { riskAssessment: v.riskAssessment!.trim().slice(0, 2000) }) };
    },
    options,
  );
}
