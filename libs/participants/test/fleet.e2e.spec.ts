/**
 * A fleet of model-backed participants against a real Agora (the standalone process over a private
 * NATS server, reached through its HTTP gateway), its models played by the provider stand-ins
 * speaking OpenAI's, Anthropic's and Gemini's wire APIs (fleetStandInScript): a proposal reviewed by
 * four reviewers, revised by the executive and approved; a vote by three validators; a recovery by
 * two agents; a debate in two threads played by two debaters; and a validator whose model answers
 * malformed JSON twice, which abstains. Every call is in its agent's ledger, within the budget the
 * fleet file gives.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXAMPLE_PARTICIPANTS, EXAMPLE_TOPIC } from '@agora/domain-debate';
import { waitOnLog } from '@agora/sdk';
import { DEFAULT_PRICES, ProviderLayer, StandIns, type StandInReply, type StandInRequest } from '@agora/providers';
import { startAgoraProcess, startNatsServer, type AgoraProcess, type PrivateNatsServer } from '@agora/testing';
import { fleetStandInScript, parseFleetFile, startFleet, type ParticipantAction, type StartedFleet } from '../src/index.js';

const REVIEWERS = { harbinger: 'risk', heretic: 'premise', sentinel: 'evidence', zealot: 'execution' } as const;
const VALIDATORS = { aegis: 'security', ledger: 'compliance', pilot: 'operations' } as const;

describe('a fleet of model-backed participants (e2e)', () => {
  let dir: string;
  let nats: PrivateNatsServer;
  let agora: AgoraProcess;
  let stands: StandIns;
  let fleet: StartedFleet;
  const actions: ParticipantAction[] = [];
  const refusals: string[] = [];
  /** Fails at once, saying why, if a participant's loop stops while a test waits on the log. */
  let unless: <T>(work: Promise<T>) => Promise<T>;
  let override: ((request: StandInRequest) => StandInReply | undefined) | undefined;
  const client = (id: string) => fleet.connection.clients.get(id)!;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-fleet-e2e-'));
    nats = await startNatsServer();
    agora = await startAgoraProcess('apps/standalone/src/main.ts', 'agora', { AGORA_DATA_DIR: join(dir, 'data'), NATS_URL: nats.url, PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0' });
    const url = /gateway listening on (http:\/\/[^\s]+) /.exec(agora.output())![1]!;
    stands = await StandIns.start(fleetStandInScript({ override: (request) => override?.(request) }));
    const operatorKeyFile = join(dir, 'data', 'operator.key.json');
    const agents = [
      { id: 'seldon', roles: ['executive', 'dialectic'], model: 'anthropic:claude-sonnet-4-20250514' },
      ...Object.entries(REVIEWERS).map(([id, constitution]) => ({ id, roles: ['reviewer', 'dialectic'], constitutions: [constitution] })),
      ...Object.entries(VALIDATORS).map(([id, specialization]) => ({ id, roles: ['validator', 'dialectic'], specializations: [specialization], model: 'google:gemini-2.5-flash' })),
      { id: 'nova', roles: ['executive', 'dialectic'] },
      { id: 'saylor', roles: ['debater', 'dialectic'] },
      { id: 'hayes', roles: ['debater', 'dialectic'], model: 'anthropic:claude-sonnet-4-20250514' },
    ].map((a) => ({ keyFile: `keys/${a.id}.key.json`, ...a }));
    const config = parseFleetFile(JSON.stringify({ defaults: { model: 'openai:gpt-4.1', budget: 1 }, agents }), join(dir, 'fleet.json'));
    const layer = new ProviderLayer({ providers: stands.providers, prices: { ...DEFAULT_PRICES }, currency: 'USD', timeoutMs: 30_000, maxAttempts: 2, backoffMs: 50 }, stands.env);
    fleet = await startFleet({
      fleet: config,
      layer,
      connection: { url, operatorKeyFile },
      onAction: (action) => actions.push(action),
      onRefused: (agent, role, error, event) => refusals.push(`${agent} (${role}) on ${event.type}: ${error.code} ${error.message}`),
    });
    await fleet.ready;
    const stopped = fleet.done.then(
      () => new Promise<never>(() => undefined),
      (error: unknown) => Promise.reject(new Error(`a participant stopped: ${(error as Error).message}`)),
    );
    stopped.catch(() => undefined); // seen by whoever waits; not an unhandled rejection otherwise
    unless = (work) => Promise.race([work, stopped]);
  }, 180_000);

  afterAll(async () => {
    await fleet?.close();
    await stands?.close();
    await agora?.stop();
    await nats?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('registered the agents with their roles, constitutions and specializations, set their budgets, and created their key files', async () => {
    expect(fleet.connection.registered).toEqual(expect.arrayContaining(['seldon', ...Object.keys(REVIEWERS), ...Object.keys(VALIDATORS), 'nova']));
    expect(fleet.connection.budgets).toContain('harbinger 1 USD');
    const harbinger = await client('seldon').query('GetAgent', { agentId: 'harbinger' });
    expect(harbinger).toMatchObject({ roles: ['reviewer'], constitutions: ['risk'] });
    expect(fleet.connection.created).toContain(join(dir, 'keys', 'harbinger.key.json'));
  });

  it('a proposal is reviewed by four model-backed reviewers, revised by the executive in answer to the objection, and approved', async () => {
    const seldon = client('seldon');
    const submitted = await seldon.send('SubmitProposal', {
      proposalId: 'fleet-p1',
      title: 'Move billing to the new payment provider',
      problem: 'The current provider fails 2% of card payments.',
      body: 'Switch all billing traffic to the new provider on Monday, in one step.',
      evidence: [{ ref: 'd/7c1e2a90', summary: 'Last quarter 2.1% of card payments failed' }],
    });
    const verdict = await unless(seldon.waitForVerdict('fleet-p1', { after: submitted.position, final: true, timeoutMs: 150_000 }));
    expect(verdict.status).toBe('approved');
    expect(verdict.rounds).toHaveLength(2);
    const [first, second] = verdict.rounds;
    expect(first!.reviews.map((r) => `${r.reviewer}:${r.constitution}:${r.verdict}`).sort()).toEqual(['harbinger:risk:object', 'heretic:premise:approve', 'sentinel:evidence:approve', 'zealot:execution:approve']);
    expect(second!.reviews.map((r) => `${r.reviewer}:${r.verdict}`).sort()).toEqual(['harbinger:approve', 'heretic:approve', 'sentinel:approve', 'zealot:approve']);
    expect(second!.reviews.every((r) => !r.deemed)).toBe(true);
    // The seed's challenge protocol: the constraint, a concrete scenario, a suggested revision, the evidence cited.
    const [objection] = verdict.objections;
    expect(objection).toMatchObject({ constitution: 'risk', reviewer: 'harbinger', status: 'answered', answeredByRevision: 2, constraint: expect.stringMatching(/way back/), scenario: expect.stringMatching(/fails/), suggestedRevision: expect.stringMatching(/rollback/) });
    expect(first!.reviews.find((r) => r.reviewer === 'harbinger')!.citations).toEqual([{ ref: 'd/7c1e2a90', summary: 'Last quarter 2.1% of card payments failed' }]);
    // The executive's revision: its plan changed, answering the objection it names.
    expect(verdict.revisions[1]).toMatchObject({ revision: 2, answers: [objection!.objectionId], body: expect.stringMatching(/^Switch all billing traffic.*\n\nAdd a rollback/s) });
    // Each reviewer was shown its own constitution's mandate; the models were asked for structured output.
    const reviewerRequests = stands.requests.filter((r) => /constitutional reviewer/.test(r.system));
    expect(reviewerRequests).toHaveLength(8);
    expect(reviewerRequests.filter((r) => /^You are harbinger/.test(r.system)).every((r) => /Risk analysis: what breaks/.test(r.system))).toBe(true);
    expect(reviewerRequests.every((r) => r.structured && r.authenticated)).toBe(true);
    const tribunal = actions.filter((a) => a.role === 'reviewer' || a.role === 'executive');
    expect(tribunal.map((a) => `${a.agent}:${a.outcome}`).sort()).toEqual([...Object.keys(REVIEWERS).flatMap((r) => [`${r}:acted`, `${r}:acted`]), 'seldon:acted'].sort());
    expect(tribunal.every((a) => a.calls === 1 && a.cost > 0)).toBe(true);
    // Each call in the reviewer's ledger: reserved against the budget the fleet set, its outcome recorded.
    const { ledger, calls } = await client('harbinger').query('GetModelLedger', { agentId: 'harbinger' });
    expect(ledger).toMatchObject({ budget: { amount: 1, currency: 'USD' }, calls: { total: 2, completed: 2, reserved: 0 } });
    expect(ledger.spent).toBeCloseTo(tribunal.filter((a) => a.agent === 'harbinger').reduce((sum, a) => sum + a.cost, 0), 6);
    expect(calls.map((c) => c.purpose)).toEqual(['review proposal fleet-p1 round 1 (risk)', 'review proposal fleet-p1 round 2 (risk)']);
  }, 180_000);

  it('a vote by three model-backed validators, each from its specializations, with reasoning and confidence', async () => {
    const nova = client('nova');
    const created = await nova.send('CreateVotingSession', { requestId: 'fleet-deploy', actionType: 'deploy_production', riskLevel: 'high', summary: 'Roll out billing 4.2 behind a flag, 10% first.' });
    const session = await nova.query('GetVotingSessionByRequest', { requestId: 'fleet-deploy' });
    const decided = await unless(nova.waitForDecision(session.sessionId, { after: created.position, timeoutMs: 120_000 }));
    expect(decided.recommendation?.decision).toBe('approve');
    expect(decided.votes.map((v) => v.validator).sort()).toEqual(Object.keys(VALIDATORS).sort());
    for (const vote of decided.votes) {
      expect(vote).toMatchObject({ decision: 'approve', confidence: 0.8, reasoning: expect.stringContaining(`From ${VALIDATORS[vote.validator as keyof typeof VALIDATORS]}:`), riskAssessment: expect.any(String) });
    }
  }, 150_000);

  it('a recovery by two model-backed agents: thesis, antithesis, syntheses, both sign, the agent resumes', async () => {
    const nova = client('nova');
    const reported = await nova.send('ReportHealth', { agentId: 'nova', health: 0.35, risk: 0.65, tags: ['cascade'], metrics: { risk_score: 0.65 } });
    let sessionId: string | undefined;
    for await (const event of nova.events({ categories: ['dialectic_session'], types: ['RecoveryOpened'], after: reported.position!, signal: AbortSignal.timeout(60_000) })) {
      if ((event.data as { agentId: string }).agentId === 'nova') {
        sessionId = (event.data as { sessionId: string }).sessionId;
        break;
      }
    }
    expect(sessionId).toBeDefined();
    const resolved = await unless(nova.waitForResolution(sessionId!, { after: reported.position, final: true, timeoutMs: 120_000 })).catch(async (error: unknown) => {
      const view = await nova.query('GetDialecticSession', { sessionId: sessionId! });
      throw new Error(`${String(error)}; session ${view.status}, awaiting ${view.awaiting.join(',')}, reviewer ${view.reviewer}; actions ${JSON.stringify(actions.filter((a) => a.role === 'dialectic'))}; refused ${refusals.join('; ')}`);
    });
    expect(resolved.status).toBe('resolved');
    expect(resolved.messages.map((m) => `${m.kind}:${m.author === 'nova' ? 'nova' : 'reviewer'}`)).toEqual(['thesis:nova', 'antithesis:reviewer', 'synthesis:nova', 'synthesis:reviewer']);
    expect(resolved.resolved!.resolution).toMatchObject({ rootCause: 'Unbounded retries amplified an upstream latency spike' });
    expect(resolved.resolved!.signatures.map((s) => s.signer).sort()).toEqual(['nova', resolved.reviewer!].sort());
    const turns = actions.filter((a) => a.role === 'dialectic');
    expect(turns.map((a) => a.agent)).toEqual(['nova', resolved.reviewer, 'nova', resolved.reviewer]);
  }, 150_000);

  it('a debate in two threads played by two model-backed debaters, each move with its call\'s usage, to a validated crux', async () => {
    const saylor = client('saylor');
    const threads = [
      { threadId: 'main', topic: EXAMPLE_TOPIC },
      { threadId: 'reserve', topic: 'Bitcoin as a treasury reserve asset for companies' },
    ];
    const opened = await saylor.send('OpenDebate', { debateId: 'fleet-debate', topic: EXAMPLE_TOPIC, participants: EXAMPLE_PARTICIPANTS, threads });
    const debate = await unless(waitOnLog(saylor, { category: 'debate', streamId: 'debate-fleet-debate', what: 'the debate to complete', read: () => saylor.query('GetDebate', { debateId: 'fleet-debate' }), done: (d) => d.status === 'complete' }, { after: opened.position!, timeoutMs: 240_000 }));
    expect(debate.outcome).toBe('converged');
    const moves = debate.messages.filter((m) => m.kind !== 'MODERATOR');
    // Both debaters spoke in both threads, each on its own model; every move carried its call's usage into the debate's cost.
    for (const threadId of ['main', 'reserve']) expect(new Set(moves.filter((m) => m.threadId === threadId).map((m) => m.agentId))).toEqual(new Set(['saylor', 'hayes']));
    const debaterRequests = (server: keyof StandIns['servers']) => stands.servers[server].requests.filter((r) => /crux debate/.test(r.system)).map((r) => /^You are (\w+),/.exec(r.system)?.[1]);
    expect(new Set(debaterRequests('openai'))).toEqual(new Set(['saylor']));
    expect(new Set(debaterRequests('anthropic'))).toEqual(new Set(['hayes']));
    expect(debate.usage.calls).toBe(moves.length);
    expect(debate.usage.costUsd).toBeGreaterThan(0);
    expect(debate.threads.filter((t) => t.mergedInto === null).every((t) => t.crux?.validated)).toBe(true);
    // saylor's first answer (a CHALLENGE in DISCOVERY) was refused and asked again with the refusal.
    expect(stands.servers.openai.requests.some((r) => /Your previous answer was refused: illegal_state: CHALLENGE refused in stage DISCOVERY/.test(r.prompt))).toBe(true);
    const debaters = actions.filter((a) => a.role === 'debater');
    expect(debaters.filter((a) => a.outcome === 'acted')).toHaveLength(moves.length);
  }, 300_000);

  it('a validator whose model answers malformed JSON is asked once more with the error, then abstains explicitly', async () => {
    const malformed: StandInRequest[] = [];
    override = (request) => {
      if (!/^You are ledger,/.test(request.system) || !/fleet-malformed/.test(request.prompt)) return undefined;
      malformed.push(request);
      return { json: { decision: 'maybe', reasoning: 42 } };
    };
    const nova = client('nova');
    const created = await nova.send('CreateVotingSession', { requestId: 'fleet-malformed', actionType: 'rotate_keys', riskLevel: 'high', summary: 'Rotate the signing keys of fleet-malformed, staged.' });
    const session = await nova.query('GetVotingSessionByRequest', { requestId: 'fleet-malformed' });
    const decided = await unless(nova.waitForDecision(session.sessionId, { after: created.position, timeoutMs: 120_000 }));
    override = undefined;
    expect(malformed).toHaveLength(2);
    expect(malformed[0]!.prompt).not.toMatch(/Your previous answer could not be used/);
    expect(malformed[1]!.prompt).toMatch(/Your previous answer could not be used: invalid_output: .*\(the answer was: \{"decision":"maybe","reasoning":42\}\)/);
    const ledger = decided.votes.find((v) => v.validator === 'ledger');
    expect(ledger).toMatchObject({ decision: 'abstain', confidence: 0, reasoning: expect.stringMatching(/^No vote from google:gemini-2.5-flash: no answer that fits after 2 attempts: invalid_output: /) });
    expect(decided.votes.filter((v) => v.validator !== 'ledger').every((v) => v.decision === 'approve')).toBe(true);
    expect(decided.consensus).not.toBe('unanimous_approve');
    expect(actions.find((a) => a.agent === 'ledger' && a.outcome === 'abstained')).toMatchObject({ calls: 2, error: expect.stringMatching(/^no answer that fits/) });
    // Both answers are in the validator's ledger, verbatim, as the provider's invalid output.
    const { calls } = await client('ledger').query('GetModelLedger', { agentId: 'ledger' });
    const tried = calls.filter((c) => c.purpose.startsWith(`vote in session ${session.sessionId}`));
    expect(tried.map((c) => [c.purpose.endsWith('(retry)'), c.status])).toEqual([
      [false, 'failed'],
      [true, 'failed'],
    ]);
  }, 150_000);
});
