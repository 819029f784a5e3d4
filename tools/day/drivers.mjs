// What the agents of `npm run day` start, and the ledger of it: executives proposing (their
// proposals reviewed by the reviewers, revised when blocked) and asking for votes, the paused agent
// reporting a risk above its breaker (a recovery with the reviewer drawn), debaters opening debates,
// an executive putting questions to the chamber (approved by the operator), and the operator's
// steady stream of UpdateAgent commands over NATS; and the other ways in (ways.mjs: MCP, A2A, the
// governed tool-call proxy). Every command is sent again with the same commandId until acknowledged
// (load-lib's untilAcknowledged; a tool call through MCP names none, so Agora gives it one each
// time); the ledger keeps each command (its id, the way it came in, when it was sent, acknowledged,
// refused and with what code) and each decision (protocol, way in, when asked, when decided).
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { EXAMPLE_TOPIC } from '@agora/domain-debate';
import { waitOnLog } from '@agora/sdk';
import { CHAMBER_CONTEXT, CHAMBER_QUESTION } from '@agora/demo/dist/chamber.js';
import { untilAcknowledged } from '../cluster/load-lib.mjs';

const ATTEMPT_MS = 5000;
const GIVE_UP_MS = 180_000;

/** The run's record of commands and decisions. */
export function ledger() {
  const commands = [];
  const decisions = [];
  const refusals = [];
  return {
    commands,
    decisions,
    refusals,
    /**
     * Sends `type` through `client` until acknowledged, the same commandId every attempt; resolves
     * to the acknowledged result, or undefined (recorded as unacknowledged or refused).
     */
    async send(client, who, type, payload, via = 'sdk') {
      const commandId = randomUUID();
      const entry = { commandId, type, who, via, sentAt: Date.now(), ackedAt: undefined, firstRefusalAt: undefined, refusedFor: 0, code: undefined, events: 0, duplicate: false };
      commands.push(entry);
      const result = await untilAcknowledged(() => client.trySend(type, payload, { commandId, timeoutMs: ATTEMPT_MS }), {
        giveUpMs: GIVE_UP_MS,
        onRefusal: (code) => {
          const at = Date.now();
          entry.firstRefusalAt ??= at;
          refusals.push({ at, code, type });
        },
      });
      if (entry.firstRefusalAt !== undefined) entry.refusedFor = (result.ackedAt ?? Date.now()) - entry.firstRefusalAt;
      if (!result.ok) {
        entry.code = result.refused?.code ?? `unacknowledged (${result.last})`;
        return undefined;
      }
      entry.ackedAt = result.ackedAt;
      // Agora's own id for it (a tool call through MCP carries none of the caller's); its events, where the way in names them.
      entry.commandId = result.reply.result.commandId;
      entry.position = result.reply.result.position;
      entry.events = result.reply.result.events?.length;
      entry.duplicate = result.reply.result.duplicate;
      return result.reply.result;
    },
    decided(protocol, askedAt, outcome, via = 'sdk') {
      decisions.push({ protocol, via, askedAt, decidedAt: Date.now(), outcome });
    },
  };
}

/** Waits `ms` unless the run stops first; resolves to whether it is still running. */
async function pause(ms, running) {
  const until = Date.now() + ms;
  while (running() && Date.now() < until) await sleep(Math.min(1000, until - Date.now()));
  return running();
}

/** A wait for a decision that may not come (a model that failed leaves a round to its deadline): undefined after the wait. */
async function decision(work) {
  try {
    return await work;
  } catch {
    return undefined;
  }
}

/** An executive: a proposal (one in two names no rollback, which the risk reviewer objects to), then a vote on a high-risk action, in turn. */
async function executive(ctx, id, n) {
  const client = ctx.clients.get(id);
  for (let i = 0; await pause(ctx.think(), ctx.running); i++) {
    const tag = `${id}-${n}-${i}-${Date.now().toString(36)}`;
    const askedAt = Date.now();
    if (i % 2 === 0) {
      const body = i % 4 === 0 ? 'Switch all billing traffic to the new provider on Monday at 09:00, in one step.' : 'Move 10% of billing traffic to the new provider behind a flag; rollback by turning the flag off.';
      const sent = await ctx.ledger.send(client, id, 'SubmitProposal', { proposalId: tag, title: `Billing change ${tag}`, problem: 'The current provider fails 2% of card payments.', body, evidence: [{ ref: 'd/7c1e2a90', summary: 'Last quarter the provider failed 2.1% of card payments' }] });
      if (!sent) continue;
      const verdict = await decision(client.waitForVerdict(tag, { after: sent.position, final: true, timeoutMs: 600_000 }));
      ctx.ledger.decided('tribunal', askedAt, verdict?.status ?? 'none');
    } else {
      const sent = await ctx.ledger.send(client, id, 'CreateVotingSession', { requestId: tag, actionType: 'deploy_production', riskLevel: 'high', summary: 'Roll out billing 4.2 behind a feature flag, 10% of traffic first, rollback by flag.' });
      if (!sent) continue;
      const session = await decision(client.query('GetVotingSessionByRequest', { requestId: tag }, { minPosition: sent.position }));
      const decided = session && (await decision(client.waitForDecision(session.sessionId, { after: sent.position, timeoutMs: 600_000 })));
      ctx.ledger.decided('voting', askedAt, decided?.recommendation?.decision ?? 'none');
    }
  }
}

/** The paused agent: reports a risk above its breaker threshold, goes through the recovery its report opens, and again once resolved. */
async function patient(ctx, id) {
  const client = ctx.clients.get(id);
  while (await pause(ctx.think() * 2, ctx.running)) {
    const askedAt = Date.now();
    const sent = await ctx.ledger.send(client, id, 'ReportHealth', { agentId: id, health: 0.35, risk: 0.65, tags: ['cascade'], metrics: { risk_score: 0.65 } });
    if (!sent) continue;
    let recovery;
    try {
      for await (const event of client.events({ categories: ['dialectic_session'], types: ['RecoveryOpened'], after: sent.position, signal: globalThis.AbortSignal.timeout(120_000) })) {
        if (event.data.agentId === id) {
          recovery = event.data.sessionId;
          break;
        }
      }
    } catch {
      recovery = undefined;
    }
    if (!recovery) continue;
    const resolved = await decision(client.waitForResolution(recovery, { after: sent.position, final: true, timeoutMs: 900_000 }));
    ctx.ledger.decided('dialectic', askedAt, resolved?.status ?? 'none');
  }
}

/** Two debaters: one opens a debate on the example topic with both, and waits for it to complete. */
async function debaters(ctx, [first, second], n) {
  const client = ctx.clients.get(first.id);
  for (let i = 0; await pause(ctx.think() * 2, ctx.running); i++) {
    const debateId = `day-debate-${n}-${i}-${Date.now().toString(36)}`;
    const askedAt = Date.now();
    const opened = await ctx.ledger.send(client, first.id, 'OpenDebate', { debateId, topic: EXAMPLE_TOPIC, participants: [first, second].map((d) => ({ agentId: d.id, persona: d.persona })) });
    if (!opened) continue;
    const debate = await decision(waitOnLog(client, { category: 'debate', streamId: `debate-${debateId}`, what: `the debate ${debateId} to complete`, read: () => client.query('GetDebate', { debateId }), done: (d) => d.status === 'complete' }, { after: opened.position, timeoutMs: 900_000 }));
    ctx.ledger.decided('debate', askedAt, debate?.outcome ?? 'none');
  }
}

/**
 * An executive puts a question to the chamber's panel; the operator approves the spend; the panel
 * concludes. Not while the day's sessions are used up (the budget says so): an approval would only
 * be refused.
 */
async function chamber(ctx, id) {
  const client = ctx.clients.get(id);
  for (let i = 0; await pause(ctx.think() * 4, ctx.running); i++) {
    const budget = await ctx.operator.query('GetChamberBudget', {}).catch(() => undefined);
    if (budget && budget.sessionsToday >= budget.sessionsPerDay) continue;
    const sessionId = `day-chamber-${i}-${Date.now().toString(36)}`;
    const askedAt = Date.now();
    const proposed = await ctx.ledger.send(client, id, 'ProposeChamberSession', { sessionId, question: CHAMBER_QUESTION, context: CHAMBER_CONTEXT, rationale: 'A wrong call costs a quarter; one model may share our blind spot.' });
    if (!proposed || !(await ctx.ledger.send(ctx.operator, 'operator', 'ApproveChamberSession', { sessionId, note: 'go' }))) continue;
    const read = () => ctx.operator.query('GetChamberSession', { sessionId });
    const done = (v) => ['consensus', 'no_consensus', 'failed'].includes(v.summary.status) && v.summary.pendingCalls === 0;
    const concluded = await decision(waitOnLog(ctx.operator, { category: 'chamber_session', streamId: `chamber_session-${sessionId}`, what: `the chamber session ${sessionId} to conclude`, read, done }, { after: proposed.position, timeoutMs: 600_000 }));
    ctx.ledger.decided('chamber', askedAt, concluded?.summary.status ?? 'none');
  }
}

/** The operator's steady commands: `perSecond` UpdateAgent on the executives, over NATS. */
async function steady(ctx, perSecond, targets) {
  const inflight = new Set();
  for (let i = 0; ctx.running(); i++) {
    const agentId = targets[i % targets.length];
    const sending = ctx.ledger.send(ctx.operatorNats, 'operator', 'UpdateAgent', { agentId, displayName: `${agentId} ${i}` }).finally(() => inflight.delete(sending));
    inflight.add(sending);
    await sleep(1000 / perSecond);
  }
  await Promise.all(inflight);
}

/**
 * Starts every driver; `stop()` asks them to stop and resolves once each has finished what it was
 * waiting for (or after `graceMs`, what is still waiting counted as it stands).
 */
export function startDrivers({ roster, clients, operator, operatorNats, ledger: book, seed, thinkMs, ways }) {
  let running = true;
  const random = (() => {
    let a = seed >>> 0;
    return () => ((a = (Math.imul(a ^ (a >>> 15), 2246822519) + 0x9e3779b9) >>> 0) / 4294967296);
  })();
  const ctx = { clients, operator, operatorNats, ledger: book, running: () => running, think: () => thinkMs * (0.5 + random()) };
  const executives = roster.filter((a) => a.roles.includes('executive') && a.id !== 'patient').map((a) => a.id);
  const debating = roster.filter((a) => a.roles.includes('debater'));
  const work = [
    ...executives.map((id, n) => executive(ctx, id, n)),
    patient(ctx, 'patient'),
    ...Array.from({ length: Math.floor(debating.length / 2) }, (_, n) => debaters(ctx, debating.slice(n * 2, n * 2 + 2), n)),
    chamber(ctx, executives[0]),
    steady(ctx, Math.max(1, roster.length / 12), executives),
    ...(ways?.drivers(ctx, pause) ?? []),
  ].map((p) => p.catch((error) => console.error(`day: a driver stopped: ${error instanceof Error ? error.message : String(error)}`)));
  return {
    async stop(graceMs) {
      running = false;
      await Promise.race([Promise.all(work), sleep(graceMs)]);
    },
  };
}
