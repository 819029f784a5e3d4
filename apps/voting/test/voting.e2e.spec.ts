// The voting service as an operator runs it: three `agora-voting` processes over the shared NATS
// server, the event log in a JetStream stream of their own. The test speaks to them only over NATS
// and reads what they wrote straight from the log.
import { CastValidatorVote, CreateVotingSession, type CommandResult, type Reply } from '@agora/contracts';
import { openJetStreamEventStore, type EventStore, type RecordedEvent } from '@agora/eventstore';
import type { SignedCommand } from '@agora/identity';
import type { StatsResponse } from '@agora/messaging';
import { scaled, startServiceFleet, waitFor, type ServiceFleet, type ServiceProcess } from '@agora/testing';
import { FIVE, generateKeys, registerAgents, sign } from './support/fleet.js';

const REPLICAS = 3;
/** Sessions voted on at once: 4 in npm test, 16 under AGORA_TEST_SCALE=full (npm run test:full). */
const SESSIONS = scaled(4, 16);

describe('agora-voting processes (e2e)', () => {
  // A NATS server of the test's own: on the shared one, other runs' voting replicas would join the queue group.
  let fleet: ServiceFleet;
  const keys = generateKeys();
  let replicas: ServiceProcess[] = [];
  let store: EventStore;

  const request = <T = CommandResult>(subject: string, body: unknown, timeoutMs = 15_000): Promise<Reply<T>> => fleet.client.request<T>(subject, body, { timeoutMs });
  /** The documented contract: a conflict or a timeout may be retried with the same envelope; a repeated commandId returns the first result and appends nothing. */
  const send = async (subject: string, envelope: SignedCommand, retried: Record<string, number>): Promise<Reply<CommandResult>> => {
    for (let attempt = 1; ; attempt++) {
      const reply = await request(subject, envelope);
      if (reply.ok || !['conflict', 'timeout'].includes(reply.error.code) || attempt === 10) return reply;
      retried[reply.error.code] = (retried[reply.error.code] ?? 0) + 1;
    }
  };
  const streamOf = (id: string): Promise<RecordedEvent[]> => store.readStream(`voting_session-${id}`).catch(() => []);

  beforeAll(async () => {
    // The test opens the log first (the replicas find the stream made) and registers the agents, as the registry would have.
    fleet = await startServiceFleet({ label: 'votinge2e', keys });
    store = await openJetStreamEventStore({ servers: fleet.nats.url, streamName: fleet.log.streamName, subjectPrefix: fleet.log.subjectPrefix });
    await registerAgents(store, keys);
    replicas = await fleet.startReplicas('voting', REPLICAS);
  }, 90_000);

  afterAll(async () => {
    await store?.close();
    await fleet?.stop();
  }, 30_000);

  it(`counts every vote once and decides once when five validators vote at the same instant through ${REPLICAS} replicas (${SESSIONS} sessions at once)`, async () => {
    const ids = Array.from({ length: SESSIONS }, (_, i) => `e2e-${i}-${Date.now().toString(36)}`);
    // One session per request, across replicas: each request is created three times at once (three envelopes).
    const creations = await Promise.all(
      ids.flatMap((id) => [0, 1, 2].map(() => send(CreateVotingSession.subject, sign(keys, CreateVotingSession, 'deployer', { requestId: id, actionType: 'deploy_production', riskLevel: 'high' }), {}))),
    );
    expect(creations.filter((r) => !r.ok)).toEqual([]);
    for (const id of ids) expect((await streamOf(id)).map((e) => e.type)).toEqual(['VotingSessionCreated']);
    expect(creations.filter((r) => r.ok && r.result.events.length > 0)).toHaveLength(SESSIONS);
    const statsOf = async () => {
      const stats = await Promise.all(replicas.map((r) => fleet.client.connection.request(`$SRV.STATS.voting.${r.id}`, '', { timeout: 5_000 }).then((m) => m.json<StatsResponse>())));
      return stats.map((s) => s.endpoints.find((e) => e.name === 'CastValidatorVote')?.num_requests ?? 0);
    };
    const statsBefore = await statsOf();

    // Every envelope signed first, then all sent in the same instant.
    const votes = ids.flatMap((id) => FIVE.map((validator, i) => ({ id, validator, envelope: sign(keys, CastValidatorVote, validator, { sessionId: id, decision: i === 4 ? 'deny' : 'approve', reasoning: `${validator} checked ${id}`, confidence: 0.9 }) })));
    const retried: Record<string, number> = {};
    const started = performance.now();
    const replies = await Promise.all(votes.map((v) => send(CastValidatorVote.subject, v.envelope, retried)));
    const retries = Object.values(retried).reduce((a, b) => a + b, 0);
    console.log(`${votes.length} simultaneous votes on ${SESSIONS} sessions over ${REPLICAS} replicas: ${(performance.now() - started).toFixed(0)} ms, client retries ${retries} ${JSON.stringify(retried)}`);
    expect(replies.filter((r) => !r.ok)).toEqual([]);

    for (const id of ids) {
      const events = await streamOf(id);
      const received = events.filter((e) => e.type === 'ValidatorVoteReceived');
      expect(received).toHaveLength(5);
      expect(received.map((e) => (e.data as { validator: string }).validator).sort()).toEqual([...FIVE].sort());
      expect(events.map((e) => e.revision)).toEqual(events.map((_, i) => i));
      expect(events.filter((e) => e.type === 'VotingConsensusReached')).toHaveLength(1);
      const decided = events.filter((e) => e.type === 'VotingSessionDecided');
      expect(decided).toHaveLength(1);
      expect(decided[0]!.data).toMatchObject({ trigger: 'all_voted', recommendation: { decision: 'approve', consensus: 'majority_approve' }, tally: { votes: 5, approve: 4, deny: 1 } });
      expect(events.at(-1)!.type).toBe('VotingSessionDecided');
      // The decision came with exactly one of the five votes: the one the stream ended with.
      const deciding = replies.filter((r, i) => votes[i]!.id === id && r.ok && r.result.events.includes('VotingSessionDecided'));
      expect(deciding).toHaveLength(1);
      expect(deciding[0]!.ok && deciding[0]!.result.commandId).toBe(decided[0]!.metadata['commandId']);
    }

    // Every request (first sends and retries) was handled by exactly one replica, and each replica took some.
    await waitFor(async () => (await statsOf()).reduce((a, b) => a + b, 0) - statsBefore.reduce((a, b) => a + b, 0) === votes.length + retries, 'the replicas to count every vote request');
    const handled = (await statsOf()).map((n, i) => n - statsBefore[i]!);
    console.log(`CastValidatorVote requests per replica: ${handled.join(', ')}`);
    for (const n of handled) expect(n).toBeGreaterThan(0);
  }, scaled(60_000, 180_000));

  it('fires a timeout once after every replica crashed, when all three come back at once and each finds it due', async () => {
    const id = `e2e-timeout-${Date.now().toString(36)}`;
    expect(await request(CreateVotingSession.subject, sign(keys, CreateVotingSession, 'deployer', { requestId: id, actionType: 'drop_table', riskLevel: 'high', votingTimeoutMs: 1500 }))).toMatchObject({ ok: true });
    expect(await request(CastValidatorVote.subject, sign(keys, CastValidatorVote, 'ops_bot', { sessionId: id, decision: 'deny', reasoning: 'no backup', confidence: 1 }))).toMatchObject({ ok: true });
    const { deadlineAt } = (await streamOf(id))[0]!.data as { deadlineAt: string };
    await Promise.all(replicas.map((r) => r.kill()));
    replicas = [];
    const wait = Date.parse(deadlineAt) - Date.now() + 100;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    expect((await streamOf(id)).map((e) => e.type)).toEqual(['VotingSessionCreated', 'ValidatorVoteReceived']);

    // Each replica rebuilds the pending timeouts from the log and fires this one at start: one expiry lands.
    replicas = await fleet.startReplicas('voting', REPLICAS);
    await waitFor(async () => (await streamOf(id)).some((e) => e.type === 'VotingSessionExpired'), 'the expiry after the restart', 15_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const events = await streamOf(id);
    expect(events.map((e) => e.type)).toEqual(['VotingSessionCreated', 'ValidatorVoteReceived', 'VotingSessionExpired']);
    expect(events[2]).toMatchObject({
      data: { deadlineAt, missing: FIVE.filter((v) => v !== 'ops_bot'), recommendation: { consensus: 'no_quorum', decision: 'escalate', requiresHitl: true } },
      metadata: { actor: 'service:voting', commandType: 'ExpireVotingSession' },
    });
    // The expiry records when it was decided (after the outage), beside when it was due.
    expect(Date.parse((events[2]!.data as { expiredAt: string }).expiredAt)).toBeGreaterThan(Date.parse(deadlineAt));
  }, 60_000);
});
