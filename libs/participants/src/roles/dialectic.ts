/**
 * The parties of a recovery (seed 001) played by a model: the paused agent writes its thesis, the
 * reviewer drawn for it its antithesis, and both the synthesis rounds until they agree on one root
 * cause and one set of conditions (the SDK's turn loop then signs the resolution with the agent's
 * key: the model never sees it). With no answer that fits, the party escalates the recovery
 * (EscalateRecovery, with the reason): the protocol's own way out of a dialectic that cannot go on.
 */
import type { Condition, DialecticSessionView } from '@agora/contracts';
import { onDialecticTurn, uuidV5, type Agora, type DialecticAnswer, type DialecticTurn, type RoleLoop, type RoleLoopOptions } from '@agora/sdk';
import { z } from 'zod';
import { actionOf, ask, blank, listed, type Asked, type ParticipantSettings } from './participant.js';

/** A condition as a model writes it: parameters as a list (strict JSON-schema modes refuse open maps). */
const ModelCondition = z.object({
  operation: z.string().describe('A lowercase operation, e.g. set_risk_threshold'),
  parameters: z.array(z.object({ name: z.string(), value: z.union([z.string(), z.number(), z.boolean()]) })),
});
export type ModelCondition = z.infer<typeof ModelCondition>;

export const ModelThesis = z.object({ rootCause: z.string(), conditions: z.array(ModelCondition), reasoning: z.string() });
export const ModelAntithesis = z.object({
  observedMetrics: z.array(z.object({ name: z.string(), value: z.number() })),
  concerns: z.array(z.string()).describe('At least one'),
  reasoning: z.string(),
  counterProposal: z.object({ rootCause: z.string(), conditions: z.array(ModelCondition) }).nullable(),
});
export const ModelSynthesis = z.object({ rootCause: z.string(), conditions: z.array(ModelCondition), reasoning: z.string(), agrees: z.boolean() });

export const conditionOf = (c: ModelCondition): Condition => ({ operation: c.operation.trim(), parameters: Object.fromEntries(c.parameters.map((p) => [p.name.trim(), p.value])) });
export const modelConditionOf = (c: Condition): ModelCondition => ({ operation: c.operation, parameters: Object.entries(c.parameters ?? {}).map(([name, value]) => ({ name, value })) });

const NAME = /^[a-z][a-z0-9_]{0,63}$/;
function conditionsProblem(conditions: readonly ModelCondition[]): string | undefined {
  if (conditions.length > 20) return 'at most 20 conditions';
  for (const c of conditions) {
    if (!NAME.test(c.operation.trim())) return `operation ${JSON.stringify(c.operation)} must be a lowercase word such as set_risk_threshold`;
    const bad = c.parameters.find((p) => !NAME.test(p.name.trim()));
    if (bad) return `parameter ${JSON.stringify(bad.name)} of ${c.operation} must be a lowercase word such as threshold`;
  }
  return undefined;
}

/** A position as the prompts show it (and a party repeats to agree): root cause and conditions as JSON. */
export function positionText(rootCause: string | null, conditions: readonly Condition[] | null): string {
  return `root cause: ${rootCause ?? '(none given)'}; conditions: ${JSON.stringify((conditions ?? []).map(modelConditionOf))}`;
}

/** The session as a party sees it: why the agent was paused, and the transcript so far. */
export function sessionText(session: DialecticSessionView): string {
  const t = session.trigger;
  return [
    `Paused agent: ${session.agentId} (pause ${session.pause}): ${session.reason}. Risk ${t.risk}, health ${t.health}, breaker threshold ${t.threshold}. Tags: ${session.tags.join(', ') || 'none'}.`,
    `Reviewer: ${session.reviewer ?? '(not drawn yet)'}. Synthesis rounds so far: ${session.round} of at most ${session.rules.maxSynthesisRounds}.`,
    'Transcript:',
    listed(
      session.messages.map(
        (m) =>
          `${m.kind}${m.round === null ? '' : ` round ${m.round}`} by ${m.author} (${m.party}): ${positionText(m.rootCause, m.conditions)}; reasoning: ${m.reasoning}${m.concerns ? `; concerns: ${m.concerns.join(' | ')}` : ''}${m.observedMetrics ? `; observed: ${JSON.stringify(m.observedMetrics)}` : ''}${m.agrees === null ? '' : `; agrees: ${m.agrees}`}`,
      ),
    ),
    ...(session.blocked.length > 0 ? [`Resolutions the hard limits blocked: ${session.blocked.map((b) => b.violations.map((v) => JSON.stringify(v)).join(', ')).join('; ')}`] : []),
  ].join('\n');
}

/** The other party's latest position (its latest message with a root cause). */
function otherPosition(session: DialecticSessionView, me: string): string {
  const theirs = session.messages.filter((m) => m.author !== me && m.rootCause !== null).at(-1);
  return theirs ? positionText(theirs.rootCause, theirs.conditions) : '(none yet)';
}

/** Takes this agent's turns in its recoveries (as the paused agent or the reviewer drawn), with its model. */
export function runDialecticParty(agora: Agora, settings: ParticipantSettings, options: RoleLoopOptions = {}): RoleLoop {
  const me = settings.agentId;
  return onDialecticTurn(
    agora,
    async (turn: DialecticTurn): Promise<DialecticAnswer | undefined> => {
      const { session } = turn;
      const common = { system: settings.prompts.render('dialectic', { agent: me }) };
      const base = { sessionId: session.sessionId, session: sessionText(session) };
      const where = `${turn.kind}${turn.kind === 'synthesis' ? ` round ${turn.round}` : ''} of recovery ${session.sessionId}`;
      const key = `dialectic:${session.sessionId}:${turn.kind}:${turn.kind === 'synthesis' ? turn.round : 0}:${me}`;
      let asked: Asked<unknown>;
      let answer: DialecticAnswer | undefined;
      if (turn.kind === 'thesis') {
        const a = await ask(settings, { ...common, key, purpose: where, prompt: settings.prompts.render('thesis', base), schema: ModelThesis, schemaName: 'thesis', check: (t) => (blank(t.rootCause) || blank(t.reasoning) ? 'rootCause and reasoning are required' : conditionsProblem(t.conditions)) });
        asked = a;
        if (a.ok) answer = { rootCause: a.output.rootCause.trim(), proposedConditions: a.output.conditions.map(conditionOf), reasoning: a.output.reasoning.trim() };
      } else if (turn.kind === 'antithesis') {
        const a = await ask(settings, {
          ...common,
          key,
          purpose: where,
          prompt: settings.prompts.render('antithesis', { ...base, pausedAgent: session.agentId }),
          schema: ModelAntithesis,
          schemaName: 'antithesis',
          check: (t) => (t.concerns.filter((c) => !blank(c)).length === 0 ? 'give at least one concern' : blank(t.reasoning) ? 'reasoning is required' : t.counterProposal ? conditionsProblem(t.counterProposal.conditions) : undefined),
        });
        asked = a;
        if (a.ok) {
          const { observedMetrics, concerns, reasoning, counterProposal } = a.output;
          answer = {
            observedMetrics: Object.fromEntries(observedMetrics.map((m) => [m.name, m.value])),
            concerns: concerns.filter((c) => !blank(c)).slice(0, 20),
            reasoning: reasoning.trim(),
            ...(counterProposal ? { counterProposal: { rootCause: counterProposal.rootCause.trim(), proposedConditions: counterProposal.conditions.map(conditionOf) } } : {}),
          };
        }
      } else {
        const party = me === session.agentId ? 'paused agent' : 'reviewer';
        const a = await ask(settings, {
          ...common,
          key,
          purpose: where,
          prompt: settings.prompts.render('synthesis', { ...base, round: turn.round, party, otherPosition: otherPosition(session, me) }),
          schema: ModelSynthesis,
          schemaName: 'synthesis',
          check: (t) => (blank(t.rootCause) || blank(t.reasoning) ? 'rootCause and reasoning are required' : conditionsProblem(t.conditions)),
        });
        asked = a;
        if (a.ok) answer = { rootCause: a.output.rootCause.trim(), proposedConditions: a.output.conditions.map(conditionOf), reasoning: a.output.reasoning.trim(), agrees: a.output.agrees };
      }
      if (answer) {
        const agrees = 'agrees' in answer ? (answer.agrees ? ', agreeing' : ', not agreeing yet') : '';
        settings.report?.(actionOf(settings, 'dialectic', asked, 'acted', `wrote the ${where}${agrees}`));
        return answer;
      }
      // No answer that fits: climb the ladder, saying why (one escalation per turn: its id is derived from the turn).
      const reason = `${me} could not write the ${turn.kind}: ${asked.ok ? 'no answer' : asked.error}`.slice(0, 2000);
      const reply = await agora.trySend('EscalateRecovery', { sessionId: session.sessionId, reason }, { commandId: uuidV5(`escalate:${key}`), causationId: turn.event.id });
      settings.report?.({ ...actionOf(settings, 'dialectic', asked, 'escalated', `escalated recovery ${session.sessionId} (no ${turn.kind})`), ...(reply.ok ? {} : { error: `${asked.ok ? '' : `${asked.error}; `}the escalation was refused: ${reply.error.code}: ${reply.error.message}` }) });
      return undefined;
    },
    options,
  );
}
