/**
 * A log as the running system writes it, for the benchmarks that read one (`bench:audit`, `bench:growth`): every
 * service in one process (in-process transport, embedded store), and a fleet that sends signed
 * commands through their command gates until the log holds the events asked for. Each lane plays,
 * over and over with fresh ids, what the demos play once:
 * - the registry: agents registered by the operator, updated, and reporting health (most of a real
 *   log's commands; the registry records a sample of them);
 * - the tribunal: a proposal, the review round the tribunal opens itself, four approvals;
 * - voting: a high-risk action, every selected validator approves;
 * - dialectic: an executive's breaker trips, the service opens its recovery with a reviewer, the
 *   two converge (and the service's own follow-up commands);
 * - debate: the seed's scripted crux debate, every few rounds;
 * and the projections record their signed log checkpoints as they do in production.
 * The chamber is left out: its sessions call model providers (stand-in servers in the tests).
 */
import {
  commandByType,
  GetDebate,
  GetDialecticSession,
  GetProposal,
  GetVotingSession,
  SERVICE_NAMES,
  type CommandResult,
  type DebateView,
  type DialecticSessionView,
  type ProposalView,
  type Reply,
  type Role,
  type VotingSessionView,
} from '@agora/contracts';
import { playScript } from '@agora/debate';
import { startDebateService } from '@agora/debate';
import { startDialecticService } from '@agora/dialectic';
import { EXAMPLE_PARTICIPANTS, EXAMPLE_TOPIC, exampleScript } from '@agora/domain-debate';
import { createSignedCommand, generateKeyPair, parseServiceKeyring, type KeyPair, type ServiceKeyring } from '@agora/identity';
import { startProjectionsService, type RunningProjections } from '@agora/projections';
import { startProposalService } from '@agora/proposal';
import { startRegistryService } from '@agora/registry';
import { openServiceContext, startAll } from '@agora/runtime';
import { approveRound, convergeRecovery, QUIET_PROJECTIONS, quietServices, REVIEWER_PROFILES } from '@agora/testing';
import { startTribunalService } from '@agora/tribunal';
import { startVotingService } from '@agora/voting';

export interface ProtocolLogOptions {
  /** The embedded store's directory. */
  directory: string;
  /** Where the services keep their keys and snapshots. */
  dataDir: string;
  /** Write until the log holds at least this many events. */
  events: number;
  /** Agents that report their health (besides the protocols' cast). */
  agents: number;
  /** Scenario lanes played at once (default: one per 1,000 events asked for, at most 48; each round of a lane writes about 70). */
  lanes?: number;
  /** Called now and then with the events written so far. */
  onProgress?: (events: number) => void;
  /** Health reports of the fleet in each round of a lane (default 20, most of a real log's commands; fewer: more aggregates for the same events). */
  healthReports?: number;
  /** The bootstrap operator's (`root`) key pair, for a caller that signs more commands on the log later (default: a fresh one). */
  operator?: KeyPair;
}

export interface ProtocolLog {
  /** What the audit trusts: the bootstrap operator, the services' keys. */
  operator: { agentId: string; publicKey: string };
  serviceKeys: ServiceKeyring;
  events: number;
  /** Commands sent by the fleet (the services' own commands come on top). */
  commands: number;
}

const CAST: Record<string, { roles: Role[]; constitutions?: string[] }> = {
  ...REVIEWER_PROFILES,
  ...Object.fromEntries([1, 2, 3, 4, 5].map((n) => [`val${n}`, { roles: ['validator'] as Role[] }])),
  // The debaters also act as executives (any executive may be asked to review a recovery).
  ...Object.fromEntries(EXAMPLE_PARTICIPANTS.map((p) => [p.agentId, { roles: ['debater', 'executive'] as Role[] }])),
};

/** Polls `check` every 10 ms until it gives a value; fails after `timeoutMs`. */
async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Writes the log into an embedded store at `directory` and closes everything. */
export async function writeProtocolLog(options: ProtocolLogOptions): Promise<ProtocolLog> {
  const keys = new Map<string, KeyPair>(options.operator ? [['root', options.operator]] : []);
  const keyOf = (agentId: string) => {
    let key = keys.get(agentId);
    if (!key) keys.set(agentId, (key = generateKeyPair()));
    return key;
  };
  const context = await openServiceContext({
    store: { kind: 'embedded', directory: options.directory },
    natsUrl: undefined,
    dataDir: options.dataDir,
    operators: [{ agentId: 'root', publicKey: keyOf('root').publicKey }],
    maxClockSkewMs: 300_000,
    requestTimeoutMs: 30_000,
  });
  let projections: RunningProjections | undefined;
  const running = await startAll([
    ...quietServices(context, [startRegistryService, startProposalService, startTribunalService, startVotingService, startDialecticService, startDebateService]),
    async () => (projections = await startProjectionsService(context, QUIET_PROJECTIONS)),
  ]);
  let commands = 0;
  try {
    const send = async (type: string, actor: string, payload: Record<string, unknown>): Promise<Reply<CommandResult>> => {
      commands++;
      return context.client.request(commandByType(type)!.subject, createSignedCommand({ type, actor, payload, secretKey: keyOf(actor).secretKey }), { timeoutMs: 30_000 });
    };
    const ok = async (type: string, actor: string, payload: Record<string, unknown>): Promise<CommandResult> => {
      const reply = await send(type, actor, payload);
      if (!reply.ok) throw new Error(`${actor} ${type}: ${reply.error.code} ${reply.error.message}`);
      return reply.result;
    };
    // `ok` with the actor first, as the protocols' scripts (@agora/testing) send.
    const okAs = (actor: string, type: string, payload: Record<string, unknown>) => ok(type, actor, payload);
    const query = async <T>(subject: string, params: unknown): Promise<T | undefined> => {
      const reply = await context.client.request<T>(subject, params, { timeoutMs: 30_000 });
      return reply.ok ? reply.result : undefined;
    };
    const register = (agentId: string, roles: Role[], constitutions: string[] = []) =>
      ok('RegisterAgent', 'root', { agentId, publicKey: keyOf(agentId).publicKey, displayName: agentId, roles, constitutions, trustScore: 700 });
    const written = async () => Number((await context.store.headPosition()) ?? 0);

    for (const [agentId, { roles, constitutions }] of Object.entries(CAST)) await register(agentId, roles, constitutions);
    const fleet = Array.from({ length: options.agents }, (_, i) => `agent${i}`);
    for (let i = 0; i < fleet.length; i += 64) await Promise.all(fleet.slice(i, i + 64).map((agentId) => register(agentId, ['executive'])));
    await until('the agent directory to know the fleet', async () => (context.registry.list().length >= fleet.length + Object.keys(CAST).length ? true : undefined));

    let round = 0;
    let recoveries: Promise<unknown> = Promise.resolve();
    let done = (await written()) >= options.events;
    const lane = async (laneId: number) => {
      for (let n = 0; !done; n++) {
        const id = `${laneId}-${n}`;
        const k = round++;
        // The fleet: each lane's share of health reports and one profile update.
        const reports = options.healthReports ?? 20;
        await Promise.all(
          Array.from({ length: reports }, (_, i) => {
            const agentId = fleet[(k * reports + i) % fleet.length]!;
            return ok('ReportHealth', agentId, { agentId, health: 0.9, risk: 0.1 + ((k + i) % 7) / 100, tags: [], metrics: { tokens: 1000 + i } });
          }),
        );
        const updated = fleet[k % fleet.length]!;
        await ok('UpdateAgent', 'root', { agentId: updated, displayName: `${updated} (round ${k})` });

        // Tribunal: a proposal, the round the tribunal opens, four approvals.
        const proposer = fleet[(k * 7) % fleet.length]!;
        await ok('SubmitProposal', proposer, { proposalId: `p${id}`, title: `Plan ${id}`, body: 'Week 1: bounties.', problem: 'users', evidence: [{ ref: `thread/${id}`, summary: 'context' }] });
        await until(`proposal p${id} to open its round`, async () => ((await query<ProposalView>(GetProposal.subject, { proposalId: `p${id}` }))?.rounds.some((r) => r.status === 'open') ? true : undefined));
        await approveRound(okAs, `p${id}`);

        // Voting: every selected validator approves.
        await ok('CreateVotingSession', proposer, { requestId: `r${id}`, actionType: 'deploy_production', riskLevel: 'high' });
        const session = await until(`voting session r${id}`, () => query<VotingSessionView>(GetVotingSession.subject, { sessionId: `r${id}` }));
        for (const { agentId } of session.validators) await ok('CastValidatorVote', agentId, { sessionId: `r${id}`, decision: 'approve', confidence: 0.9, reasoning: `${agentId} approves` });

        // Dialectic: a fresh executive's breaker trips; it and its reviewer converge. One recovery at
        // a time: a reviewer chosen for one must not be an agent another lane is about to pause.
        const recovered = recoveries.then(async () => {
          const paused = `exec${id}`;
          await register(paused, ['executive']);
          await until(`${paused} in the agent directory`, async () => (context.registry.list().some((a) => a.agentId === paused) ? true : undefined));
          await ok('ReportHealth', paused, { agentId: paused, health: 0.35, risk: 0.65, tags: [], metrics: {} });
          const recovery = await until(`the recovery of ${paused}`, async () => {
            const s = await query<DialecticSessionView>(GetDialecticSession.subject, { sessionId: `${paused}-p1` });
            return s?.status === 'awaiting_thesis' ? s : undefined;
          });
          await convergeRecovery(okAs, recovery);
        });
        recoveries = recovered.catch(() => undefined);
        await recovered;

        // Debate: the seed's scripted debate, one round in ten.
        if (k % 10 === 0) {
          const debateId = `debate-${id}`;
          await ok('OpenDebate', EXAMPLE_PARTICIPANTS[0]!.agentId, { debateId, topic: EXAMPLE_TOPIC, participants: EXAMPLE_PARTICIPANTS });
          await playScript(
            {
              move: (agentId, payload) => send('PostDebateMove', agentId, payload) as Promise<Reply<{ events: string[] }>>,
              debate: async (debate) => until(`debate ${debate}`, () => query<DebateView>(GetDebate.subject, { debateId: debate })),
            },
            debateId,
            exampleScript(),
          );
        }
        const events = await written();
        options.onProgress?.(events);
        if (events >= options.events) done = true;
      }
    };
    await Promise.all(Array.from({ length: options.lanes ?? Math.max(1, Math.min(48, Math.ceil(options.events / 1000))) }, (_, i) => lane(i)));

    // Everything settled (the services' reactions caught up): the projections' checkpoint of the whole log.
    let before = -1;
    for (let now = await written(); now !== before; now = await written()) {
      before = now;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await projections!.checkpoints.checkpoint();
    const serviceKeys = parseServiceKeyring(Object.fromEntries(SERVICE_NAMES.filter((s) => s !== 'chamber').map((s) => [s, context.serviceIdentity(s).publicKey])));
    return { operator: { agentId: 'root', publicKey: keyOf('root').publicKey }, serviceKeys, events: await written(), commands };
  } finally {
    await running.close();
    await context.close();
  }
}
