/** The LLM debaters' context: what is due from each debater as the seed's debate goes, the prompt's stage-aware lines, and a model's answer as a protocol move. */
import type { DebateView } from '@agora/contracts';
import { debateDecider, EXAMPLE_PARTICIPANTS, EXAMPLE_TOPIC, exampleScript, moveOf, type DebateCommand, type DebateEvent } from '@agora/domain-debate';
import { fold } from '@agora/decider';
import { movePromptOf, obligationsOf, toDebateMove, type ModelMove } from '../src/llm-context.js';

const T0 = Date.parse('2026-11-25T10:00:00.000Z');
/** The debate after the first `steps` scripted moves, folded as the service's query answers it. */
function debateAfter(steps: number): DebateView {
  let events: DebateEvent[] = [];
  let n = 0;
  const apply = (command: Omit<DebateCommand, 'context'>, actor: string) => {
    const context = { actor, actorRoles: ['debater'], now: new Date(T0 + ++n * 1000).toISOString(), commandId: `c${n}` };
    events = [...events, ...debateDecider.decide({ ...command, context } as DebateCommand, fold(debateDecider, events))];
  };
  apply({ type: 'OpenDebate', payload: { debateId: 'd', topic: EXAMPLE_TOPIC, participants: EXAMPLE_PARTICIPANTS } }, 'saylor');
  for (const step of exampleScript().slice(0, steps)) apply({ type: 'PostDebateMove', payload: { debateId: 'd', threadId: 'main', move: moveOf(step, fold(debateDecider, events) as DebateView) } }, step.agentId);
  return { ...(fold(debateDecider, events) as Omit<DebateView, 'streamRevision'>), streamRevision: events.length - 1 };
}

const nulls: ModelMove = { kind: 'CLAIM', text: 't', target: null, questionSeq: null, steelmanSeq: null, grade: null, side: null, confidence: null, topClaim: null, metric: null, threshold: null, deadline: null, falsifierId: null, bearing: null, source: null, proposalId: null };

describe('what is due from a debater', () => {
  it('follows the gates of the seed debate', () => {
    const thread = (d: DebateView) => d.threads[0]!;
    let d = debateAfter(4);
    expect(obligationsOf(d, thread(d), 'saylor')).toEqual(['PROPOSE_QUESTION: the stage needs a binary question proposed and accepted']);
    d = debateAfter(5);
    expect(obligationsOf(d, thread(d), 'hayes')).toEqual([expect.stringMatching(/^ACCEPT_QUESTION #5 /)]);
    d = debateAfter(6);
    expect(obligationsOf(d, thread(d), 'saylor')).toEqual(['COMMIT']);
    d = debateAfter(9); // saylor's steelman of hayes awaits its grade
    expect(obligationsOf(d, thread(d), 'hayes')).toEqual(['GRADE_STEELMAN #9 by saylor', 'STEELMAN saylor', 'DECLARE_FALSIFIER']);
    expect(obligationsOf(d, thread(d), 'saylor')).toEqual(['DECLARE_FALSIFIER']);
    d = debateAfter(10); // graded INCOMPLETE: saylor must steelman again
    expect(obligationsOf(d, thread(d), 'saylor')).toEqual(['STEELMAN hayes', 'DECLARE_FALSIFIER']);
    d = debateAfter(16);
    expect(thread(d).stage).toBe('EVIDENCE');
    expect(obligationsOf(d, thread(d), 'hayes')).toEqual(['PROVIDE_EVIDENCE on main.f15 (saylor)', 'CHALLENGE saylor']);
  });

  it('puts the stage, its budget, the allowed moves, the gate and the refusal in the prompt', () => {
    const d = debateAfter(12);
    const prompt = movePromptOf(d, 'main', 'saylor', { refusal: 'illegal_state: nope' });
    expect(prompt).toMatch(/^Stage: CRUX_LOCK, 6 messages of a budget of 8-10\.$/m);
    expect(prompt).toMatch(/^Moves allowed now: COMMIT, STEELMAN, GRADE_STEELMAN, DECLARE_FALSIFIER, ACCEPT_FALSIFIER, CLAIM, QUESTION\.$/m);
    expect(prompt).toMatch(/^The gate still needs: steelman: saylor of hayes was graded INCOMPLETE; falsifiers: saylor, hayes must declare one/m);
    expect(prompt).toMatch(/^Steelmans: #9 saylor of hayes: INCOMPLETE; #11 hayes of saylor: ACCURATE$/m);
    expect(prompt).toMatch(/^#12 \[GRADE_STEELMAN\] saylor: That is my position/m);
    expect(prompt).toMatch(/Your previous answer was refused: illegal_state: nope\. Make a move that is allowed\.\nYour move:$/);
  });
});

describe("a model's answer as a move", () => {
  it('keeps the fields of its kind only', () => {
    expect(toDebateMove({ ...nulls, kind: 'STEELMAN', target: 'hayes', grade: 'ACCURATE' })).toEqual({ kind: 'STEELMAN', target: 'hayes', text: 't' });
    expect(toDebateMove({ ...nulls, kind: 'DECLARE_FALSIFIER', metric: 'm', threshold: '> 1 %', deadline: '2030-01-01', proposalId: 'main.p3.hayes' })).toEqual({
      kind: 'DECLARE_FALSIFIER',
      metric: 'm',
      threshold: '> 1 %',
      deadline: '2030-01-01',
      text: 't',
      replaces: 'main.p3.hayes',
    });
    expect(toDebateMove({ ...nulls, kind: 'PROVIDE_EVIDENCE', falsifierId: 'main.f15', bearing: 'supports' })).toEqual({ kind: 'PROVIDE_EVIDENCE', falsifierId: 'main.f15', bearing: 'supports', text: 't' });
    // What is missing is left for the service to refuse, with its reason.
    expect(toDebateMove({ ...nulls, kind: 'GRADE_STEELMAN' })).toEqual({ kind: 'GRADE_STEELMAN', steelmanSeq: 0, grade: 'INCOMPLETE', text: 't' });
    expect(toDebateMove({ ...nulls, text: '  ' })).toEqual({ kind: 'CLAIM', text: '(no text)' });
  });
});
