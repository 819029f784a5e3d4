/** The LLM debaters' context: what is due from each debater as the seed's debate goes, the prompt's stage-aware lines, and a model's answer as a protocol move. */
import type { DebateView } from '@agora/contracts';
import { debateDecider, EXAMPLE_PARTICIPANTS, EXAMPLE_TOPIC, exampleScript, moveOf, type DebateCommand, type DebateEvent } from '@agora/domain-debate';
import { fold } from '@agora/decider';
import { movePromptOf, obligationsOf, threadMovesOffered, toDebateMove, type ModelMove } from '../src/llm-context.js';

const T0 = Date.parse('2026-11-25T10:00:00.000Z');
/** The debate after the first `steps` scripted moves (in thread main), then the `extra` moves, folded as the service's query answers it. */
function debateAfter(steps: number, extra: { agentId: string; threadId?: string; move: Record<string, unknown> }[] = []): DebateView {
  let events: DebateEvent[] = [];
  let n = 0;
  const apply = (command: Omit<DebateCommand, 'context'>, actor: string) => {
    const context = { actor, actorRoles: ['debater'], now: new Date(T0 + ++n * 1000).toISOString(), commandId: `c${n}` };
    events = [...events, ...debateDecider.decide({ ...command, context } as DebateCommand, fold(debateDecider, events))];
  };
  apply({ type: 'OpenDebate', payload: { debateId: 'd', topic: EXAMPLE_TOPIC, participants: EXAMPLE_PARTICIPANTS } }, 'saylor');
  for (const step of exampleScript().slice(0, steps)) apply({ type: 'PostDebateMove', payload: { debateId: 'd', threadId: 'main', move: moveOf(step, fold(debateDecider, events) as DebateView) } }, step.agentId);
  for (const x of extra) apply({ type: 'PostDebateMove', payload: { debateId: 'd', threadId: x.threadId ?? 'main', move: x.move } } as Omit<DebateCommand, 'context'>, x.agentId);
  return { ...(fold(debateDecider, events) as Omit<DebateView, 'streamRevision'>), streamRevision: events.length - 1 };
}

const nulls: ModelMove = { kind: 'CLAIM', text: 't', target: null, questionSeq: null, steelmanSeq: null, grade: null, side: null, confidence: null, topClaim: null, metric: null, threshold: null, deadline: null, falsifierId: null, bearing: null, source: null, proposalId: null, topic: null, proposalSeq: null };

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
    expect(prompt).toMatch(/^Moves allowed now: COMMIT, STEELMAN, GRADE_STEELMAN, DECLARE_FALSIFIER, ACCEPT_FALSIFIER, CLAIM, QUESTION, PROPOSE_THREAD\.$/m);
    expect(prompt).toMatch(/^The gate still needs: steelman: saylor of hayes was graded INCOMPLETE; falsifiers: saylor, hayes must declare one/m);
    expect(prompt).toMatch(/^Steelmans: #9 saylor of hayes: INCOMPLETE; #11 hayes of saylor: ACCURATE$/m);
    expect(prompt).toMatch(/^#12 \[GRADE_STEELMAN\] saylor: That is my position/m);
    expect(prompt).toMatch(/Your previous answer was refused: illegal_state: nope\. Make a move that is allowed\.\nYour move:$/);
  });
});

describe('the second bite offered to a model (spawning a thread)', () => {
  const propose = (agentId: string, topic: string) => ({ agentId, move: { kind: 'PROPOSE_THREAD', topic, text: 'It deserves its own thread.' } });
  const second = (agentId: string, proposalSeq: number) => ({ agentId, move: { kind: 'SECOND_THREAD', proposalSeq, text: 'Take it up.' } });
  const main = (d: DebateView) => d.threads.find((t) => t.threadId === 'main')!;

  it('offers PROPOSE_THREAD in any open thread, whatever its stage, while the debate has room, and says when in the prompt', () => {
    let d = debateAfter(2);
    expect(threadMovesOffered(d, main(d), 'saylor')).toEqual(['PROPOSE_THREAD']);
    const prompt = movePromptOf(d, 'main', 'saylor');
    expect(prompt).toMatch(/^Moves allowed now: CLAIM, QUESTION, PROPOSE_QUESTION, ACCEPT_QUESTION, PROPOSE_THREAD\.$/m);
    expect(prompt).toMatch(/^Threads: main "Bitcoin is digital gold" \(DISCOVERY\); 1 of at most 4\.$/m);
    expect(prompt).toMatch(/^- PROPOSE_THREAD: Only when a sub-dispute deserves its own thread .*It starts only once another debater seconds it \(the second bite\)/m);
    expect(prompt).not.toMatch(/SECOND_THREAD/);
    d = debateAfter(13); // CRUX_LOCK, past its minimum: the thread moves stay outside the stage's moves and budget
    expect(main(d).stage).toBe('CRUX_LOCK');
    expect(threadMovesOffered(d, main(d), 'hayes')).toEqual(['PROPOSE_THREAD']);
  });

  it("offers SECOND_THREAD to the other debaters only, as due, until it spawns; nothing once the debate is full or the thread has ended", () => {
    let d = debateAfter(2, [propose('hayes', 'Will spot ETF flows decide the Bitcoin price?')]);
    expect(threadMovesOffered(d, main(d), 'hayes')).toEqual(['PROPOSE_THREAD']); // not its own proposal
    expect(threadMovesOffered(d, main(d), 'saylor')).toEqual(['PROPOSE_THREAD', 'SECOND_THREAD']);
    expect(obligationsOf(d, main(d), 'hayes')).toEqual([]);
    expect(obligationsOf(d, main(d), 'saylor')).toEqual(['SECOND_THREAD #3 by hayes if it deserves its own thread: "Will spot ETF flows decide the Bitcoin price?"']);
    let prompt = movePromptOf(d, 'main', 'saylor');
    expect(prompt).toMatch(/^Proposed threads: #3 by hayes "Will spot ETF flows decide the Bitcoin price\?" \(awaiting a second\)$/m);
    expect(prompt).toMatch(/^- SECOND_THREAD: Second another debater's proposed thread \(proposalSeq = its message number\)/m);
    // A gate's obligation comes first; the second bite is the least pressing.
    d = debateAfter(5, [propose('saylor', 'Will spot ETF flows decide the Bitcoin price?')]);
    expect(obligationsOf(d, main(d), 'hayes')).toEqual([expect.stringMatching(/^ACCEPT_QUESTION #5 /), 'SECOND_THREAD #6 by saylor if it deserves its own thread: "Will spot ETF flows decide the Bitcoin price?"']);

    d = debateAfter(2, [propose('hayes', 'Will spot ETF flows decide the Bitcoin price?'), second('saylor', 3)]);
    expect(threadMovesOffered(d, main(d), 'saylor')).toEqual(['PROPOSE_THREAD']);
    expect(obligationsOf(d, main(d), 'saylor')).toEqual([]);
    prompt = movePromptOf(d, 'main', 'saylor');
    expect(prompt).toMatch(/^Threads: main "Bitcoin is digital gold" \(DISCOVERY\); main-s3 "Will spot ETF flows decide the Bitcoin price\?" \(DISCOVERY\); 2 of at most 4\.$/m);
    expect(prompt).toMatch(/\(spawned as main-s3\)$/m);

    // Four threads: no room, nothing offered, not even a pending proposal's second.
    d = debateAfter(2, [
      propose('hayes', 'Will spot ETF flows decide the Bitcoin price?'),
      second('saylor', 3),
      propose('saylor', 'Does mining energy use threaten adoption?'),
      second('hayes', 5),
      propose('hayes', 'Can central banks ban self custody?'),
      propose('saylor', 'Should pension funds hold gold?'),
      second('saylor', 7),
    ]);
    expect(d.threads).toHaveLength(4);
    expect(threadMovesOffered(d, main(d), 'hayes')).toEqual([]);
    expect(obligationsOf(d, main(d), 'hayes')).toEqual([]);
    expect(movePromptOf(d, 'main', 'hayes')).toMatch(/^Moves allowed now: CLAIM, QUESTION, PROPOSE_QUESTION, ACCEPT_QUESTION\.$/m);

    d = debateAfter(exampleScript().length);
    expect(main(d).stage).toBe('CONVERGED');
    expect(threadMovesOffered(d, main(d), 'saylor')).toEqual([]);
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
    expect(toDebateMove({ ...nulls, kind: 'PROPOSE_THREAD', topic: 'Will ETF flows decide the price?', proposalSeq: 3 })).toEqual({ kind: 'PROPOSE_THREAD', topic: 'Will ETF flows decide the price?', text: 't' });
    expect(toDebateMove({ ...nulls, kind: 'SECOND_THREAD', proposalSeq: 3, topic: 'x' })).toEqual({ kind: 'SECOND_THREAD', proposalSeq: 3, text: 't' });
    expect(toDebateMove({ ...nulls, kind: 'PROPOSE_THREAD' })).toEqual({ kind: 'PROPOSE_THREAD', topic: '', text: 't' }); // refused by the service: a topic is required
  });
});
