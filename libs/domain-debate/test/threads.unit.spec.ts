/** v1 multi-threading (seed 004): thread spawning (the "second bite"), thread merging (duplicate detection), the attention scorer and the agenda manager. */
import { agendaOf, attentionOf, threadsSeenBy } from '../src/attention.js';
import { binaryFrame, framedQuestionFor } from '../src/framing.js';
import { duplicateOf, similarity } from '../src/threads.js';
import { claim, HAYES, move, ofType, open, play, refusal, SAYLOR, stateOf, thread, toCruxLock, typesOf } from './fixtures.js';

const LYN = 'lyn';
const three = () => play([], open({ participants: [SAYLOR, HAYES, LYN] }));
const propose = (agent: string, topic: string, threadId = 'main') => move(agent, { kind: 'PROPOSE_THREAD', topic, text: 'This sub-dispute deserves its own thread.' }, threadId);
const second = (agent: string, proposalSeq: number, threadId = 'main') => move(agent, { kind: 'SECOND_THREAD', proposalSeq, text: 'Agreed, take it up.' }, threadId);

describe('thread spawning (the second bite)', () => {
  it('a proposal spawns a thread only when another participant seconds it; the new thread starts in DISCOVERY', () => {
    let h = play(three(), move(SAYLOR, claim()));
    h = play(h, propose(HAYES, 'Does mining energy use threaten Bitcoin adoption?'));
    expect(thread(h).spawnProposals).toEqual([{ seq: 2, topic: 'Does mining energy use threaten Bitcoin adoption?', proposedBy: HAYES, secondedBy: null, spawnedThreadId: null }]);
    expect(stateOf(h).threads).toHaveLength(1);
    expect(refusal(h, second(HAYES, 2)).message).toMatch(/another participant must second it \(the second bite\)/);
    const spawned = play(h, second(LYN, 2));
    expect(typesOf(spawned.slice(h.length))).toEqual(['DebateMessagePosted', 'ThreadSpawned']);
    expect(ofType(spawned, 'ThreadSpawned')[0]!.data).toMatchObject({ threadId: 'main', newThreadId: 'main-s2', proposedBy: HAYES, secondedBy: LYN });
    expect(thread(spawned, 'main-s2')).toMatchObject({ stage: 'DISCOVERY', parentThreadId: 'main', topic: 'Does mining energy use threaten Bitcoin adoption?', stageMessages: 0 });
    expect(refusal(spawned, second(SAYLOR, 2)).message).toMatch(/already spawned thread main-s2/);
    // Thread moves do not count against the stage's budget.
    expect(thread(spawned).stageMessages).toBe(1);
    expect(play(spawned, move(SAYLOR, claim('Energy is the point.'), 'main-s2')).at(-1)!.type).toBe('DebateMessagePosted');
  });

  it('is allowed in any open thread whatever its stage, refused for a duplicate topic and beyond 4 threads', () => {
    let h = toCruxLock();
    h = play(h, propose(SAYLOR, 'Will custody risk keep institutions out of Bitcoin?'));
    expect(thread(h).stage).toBe('CRUX_LOCK');
    const dup = refusal(h, propose(HAYES, 'Will Bitcoin hold its value in the next equity crash?'));
    expect(dup).toMatchObject({ code: 'invalid_command', details: { threadId: 'main' } });
    expect(dup.message).toMatch(/thread main already takes it up/);
    let full = play([], open({ threads: [{ threadId: 'a', topic: 'Reserve asset status' }, { threadId: 'b', topic: 'Hedge against inflation' }, { threadId: 'c', topic: 'Energy and mining' }] }));
    full = play(full, propose(SAYLOR, 'Regulation of exchanges', 'a'), second(HAYES, 1, 'a'));
    expect(stateOf(full).threads).toHaveLength(4);
    expect(refusal(full, propose(HAYES, 'Custody by banks', 'b')).message).toMatch(/has 4 threads, the most it may hold \(4\)/);
  });
});

describe('thread merging (duplicate detection)', () => {
  it('measures duplicates by keyword overlap', () => {
    expect(similarity('Will Bitcoin hold its value in equity crashes?', 'Does Bitcoin hold value when equities crash?')).toBe(1);
    expect(similarity('Is Bitcoin a hedge against equity crashes?', 'Bitcoin in a crash')).toBeCloseTo(2 / 5);
    expect(similarity('Is Bitcoin a hedge against inflation?', 'Will mining energy use threaten adoption?')).toBe(0);
  });

  it('a thread that accepts a question another open thread takes up is merged into it and ends there; the debate completes without it', () => {
    const settings = { discovery: { min: 2, max: 4 } };
    let h = play([], open({ settings, threads: [{ threadId: 'hedge', topic: 'Is Bitcoin a hedge against equity crashes?' }, { threadId: 'crash', topic: 'Bitcoin in a crash' }] }));
    h = play(h, move(SAYLOR, { kind: 'PROPOSE_QUESTION', text: 'Will Bitcoin hedge against equity crashes?' }, 'crash'));
    const merged = play(h, move(HAYES, { kind: 'ACCEPT_QUESTION', questionSeq: 1, text: 'ok' }, 'crash'));
    expect(typesOf(merged.slice(h.length))).toEqual(['DebateMessagePosted', 'BinaryQuestionAccepted', 'ThreadsMerged']);
    expect(ofType(merged, 'ThreadsMerged')[0]!.data).toMatchObject({ threadId: 'crash', into: 'hedge', reason: expect.stringMatching(/duplicates thread hedge/) });
    expect(thread(merged, 'crash')).toMatchObject({ mergedInto: 'hedge', stage: 'DISCOVERY' });
    expect(refusal(merged, move(SAYLOR, claim(), 'crash')).message).toMatch(/thread crash was merged into thread hedge \(a duplicate\); post there/);
    expect(duplicateOf('Will Bitcoin hedge against equity crashes?', stateOf(merged).threads, 'hedge')).toBeUndefined(); // merged threads are not open
    // A converged thread settled its question (a duplicate of it merges); one that ended UNRESOLVED did not (a second bite may take it up).
    const threads = stateOf(merged).threads.filter((x) => x.threadId === 'hedge');
    expect(duplicateOf('Is Bitcoin a hedge against equity crashes?', threads.map((x) => ({ ...x, stage: 'CONVERGED' as const })))).toMatchObject({ threadId: 'hedge' });
    expect(duplicateOf('Is Bitcoin a hedge against equity crashes?', threads.map((x) => ({ ...x, stage: 'UNRESOLVED' as const })))).toBeUndefined();
    // The hedge thread runs on; when it ends, the debate completes with the merged thread left out of the DCG.
    let rest = play(merged, move(SAYLOR, claim('x'), 'hedge'), move(HAYES, { kind: 'PROPOSE_QUESTION', text: 'Is Bitcoin a hedge against equity crashes?' }, 'hedge'));
    rest = play(rest, move(SAYLOR, { kind: 'ACCEPT_QUESTION', questionSeq: thread(rest, 'hedge').questions[0]!.seq, text: 'ok' }, 'hedge'));
    expect(thread(rest, 'hedge').stage).toBe('CRUX_LOCK');
  });
});

describe('attention scorer and agenda manager', () => {
  it('the agenda tracks at most 2 active disputes, hottest first; a YES/NO split and challenges heat a thread', () => {
    let h = play([], open({ participants: [SAYLOR, HAYES, LYN], threads: [{ threadId: 'a', topic: 'Reserve asset' }, { threadId: 'b', topic: 'Inflation hedge' }, { threadId: 'c', topic: 'Mining energy' }] }));
    expect(agendaOf(stateOf(h)).active).toEqual(['a']); // nothing said yet: the first open thread
    h = play(h, move(SAYLOR, claim('reserve'), 'a'), move(HAYES, claim('hedge'), 'b'), move(LYN, claim('hedge again'), 'b'), move(SAYLOR, claim('energy'), 'c'));
    expect(agendaOf(stateOf(h))).toEqual({ active: ['b', 'a'], heat: { a: 1, b: 2, c: 1 } });
  });

  it('a debater attends to threads whose words are its own, boosted when on the agenda, and sees those within half of its best', () => {
    const participants = [SAYLOR, HAYES];
    let h = play([], open({ participants, threads: [{ threadId: 'money', topic: 'Bitcoin as scarce money and a treasury reserve' }, { threadId: 'macro', topic: 'Liquidity cycles and Nasdaq correlation' }] }));
    const d = () => ({ ...stateOf(h), participants: [{ agentId: SAYLOR, persona: 'Bitcoin maximalist: scarce money, treasury reserve' }, { agentId: HAYES, persona: 'macro trader: liquidity, leverage, Nasdaq correlation' }] });
    const saylor = attentionOf(d(), SAYLOR);
    expect(saylor[0]!.score).toBeGreaterThan(saylor[1]!.score);
    expect(threadsSeenBy(d(), SAYLOR)[0]).toBe('money');
    expect(threadsSeenBy(d(), HAYES)[0]).toBe('macro');
    // Heat moves the agenda: the macro thread gets hot, and its boost shows in everyone's attention.
    h = play(h, move(HAYES, claim('Liquidity drives it.'), 'macro'), move(SAYLOR, claim('Liquidity is noise.'), 'macro'), move(HAYES, claim('Nasdaq correlation is high.'), 'macro'));
    expect(agendaOf(stateOf(h)).active).toEqual(['macro']);
    const after = attentionOf(d(), SAYLOR);
    expect(after.find((s) => s.threadId === 'macro')!.score).toBeGreaterThan(saylor.find((s) => s.threadId === 'macro')!.score);
  });
});

describe('binary framing (rewriting a confused question)', () => {
  it('keeps the first alternative of an either/or, puts a statement\'s verb first, and leaves an open question to the topic', () => {
    expect(binaryFrame('Is Bitcoin a hedge or a risk asset?')).toBe('Is Bitcoin a hedge?');
    expect(binaryFrame('Will BTC reach $100k or more by 2030?')).toBe('Will BTC reach $100k or more by 2030?');
    expect(binaryFrame('Bitcoin is digital gold')).toBe('Is Bitcoin digital gold?');
    expect(binaryFrame('Bitcoin protects wealth in crashes.')).toBe('Is it true that Bitcoin protects wealth in crashes?');
    expect(binaryFrame("What drives Bitcoin's price?")).toBeUndefined();
    expect(framedQuestionFor({ topic: "What drives Bitcoin's price?", questions: [] })).toEqual({ question: "Answer YES or NO: What drives Bitcoin's price?", from: 'the topic' });
  });

  it('a thread whose DISCOVERY budget runs out on a question another thread takes up merges into it', () => {
    const settings = { discovery: { min: 2, max: 3 } };
    let h = play([], open({ settings, threads: [{ threadId: 'gold', topic: 'Is Bitcoin digital gold?' }, { threadId: 'again', topic: 'Bitcoin is digital gold' }] }));
    h = play(h, move(SAYLOR, claim(), 'again'), move(HAYES, claim(), 'again'), move(SAYLOR, claim(), 'again'));
    expect(thread(h, 'again')).toMatchObject({ mergedInto: 'gold', stage: 'DISCOVERY' });
    expect(ofType(h, 'ThreadsMerged')[0]!.data.reason).toMatch(/the question the moderator framed, "Is Bitcoin digital gold\?", duplicates thread gold/);
  });
});
