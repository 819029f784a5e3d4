// Replicas that share work: three `agora-voting` processes on a NATS server of their own, each
// session's timeout a durable deadline. Without leases (AGORA_LEASE_TTL_MS=0) every replica fires
// every deadline it has not yet seen expired in the log: up to three commands per expiry, the
// repeats appending nothing but costing a full command each. With leases,
// one replica fires them: one command per expiry. Then the lease holder is killed (SIGKILL) with
// deadlines pending: a standby takes its lease over within a ttl (and a look), and every session
// still expires exactly once in the log. Commands are counted by each replica's
// agora_commands_issued_total{source="deadlines.voting"}.
import { CreateVotingSession, type CommandResult, type Reply } from '@agora/contracts';
import { openJetStreamEventStore, type EventStore } from '@agora/eventstore';
import { scaled, startServiceFleet, waitFor, type ServiceFleet, type ServiceProcess } from '@agora/testing';
import { generateKeys, registerAgents, sign } from './support/fleet.js';

const REPLICAS = 3;
/** Sessions expiring per round: 12 in npm test, 48 under AGORA_TEST_SCALE=full (npm run test:full). */
const SESSIONS = scaled(12, 48);
const TTL_MS = 3_000;
const TIMEOUT_MS = 2_000;

describe('replicas share the voting deadlines (e2e)', () => {
  let fleet: ServiceFleet;
  const keys = generateKeys();
  let store: EventStore;

  const metricsOf = async (replica: ServiceProcess): Promise<string> => (await fetch(/metrics: (http:\/\/\S+\/metrics)/.exec(replica.output())![1]!)).text();
  const sample = (text: string, series: string): number => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  /** Commands each replica issued for its deadlines, by outcome. */
  const issued = async (of: ServiceProcess[]) =>
    Promise.all(
      of.map(async (r) => {
        const text = await metricsOf(r);
        const count = (outcome: string) => sample(text, `agora_commands_issued_total{source="deadlines.voting",outcome="${outcome}"}`);
        return { appended: count('appended'), duplicate: count('duplicate'), unchanged: count('unchanged'), refused: count('refused') };
      }),
    );
  const total = (counts: Array<Record<string, number>>) => counts.reduce((sum, c) => sum + Object.values(c).reduce((a, b) => a + b, 0), 0);

  const startReplicas = (env: Record<string, string>): Promise<ServiceProcess[]> => fleet.startReplicas('voting', REPLICAS, env);

  /** Creates sessions that nobody votes on: each expires by its deadline. */
  const createSessions = async (prefix: string, votingTimeoutMs = TIMEOUT_MS): Promise<string[]> => {
    const ids = Array.from({ length: SESSIONS }, (_, i) => `${prefix}-${i}-${Date.now().toString(36)}`);
    const replies = await Promise.all(
      ids.map((id) =>
        fleet.client.request<CommandResult>(CreateVotingSession.subject, sign(keys, CreateVotingSession, 'deployer', { requestId: id, actionType: 'deploy_production', riskLevel: 'high', votingTimeoutMs }), { timeoutMs: 15_000 }),
      ),
    );
    expect(replies.filter((r: Reply<CommandResult>) => !r.ok)).toEqual([]);
    return ids;
  };
  const expiredOnce = async (ids: string[]): Promise<boolean> => {
    for (const id of ids) {
      const events = await store.readStream(`voting_session-${id}`).catch(() => []);
      if (events.filter((e) => e.type === 'VotingSessionExpired').length !== 1) return false;
    }
    return true;
  };

  beforeAll(async () => {
    fleet = await startServiceFleet({ label: 'votingshare', keys });
    store = await openJetStreamEventStore({ servers: fleet.nats.url, streamName: fleet.log.streamName, subjectPrefix: fleet.log.subjectPrefix });
    await registerAgents(store, keys);
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    await fleet?.stop();
  }, 30_000);

  it(`without leases, each of ${REPLICAS} replicas fires the deadlines it has not yet seen expire (the baseline)`, async () => {
    const group = await startReplicas({ AGORA_LEASE_TTL_MS: '0' });
    try {
      const ids = await createSessions('nolease');
      await waitFor(() => expiredOnce(ids), 'every session to expire', 30_000);
      // Replicas whose timer fired before they saw another's expiry repeat it: their command id was handled.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const counts = await issued(group);
      console.log(`without leases: ${(total(counts) / SESSIONS).toFixed(2)} expiry commands per expired session (${JSON.stringify(counts)})`);
      // Two copies decided at the same instant both answer with the events (stored once: see the log check above).
      expect(counts.reduce((sum, c) => sum + c.appended, 0)).toBeGreaterThanOrEqual(SESSIONS);
      expect(total(counts)).toBeGreaterThan(SESSIONS);
      expect(total(counts)).toBeLessThanOrEqual(REPLICAS * SESSIONS);
      expect(await expiredOnce(ids)).toBe(true);
    } finally {
      await Promise.all(group.map((r) => r.stop()));
    }
  }, scaled(120_000, 300_000));

  it(`with leases, one replica of ${REPLICAS} fires each deadline once; killed, a standby takes over within the ttl and nothing is lost or doubled`, async () => {
    const group = await startReplicas({ AGORA_LEASE_TTL_MS: String(TTL_MS) });
    const ids = await createSessions('lease');
    await waitFor(() => expiredOnce(ids), 'every session to expire', 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const counts = await issued(group);
    console.log(`with leases: ${total(counts) / SESSIONS} expiry commands per expired session (${JSON.stringify(counts)})`);
    expect(total(counts)).toBe(SESSIONS);
    expect(counts.filter((c) => c.appended > 0)).toHaveLength(1);

    // Who holds the lease says so on /metrics; the others stand by.
    const held = await Promise.all(group.map(async (r) => sample(await metricsOf(r), 'agora_lease_held{lease="deadlines.voting"}')));
    expect(held.sort()).toEqual([0, 0, 1]);
    const holderIndex = (await Promise.all(group.map(async (r) => sample(await metricsOf(r), 'agora_lease_held{lease="deadlines.voting"}')))).indexOf(1);
    const holder = group[holderIndex]!;
    const standbys = group.filter((r) => r !== holder);

    // Deadlines pending (due after the kill, before the takeover), then the holder crashes.
    const pending = await createSessions('kill', TTL_MS);
    const killedAt = Date.now();
    await holder.kill();
    await waitFor(() => standbys.some((r) => /lease deadlines\.voting: taken by/.test(r.output())), 'a standby to take the lease over', TTL_MS * 3);
    const takeoverMs = Date.now() - killedAt;
    await waitFor(() => expiredOnce(pending), 'every pending session to expire once', 30_000);
    const late = await issued(standbys);
    console.log(`holder killed: lease taken over after ${takeoverMs} ms (ttl ${TTL_MS} ms); ${total(late)} expiry commands by the standbys for ${SESSIONS} sessions (${JSON.stringify(late)})`);
    expect(takeoverMs).toBeLessThanOrEqual(TTL_MS + TTL_MS / 4 + 1_500);
    expect(standbys.filter((r) => /lease deadlines\.voting: taken by/.test(r.output()))).toHaveLength(1);
    // The standby fired every pending deadline once (none had fired before the kill).
    expect(late.reduce((sum, c) => sum + c.appended, 0)).toBe(SESSIONS);
    for (const id of [...ids, ...pending]) {
      const events = await store.readStream(`voting_session-${id}`);
      expect(events.map((e) => e.type)).toEqual(['VotingSessionCreated', 'VotingSessionExpired']);
    }
  }, scaled(120_000, 300_000));
});
