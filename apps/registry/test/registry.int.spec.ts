import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DisableAgent, EnableAgent, GetAgent, ListAgents, GetConfiguredKeys, RegisterAgent, ReportHealth, RotateAgentKey, UpdateAgent, type AgentView, type CommandResult, type Reply } from '@agora/contracts';
import { createSignedCommand, generateKeyPair, verifyCommandSignature, type KeyPair } from '@agora/identity';
import { openServiceContext, type RuntimeConfig, type ServiceContext } from '@agora/runtime';
import { serviceTransports, waitFor } from '@agora/testing';
import { startRegistryService } from '../src/registry-service.js';

// In one process, and over a NATS server of this file's own.
const setups = serviceTransports('registry');

describe.each(setups)('registry service ($name)', ({ agora }) => {
  let dir: string;
  let root: KeyPair;
  let context: ServiceContext;
  let stopService: () => Promise<void>;

  const send = (type: string, actor: string, key: KeyPair, payload: Record<string, unknown>, extra: { commandId?: string; issuedAt?: string } = {}) =>
    createSignedCommand({ type, actor, payload, secretKey: key.secretKey, ...extra });
  const request = <T = CommandResult>(subject: string, body: unknown): Promise<Reply<T>> => context.client.request<T>(subject, body, { timeoutMs: 5_000 });
  const eventCount = async () => {
    let n = 0;
    for await (const _ of context.store.readAll()) n++;
    return n;
  };
  const register = (agentId: string, key: KeyPair, roles: string[], by = { id: 'root', key: root }) =>
    request(RegisterAgent.subject, send('RegisterAgent', by.id, by.key, { agentId, publicKey: key.publicKey, displayName: agentId, roles }));

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-registry-'));
    root = generateKeyPair();
    const config: RuntimeConfig = { ...agora(dir, { agentId: 'root', publicKey: root.publicKey }), requestTimeoutMs: 5_000 };
    context = await openServiceContext(config);
    const running = await startRegistryService(context, { logger: false });
    stopService = () => running.close();
  });

  afterEach(async () => {
    await stopService();
    await context.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('registers an agent with a command signed by the bootstrap operator, keeping the signature in the event metadata', async () => {
    const alice = generateKeyPair();
    const envelope = send('RegisterAgent', 'root', root, { agentId: 'alice', publicKey: alice.publicKey, displayName: 'Alice', roles: ['executive'], constitutions: ['risk'] });
    const reply = await request(RegisterAgent.subject, envelope);
    expect(reply).toEqual({ ok: true, result: expect.objectContaining({ commandId: envelope.commandId, streamId: 'agent-alice', events: ['AgentRegistered'], revision: 0, duplicate: false }) });

    const [event] = await context.store.readStream('agent-alice');
    expect(event?.data).toMatchObject({ agentId: 'alice', roles: ['executive'], constitutions: ['risk'], trustScore: 500, health: 1, risk: 0 });
    const meta = event!.metadata;
    expect(meta).toMatchObject({ actor: 'root', commandId: envelope.commandId, issuedAt: envelope.issuedAt, signature: envelope.signature, correlationId: envelope.commandId });
    // An auditor rebuilds the envelope from the event alone and re-verifies it.
    const rebuilt = { commandId: meta['commandId'], type: meta['commandType'], actor: meta['actor'], issuedAt: meta['issuedAt'], payload: meta['commandPayload'], signature: meta['signature'] } as Parameters<typeof verifyCommandSignature>[0];
    expect(verifyCommandSignature(rebuilt, root.publicKey)).toBe(true);

    const got = await request(GetAgent.subject, { agentId: 'alice' });
    expect(got).toEqual({ ok: true, result: expect.objectContaining({ agentId: 'alice', displayName: 'Alice', status: 'active', revision: 0 }) });
  });

  it('lets a freshly registered operator act at once, before its projection catches up', async () => {
    const ops = generateKeyPair();
    expect((await register('ops', ops, ['operator'])).ok).toBe(true);
    const bob = generateKeyPair();
    const reply = await register('bob', bob, ['reviewer'], { id: 'ops', key: ops });
    expect(reply).toMatchObject({ ok: true, result: { events: ['AgentRegistered'] } });
  });

  it('refuses a forged envelope and writes nothing', async () => {
    const mallory = generateKeyPair();
    const before = await eventCount();
    const forged = send('RegisterAgent', 'root', mallory, { agentId: 'mallory', publicKey: mallory.publicKey, displayName: 'M', roles: ['operator'] });
    expect(await request(RegisterAgent.subject, forged)).toMatchObject({ ok: false, error: { code: 'bad_signature' } });
    const tampered = { ...send('RegisterAgent', 'root', root, { agentId: 'eve', publicKey: mallory.publicKey, displayName: 'E', roles: ['reviewer'] }) };
    tampered.payload = { ...tampered.payload, roles: ['operator'] };
    expect(await request(RegisterAgent.subject, tampered)).toMatchObject({ ok: false, error: { code: 'bad_signature' } });
    expect(await eventCount()).toBe(before);
  });

  it('answers a replayed envelope with the first result and appends nothing, even after a restart', async () => {
    const carol = generateKeyPair();
    const envelope = send('RegisterAgent', 'root', root, { agentId: 'carol', publicKey: carol.publicKey, displayName: 'Carol', roles: ['validator'] });
    const first = await request(RegisterAgent.subject, envelope);
    const again = await request(RegisterAgent.subject, envelope);
    expect(again).toEqual({ ...first, result: { ...(first as { result: CommandResult }).result, duplicate: true } });
    await stopService();
    const restarted = await startRegistryService(context, { logger: false });
    stopService = () => restarted.close();
    const afterRestart = await request<CommandResult>(RegisterAgent.subject, envelope);
    expect(afterRestart).toMatchObject({ ok: true, result: { commandId: envelope.commandId, events: ['AgentRegistered'], revision: 0, duplicate: true } });
    expect(await context.store.readStream('agent-carol')).toHaveLength(1);
  });

  it('gives each refusal its own code and writes nothing', async () => {
    const dave = generateKeyPair();
    expect((await register('dave', dave, ['reviewer'])).ok).toBe(true);
    const before = await eventCount();
    const unsigned: Record<string, unknown> = { ...send('RegisterAgent', 'root', root, { agentId: 'x1', publicKey: dave.publicKey, displayName: 'x', roles: ['observer'] }) };
    delete unsigned['signature'];
    const cases: [unknown, string][] = [
      [unsigned, 'unsigned_command'],
      [send('RegisterAgent', 'root', root, { agentId: 'x2', publicKey: dave.publicKey, displayName: 'x', roles: ['observer'] }, { issuedAt: new Date(Date.now() - 600_000).toISOString() }), 'stale_command'],
      [send('RegisterAgent', 'nobody', dave, { agentId: 'x3', publicKey: dave.publicKey, displayName: 'x', roles: ['observer'] }), 'unknown_actor'],
      [send('RegisterAgent', 'dave', dave, { agentId: 'x4', publicKey: dave.publicKey, displayName: 'x', roles: ['observer'] }), 'forbidden'],
      [send('RegisterAgent', 'root', root, { agentId: 'x5', publicKey: dave.publicKey, displayName: 'x', roles: ['king'] }), 'invalid_command'],
      [send('RegisterAgent', 'root', root, { agentId: 'x6', publicKey: dave.publicKey, displayName: 'x', roles: ['observer'], extra: 1 }), 'invalid_command'],
      [send('UpdateAgent', 'root', root, { agentId: 'nobody', trustScore: 10 }), 'invalid_command'], // wrong subject for the type
      [{ hello: 'world' }, 'invalid_command'],
    ];
    for (const [body, code] of cases) {
      expect(await request(RegisterAgent.subject, body)).toMatchObject({ ok: false, error: { code } });
    }
    expect(await request(UpdateAgent.subject, send('UpdateAgent', 'root', root, { agentId: 'nobody', trustScore: 10 }))).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(await eventCount()).toBe(before);
  });

  it('updates, rotates keys and disables: the old key and the disabled agent are refused', async () => {
    const erin = generateKeyPair();
    expect((await register('erin', erin, ['operator'])).ok).toBe(true);
    expect(await request(UpdateAgent.subject, send('UpdateAgent', 'root', root, { agentId: 'erin', trustScore: 900 }))).toMatchObject({ ok: true, result: { events: ['AgentUpdated'] } });
    // Health and risk have one way in: ReportHealth (here from an operator's monitor).
    expect(await request(UpdateAgent.subject, send('UpdateAgent', 'root', root, { agentId: 'erin', risk: 0.3 }))).toMatchObject({ ok: false, error: { code: 'invalid_command' } });
    expect(await request(ReportHealth.subject, send('ReportHealth', 'root', root, { agentId: 'erin', health: 0.8, risk: 0.3 }))).toMatchObject({ ok: true, result: { events: ['AgentHealthReported'] } });
    const erin2 = generateKeyPair();
    expect(await request(RotateAgentKey.subject, send('RotateAgentKey', 'root', root, { agentId: 'erin', publicKey: erin2.publicKey }))).toMatchObject({ ok: true });
    const frank = generateKeyPair();
    // The directory follows the log: wait until it has seen the rotation.
    await waitFor(async () => (await context.registry.agent('erin'))?.publicKey === erin2.publicKey, 'the key rotation');
    expect(await register('frank', frank, ['observer'], { id: 'erin', key: erin })).toMatchObject({ ok: false, error: { code: 'bad_signature' } });
    expect(await register('frank', frank, ['observer'], { id: 'erin', key: erin2 })).toMatchObject({ ok: true });
    expect(await request(DisableAgent.subject, send('DisableAgent', 'root', root, { agentId: 'erin', reason: 'key leaked' }))).toMatchObject({ ok: true });
    await waitFor(async () => (await context.registry.agent('erin'))?.status === 'disabled', 'the disable');
    expect(await register('grace', frank, ['observer'], { id: 'erin', key: erin2 })).toMatchObject({ ok: false, error: { code: 'actor_disabled' } });

    const listed = await request<{ agents: { agentId: string; trustScore: number; risk: number }[] }>(ListAgents.subject, {});
    expect(listed.ok && listed.result.agents.map((a) => a.agentId)).toEqual(['frank']);
    const all = await request<{ agents: { agentId: string; trustScore: number; risk: number }[] }>(ListAgents.subject, { includeDisabled: true });
    expect(all.ok && all.result.agents.find((a) => a.agentId === 'erin')).toMatchObject({ trustScore: 900, risk: 0.3 });
    // Enabled again under a new key: the leaked one stays refused, the new one signs.
    const erin3 = generateKeyPair();
    expect(await request(EnableAgent.subject, send('EnableAgent', 'erin', erin2, { agentId: 'erin', reason: 'self' }))).toMatchObject({ ok: false, error: { code: 'actor_disabled' } });
    expect(await request(EnableAgent.subject, send('EnableAgent', 'root', root, { agentId: 'erin', reason: 'new key issued', publicKey: erin3.publicKey }))).toMatchObject({
      ok: true,
      result: { events: ['AgentKeyRotated', 'AgentEnabled'] },
    });
    await waitFor(async () => (await context.registry.agent('erin'))?.status === 'active', 'the enable');
    expect(await register('grace', frank, ['observer'], { id: 'erin', key: erin2 })).toMatchObject({ ok: false, error: { code: 'bad_signature' } });
    expect(await register('grace', frank, ['observer'], { id: 'erin', key: erin3 })).toMatchObject({ ok: true });
    expect(await request(GetAgent.subject, { agentId: 'zed' })).toMatchObject({ ok: false, error: { code: 'not_found' } });
    // The keys configured outside the log: the operator's, and the service's own (what it signs on its own behalf).
    expect(await request(GetConfiguredKeys.subject, {})).toEqual({
      ok: true,
      result: { operators: [{ agentId: 'root', publicKey: root.publicKey }], services: { registry: [{ publicKey: context.serviceIdentity('registry').publicKey }] } },
    });
  });

  it('runs the circuit breaker: a risky report pauses the agent, whose commands are then refused forbidden, except its health reports', async () => {
    const hal = generateKeyPair();
    const eve = generateKeyPair();
    expect((await register('hal', hal, ['operator'])).ok).toBe(true);
    expect((await register('eve', eve, ['observer'])).ok).toBe(true);
    // Only the agent itself or an operator may report an agent's health.
    expect(await request(ReportHealth.subject, send('ReportHealth', 'eve', eve, { agentId: 'hal', health: 0.9, risk: 0.1 }))).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(await request(ReportHealth.subject, send('ReportHealth', 'hal', hal, { agentId: 'hal', health: 0.35, risk: 0.65, tags: ['cascade'] }))).toMatchObject({
      ok: true,
      result: { events: ['AgentHealthReported', 'AgentPaused'] },
    });
    await waitFor(async () => (await context.registry.agent('hal'))?.breaker.state === 'open', 'the pause');
    const view = await request<AgentView>(GetAgent.subject, { agentId: 'hal' });
    expect(view).toMatchObject({ ok: true, result: { risk: 0.65, health: 0.35, breaker: { state: 'open', pauses: 1, sessionId: 'hal-p1' } } });
    expect(await request(UpdateAgent.subject, send('UpdateAgent', 'hal', hal, { agentId: 'eve', trustScore: 10 }))).toMatchObject({ ok: false, error: { code: 'forbidden', message: expect.stringMatching(/paused by its circuit breaker/) } });
    expect(await request(ReportHealth.subject, send('ReportHealth', 'hal', hal, { agentId: 'hal', health: 0.9, risk: 0.1 }))).toMatchObject({ ok: true, result: { events: ['AgentHealthReported'] } });
  });
});
