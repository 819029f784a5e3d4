/**
 * Shared givens for the debate specs: the seed's two personas, command builders, and `play`, which
 * runs commands through the decider (checking every event against its zod contract).
 */
import { DEBATE_CATEGORY, type DebateMove, type DebateSettings, type ModeratorMove } from '@agora/contracts';
import { DeciderSpecification, scenarioOf, type CommandContext } from '@agora/decider';
import { debateDecider, type DebateCommand } from '../src/debate.js';
import type { Debate, DebateEvent } from '../src/evolve.js';
import { EXAMPLE_PARTICIPANTS, EXAMPLE_TOPIC, exampleScript, moveOf } from '../src/example.js';

export const T0 = '2026-11-25T10:00:00.000Z';
export const at = (seconds: number): string => new Date(Date.parse(T0) + seconds * 1000).toISOString();
export const DEBATE = 'btc-gold';
export const SAYLOR = 'saylor';
export const HAYES = 'hayes';

export const spec = DeciderSpecification.for(debateDecider);
const scenario = scenarioOf(debateDecider, DEBATE_CATEGORY);

let counter = 0;
export function ctx(actor: string, now = T0, actorRoles: readonly string[] = actor === 'service:debate' ? ['service'] : ['debater']): CommandContext {
  return { actor, now, actorRoles, commandId: `c${++counter}` };
}

export function open(options: { participants?: string[]; settings?: Partial<DebateSettings>; threads?: { threadId: string; topic: string }[] } = {}): DebateCommand {
  const participants = options.participants ? options.participants.map((agentId) => ({ agentId, persona: `${agentId} persona` })) : EXAMPLE_PARTICIPANTS;
  return {
    type: 'OpenDebate',
    context: ctx(SAYLOR),
    payload: { debateId: DEBATE, topic: EXAMPLE_TOPIC, participants, ...(options.threads ? { threads: options.threads } : {}), ...(options.settings ? { settings: options.settings } : {}) },
  };
}

/** The seed's CRUX_LOCK budget for two agents, set explicitly (a debate's own follows from its participants): the lock specs count attempts on it. */
export const SEED_LOCK: Partial<DebateSettings> = { cruxLock: { min: 6, max: 8 } };

let clock = 0;
export function move(agentId: string, m: DebateMove, threadId = 'main'): DebateCommand {
  return { type: 'PostDebateMove', context: ctx(agentId, at(++clock)), payload: { debateId: DEBATE, threadId, move: m } };
}

export function moderate(intervention: ModeratorMove, threadId = 'main'): DebateCommand {
  return { type: 'ModerateDebate', context: ctx('service:debate', at(++clock)), payload: { debateId: DEBATE, threadId, intervention } };
}

export const play = (history: readonly DebateEvent[], ...commands: DebateCommand[]): DebateEvent[] => scenario.play(history, ...commands);
export const stateOf = (history: readonly DebateEvent[]): Debate => scenario.stateOf(history) as Debate;
export const thread = (history: readonly DebateEvent[], threadId = 'main') => stateOf(history).threads.find((t) => t.threadId === threadId)!;
export const typesOf = (events: readonly DebateEvent[]): string[] => events.map((e) => e.type);
export const ofType = <T extends DebateEvent['type']>(events: readonly DebateEvent[], type: T) => events.filter((e): e is Extract<DebateEvent, { type: T }> => e.type === type);

/** Refuses with a DomainError: its code and details. */
export function refusal(history: readonly DebateEvent[], command: DebateCommand): { code: string; message: string; details: Record<string, unknown> } {
  try {
    debateDecider.decide(command, stateOf(history));
  } catch (error) {
    const e = error as { code: string; message: string; details?: Record<string, unknown> };
    return { code: e.code, message: e.message, details: e.details ?? {} };
  }
  throw new Error(`${command.type} was not refused`);
}

/** Plays the seed's scripted debate from its start, the first `steps` moves (all by default). */
export function playExample(steps?: number, history: DebateEvent[] = play([], open())): DebateEvent[] {
  let h = history;
  for (const step of exampleScript().slice(0, steps)) h = play(h, move(step.agentId, moveOf(step, stateOf(h))));
  return h;
}

export const claim = (text = 'A claim about Bitcoin.'): DebateMove => ({ kind: 'CLAIM', text });
export const topClaim = (side: 'YES' | 'NO' | 'NUANCED', flips = true) => ({ statement: `Bitcoin ${side === 'YES' ? 'is' : 'is not'} digital gold`, side, confidence: 0.8, flipsIfCruxFlips: flips });
export const commit = (side: 'YES' | 'NO' | 'UNCERTAIN', flips = true): DebateMove => ({ kind: 'COMMIT', side, confidence: 0.8, topClaim: topClaim(side === 'UNCERTAIN' ? 'NUANCED' : side, flips), text: `I say ${side}.` });
export const falsifier = (over: Partial<Extract<DebateMove, { kind: 'DECLARE_FALSIFIER' }>> = {}): DebateMove => ({
  kind: 'DECLARE_FALSIFIER',
  metric: 'Spot BTC ETF AUM',
  threshold: '>= $100B',
  deadline: '2027-12-31',
  text: 'Institutional demand at that scale is what a store of value looks like.',
  ...over,
});

/** DISCOVERY passed with the default budgets: 4 claims, a question proposed by saylor and accepted by hayes. */
export function toCruxLock(history = play([], open())): DebateEvent[] {
  let h = play(history, move(SAYLOR, claim()), move(HAYES, claim()), move(SAYLOR, claim()), move(HAYES, claim()));
  h = play(h, move(SAYLOR, { kind: 'PROPOSE_QUESTION', text: 'Will Bitcoin hold its value in the next equity crash?' }));
  const q = thread(h).questions.at(-1)!.seq;
  return play(h, move(HAYES, { kind: 'ACCEPT_QUESTION', questionSeq: q, text: 'Accepted.' }));
}

/** The nth steelman of `author` in the thread. */
export const steelmanSeq = (h: readonly DebateEvent[], author: string, nth = 1): number => thread(h).steelmans.filter((s) => s.author === author)[nth - 1]!.seq;
