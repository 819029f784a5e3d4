/**
 * A stand-in for the models behind the debaters, at the network boundary: the provider stand-in
 * servers (libs/providers) answer each move request with a JSON move chosen from what the runner's
 * prompt says is due, the way an obedient model would. So the debate converges only if the
 * runner's stage-aware context is right. Hayes grades the first steelman of him INCOMPLETE (a
 * critical grader); the first answer of saylor is a CHALLENGE in DISCOVERY (refused: the runner
 * must pass the refusal back and try again). With `proposeThread`, that debater proposes its topics
 * as new threads, one after the other (a refused one is followed by the next at once), whenever the
 * prompt offers PROPOSE_THREAD and nothing is due from it;
 * a debater told a SECOND_THREAD is due seconds it (the second bite).
 */
import type { StandInReply, StandInRequest, StandInScript } from '@agora/providers';

const NULLS = { target: null, questionSeq: null, steelmanSeq: null, grade: null, side: null, confidence: null, topClaim: null, metric: null, threshold: null, deadline: null, falsifierId: null, bearing: null, source: null, proposalId: null, topic: null, proposalSeq: null };

const SIDES: Record<string, 'YES' | 'NO'> = { saylor: 'YES', hayes: 'NO' };
const FALSIFIERS: Record<string, { metric: string; threshold: string; deadline: string }> = {
  saylor: { metric: "Bitcoin's drawdown during the next S&P 500 fall of 30% or worse", threshold: '> 50 %', deadline: '2030-12-31' },
  hayes: { metric: '90-day correlation of Bitcoin with the Nasdaq 100', threshold: '< 0.2 correlation', deadline: '2028-12-31' },
};

export function personaModel(options: { proposeThread?: { agentId: string; topics: string[] } } = {}): StandInScript & { answers: string[] } {
  const graded = new Map<string, number>();
  let proposed = 0;
  let challengedEarly = false;
  const answers: string[] = [];
  const script = (request: StandInRequest): StandInReply => {
    const me = /You are (\w+)\./.exec(request.prompt)?.[1] ?? 'unknown';
    const stage = /Stage: (\w+)/.exec(request.prompt)?.[1];
    const due = /Due from you now, most pressing first: (.*)\./.exec(request.prompt)?.[1]?.replace(/^nothing in particular: .*$/, '') ?? '';
    const first = due.split('; ')[0] ?? '';
    const other = me === 'saylor' ? 'hayes' : 'saylor';
    const move = (kind: string, fields: Record<string, unknown> = {}, text = `${me} on ${kind.toLowerCase()}`) => ({ ...NULLS, kind, text, ...fields });
    let answer: Record<string, unknown>;
    if (me === 'saylor' && stage === 'DISCOVERY' && !challengedEarly) {
      challengedEarly = true;
      answer = move('CHALLENGE', { target: other }, 'Your view is wrong.');
    } else if (options.proposeThread?.agentId === me && proposed < options.proposeThread.topics.length && due === '' && /^Moves allowed now: .*PROPOSE_THREAD/m.test(request.prompt)) {
      answer = move('PROPOSE_THREAD', { topic: options.proposeThread.topics[proposed++] }, 'This sub-dispute deserves its own thread.');
    } else if (first.startsWith('SECOND_THREAD')) answer = move('SECOND_THREAD', { proposalSeq: Number(/#(\d+)/.exec(first)![1]) }, 'Take it up.');
    else if (first.startsWith('ACCEPT_FALSIFIER')) answer = move('ACCEPT_FALSIFIER', { proposalId: first.split(' ')[1] });
    else if (first.startsWith('GRADE_STEELMAN')) {
      const n = (graded.get(me) ?? 0) + 1;
      graded.set(me, n);
      const grade = me === 'hayes' && n === 1 ? 'INCOMPLETE' : 'ACCURATE';
      answer = move('GRADE_STEELMAN', { steelmanSeq: Number(/#(\d+)/.exec(first)![1]), grade }, grade === 'ACCURATE' ? 'That is my position.' : 'It misses the leverage argument.');
    } else if (first.startsWith('ACCEPT_QUESTION')) answer = move('ACCEPT_QUESTION', { questionSeq: Number(/#(\d+)/.exec(first)![1]) }, 'Agreed.');
    else if (first.startsWith('PROPOSE_QUESTION')) answer = move('PROPOSE_QUESTION', {}, 'Will Bitcoin hold its value when equities crash?');
    else if (first.startsWith('COMMIT')) {
      const side = SIDES[me] ?? 'YES';
      answer = move('COMMIT', { side, confidence: 0.8, topClaim: { statement: side === 'YES' ? 'Bitcoin is digital gold' : 'Bitcoin is a risk asset', side, confidence: 0.8, flipsIfCruxFlips: true } }, `I say ${side}.`);
    } else if (first.startsWith('STEELMAN')) answer = move('STEELMAN', { target: first.split(' ')[1] }, `${other}'s strongest case, as I understand it.`);
    else if (first.startsWith('DECLARE_FALSIFIER')) answer = move('DECLARE_FALSIFIER', FALSIFIERS[me] ?? FALSIFIERS['saylor']!, 'This would change my mind.');
    else if (first.startsWith('PROVIDE_EVIDENCE')) answer = move('PROVIDE_EVIDENCE', { falsifierId: /on (\S+)/.exec(first)![1], bearing: 'undermines', source: 'market data' }, 'The data says otherwise.');
    else if (first.startsWith('CHALLENGE')) answer = move('CHALLENGE', { target: first.split(' ')[1] }, 'My strongest objection.');
    else if (first.startsWith('CONCLUDE')) answer = move('CONCLUDE', {}, 'I rest my case.');
    else answer = move('CLAIM', {}, `${me} adds a point ${request.prompt.length % 97}.`);
    answers.push(String(answer['kind']));
    return { json: answer, usage: { input: Math.ceil((request.system.length + request.prompt.length) / 4), output: 120 } };
  };
  return Object.assign(script, { answers });
}
