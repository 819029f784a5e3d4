// The registry as an operator runs it: separate `agora-registry` processes over the shared NATS
// server, the event log in a JetStream stream of their own. The test speaks to them only over NATS
// and reads what they wrote straight from the log.
import { GetAgent, RegisterAgent, UpdateAgent, type AgentView, type CommandResult, type Reply } from '@agora/contracts';
import { openJetStreamEventStore, type EventStore } from '@agora/eventstore';
import { createSignedCommand, generateKeyPair, verifyCommandSignature, type KeyPair, type SignedCommand } from '@agora/identity';
import type { StatsResponse } from '@agora/messaging';
import { scaled, startServiceFleet, waitFor, type ServiceFleet, type ServiceProcess } from '@agora/testing';
import { expectOnlyReplicas, gatherServiceReplies, runRegistry } from './support/registry-process.js';

const REPLICAS = 3;
/** Concurrent updates of one agent: 100 in npm test, 500 under AGORA_TEST_SCALE=full (npm run test:full). */
const CONCURRENT_UPDATES = scaled(100, 500);

describe('agora-registry processes (e2e)', () => {
  // A NATS server of the test's own: on the shared one, other runs' registries would join the queue group.
  let fleet: ServiceFleet;
  let root: KeyPair;
  let replicas: ServiceProcess[] = [];
  let store: EventStore;

  const sign = (type: string, payload: Record<string, unknown>, key: KeyPair = root, actor = 'root'): SignedCommand => createSignedCommand({ type, actor, payload, secretKey: key.secretKey });
  const request = <T = CommandResult>(subject: string, body: unknown, timeoutMs = 10_000): Promise<Reply<T>> => fleet.client.request<T>(subject, body, { timeoutMs });
  const eventCount = async () => {
    let n = 0;
    for await (const e of store.readAll()) if (!e.streamId.startsWith('commandid-')) n++;
    return n;
  };

  beforeAll(async () => {
    // The test opens the log first, so the replicas find the stream made rather than race to make it.
    fleet = await startServiceFleet({ label: 'e2e' });
    root = fleet.key('root');
    store = await openJetStreamEventStore({ servers: fleet.nats.url, streamName: fleet.log.streamName, subjectPrefix: fleet.log.subjectPrefix });
    replicas = await fleet.startReplicas('registry', REPLICAS);
  }, 120_000);

  afterAll(async () => {
    await store?.close();
    await fleet?.stop();
  }, 30_000);

  it('registers an agent with a signed RegisterAgent: ok reply, the event in the log with actor, commandId and signature, and the query finds it', async () => {
    const alice = generateKeyPair();
    const envelope = sign('RegisterAgent', { agentId: 'alice', publicKey: alice.publicKey, displayName: 'Alice', roles: ['executive'], constitutions: ['risk'] });
    const reply = await request(RegisterAgent.subject, envelope);
    expect(reply).toEqual({ ok: true, result: expect.objectContaining({ commandId: envelope.commandId, streamId: 'agent-alice', events: ['AgentRegistered'], revision: 0, duplicate: false }) });

    const events = await store.readStream('agent-alice');
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event).toMatchObject({ type: 'AgentRegistered', data: { agentId: 'alice', publicKey: alice.publicKey, roles: ['executive'], constitutions: ['risk'] } });
    const meta = event!.metadata;
    expect(meta).toMatchObject({ actor: 'root', commandId: envelope.commandId, commandType: 'RegisterAgent', issuedAt: envelope.issuedAt, signature: envelope.signature });
    // The log alone is enough to re-verify who decided this.
    const rebuilt = { commandId: meta['commandId'], type: meta['commandType'], actor: meta['actor'], issuedAt: meta['issuedAt'], payload: meta['commandPayload'], signature: meta['signature'] } as SignedCommand;
    expect(verifyCommandSignature(rebuilt, root.publicKey)).toBe(true);

    const got = await request<AgentView>(GetAgent.subject, { agentId: 'alice' });
    expect(got).toEqual({ ok: true, result: expect.objectContaining({ agentId: 'alice', displayName: 'Alice', publicKey: alice.publicKey, status: 'active', revision: 0 }) });
  }, 30_000);

  it('refuses a forged envelope with bad_signature and answers a replayed one with the first result, appending nothing', async () => {
    const bob = generateKeyPair();
    const mallory = generateKeyPair();
    const before = await eventCount();
    const forged = sign('RegisterAgent', { agentId: 'mallory', publicKey: mallory.publicKey, displayName: 'M', roles: ['operator'] }, mallory, 'root');
    expect(await request(RegisterAgent.subject, forged)).toMatchObject({ ok: false, error: { code: 'bad_signature' } });
    expect(await eventCount()).toBe(before);

    const envelope = sign('RegisterAgent', { agentId: 'bob', publicKey: bob.publicKey, displayName: 'Bob', roles: ['reviewer'] });
    const first = await request(RegisterAgent.subject, envelope);
    expect(first).toMatchObject({ ok: true, result: { events: ['AgentRegistered'], duplicate: false } });
    if (!first.ok) return;
    // Sent again several times, the replay reaches more than one replica: the one that handled it
    // answers from its reply cache, the others find the command in the stream; all say duplicate: true.
    const replays = await Promise.all(Array.from({ length: 6 }, () => request(RegisterAgent.subject, envelope)));
    for (const again of replays) expect(again).toEqual({ ok: true, result: { ...first.result, duplicate: true } });
    expect(await store.readStream('agent-bob')).toHaveLength(1);
    expect(await eventCount()).toBe(before + 1);
  }, 30_000);

  it(`handles ${CONCURRENT_UPDATES} concurrent UpdateAgent commands on one agent across ${REPLICAS} replicas: each lands exactly once`, async () => {
    const busy = generateKeyPair();
    expect(await request(RegisterAgent.subject, sign('RegisterAgent', { agentId: 'busy', publicKey: busy.publicKey, displayName: 'busy', roles: ['validator'] }))).toMatchObject({ ok: true });
    await expectOnlyReplicas(fleet.client.connection, replicas.map((r) => r.id));
    const statsOf = async () => {
      const stats = await Promise.all(replicas.map((r) => fleet.client.connection.request(`$SRV.STATS.registry.${r.id}`, '', { timeout: 5_000 }).then((m) => m.json<StatsResponse>())));
      return stats.map((s) => s.endpoints.find((e) => e.name === 'UpdateAgent')?.num_requests ?? 0);
    };
    const statsBefore = await statsOf();

    const envelopes = Array.from({ length: CONCURRENT_UPDATES }, (_, i) => sign('UpdateAgent', { agentId: 'busy', displayName: `busy #${i}` }));
    const retried: Record<string, number> = {};
    // The documented contract: a conflict or a timeout may be retried with the same envelope; a
    // repeated commandId returns the first result and appends nothing.
    const send = async (envelope: SignedCommand): Promise<Reply<CommandResult>> => {
      for (let attempt = 1; ; attempt++) {
        const reply = await request(UpdateAgent.subject, envelope, 15_000);
        if (reply.ok || !['conflict', 'timeout'].includes(reply.error.code) || attempt === 20) return reply;
        retried[reply.error.code] = (retried[reply.error.code] ?? 0) + 1;
      }
    };
    const started = performance.now();
    const replies = await Promise.all(envelopes.map(send));
    const seconds = (performance.now() - started) / 1000;
    const retries = Object.values(retried).reduce((a, b) => a + b, 0);
    console.log(`${CONCURRENT_UPDATES} concurrent UpdateAgent over ${REPLICAS} replicas: ${seconds.toFixed(1)} s, client retries ${retries} ${JSON.stringify(retried)}`);

    expect(replies.filter((r) => !r.ok)).toEqual([]);
    for (const [i, reply] of replies.entries()) expect(reply).toMatchObject({ ok: true, result: { commandId: envelopes[i]!.commandId, streamId: 'agent-busy', events: ['AgentUpdated'] } });

    const events = await store.readStream('agent-busy');
    expect(events).toHaveLength(1 + CONCURRENT_UPDATES);
    expect(events.map((e) => e.revision)).toEqual(events.map((_, i) => i));
    const commandIds = events.slice(1).map((e) => e.metadata['commandId']);
    expect(new Set(commandIds).size).toBe(CONCURRENT_UPDATES);
    expect([...commandIds].sort()).toEqual(envelopes.map((e) => e.commandId).sort());
    // Each reply names the revision its event got, and that event is the command's own.
    for (const reply of replies) if (reply.ok) expect(events[reply.result.revision]?.metadata['commandId']).toBe(reply.result.commandId);

    // Every request (first sends and retries) was handled by exactly one replica, and each replica took some.
    await waitFor(async () => (await statsOf()).reduce((a, b) => a + b, 0) - statsBefore.reduce((a, b) => a + b, 0) === CONCURRENT_UPDATES + retries, 'the replicas to count every request');
    const handled = (await statsOf()).map((n, i) => n - statsBefore[i]!);
    console.log(`UpdateAgent requests per replica: ${handled.join(', ')}`);
    for (const n of handled) expect(n).toBeGreaterThan(0);
  }, scaled(120_000, 300_000));

  it('answers NATS services discovery: $SRV.PING.registry from each of the three replicas', async () => {
    const pings = await gatherServiceReplies<{ type: string; name: string; id: string }>(fleet.client.connection, '$SRV.PING.registry', 500);
    expect(pings.map((p) => p.id).sort()).toEqual(replicas.map((r) => r.id).sort());
    for (const ping of pings) expect(ping).toMatchObject({ type: 'io.nats.micro.v1.ping_response', name: 'registry' });
  }, 30_000);

  it('stops with exit code 2 and names the setting when a setting is bad; --help exits 0 and lists the environment', async () => {
    const [bad, help] = await Promise.all([
      runRegistry([], { NATS_URL: fleet.nats.url, EVENT_STORE: 'postgres://x', AGORA_OPERATOR_PUBLIC_KEY: root.publicKey }),
      runRegistry(['--help'], {}),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^agora-registry: EVENT_STORE="postgres:\/\/x" is not understood/);
    expect(bad.stdout).not.toMatch(/ready/);

    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: agora-registry/);
    for (const setting of ['EVENT_STORE', 'NATS_URL', 'AGORA_DATA_DIR', 'AGORA_OPERATOR_KEY_FILE', 'AGORA_OPERATOR_PUBLIC_KEY', 'AGORA_OPERATOR_ID', 'AGORA_MAX_CLOCK_SKEW_MS', 'AGORA_REQUEST_TIMEOUT_MS']) {
      expect(help.stdout).toMatch(new RegExp(`^\\s+${setting}\\b`, 'm'));
    }
  }, 60_000);
});
