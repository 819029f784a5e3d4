/**
 * Real proposal events for the projections tests: commands built here run through the real
 * proposal decider with handleCommand (load, decide, append with the expected revision), so the
 * store holds exactly what the proposal and tribunal services would have written. (Command shapes
 * follow libs/domain-tribunal/test/fixtures.ts, copied: a test imports nothing from another
 * package's test folder.)
 */
import { randomUUID } from 'node:crypto';
import type { ReviewerCandidate } from '@agora/contracts';
import type { CommandContext } from '@agora/decider';
import { createProposalDecider, defineTribunalPolicy, proposalStreamId, type ProposalCommand } from '@agora/domain-tribunal';
import { handleCommand } from '@agora/eventsourcing';
import type { EventStore } from '@agora/eventstore';

/** Rounds of 60 s; proposals may ask for 5 s to 1 h; escalation after 3 contested rounds. */
export const decider = createProposalDecider(
  defineTribunalPolicy({
    requiredConstitutions: { default: ['risk', 'premise', 'evidence', 'execution'] },
    roundDeadlineMs: 60_000,
    minRoundDeadlineMs: 5_000,
    maxRoundDeadlineMs: 3_600_000,
    maxRoundsBeforeEscalation: 3,
  }),
);

const roles: Record<string, string[]> = {
  seldon: ['executive'],
  harbinger: ['reviewer'],
  heretic: ['reviewer'],
  sentinel: ['reviewer'],
  zealot: ['reviewer'],
  'tribunal-svc': ['service'],
  root: ['operator'],
};

const candidates: ReviewerCandidate[] = [
  { agentId: 'harbinger', constitutions: ['risk'], trustScore: 700, status: 'active' },
  { agentId: 'heretic', constitutions: ['premise'], trustScore: 650, status: 'active' },
  { agentId: 'sentinel', constitutions: ['evidence'], trustScore: 800, status: 'active' },
  { agentId: 'zealot', constitutions: ['execution'], trustScore: 550, status: 'active' },
];

const reviewerOf: Record<string, string> = { risk: 'harbinger', premise: 'heretic', evidence: 'sentinel', execution: 'zealot' };
const CONSTITUTIONS = ['risk', 'premise', 'evidence', 'execution'];

/** Commands on one proposal, timed in seconds after `t0`. */
export class ProposalScript {
  constructor(
    private readonly store: EventStore,
    readonly proposalId: string,
    private readonly t0: number,
  ) {}

  at(seconds: number): string {
    return new Date(this.t0 + seconds * 1000).toISOString();
  }

  private command(type: ProposalCommand['type'], actor: string, seconds: number, payload: Record<string, unknown>): ProposalCommand {
    const context: CommandContext = { actor, now: this.at(seconds), actorRoles: roles[actor] ?? [], commandId: randomUUID() };
    return { type, context, payload: { proposalId: this.proposalId, ...payload } } as ProposalCommand;
  }

  /** Runs one command through the decider and appends its events; a refusal fails the test. */
  async run(type: ProposalCommand['type'], actor: string, seconds: number, payload: Record<string, unknown> = {}): Promise<void> {
    const command = this.command(type, actor, seconds, payload);
    const result = await handleCommand({
      store: this.store,
      decider,
      streamId: proposalStreamId(this.proposalId),
      command,
      metadata: { commandId: command.context.commandId, commandType: type, actor, issuedAt: command.context.now },
    });
    if (result.events.length === 0) throw new Error(`${type} on ${this.proposalId} produced no event`);
  }

  submit(seconds = 0, over: Record<string, unknown> = {}) {
    return this.run('SubmitProposal', 'seldon', seconds, { title: `Proposal ${this.proposalId}`, body: 'Week 1: bounties. Week 2: demo.', problem: 'No users yet', evidence: [], proposalClass: 'default', ...over });
  }
  open(round: number, seconds: number) {
    return this.run('OpenReviewRound', 'tribunal-svc', seconds, { round, candidates });
  }
  approve(constitution: string, round: number, seconds: number) {
    return this.run('SubmitReview', reviewerOf[constitution]!, seconds, { round, constitution, verdict: 'approve', reasoning: `${constitution}: no objection`, citations: [] });
  }
  object(constitution: string, round: number, seconds: number) {
    return this.run('SubmitReview', reviewerOf[constitution]!, seconds, {
      round,
      constitution,
      verdict: 'object',
      reasoning: `${constitution}: the plan fails`,
      citations: [],
      constraint: `${constitution} constraint`,
      scenario: `a scenario in which the ${constitution} constraint breaks`,
      suggestedRevision: `fix the ${constitution} problem`,
    });
  }
  async approveAll(round: number, seconds: number, constitutions = CONSTITUTIONS) {
    for (const c of constitutions) await this.approve(c, round, seconds);
  }
  revise(answers: string[], seconds: number) {
    return this.run('ReviseProposal', 'seldon', seconds, { body: `Revised at ${seconds}`, answers });
  }
  expire(round: number, seconds: number) {
    return this.run('ExpireReviewRound', 'tribunal-svc', seconds, { round });
  }
  decide(escalation: number, decision: 'approve' | 'reject' | 'send_back', seconds: number) {
    return this.run('DecideEscalation', 'root', seconds, { escalation, decision, reason: `operator: ${decision}` });
  }
  recordExecution(seconds: number) {
    return this.run('RecordExecution', 'seldon', seconds, { summary: 'executed' });
  }
}

/** The proposal ids of the fleet, and the actors: none of them may appear as a metric label. */
export const FLEET_IDS = ['p1-clean', 'p2-challenged', 'p3-silent', 'p4-deadlock', 'p5-pending'];
export const ACTORS = Object.keys(roles);

/**
 * The seed-shaped fleet, submitted two days ago (inside a 30-day window):
 * - p1-clean: all four constitutions approve round 1;
 * - p2-challenged: two objections in round 1, a revision answers them, approved in round 2;
 * - p3-silent: two reviewers answer, two stay silent and are deemed approved at the deadline
 *   (explicit coverage 2: under-covered);
 * - p4-deadlock: risk objects in three rounds, escalated (deadlock), rejected by an operator, then
 *   executed anyway (proceeded despite objections);
 * - p5-pending: round 1 open, one review in.
 * Challenge rate 2 / 5 = 0.4. `which` selects the proposals to write (all by default).
 */
export async function writeFleet(store: EventStore, which: readonly string[] = FLEET_IDS, t0 = Date.now() - 2 * 86_400_000): Promise<void> {
  const script = (id: string) => new ProposalScript(store, id, t0);
  for (const id of which) {
    const p = script(id);
    switch (id) {
      case 'p1-clean':
        await p.submit();
        await p.open(1, 1);
        await p.approveAll(1, 10);
        break;
      case 'p2-challenged':
        await p.submit();
        await p.open(1, 1);
        await p.object('risk', 1, 10);
        await p.object('premise', 1, 10);
        await p.approveAll(1, 10, ['evidence', 'execution']);
        await p.revise(['r1-risk', 'r1-premise'], 100);
        await p.open(2, 101);
        await p.approveAll(2, 110);
        break;
      case 'p3-silent':
        await p.submit();
        await p.open(1, 1);
        await p.approveAll(1, 10, ['risk', 'premise']);
        await p.expire(1, 61);
        break;
      case 'p4-deadlock':
        await p.submit();
        for (let round = 1; round <= 3; round++) {
          const t = round * 100;
          if (round > 1) await p.revise([`r${round - 1}-risk`], t - 10);
          await p.open(round, t);
          await p.object('risk', round, t + 10);
          await p.approveAll(round, t + 20, ['premise', 'evidence', 'execution']);
        }
        await p.decide(1, 'reject', 1000);
        await p.recordExecution(2000);
        break;
      case 'p5-pending':
        await p.submit();
        await p.open(1, 1);
        await p.approve('risk', 1, 10);
        break;
      default:
        throw new Error(`no scenario ${id}`);
    }
  }
}
