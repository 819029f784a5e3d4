/**
 * The seed's test debate, scripted: "Bitcoin is digital gold", Saylor against Hayes. Played by the
 * unit tests, the end-to-end test and `npm run demo:debate`. With the default budgets it goes
 * DISCOVERY (6 messages, a binary question accepted) -> CRUX_LOCK (a steelman graded INCOMPLETE and
 * retried; lock 1, at 8 messages, fails: no falsifiers; lock 2 succeeds) -> EVIDENCE (12
 * messages, a cheap concession, both conclude) -> CONVERGED with a validated ThreadCrux.
 */
import type { DebateMove, DebateView, Participant } from '@agora/contracts';

export const EXAMPLE_TOPIC = 'Bitcoin is digital gold';

export const EXAMPLE_PARTICIPANTS: Participant[] = [
  { agentId: 'saylor', persona: 'Michael Saylor: Bitcoin maximalist, treats BTC as the hardest money ever made and a corporate treasury reserve' },
  { agentId: 'hayes', persona: 'Arthur Hayes: macro trader, sees BTC as a liquidity-driven risk asset that trades with the Nasdaq' },
];

type ThreadState = Pick<DebateView, 'threads'>;

export interface ScriptedMove {
  agentId: string;
  /** The move, or how to make it from the debate as it stands (moves that name an earlier message or a falsifier). */
  move: DebateMove | ((debate: ThreadState) => DebateMove);
}

const main = (d: ThreadState) => d.threads.find((t) => t.threadId === 'main') ?? d.threads[0]!;
/** References into the debate as it stands: the latest proposed question, the nth steelman of an author, an agent's falsifier. */
const refs = {
  questionSeq: (d: ThreadState) => main(d).questions.at(-1)?.seq ?? 0,
  steelmanSeq: (d: ThreadState, author: string, nth: number) => main(d).steelmans.filter((s) => s.author === author)[nth - 1]?.seq ?? 0,
  falsifierId: (d: ThreadState, agentId: string) => main(d).falsifiers.find((f) => f.agentId === agentId)?.falsifierId ?? 'none',
};

/** The move a scripted step makes against the debate as it stands. */
export const moveOf = (step: ScriptedMove, debate: ThreadState): DebateMove => (typeof step.move === 'function' ? step.move(debate) : step.move);

const saylorClaim = { statement: 'Bitcoin is digital gold: the long-term store of value', side: 'YES', confidence: 0.9, flipsIfCruxFlips: true } as const;
const hayesClaim = { statement: 'Bitcoin is a risk asset, not digital gold', side: 'NO', confidence: 0.8, flipsIfCruxFlips: true } as const;

/** The moves in order (in a live debate the moderator's messages come in between, so moves that refer to earlier messages read the debate). */
export function exampleScript(): ScriptedMove[] {
  return [
    // DISCOVERY
    { agentId: 'saylor', move: { kind: 'CLAIM', text: 'Bitcoin is digital gold: a scarce, neutral asset with a fixed supply of 21 million coins that no government can debase.' } },
    { agentId: 'hayes', move: { kind: 'CLAIM', text: 'Bitcoin trades like a leveraged technology stock; it falls hardest exactly when investors need a hedge.' } },
    { agentId: 'saylor', move: { kind: 'QUESTION', text: 'If scarcity drives long-run value, why should a decade-long holder care about short-run correlation with equities?' } },
    { agentId: 'hayes', move: { kind: 'CLAIM', text: 'Because a store of value has to hold up in drawdowns: in 2022 BTC lost 65% while gold was flat.' } },
    { agentId: 'saylor', move: { kind: 'PROPOSE_QUESTION', text: 'Will Bitcoin hold its value when equities crash, behaving like a hedge rather than a risk asset?' } },
    { agentId: 'hayes', move: (d) => ({ kind: 'ACCEPT_QUESTION', questionSeq: refs.questionSeq(d), text: 'Agreed: that is the question our positions turn on.' }) },
    // CRUX_LOCK
    { agentId: 'saylor', move: { kind: 'COMMIT', side: 'YES', confidence: 0.85, topClaim: saylorClaim, text: 'YES: over full cycles Bitcoin protects purchasing power through equity crashes.' } },
    { agentId: 'hayes', move: { kind: 'COMMIT', side: 'NO', confidence: 0.75, topClaim: hayesClaim, text: 'NO: in every liquidity crunch so far Bitcoin sold off with equities.' } },
    { agentId: 'saylor', move: { kind: 'STEELMAN', target: 'hayes', text: 'Hayes holds that Bitcoin is priced by global liquidity, so it drops with equities in a crash.' } },
    { agentId: 'hayes', move: (d) => ({ kind: 'GRADE_STEELMAN', steelmanSeq: refs.steelmanSeq(d, 'saylor', 1), grade: 'INCOMPLETE', text: 'It misses the leverage: forced liquidations of leveraged longs make Bitcoin fall harder than equities.' }) },
    { agentId: 'hayes', move: { kind: 'STEELMAN', target: 'saylor', text: 'Saylor holds that absolute scarcity makes Bitcoin the best long-run store of value, whatever it does in a single crash.' } },
    { agentId: 'saylor', move: (d) => ({ kind: 'GRADE_STEELMAN', steelmanSeq: refs.steelmanSeq(d, 'hayes', 1), grade: 'ACCURATE', text: 'That is my position, including the time horizon.' }) },
    { agentId: 'saylor', move: { kind: 'STEELMAN', target: 'hayes', text: 'Hayes holds that Bitcoin is priced by global liquidity and amplified by leverage: forced liquidations make it fall harder than equities in a crash.' } },
    { agentId: 'hayes', move: (d) => ({ kind: 'GRADE_STEELMAN', steelmanSeq: refs.steelmanSeq(d, 'saylor', 2), grade: 'ACCURATE', text: 'Yes, with the leverage that is my view.' }) },
    {
      agentId: 'saylor',
      move: {
        kind: 'DECLARE_FALSIFIER',
        metric: "Bitcoin's peak-to-trough drawdown during the next S&P 500 fall of 30% or worse",
        threshold: '> 50 %',
        deadline: '2030-12-31',
        text: 'If Bitcoin loses over half its value while equities fall 30%, it did not behave like a hedge.',
      },
    },
    {
      agentId: 'hayes',
      move: {
        kind: 'DECLARE_FALSIFIER',
        metric: '90-day correlation of Bitcoin daily returns with the Nasdaq 100',
        threshold: '< 0.2 correlation',
        deadline: '2028-12-31',
        text: 'If Bitcoin decouples from tech stocks for a full quarter, it is not just a risk asset.',
      },
    },
    // EVIDENCE
    { agentId: 'hayes', move: (d) => ({ kind: 'PROVIDE_EVIDENCE', falsifierId: refs.falsifierId(d, 'saylor'), bearing: 'undermines', source: 'CoinMetrics, March 2020', text: 'In March 2020 Bitcoin fell about 50% in two days while the S&P 500 fell 34% peak to trough.' }) },
    { agentId: 'saylor', move: (d) => ({ kind: 'PROVIDE_EVIDENCE', falsifierId: refs.falsifierId(d, 'hayes'), bearing: 'undermines', source: 'ETF flow data, 2024', text: 'Since the spot ETFs launched, the 90-day correlation with the Nasdaq fell to 0.15 in several quarters.' }) },
    { agentId: 'hayes', move: { kind: 'CHALLENGE', target: 'saylor', text: 'Scarcity did not stop a 77% drawdown in 2022; a hedge that halves in a crash is not a hedge.' } },
    { agentId: 'saylor', move: { kind: 'CHALLENGE', target: 'hayes', text: 'Liquidity explains the short run, but every four-year holding period has beaten gold and equities.' } },
    { agentId: 'hayes', move: { kind: 'CLAIM', text: 'Holding-period returns measure growth, not protection: the question is what happens during the crash.' } },
    { agentId: 'saylor', move: { kind: 'CONCEDE', text: 'The 2020 crash was severe for Bitcoin holders.' } },
    { agentId: 'hayes', move: { kind: 'QUESTION', text: 'Would a 60% drawdown in the next recession change your treasury strategy?' } },
    { agentId: 'saylor', move: (d) => ({ kind: 'PROVIDE_EVIDENCE', falsifierId: refs.falsifierId(d, 'saylor'), bearing: 'supports', source: 'Public filings', text: 'Institutional holders added coins through the 2022 drawdown; forced sellers were leveraged miners and lenders.' }) },
    { agentId: 'hayes', move: (d) => ({ kind: 'PROVIDE_EVIDENCE', falsifierId: refs.falsifierId(d, 'hayes'), bearing: 'supports', source: 'Exchange data, 2022', text: 'In 2022 the 90-day correlation with the Nasdaq stayed above 0.6 for most of the year.' }) },
    { agentId: 'saylor', move: { kind: 'CLAIM', text: 'The falsifiers are set: a 30% equity crash before 2031 will show which of us is right.' } },
    { agentId: 'hayes', move: { kind: 'CONCLUDE', text: 'I rest: Bitcoin is a risk asset until it decouples from the Nasdaq.' } },
    { agentId: 'saylor', move: { kind: 'CONCLUDE', text: 'I rest: Bitcoin is digital gold, and the next crash will test it.' } },
  ];
}
