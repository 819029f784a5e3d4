/** Queries of the Deliberation Chamber (seed 003): one session with its transcript, sessions, the month's budget, and the figures. */
import { z } from 'zod';
import { EntityId, Timestamp } from '../common.js';
import { NextCursor, pageParams } from '../paging.js';
import { ChamberOutcome, ChamberStatus, Month } from './chamber.js';
import { Currency, Money } from '../model-calls/model-calls.js';
import { access, defineQuery } from '../define.js';

export const ChamberSessionSummary = z
  .object({
    sessionId: EntityId,
    status: ChamberStatus,
    question: z.string(),
    proposedBy: z.string(),
    link: z.object({ kind: z.enum(['proposal']), id: EntityId }).strict().nullable().describe('What the consultation is for, e.g. a tribunal proposal in deadlock'),
    proposedAt: Timestamp,
    panel: z.array(z.string()),
    arbiter: z.string(),
    maxCost: Money,
    cost: Money.describe('Cost of the calls recorded so far'),
    currency: Currency,
    answered: z.array(z.number().int()).describe('Panelists with an answer in the current phase'),
    pendingCalls: z.number().int(),
    outcome: ChamberOutcome.nullable(),
    followUp: z.enum(['accepted', 'overridden']).nullable(),
    updatedAt: Timestamp,
  })
  .strict();
export type ChamberSessionSummary = z.infer<typeof ChamberSessionSummary>;

export const TranscriptEntry = z
  .object({ revision: z.number().int(), type: z.string(), recordedAt: Timestamp, actor: z.string().nullable(), data: z.unknown() })
  .strict()
  .describe("One event of the session's stream, verbatim (prompts, responses, errors, decisions)");

export const ChamberSessionView = z.object({ summary: ChamberSessionSummary, transcript: z.array(TranscriptEntry) }).strict();
export type ChamberSessionView = z.infer<typeof ChamberSessionView>;

export const GetChamberSession = defineQuery({
  name: 'sessions.get',
  service: 'chamber',
  httpPath: 'sessions/:sessionId',
  visibility: { agent: access.party('summary.proposedBy'), observer: access.none },
  summary: 'One chamber session: where it stands, and its whole transcript in log order (every prompt and response verbatim, usage, cost, errors, divergence, position changes, outcome, follow-up)',
  params: z.object({ sessionId: EntityId }).strict(),
  result: ChamberSessionView,
});

export const ListChamberSessions = defineQuery({
  name: 'sessions.list',
  service: 'chamber',
  httpPath: 'sessions',
  visibility: { agent: access.none, observer: access.none },
  summary: 'Chamber sessions, most recently updated first (then by id), optionally by status; paged',
  params: z.object({ status: ChamberStatus.optional(), ...pageParams }).strict(),
  result: z.object({ sessions: z.array(ChamberSessionSummary), nextCursor: NextCursor }),
});

export const ChamberBudgetView = z
  .object({
    month: Month,
    currency: Currency,
    monthlyBudget: Money,
    sessionsPerDay: z.number().int(),
    spent: Money.describe('Actual cost of the settled sessions'),
    reserved: Money.describe('Reservations of the sessions not yet settled'),
    remaining: Money,
    sessionsToday: z.number().int(),
    today: z.string(),
  })
  .strict();

export const GetChamberBudget = defineQuery({
  name: 'budget',
  service: 'chamber',
  httpPath: 'budget',
  visibility: { agent: access.all, observer: access.all },
  summary: "The month's spend against the budget and today's sessions against the daily cap, read off the ledger",
  params: z.object({ month: Month.optional().describe('Default: the current month (UTC)') }).strict(),
  result: ChamberBudgetView,
});

const Share = z.number().min(0).max(1).nullable();

export const ChamberStats = z
  .object({
    windowDays: z.number().int(),
    sessionsByStatus: z.record(z.string(), z.number().int()).describe('Every session by current status (all time)'),
    concluded: z.number().int().describe('Sessions proposed in the window that concluded (consensus, no_consensus, failed)'),
    noConsensusRate: Share,
    divergenceRate: Share.describe('Blind phases that diverged'),
    crossExamRate: Share.describe('Blind phases followed by a cross-examination'),
    ownProviderWinShare: Share.describe("Consensus syntheses resting on the arbiter's own provider's answer; null under minSample"),
    ownProviderSample: z.number().int(),
    minSample: z.number().int(),
    lift: Share.describe('Consensus outcomes whose position differs from the blind majority'),
    liftSample: z.number().int(),
    conformityChanges: z.number().int().describe('Positions abandoned toward the blind majority in cross-examination'),
    conformityAbandonedChosen: z.number().int().describe('Of those, abandoned positions the arbiter or the human later chose'),
    costTotal: Money,
  })
  .strict();

export const GetChamberStats = defineQuery({
  name: 'stats',
  service: 'chamber',
  servedBy: 'projections',
  httpPath: 'stats',
  visibility: { agent: access.all, observer: access.all },
  summary: "The chamber's figures over the window: outcomes, no-consensus, divergence and cross-examination rates, the arbiter's own-provider win share, lift and conformity (the same figures as its metrics)",
  params: z.object({ windowDays: z.coerce.number().int().min(1).max(365).optional().describe('Default 30') }).strict(),
  result: ChamberStats,
});

