/**
 * The debate's state folded from its events (the DebateView contract: a read model can be this
 * state). Every event returns a new state; the thread it touches is copied, the others shared.
 */
import type { DEBATE_CATEGORY, debateContracts, DebateView, ThreadView } from '@agora/contracts';
import type { EventsOf } from '@agora/decider';

/** The debate's events, from its contracts. */
export type DebateEvent = EventsOf<Extract<(typeof debateContracts.events)[number], { category: typeof DEBATE_CATEGORY }>>;

export type Debate = Omit<DebateView, 'streamRevision'>;
export type DebateState = { status: 'unopened' } | Debate;

export const initialDebateState = (): DebateState => ({ status: 'unopened' });

export function newThread(threadId: string, topic: string, parentThreadId: string | null = null): ThreadView {
  return {
    threadId,
    topic,
    parentThreadId,
    mergedInto: null,
    spawnProposals: [],
    stage: 'DISCOVERY',
    unresolvedReason: null,
    stageMessages: 0,
    sinceLockAttempt: 0,
    questions: [],
    question: null,
    forcedBinary: false,
    commitments: [],
    steelmans: [],
    falsifiers: [],
    proposedFalsifiers: [],
    lockAttempts: [],
    interventions: [],
    evidence: [],
    concessions: [],
    concluded: [],
    crux: null,
  };
}

function onThread(s: Debate, threadId: string, at: string, change: (t: ThreadView) => Partial<ThreadView>): Debate {
  return { ...s, updatedAt: at, threads: s.threads.map((t) => (t.threadId === threadId ? { ...t, ...change(t) } : t)) };
}

export function evolveDebate(state: DebateState, event: DebateEvent): DebateState {
  if (event.type === 'DebateOpened') {
    const d = event.data;
    return {
      status: 'open',
      debateId: d.debateId,
      topic: d.topic,
      openedBy: d.openedBy,
      participants: d.participants,
      settings: d.settings,
      threads: d.threads.map((t) => newThread(t.threadId, t.topic)),
      messages: [],
      openedAt: d.openedAt,
      updatedAt: d.openedAt,
      completedAt: null,
      outcome: null,
      primaryThreadId: null,
      dcg: [],
      usage: { calls: 0, costUsd: 0, inputTokens: 0, outputTokens: 0, latencyMs: 0 },
    };
  }
  if (state.status === 'unopened') return state;
  const s = state;
  switch (event.type) {
    case 'DebateMessagePosted': {
      const d = event.data;
      const u = d.usage;
      const next: Debate = {
        ...s,
        updatedAt: d.at,
        messages: [...s.messages, { seq: d.seq, threadId: d.threadId, stage: d.stage, agentId: d.agentId, kind: d.kind, text: d.text, target: d.target, at: d.at }],
        usage: u
          ? {
              calls: s.usage.calls + 1,
              costUsd: s.usage.costUsd + u.costUsd,
              inputTokens: s.usage.inputTokens + u.inputTokens,
              outputTokens: s.usage.outputTokens + u.outputTokens,
              latencyMs: s.usage.latencyMs + u.latencyMs,
            }
          : s.usage,
      };
      // Moderator messages and thread moves (spawning) do not count against the debaters' budgets.
      if (d.kind === 'MODERATOR' || d.kind === 'PROPOSE_THREAD' || d.kind === 'SECOND_THREAD') return next;
      return onThread(next, d.threadId, d.at, (t) => ({ stageMessages: t.stageMessages + 1, sinceLockAttempt: t.stage === 'CRUX_LOCK' ? t.sinceLockAttempt + 1 : t.sinceLockAttempt }));
    }
    case 'BinaryQuestionProposed': {
      const d = event.data;
      return onThread(s, d.threadId, d.at, (t) => ({ questions: [...t.questions, { seq: d.seq, text: d.question, proposedBy: d.agentId, acceptedBy: [d.agentId], accepted: false }] }));
    }
    case 'BinaryQuestionAccepted': {
      const d = event.data;
      return onThread(s, d.threadId, d.at, (t) => {
        const questions = t.questions.map((q) => (q.seq === d.questionSeq ? { ...q, acceptedBy: [...q.acceptedBy, d.agentId], accepted: d.accepted } : q));
        const accepted = questions.find((q) => q.seq === d.questionSeq);
        return { questions, question: d.accepted && accepted ? accepted.text : t.question };
      });
    }
    case 'CommitmentMade': {
      const d = event.data;
      const commitment = { agentId: d.agentId, side: d.side, confidence: d.confidence, topClaim: d.topClaim, seq: d.seq };
      return onThread(s, d.threadId, d.at, (t) => ({
        commitments: t.commitments.some((c) => c.agentId === d.agentId) ? t.commitments.map((c) => (c.agentId === d.agentId ? commitment : c)) : [...t.commitments, commitment],
      }));
    }
    case 'SteelmanAttempted': {
      const d = event.data;
      return onThread(s, d.threadId, d.at, (t) => ({ steelmans: [...t.steelmans, { seq: d.seq, author: d.author, target: d.target, text: d.text, firstAttempt: d.firstAttempt, grade: null, reason: null }] }));
    }
    case 'SteelmanGraded': {
      const d = event.data;
      return onThread(s, d.threadId, d.at, (t) => ({ steelmans: t.steelmans.map((m) => (m.seq === d.steelmanSeq ? { ...m, grade: d.grade, reason: d.reason } : m)) }));
    }
    case 'FalsifierDeclared': {
      const d = event.data;
      const f = { falsifierId: d.falsifierId, agentId: d.agentId, metric: d.metric, threshold: d.threshold, deadline: d.deadline, reasoning: d.reasoning, seq: d.seq, source: d.source };
      return onThread(s, d.threadId, d.at, (t) => ({
        falsifiers: [...t.falsifiers, f],
        // Any falsifier of the agent settles its pending proposals: the one accepted, the others replaced.
        proposedFalsifiers: t.proposedFalsifiers.map((p) =>
          p.forAgent === d.agentId && p.status === 'pending' ? { ...p, status: d.source === 'moderator_proposal' && d.replaces === p.proposalId ? ('accepted' as const) : ('replaced' as const) } : p,
        ),
      }));
    }
    case 'EvidenceProvided': {
      const d = event.data;
      const text = s.messages.find((m) => m.seq === d.seq)?.text ?? '';
      return onThread(s, d.threadId, d.at, (t) => ({ evidence: [...t.evidence, { seq: d.seq, agentId: d.agentId, falsifierId: d.falsifierId, text, source: d.source, bearing: d.bearing }] }));
    }
    case 'ConcessionMade': {
      const d = event.data;
      return onThread(s, d.threadId, d.at, (t) => ({
        concessions: [...t.concessions, { seq: d.seq, agentId: d.agentId, point: d.point, topClaimChanged: d.topClaimChanged }],
        commitments: d.topClaim === null ? t.commitments : t.commitments.map((c) => (c.agentId === d.agentId ? { ...c, topClaim: d.topClaim! } : c)),
      }));
    }
    case 'DebaterConcluded': {
      const d = event.data;
      return onThread(s, d.threadId, d.at, (t) => ({ concluded: [...t.concluded, d.agentId] }));
    }
    case 'DebateStageAdvanced': {
      const d = event.data;
      return onThread(s, d.threadId, d.at, () => ({ stage: d.to, stageMessages: 0, sinceLockAttempt: 0, unresolvedReason: d.unresolvedReason, ...(d.question !== undefined ? { question: d.question } : {}) }));
    }
    case 'CruxLockAttempted': {
      const d = event.data;
      return onThread(s, d.threadId, d.at, (t) => ({ sinceLockAttempt: 0, lockAttempts: [...t.lockAttempts, { attempt: d.attempt, at: d.at, passed: d.passed, failed: d.failed, missing: d.missing }] }));
    }
    case 'ModeratorIntervened': {
      const d = event.data;
      return onThread(s, d.threadId, d.at, (t) => ({
        interventions: [...t.interventions, { kind: d.kind, ref: d.ref, text: d.text, at: d.at, seq: d.seq }],
        ...(d.kind === 'forced_binary' ? { forcedBinary: true } : {}),
        ...(d.proposals.length > 0 ? { proposedFalsifiers: [...t.proposedFalsifiers, ...d.proposals] } : {}),
      }));
    }
    case 'ThreadSpawnProposed': {
      const d = event.data;
      return onThread(s, d.threadId, d.at, (t) => ({ spawnProposals: [...t.spawnProposals, { seq: d.seq, topic: d.topic, proposedBy: d.agentId, secondedBy: null, spawnedThreadId: null }] }));
    }
    case 'ThreadSpawned': {
      const d = event.data;
      const seconded = onThread(s, d.threadId, d.at, (t) => ({ spawnProposals: t.spawnProposals.map((p) => (p.seq === d.proposalSeq ? { ...p, secondedBy: d.secondedBy, spawnedThreadId: d.newThreadId } : p)) }));
      return { ...seconded, threads: [...seconded.threads, newThread(d.newThreadId, d.topic, d.threadId)] };
    }
    case 'ThreadsMerged': {
      const d = event.data;
      return onThread(s, d.threadId, d.at, () => ({ mergedInto: d.into }));
    }
    case 'ThreadCrystallized': {
      const d = event.data;
      return onThread(s, d.threadId, d.at, () => ({ crux: d.crux }));
    }
    case 'DebateCompleted': {
      const d = event.data;
      return { ...s, status: 'complete', updatedAt: d.at, completedAt: d.at, outcome: d.outcome, dcg: d.dcg, primaryThreadId: d.primaryThreadId };
    }
    case 'ChallengeIssued':
    case 'CruxLocked':
    case 'CruxLockFailed':
      return { ...s, updatedAt: event.data.at };
    default:
      return s;
  }
}
