import {
  AgoraError,
  ApproveChamberSession,
  CHAMBER_SESSION_CATEGORY,
  chamberCommands,
  chamberServiceQueries,
  GetChamberBudget,
  GetChamberSession,
  ListChamberSessions,
  PROPOSAL_CATEGORY,
  type ChamberCallRequested,
  type EscalationDecided,
  type ProposalEscalated,
  type DataOf,
  type PayloadOf,
} from '@agora/contracts';
import { budgetDecider, budgetStreamId, chamberStreamId, createChamberDecider, dayOf, isFinal, monthOf, pendingCalls, type ChamberCommand, type ChamberPolicy } from '@agora/domain-chamber';
import { type EventSourcingLogger, type Scheduler } from '@agora/eventsourcing';
import type { RecordedEvent } from '@agora/eventstore';
import { createServiceMicroservice, onAgentCommands, onCommand, onQuery, type ServiceMicroservice, type VerifiedCommand } from '@agora/messaging';
import { chamberPolicyFromEnv, ProviderLayer, providersConfigFromEnv, type ProvidersConfig } from '@agora/providers';
import { chamberSessionsTable, chamberSessionsWithPendingCalls, listChamberSessions, readChamberLedger, readChamberSession, readProposal } from '@agora/read-models';
import type { SqlProjectionRunner } from '@agora/read-store';
import { deciderHandler, issueInternalCommand, KeyedLock, recordSettings, runDeadlines, runReactor, startAll, startTogether, type InternalCommand, type Running, type ServiceContext } from '@agora/runtime';
import { Logger, type LoggerService, type LogLevel } from '@nestjs/common';
import { CallRunner } from './call-runner.js';
import { deadlockConsultation, deadlockConsultationId } from './tribunal-hook.js';

/** Every chamber command (the gate answers its service-only ones, call outcomes, expiry and the ledger, service_only) and its queries. */
export const chamberServiceCatalog = { commands: [...chamberCommands], queries: [...chamberServiceQueries] };

export interface ChamberServiceOptions {
  /** Nest's logger setting; `false` silences it and the read model's, reactor's and scheduler's warnings (tests). */
  logger?: LoggerService | LogLevel[] | false;
  /** Providers, base URLs, prices, timeouts. Default: from the environment. */
  providers?: ProvidersConfig;
  /** Where API keys are read at call time. Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** The chamber's rules. Default: from the environment, checked against the providers. */
  policy?: ChamberPolicy;
  /** Service clock. Default Date.now. */
  now?: () => number;
  /** A tribunal deadlock attaches a consultation awaiting approval. Default true (AGORA_CHAMBER_TRIBUNAL_DEADLOCKS). */
  consultOnDeadlock?: boolean;
}

export interface RunningChamber extends Running {
  service: ServiceMicroservice;
  sessions: SqlProjectionRunner;
  deadlines: Scheduler;
  runner: CallRunner;
  /** Calls left pending by a stopped holder and settled as interrupted when this replica last took the calls (at start when alone). */
  readonly interruptedAtStart: number;
}

const silent: EventSourcingLogger = { warn: () => undefined };
const APPROVAL_KEY = 'approval:';

type Request = DataOf<typeof ChamberCallRequested>;

/**
 * The chamber service (seed 003): the Deliberation Chamber's sessions, decided by the pure decider
 * of @agora/domain-chamber, and the process manager that makes the calls.
 * - Commands through the gate: propose (an agent or an operator), approve, reject, follow-up
 *   (operators), cancel (the proposer or an operator; `agora chamber cancel`). Approval first reserves the session's
 *   maximum cost in the month's ledger (refused there: nothing reserved, nothing called).
 * - A reactor (checkpoint "chamber") makes each call the log requests (concurrently), records its
 *   outcome, and settles the ledger once a session is over with no call pending.
 * - Replicas: only the one holding the reactor's lease (`reactor.chamber`) makes calls. On taking
 *   it (at start when alone), calls a stopped holder left without an outcome are settled as
 *   interrupted before the reactor runs, so none is made twice and a live replica's never is.
 * - The approval window is a durable deadline.
 * - A tribunal deadlock (ProposalEscalated, reason deadlock) attaches a consultation about the
 *   proposal, linked to it, awaiting an operator's approval like any other. Once an operator decides
 *   the escalation (EscalationDecided), a consultation still awaiting approval is cancelled as moot.
 */
export async function startChamberService(context: ServiceContext, options: ChamberServiceOptions = {}): Promise<RunningChamber> {
  const logger = options.logger === false ? silent : new Logger('agora:chamber');
  const logLine = options.logger === false ? undefined : (line: string) => (logger as Logger).log(line);
  const now = options.now ?? Date.now;
  const iso = () => new Date(now()).toISOString();
  const store = context.store;
  // Everything the chamber does on its own behalf (reservations, call outcomes, expiry, settlement) is signed with its service key.
  const identity = context.serviceIdentity('chamber');
  const providers = options.providers ?? providersConfigFromEnv(process.env);
  const policy = options.policy ?? chamberPolicyFromEnv(process.env, providers);
  const layer = new ProviderLayer(providers, options.env ?? process.env);
  // Recorded in the log (settings-chamber) before the first decision under it: the audit decides under it.
  const settings = await recordSettings(context, 'chamber', policy as unknown as Record<string, unknown>, now);
  const decider = createChamberDecider(policy);
  const locks = new KeyedLock();
  const decide = deciderHandler({ store, decider, streamOf: (p: { sessionId: string }) => chamberStreamId(p.sessionId), locks, now });
  const runner = new CallRunner({ store, layer, decider, locks, as: identity, now, logger: { warn: (m, ...d) => logger.warn(m, ...d), ...(logLine ? { log: logLine } : {}) } });

  // Approval: the reservation in the month's ledger comes first; the approval carries it.
  const reservations = new Map<string, { reserved: number; month: string }>();
  const decideApproval = deciderHandler({
    store,
    decider,
    streamOf: (p: { sessionId: string }) => chamberStreamId(p.sessionId),
    locks,
    now,
    toCommand: (verified, ctx) => ({ type: 'ApproveChamberSession', payload: { ...(verified.payload as PayloadOf<typeof ApproveChamberSession>), ...reservations.get(verified.envelope.commandId)! }, context: ctx }) as ChamberCommand,
  });
  const approve = async (verified: VerifiedCommand<PayloadOf<typeof ApproveChamberSession>>) => {
    const found = await readChamberSession(store, verified.payload.sessionId);
    if (!found) throw new AgoraError('not_found', `chamber session ${verified.payload.sessionId} does not exist`);
    const { state } = found;
    const at = iso();
    const reservation = state.approval ? { reserved: state.approval.reserved, month: state.approval.month } : { reserved: state.proposal!.maxCost, month: monthOf(at) };
    // The decider's own checks first (operator, state, window): a refusal reserves nothing.
    decider.decide({ type: 'ApproveChamberSession', payload: { ...verified.payload, ...reservation }, context: { now: at, actor: verified.actor.agentId, actorRoles: verified.actor.roles, commandId: verified.envelope.commandId } }, state);
    if (!state.approval) {
      const limits = { sessionsPerDay: policy.sessionsPerDay, monthlyBudget: policy.monthlyBudget, currency: policy.currency };
      const streamId = budgetStreamId(reservation.month);
      await locks.run(streamId, () =>
        issueInternalCommand(
          { streamId, decider: budgetDecider, type: 'ReserveChamberBudget', payload: { month: reservation.month, sessionId: verified.payload.sessionId, amount: reservation.reserved, day: dayOf(at), limits } },
          { store, as: identity, commandId: `reserve-${verified.envelope.commandId}`, now: at, causationId: verified.envelope.commandId },
        ),
      );
    }
    reservations.set(verified.envelope.commandId, reservation);
    try {
      return await decideApproval(verified);
    } finally {
      reservations.delete(verified.envelope.commandId);
    }
  };

  const settle = (month: string, sessionId: string, actual: number): InternalCommand => ({ streamId: budgetStreamId(month), decider: budgetDecider, type: 'SettleChamberBudget', payload: { month, sessionId, actual } });

  const consultOnDeadlock = options.consultOnDeadlock ?? true;
  async function react(event: RecordedEvent): Promise<InternalCommand[]> {
    if (event.type === 'ProposalEscalated') {
      const d = event.data as DataOf<typeof ProposalEscalated>;
      if (!consultOnDeadlock || d.reason !== 'deadlock') return [];
      const proposal = await readProposal(store, d.proposalId);
      if (!proposal) return [];
      const payload = deadlockConsultation(proposal, d.escalation, policy.maxContextChars);
      logLine?.(`tribunal deadlock on ${d.proposalId}: consultation ${payload.sessionId} proposed, awaiting an operator's approval`);
      return [{ streamId: chamberStreamId(payload.sessionId), decider, type: 'ProposeChamberSession', payload }];
    }
    if (event.type === 'EscalationDecided') {
      // The operator decided the escalation: a consultation it attached and nobody approved is moot, and leaves the inbox.
      const d = event.data as DataOf<typeof EscalationDecided>;
      const sessionId = deadlockConsultationId(d.proposalId, d.escalation);
      const found = await readChamberSession(store, sessionId);
      if (found?.state.status !== 'awaiting_approval') return [];
      const reason = `moot: ${d.operator} decided the escalation of proposal ${d.proposalId} (${d.decision}) without the panel`;
      return [{ streamId: chamberStreamId(sessionId), decider, type: 'CancelChamberSession', payload: { sessionId, reason } }];
    }
    const sessionId = (event.data as { sessionId?: unknown }).sessionId;
    if (typeof sessionId !== 'string') return [];
    const found = await readChamberSession(store, sessionId);
    if (!found) return [];
    const { state } = found;
    if (event.type === 'ChamberCallRequested') {
      const request = event.data as Request;
      const call = state.calls.find((c) => c.request.callId === request.callId);
      if (!call || call.status !== 'pending') return [];
      if (state.status === 'cancelled') await runner.skip(call.request, 'the session was cancelled before this call was made');
      else runner.launch(call.request, event.metadata);
      return [];
    }
    if (!isFinal(state) || pendingCalls(state).length > 0) return [];
    if (state.approval) return [settle(state.approval.month, sessionId, state.cost)];
    // Never approved: release a reservation an approval left behind if it stopped half-way.
    const months = [...new Set([monthOf(state.proposal!.proposedAt), monthOf(state.updatedAt ?? state.proposal!.proposedAt)])];
    return months.map((month) => settle(month, sessionId, 0));
  }

  let sessions: SqlProjectionRunner | undefined;
  let deadlines: Scheduler | undefined;
  let service: ServiceMicroservice | undefined;
  let interruptedAtStart = 0;
  // The read model and the deadlines catch up together, in one pass over the log; the service
  // answers once they are up. The reactor starts after the read model has caught up: taking the
  // calls, it first settles those a stopped holder left in flight, which it finds in the model.
  const running = await startAll([
    () =>
      startTogether([
        async () => {
          const part = await context.readSide.use(chamberSessionsTable, logger);
          sessions = part.runner;
          return part;
        },
        async () => {
          const part = await runDeadlines(context, {
            name: 'chamber',
            as: identity,
            categories: [CHAMBER_SESSION_CATEGORY],
            deadlineOf(event) {
              const d = event.data as { sessionId: string; approvalExpiresAt?: string };
              if (event.type === 'ChamberSessionProposed') return { key: `${APPROVAL_KEY}${d.sessionId}`, dueAt: d.approvalExpiresAt! };
              if (['ChamberSessionApproved', 'ChamberSessionRejected', 'ChamberApprovalExpired', 'ChamberSessionCancelled'].includes(event.type)) return { cancel: `${APPROVAL_KEY}${d.sessionId}` };
              return undefined;
            },
            expire(key, dueAt) {
              if (!key.startsWith(APPROVAL_KEY)) return undefined;
              const sessionId = key.slice(APPROVAL_KEY.length);
              return { streamId: chamberStreamId(sessionId), decider, type: 'ExpireChamberApproval', payload: { sessionId, deadlineAt: dueAt } };
            },
            logger,
          });
          deadlines = part.scheduler;
          return part;
        },
      ]),
    async () => ({ close: async () => runner.close() }),
    async () => {
      service = await createServiceMicroservice({
        service: 'chamber',
        ...context.transport,
        metadata: settings.metadata,
        directory: context.directory,
        maxClockSkewMs: context.config.maxClockSkewMs,
        description: 'Agora chamber: multi-model deliberation with a blind panel, one cross-examination, an arbiter that may say "no consensus", human approval and cost caps',
        catalog: chamberServiceCatalog,
        commands: new Map([...onAgentCommands(chamberCommands.filter((c) => c !== ApproveChamberSession), decide), onCommand(ApproveChamberSession, approve)]),
        queries: new Map([
          onQuery(GetChamberSession, async ({ sessionId }) => {
            const found = await readChamberSession(store, sessionId);
            if (!found) throw new AgoraError('not_found', `chamber session ${sessionId} does not exist`, { sessionId });
            return found.view;
          }),
          onQuery(ListChamberSessions, async (params) => {
            const { items, nextCursor } = await listChamberSessions(context.readSide.db, params);
            return { sessions: items, ...(nextCursor === undefined ? {} : { nextCursor }) };
          }),
          onQuery(GetChamberBudget, async ({ month }) => {
            const at = iso();
            const m = month ?? monthOf(at);
            const ledger = await readChamberLedger(store, m);
            const spent = ledger?.spent ?? 0;
            const reserved = ledger?.reserved ?? 0;
            const today = dayOf(at);
            return {
              month: m,
              currency: policy.currency,
              monthlyBudget: policy.monthlyBudget,
              sessionsPerDay: policy.sessionsPerDay,
              spent,
              reserved,
              remaining: Math.max(0, Math.round((policy.monthlyBudget - spent - reserved) * 1_000_000) / 1_000_000),
              sessionsToday: Object.values(ledger?.entries ?? {}).filter((e) => e.day === today).length,
              today,
            };
          }),
        ]),
        ...(options.logger === undefined ? {} : { logger: options.logger }),
      });
      const started = service;
      return { close: () => started.close() };
    },
    () =>
      runReactor(context, {
        name: 'chamber',
        as: identity,
        categories: [CHAMBER_SESSION_CATEGORY, PROPOSAL_CATEGORY],
        react,
        logger,
        now,
        // The calls belong to the replica holding the reactor's lease (alone: this one). Taking it,
        // a replica first settles the calls a stopped holder left in flight, so none is made twice;
        // losing it, it aborts its own, for the next holder to settle.
        holderWork: {
          async before() {
            interruptedAtStart = await runner.settleInterrupted(await chamberSessionsWithPendingCalls(context.readSide.db));
            // On stdout, as the leases' own lines: a takeover happens long after the start lines.
            if (interruptedAtStart > 0 && options.logger !== false) process.stdout.write(`${interruptedAtStart} interrupted call(s) settled on taking the chamber's calls\n`);
            runner.resume();
          },
          async after() {
            runner.pause();
          },
        },
      }),
  ]);
  const keys = providers.providers.map((p) => `${p.id} (${p.kind}${p.baseUrl ? ` at ${p.baseUrl}` : ''}; key ${layer.hasKey(p.id) ? 'set' : `missing: ${p.apiKeyEnv}`})`);
  return {
    service: service!,
    sessions: sessions!,
    deadlines: deadlines!,
    runner,
    get interruptedAtStart() {
      return interruptedAtStart;
    },
    lines: [
      `chamber service ${service!.id}: agora.cmd.chamber.session.*, ${chamberServiceQueries.map((q) => q.subject).join(', ')}`,
      `chamber panel ${policy.panel.join(', ')}; arbiter ${policy.arbiter}${policy.fallbackArbiter ? `, fallback ${policy.fallbackArbiter}` : ''}; recusal ${policy.recusal}; caps ${policy.sessionsPerDay} sessions/day, ${policy.monthlyBudget} ${policy.currency}/month, ${policy.sessionCeiling} ${policy.currency}/session`,
      `providers: ${keys.join(', ')}`,
      settings.line,
      ...(running.lines ?? []),
    ],
    close: () => running.close(),
  };
}
