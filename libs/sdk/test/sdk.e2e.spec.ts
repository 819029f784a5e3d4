/**
 * @agora/sdk against a real Agora: the standalone process over a private NATS server, reached
 * through its HTTP gateway (SSE) by some agents and over NATS by others. A tribunal round played by
 * reviewers' role loops, a vote by validators' role loops, a recovery by the parties' turns, each
 * awaited on the log; then a reviewer's loop that crashes after acting and is restarted from its
 * checkpoint file acts once per event.
 */
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Role } from '@agora/contracts';
import { EXAMPLE_PARTICIPANTS, EXAMPLE_TOPIC, exampleScript, moveOf } from '@agora/domain-debate';
import { generateKeyPair } from '@agora/identity';
import { Agora, fileCheckpoint, onDebateTurn, onDialecticTurn, onReviewRequested, onVoteRequested, waitOnLog, type AgoraEvent, type Checkpoint, type RoleLoop } from '../src/index.js';
import { startAgoraProcess, startNatsServer, type AgoraProcess, type PrivateNatsServer } from '@agora/testing';

const CAST: Record<string, { roles: Role[]; constitutions?: string[]; trustScore?: number; specializations?: string[] }> = {
  seldon: { roles: ['executive'] },
  harbinger: { roles: ['reviewer'], constitutions: ['risk'], trustScore: 700 },
  heretic: { roles: ['reviewer'], constitutions: ['premise'], trustScore: 680 },
  sentinel: { roles: ['reviewer'], constitutions: ['evidence'], trustScore: 650 },
  zealot: { roles: ['reviewer'], constitutions: ['execution'], trustScore: 620 },
  deployer: { roles: ['executive'] },
  aegis: { roles: ['validator'], specializations: ['security'], trustScore: 900 },
  ledger: { roles: ['validator'], specializations: ['compliance'], trustScore: 820 },
  pilot: { roles: ['validator'], specializations: ['operations'], trustScore: 760 },
  sage: { roles: ['validator'], specializations: ['risk'], trustScore: 720 },
  tally: { roles: ['validator'], specializations: ['ethics'], trustScore: 650 },
  nova: { roles: ['executive'], specializations: ['planning'] },
  saylor: { roles: ['debater'] },
  hayes: { roles: ['debater'] },
};
const REVIEWERS = ['harbinger', 'heretic', 'sentinel', 'zealot'];
const VALIDATORS = ['aegis', 'ledger', 'pilot', 'sage', 'tally'];

const threshold = (value: number) => ({ operation: 'set_risk_threshold' as const, parameters: { threshold: value } });
const cascade = { operation: 'enable_cascade_detection' as const, parameters: {} };

describe('@agora/sdk against a running Agora (e2e)', () => {
  let dir: string;
  let nats: PrivateNatsServer;
  let agora: AgoraProcess;
  let url: string;
  let root: Agora;
  const clients: Agora[] = [];
  const loops: RoleLoop[] = [];

  const keyFile = (agentId: string) => join(dir, `${agentId}.key.json`);
  const overHttp = async (agentId: string) => {
    const client = await Agora.connect({ url, signer: { keyFile: keyFile(agentId) } });
    clients.push(client);
    return client;
  };
  const overNats = async (agentId: string) => {
    const client = await Agora.connect({ nats: { servers: nats.url }, signer: { keyFile: keyFile(agentId) } });
    clients.push(client);
    return client;
  };
  const stopLoops = async () => {
    await Promise.all(loops.splice(0).map((loop) => loop.stop()));
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-sdk-e2e-'));
    nats = await startNatsServer();
    agora = await startAgoraProcess('apps/standalone/src/main.ts', 'agora', { AGORA_DATA_DIR: join(dir, 'data'), NATS_URL: nats.url, PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0' });
    url = /gateway listening on (http:\/\/[^\s]+) /.exec(agora.output())![1]!;
    root = await Agora.connect({ url, signer: { keyFile: join(dir, 'data', 'operator.key.json') } });
    clients.push(root);
    for (const [agentId, profile] of Object.entries(CAST)) {
      const key = generateKeyPair();
      writeFileSync(keyFile(agentId), JSON.stringify({ agentId, ...key }), { mode: 0o600 });
      await root.send('RegisterAgent', { agentId, publicKey: key.publicKey, displayName: agentId, constitutions: [], specializations: [], trustScore: 500, ...profile });
    }
  }, 120_000);

  afterAll(async () => {
    await stopLoops();
    await Promise.all(clients.map((c) => c.close()));
    await agora?.stop();
    await nats?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('plays a tribunal round over HTTP: reviewers answer from their role loops, the executive waits on the log for the verdict', async () => {
    // The reviewers answer once the executive's wait has seen the round open: a wait that reads the
    // verdict already given returns it at once, and this test wants to see the reviews as progress.
    let roundSeen!: () => void;
    const seen = new Promise<void>((resolve) => (roundSeen = resolve));
    for (const reviewer of REVIEWERS) {
      const client = await overHttp(reviewer);
      loops.push(
        onReviewRequested(client, async ({ proposal, constitution }) => {
          await seen;
          return { verdict: 'approve', reasoning: `${constitution}: nothing in "${proposal.title}" breaks it` };
        }),
      );
    }
    await Promise.all(loops.map((l) => l.ready));
    const seldon = await overHttp('seldon');
    const submitted = await seldon.send('SubmitProposal', { proposalId: 'sdk-round', title: 'Ship the SDK', body: 'Publish @agora/sdk', problem: 'Agents hand-roll clients' });
    expect(submitted.position).toEqual(expect.any(String));
    const progress: string[] = [];
    const verdict = await seldon.waitForVerdict('sdk-round', { after: submitted.position, timeoutMs: 60_000, onProgress: (e) => {
      progress.push(e.type);
      if (e.type === 'ReviewRoundOpened') roundSeen();
    } });
    expect(verdict.status).toBe('approved');
    expect(verdict.rounds[0]!.reviews.map((r) => r.reviewer).sort()).toEqual([...REVIEWERS].sort());
    expect(progress).toEqual(expect.arrayContaining(['ReviewRoundOpened', 'ReviewSubmitted']));
    await stopLoops();
  }, 90_000);

  it('plays a vote over NATS: the validators drawn vote from their role loops, the requester waits for the decision', async () => {
    for (const validator of VALIDATORS) {
      const client = await overNats(validator);
      loops.push(onVoteRequested(client, async ({ session }) => ({ decision: 'approve', reasoning: `${session.actionType} looks safe to me`, confidence: 0.85 })));
    }
    await Promise.all(loops.map((l) => l.ready));
    const deployer = await overNats('deployer');
    const created = await deployer.send('CreateVotingSession', { requestId: 'sdk-deploy', actionType: 'deploy_production', riskLevel: 'high', summary: 'Roll out 4.2' });
    const session = await deployer.query('GetVotingSessionByRequest', { requestId: 'sdk-deploy' });
    const decided = await deployer.waitForDecision(session.sessionId, { after: created.position, timeoutMs: 60_000 });
    expect(decided.recommendation?.decision).toBe('approve');
    expect(decided.votes.length).toBe(decided.validators.length);
    await stopLoops();
  }, 90_000);

  it('plays a recovery over HTTP: the paused agent and the reviewer drawn take their turns, both sign, the agent waits for the resolution', async () => {
    const nova = await overHttp('nova');
    const turns: string[] = [];
    const refused: string[] = [];
    const options = { onRefused: (error: Error & { code?: string }, event: AgoraEvent) => refused.push(`${event.type}: ${error.code} ${error.message}`) };
    loops.push(
      onDialecticTurn(nova, async (turn) => {
        turns.push(`nova:${turn.kind}`);
        if (turn.kind === 'thesis') return { rootCause: 'An outside complexity spike', proposedConditions: [threshold(0.5), cascade], reasoning: 'External, not internal' };
        return { rootCause: 'External complexity spike', proposedConditions: [threshold(0.48), cascade], reasoning: "I accept the reviewer's threshold", agrees: true };
      }, options),
    );
    // Any healthy agent may be drawn as the reviewer: each one plays its part when it is.
    for (const reviewer of Object.keys(CAST).filter((a) => a !== 'nova')) {
      const client = await overHttp(reviewer);
      loops.push(
        onDialecticTurn(client, async (turn) => {
          turns.push(`${reviewer}:${turn.kind}`);
          if (turn.kind === 'antithesis') {
            return { observedMetrics: { risk_score: 0.65 }, concerns: ['Watch for cascades'], reasoning: 'Keep the threshold tight', counterProposal: { rootCause: 'External complexity spike', proposedConditions: [threshold(0.48), cascade] } };
          }
          return { rootCause: 'External complexity spike', proposedConditions: [cascade, threshold(0.48)], reasoning: 'Agreed', agrees: true };
        }, options),
      );
    }
    await Promise.all(loops.map((l) => l.ready));
    const reported = await nova.send('ReportHealth', { agentId: 'nova', health: 0.35, risk: 0.65, tags: ['cascade'], metrics: { risk_score: 0.65 } });
    let sessionId: string | undefined;
    for await (const event of nova.events({ categories: ['dialectic_session'], types: ['RecoveryOpened'], after: reported.position!, signal: AbortSignal.timeout(30_000) })) {
      if ((event.data as { agentId: string }).agentId === 'nova') {
        sessionId = (event.data as { sessionId: string }).sessionId;
        break;
      }
    }
    expect(sessionId).toBeDefined();
    const resolved = await nova.waitForResolution(sessionId!, { after: reported.position, final: true, timeoutMs: 30_000 }).catch(async (error: unknown) => {
      const view = await nova.query('GetDialecticSession', { sessionId: sessionId! });
      throw new Error(`${String(error)}; turns ${turns.join(', ')}; refused ${refused.join('; ')}; session ${view.status} awaiting ${view.awaiting.join(',')} round ${view.round}`);
    });
    expect(resolved.status).toBe('resolved');
    expect(turns[0]).toBe('nova:thesis');
    expect(turns.filter((t) => t.endsWith(':antithesis'))).toEqual([`${resolved.reviewer}:antithesis`]);
    // The registry resumes the agent in answer to the resolution.
    const resumed = await waitOnLog(nova, { category: 'agent', streamId: 'agent-nova', what: 'nova to resume', read: () => nova.query('GetAgent', { agentId: 'nova' }), done: (a) => a.breaker.state === 'closed' }, { after: reported.position, timeoutMs: 30_000 });
    expect(resumed.breaker.sessionId).toBeNull();
    await stopLoops();
  }, 90_000);

  it("plays a debate's discovery stage: each debater moves from its role loop when the transcript says it is its turn", async () => {
    // The seed's scripted debate: a debater's next step is due once every earlier step is in the transcript.
    const discovery = exampleScript().slice(0, 6);
    for (const debater of ['saylor', 'hayes']) {
      loops.push(
        onDebateTurn(await overHttp(debater), async ({ debate }) => {
          const step = discovery[debate.messages.filter((m) => m.kind !== 'MODERATOR').length];
          return step?.agentId === debater ? { move: moveOf(step, debate) } : undefined;
        }),
      );
    }
    await Promise.all(loops.map((l) => l.ready));
    const saylor = await overHttp('saylor');
    const opened = await saylor.send('OpenDebate', { debateId: 'sdk-debate', topic: EXAMPLE_TOPIC, participants: EXAMPLE_PARTICIPANTS });
    const debate = await waitOnLog(
      saylor,
      { category: 'debate', streamId: 'debate-sdk-debate', what: 'the crux lock stage', read: () => saylor.query('GetDebate', { debateId: 'sdk-debate' }), done: (d) => d.threads[0]?.stage === 'CRUX_LOCK' },
      { after: opened.position, timeoutMs: 60_000 },
    );
    const moves = debate.messages.filter((m) => m.kind !== 'MODERATOR');
    expect(moves.map((m) => `${m.agentId}:${m.kind}`)).toEqual(discovery.map((s) => `${s.agentId}:${moveOf(s, debate).kind}`));
    await stopLoops();
  }, 90_000);

  it('a reviewer loop that crashes after acting and restarts from its checkpoint acts once per event', async () => {
    const checkpointFile = join(dir, 'harbinger.checkpoint.json');
    const harbinger = await overHttp('harbinger');
    const seldon = await overHttp('seldon');
    const calls: string[] = [];
    const reviewer = (label: string) => async ({ proposal }: { proposal: { proposalId: string } }) => {
      calls.push(`${label}:${proposal.proposalId}`);
      return { verdict: 'approve' as const, reasoning: `approved by run ${label}` };
    };
    // Run A: the process dies right after its review reached Agora, before its checkpoint moved.
    const file = fileCheckpoint(checkpointFile);
    const crashing: Checkpoint = { load: () => file.load(), save: async () => Promise.reject(new Error('killed before the checkpoint was written')) };
    const a = onReviewRequested(harbinger, reviewer('A'), { checkpoint: crashing });
    await a.ready;
    // Where an earlier run had got to: an event before the round this test follows.
    const before = await root.send('UpdateAgent', { agentId: 'harbinger', displayName: 'Harbinger' });
    await file.save(before.position!);
    await seldon.send('SubmitProposal', { proposalId: 'restart-1', title: 'One', body: 'First', problem: 'Restarts' });
    await expect(a.done).rejects.toThrow('killed before the checkpoint was written');

    // Run B resumes from the checkpoint: it sees the round again, its handler answers differently, nothing new is written.
    const acted: { proposalId: string; duplicate: boolean }[] = [];
    const onActed = (action: { payload: unknown }, _event: AgoraEvent, duplicate: boolean) => acted.push({ proposalId: (action.payload as { proposalId: string }).proposalId, duplicate });
    const b = onReviewRequested(harbinger, reviewer('B'), { checkpoint: file, onActed });
    loops.push(b);
    await waitUntil(() => acted.length === 1);
    expect(acted[0]).toEqual({ proposalId: 'restart-1', duplicate: true });
    await seldon.send('SubmitProposal', { proposalId: 'restart-2', title: 'Two', body: 'Second', problem: 'Restarts' });
    await waitUntil(() => acted.length === 2);
    expect(acted[1]).toEqual({ proposalId: 'restart-2', duplicate: false });
    await b.stop();

    // Run C resumes after restart-2: it never sees the first two rounds again.
    const c = onReviewRequested(harbinger, reviewer('C'), { checkpoint: file, onActed });
    loops.push(c);
    await c.ready;
    await seldon.send('SubmitProposal', { proposalId: 'restart-3', title: 'Three', body: 'Third', problem: 'Restarts' });
    await waitUntil(() => acted.length === 3);
    expect(calls).toEqual(['A:restart-1', 'B:restart-1', 'B:restart-2', 'C:restart-3']);
    for (const proposalId of ['restart-1', 'restart-2', 'restart-3']) {
      const reviews = (await seldon.query('GetProposal', { proposalId })).rounds[0]!.reviews.filter((r) => r.reviewer === 'harbinger');
      expect(reviews).toHaveLength(1);
    }
    const first = (await seldon.query('GetProposal', { proposalId: 'restart-1' })).rounds[0]!.reviews.find((r) => r.reviewer === 'harbinger');
    expect(first?.reasoning).toBe('approved by run A');
    await stopLoops();
  }, 90_000);

  it('a reviewer loop over NATS catches up after a restart (catchUpUrl): a review requested while it was down is acted on once', async () => {
    // Commands, queries and live events over NATS; a stream that resumes after a checkpoint is read through the gateway.
    const harbinger = await Agora.connect({ nats: { servers: nats.url, catchUpUrl: url }, signer: { keyFile: keyFile('harbinger') } });
    clients.push(harbinger);
    const seldon = await overHttp('seldon');
    const file = fileCheckpoint(join(dir, 'harbinger-nats.checkpoint.json'));
    const saved: string[] = [];
    const checkpoint: Checkpoint = { load: () => file.load(), save: async (position) => (await file.save(position), void saved.push(position)) };
    const calls: string[] = [];
    const acted: { proposalId: string; duplicate: boolean }[] = [];
    const onActed = (action: { payload: unknown }, _event: AgoraEvent, duplicate: boolean) => acted.push({ proposalId: (action.payload as { proposalId: string }).proposalId, duplicate });
    const reviewer = (label: string) => async ({ proposal }: { proposal: { proposalId: string } }) => {
      calls.push(`${label}:${proposal.proposalId}`);
      return { verdict: 'approve' as const, reasoning: `approved by run ${label} over NATS` };
    };
    // Run A starts with no checkpoint: live over NATS; it reviews one round and its checkpoint moves past it.
    const a = onReviewRequested(harbinger, reviewer('A'), { checkpoint, onActed });
    loops.push(a);
    await a.ready;
    await seldon.send('SubmitProposal', { proposalId: 'nats-restart-1', title: 'One', body: 'First', problem: 'Restarts over NATS' });
    await waitUntil(() => acted.length === 1 && saved.length === 1);
    await a.stop();

    // While no loop runs, a round assigns harbinger: it passes on NATS (a listener there hears it), and nothing on NATS keeps it.
    const listener = await Agora.connect({ nats: { servers: nats.url } });
    clients.push(listener);
    const stopListening = new AbortController();
    const heard: string[] = [];
    let listening!: () => void;
    const opened = new Promise<void>((resolve) => (listening = resolve));
    const hearing = (async () => {
      for await (const event of listener.events({ categories: ['proposal'], types: ['ReviewRoundOpened'], signal: stopListening.signal, onOpen: () => listening() })) heard.push((event.data as { proposalId: string }).proposalId);
    })();
    await opened;
    await seldon.send('SubmitProposal', { proposalId: 'nats-restart-2', title: 'Two', body: 'Second', problem: 'Restarts over NATS' });
    await waitUntil(() => heard.includes('nats-restart-2'));
    stopListening.abort();
    await hearing;

    // Run B resumes from the checkpoint: it catches up on the round it missed, once, then follows live.
    const b = onReviewRequested(harbinger, reviewer('B'), { checkpoint, onActed });
    loops.push(b);
    await waitUntil(() => acted.length === 2);
    expect(acted[1]).toEqual({ proposalId: 'nats-restart-2', duplicate: false });
    await seldon.send('SubmitProposal', { proposalId: 'nats-restart-3', title: 'Three', body: 'Third', problem: 'Restarts over NATS' });
    await waitUntil(() => acted.length === 3);
    expect(calls).toEqual(['A:nats-restart-1', 'B:nats-restart-2', 'B:nats-restart-3']);
    expect(acted.map((x) => x.duplicate)).toEqual([false, false, false]);
    for (const proposalId of ['nats-restart-1', 'nats-restart-2', 'nats-restart-3']) {
      const reviews = (await seldon.query('GetProposal', { proposalId })).rounds[0]!.reviews.filter((r) => r.reviewer === 'harbinger');
      expect(reviews).toHaveLength(1);
    }
    await stopLoops();
  }, 90_000);
});

async function waitUntil(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
