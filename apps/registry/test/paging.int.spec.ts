import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentRegistered, ListAgents, PAGE_LIMIT_MAX, type AgentView, type Reply, type Role } from '@agora/contracts';
import { generateKeyPair } from '@agora/identity';
import { connectNats } from '@agora/messaging';
import { openServiceContext, type ServiceContext } from '@agora/runtime';
import { embeddedAgora, scaled, startNatsServer, waitFor, type PrivateNatsServer } from '@agora/testing';
import type { NatsConnection } from '@nats-io/nats-core';
import { startRegistryService } from '../src/registry-service.js';

/** NATS' default max_payload: a reply larger than this never reaches the caller. */
const NATS_MAX_PAYLOAD = 1024 * 1024;
// 10,000 agents in the tests' usual run; npm run test:full lists 100,000.
const AGENTS = scaled(10_000, 100_000);
const ROLES: Role[][] = [['executive'], ['reviewer'], ['validator'], ['reviewer', 'validator'], ['observer']];

// The fleet the issue measured (10,000 agents made a 4.7 MB reply), and ten times over (full size): every agent
// registered in the log, read by the registry's directory, and listed over a private NATS server.
describe(`registry agents.list with ${AGENTS.toLocaleString('en-US')} agents, over NATS`, () => {
  let nats: PrivateNatsServer;
  let dir: string;
  let context: ServiceContext;
  let stopService: () => Promise<void>;
  let nc: NatsConnection;

  /** One request as any NATS client sends it; the reply's size is the message's, as it travelled. */
  const list = async (params: Record<string, unknown>): Promise<{ bytes: number; reply: Reply<{ agents: AgentView[]; nextCursor?: string }> }> => {
    const msg = await nc.request(ListAgents.subject, JSON.stringify(params), { timeout: 10_000 });
    return { bytes: msg.data.length, reply: JSON.parse(new TextDecoder().decode(msg.data)) };
  };

  beforeAll(async () => {
    nats = await startNatsServer();
    dir = await mkdtemp(join(tmpdir(), 'agora-registry-paging-'));
    context = await openServiceContext({ ...embeddedAgora(dir, { agentId: 'root', publicKey: generateKeyPair().publicKey }), natsUrl: nats.url });
    const running = await startRegistryService(context, { logger: false });
    stopService = () => running.close();
    nc = await connectNats({ servers: nats.url, name: 'paging-test' });

    // Registrations as RegisterAgent writes them, appended straight to the log (4,096 in flight; the
    // embedded store shares one fdatasync among them). Ids are appended in a shuffled order.
    const keys = Array.from({ length: 16 }, () => generateKeyPair().publicKey);
    const at = '2026-01-01T00:00:00.000Z';
    const order = Array.from({ length: AGENTS }, (_, i) => (i * 7919) % AGENTS);
    const register = (n: number) => {
      const agentId = `agent-${String(n).padStart(6, '0')}`;
      const data = AgentRegistered.data.parse({
        agentId,
        publicKey: keys[n % keys.length],
        displayName: `Fleet agent ${n} (${ROLES[n % ROLES.length]!.join(', ')})`,
        roles: ROLES[n % ROLES.length],
        constitutions: n % 2 ? ['safety', 'privacy'] : ['risk'],
        specializations: ['deployments', `region-${n % 12}`],
        trustScore: 300 + (n % 600),
        health: 1,
        risk: 0,
        registeredAt: at,
      });
      const metadata = { actor: 'root', commandId: randomUUID(), correlationId: randomUUID(), causationId: null, at };
      return context.store.append(`agent-${agentId}`, [{ id: randomUUID(), type: 'AgentRegistered', data, metadata }], 'no_stream');
    };
    for (let i = 0; i < AGENTS; i += 4096) await Promise.all(order.slice(i, i + 4096).map(register));
    await waitFor(() => [...context.registry.all()].length === AGENTS, `the directory to know ${AGENTS} agents`, 120_000);
  }, 300_000);

  afterAll(async () => {
    await nc?.close();
    await stopService?.();
    await context?.close();
    await nats?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('would not fit in one NATS message unpaged', async () => {
    const { reply } = await list({ limit: 1 });
    expect(reply.ok).toBe(true);
    const one = Buffer.byteLength(JSON.stringify(reply.ok && reply.result.agents[0]));
    // Every agent's view in one reply, as the unpaged query answered: megabytes (tens of them at full size).
    expect(one * AGENTS).toBeGreaterThan(3 * NATS_MAX_PAYLOAD);
  });

  it('answers the first page with the default limit and a cursor', async () => {
    const { bytes, reply } = await list({});
    expect(reply.ok).toBe(true);
    if (!reply.ok) return;
    expect(reply.result.agents.map((a) => a.agentId)).toEqual(Array.from({ length: 100 }, (_, i) => `agent-${String(i).padStart(6, '0')}`));
    expect(reply.result.nextCursor).toEqual(expect.any(String));
    expect(bytes).toBeLessThan(NATS_MAX_PAYLOAD / 10);
  });

  it(`walks every agent exactly once, in id order, every page under 1 MiB (limit ${PAGE_LIMIT_MAX})`, async () => {
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    do {
      const { bytes, reply } = await list({ limit: PAGE_LIMIT_MAX, ...(cursor === undefined ? {} : { cursor }) });
      if (!reply.ok) throw new Error(`page ${sizes.length}: ${JSON.stringify(reply.error)}`);
      sizes.push(bytes);
      seen.push(...reply.result.agents.map((a) => a.agentId));
      cursor = reply.result.nextCursor;
    } while (cursor !== undefined);
    expect(seen).toHaveLength(AGENTS);
    expect(new Set(seen).size).toBe(AGENTS);
    expect(seen).toEqual([...seen].sort());
    expect(Math.max(...sizes)).toBeLessThan(NATS_MAX_PAYLOAD);
    expect(sizes.length).toBeGreaterThanOrEqual(AGENTS / PAGE_LIMIT_MAX);
  }, 120_000);

  it('pages a filtered list too: every reviewer exactly once', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const { reply } = await list({ role: 'reviewer', limit: 500, ...(cursor === undefined ? {} : { cursor }) });
      if (!reply.ok) throw new Error(JSON.stringify(reply.error));
      expect(reply.result.agents.every((a) => a.roles.includes('reviewer'))).toBe(true);
      seen.push(...reply.result.agents.map((a) => a.agentId));
      cursor = reply.result.nextCursor;
    } while (cursor !== undefined);
    expect(new Set(seen).size).toBe((AGENTS * 2) / ROLES.length);
    expect(seen).toHaveLength((AGENTS * 2) / ROLES.length);
  }, 60_000);

  it('refuses a limit over the maximum and a cursor that is not one, saying why', async () => {
    expect((await list({ limit: PAGE_LIMIT_MAX + 1 })).reply).toMatchObject({
      ok: false,
      error: { code: 'invalid_command', message: 'invalid agents.list parameters: limit: limit is at most 1000 items a page; follow nextCursor for the rest' },
    });
    expect((await list({ cursor: 'bm90LWEtY3Vyc29y' })).reply).toMatchObject({ ok: false, error: { code: 'invalid_command', message: expect.stringContaining('the cursor is not one of this list') } });
  });
});
