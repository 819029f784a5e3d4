/**
 * Read your writes, over the real parts: a private nats-server, one JetStream log, two registry
 * replicas (each its own process context and store connection, one queue group) and a gateway of
 * its own. The replicas' agent directories (the read model ListAgents answers from) take in each
 * event 25 ms late, as on a loaded machine, so a query right after a command does not see it.
 * A command's reply carries its log position; a query given it as `minPosition` (HTTP
 * `?minPosition=`, or the field of a NATS query's body) always sees the write, whichever replica
 * answers; a position the read models cannot reach is refused with `read_model_behind` (503,
 * details {minPosition, position}) once the bounded wait is over; and so is an event stream.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListAgents, RegisterAgent, type CommandResult, type Reply } from '@agora/contracts';
import { startGateway, type Gateway } from '@agora/gateway';
import { createSignedCommand, generateKeyPair, type KeyPair } from '@agora/identity';
import { startRegistryService } from '@agora/registry';
import { ReadModelPositions } from '@agora/eventsourcing';
import { commandDirectory, openServiceContext, RegistryDirectory, type ServiceContext } from '@agora/runtime';
import { sharedLogReplica, startNatsServer, uniqueJetStreamLog, type PrivateNatsServer } from '@agora/testing';
import { lagging } from './support/lagging-store.js';

/** The bounded wait every process here is given (AGORA_READ_MODEL_WAIT_MS). */
const WAIT_MS = 1_000;
/** How late the registry replicas' read models take in each event. */
const LAG_MS = 25;

/** `context` with an agent directory that lags (and the read-model positions that follow it). */
async function withLaggingDirectory(context: ServiceContext): Promise<{ context: ServiceContext; stop: () => Promise<void> }> {
  const readModels = new ReadModelPositions(context.store, WAIT_MS);
  const registry = new RegistryDirectory(lagging(context.store, LAG_MS), { positions: readModels });
  await registry.start();
  return {
    context: { ...context, registry, directory: commandDirectory(registry, context.config.operators), readModels, transport: { ...context.transport, readModels } },
    stop: () => registry.stop(),
  };
}
/** A JetStream log position far beyond anything this test writes. */
const UNREACHABLE = '9000000000000000:000000';

let nats: PrivateNatsServer;
let dir: string;
let root: KeyPair;
const contexts: ServiceContext[] = [];
const closers: Array<() => Promise<void>> = [];
let gateway: Gateway;

beforeAll(async () => {
  nats = await startNatsServer();
  dir = await mkdtemp(join(tmpdir(), 'agora-ryw-'));
  root = generateKeyPair();
  const log = uniqueJetStreamLog('ryw', nats.url);
  const open = (name: string) => openServiceContext({ ...sharedLogReplica(nats.url, log, { agentId: 'root', publicKey: root.publicKey }, join(dir, name)), readModelWaitMs: WAIT_MS });
  for (const name of ['registry-a', 'registry-b']) {
    const context = await open(name);
    contexts.push(context);
    const slow = await withLaggingDirectory(context);
    closers.push(slow.stop);
    const running = await startRegistryService(slow.context, { logger: false });
    closers.push(() => running.close());
  }
  const front = await open('gateway');
  contexts.push(front);
  gateway = await startGateway({ client: front.client, store: front.store, port: 0, host: '127.0.0.1', logger: false, console: false, readModelWaitMs: WAIT_MS });
  closers.push(() => gateway.close());
}, 60_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  for (const context of contexts) await context.close();
  nats?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const register = async (agentId: string): Promise<CommandResult> => {
  const envelope = createSignedCommand({ type: 'RegisterAgent', actor: 'root', commandId: randomUUID(), payload: { agentId, publicKey: generateKeyPair().publicKey, displayName: agentId, roles: ['observer'] }, secretKey: root.secretKey });
  const res = await fetch(`${gateway.url}/v1/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(envelope) });
  const reply = (await res.json()) as Reply<CommandResult>;
  if (!reply.ok) throw new Error(`RegisterAgent refused: ${reply.error.code} ${reply.error.message}`);
  return reply.result;
};

/** RegisterAgent sent straight over NATS (no gateway in between: the query can follow within a fraction of a millisecond). */
const registerOverNats = async (agentId: string): Promise<CommandResult> => {
  const envelope = createSignedCommand({ type: 'RegisterAgent', actor: 'root', commandId: randomUUID(), payload: { agentId, publicKey: generateKeyPair().publicKey, displayName: agentId, roles: ['observer'] }, secretKey: root.secretKey });
  const reply = await contexts[2]!.client.request<CommandResult>(RegisterAgent.subject, envelope, { timeoutMs: 5_000 });
  if (!reply.ok) throw new Error(`RegisterAgent refused: ${reply.error.code} ${reply.error.message}`);
  return reply.result;
};

const listed = (reply: Reply<{ agents: Array<{ agentId: string }> }>): string[] => (reply.ok ? reply.result.agents.map((a) => a.agentId) : []);

describe('read your writes', () => {
  it('a query given the position of a command always sees the write, over HTTP and NATS, whichever replica answers', async () => {
    let unseenWithout = 0;
    for (let round = 0; round < 10; round++) {
      // Over NATS: the query follows the reply at once; without minPosition the lagging model misses the agent.
      const fast = `ryw${round}n${randomUUID().slice(0, 6)}`;
      const { position } = await registerOverNats(fast);
      expect(position).toEqual(expect.any(String));
      const without = await contexts[2]!.client.request<{ agents: Array<{ agentId: string }> }>(ListAgents.subject, { limit: 1000 }, { timeoutMs: 5_000 });
      if (!listed(without).includes(fast)) unseenWithout++;
      const overNats = await contexts[2]!.client.request<{ agents: Array<{ agentId: string }> }>(ListAgents.subject, { limit: 1000, minPosition: position }, { timeoutMs: 5_000 });
      expect(overNats.ok).toBe(true);
      expect(listed(overNats)).toContain(fast);

      // Over HTTP, through the gateway.
      const agentId = `ryw${round}h${randomUUID().slice(0, 6)}`;
      const written = await register(agentId);
      const res = await fetch(`${gateway.url}/v1/registry/agents?limit=1000&minPosition=${encodeURIComponent(written.position!)}`);
      expect(res.status).toBe(200);
      expect(listed((await res.json()) as Reply<{ agents: Array<{ agentId: string }> }>)).toContain(agentId);
    }
    // The lag is real: without minPosition the same query missed its write.
    expect(unseenWithout).toBeGreaterThan(0);
  }, 120_000);

  it('a position the read models cannot reach: read_model_behind after the bounded wait, with how far they have got', async () => {
    const head = (await register(`ryw${randomUUID().slice(0, 8)}`)).position!;
    const started = Date.now();
    const res = await fetch(`${gateway.url}/v1/registry/agents?minPosition=${encodeURIComponent(UNREACHABLE)}`);
    const elapsed = Date.now() - started;
    expect(res.status).toBe(503);
    const reply = (await res.json()) as Reply;
    expect(reply).toMatchObject({ ok: false, error: { code: 'read_model_behind', details: { minPosition: UNREACHABLE, position: expect.any(String) } } });
    if (!reply.ok) expect(contexts[0]!.store.comparePositions(reply.error.details!['position'] as string, head)).toBeGreaterThanOrEqual(0);
    expect(elapsed).toBeGreaterThanOrEqual(WAIT_MS - 50);
    expect(elapsed).toBeLessThan(WAIT_MS + 3_000);

    const overNats = await contexts[2]!.client.request(ListAgents.subject, { minPosition: UNREACHABLE }, { timeoutMs: 5_000 });
    expect(overNats).toMatchObject({ ok: false, error: { code: 'read_model_behind', details: { minPosition: UNREACHABLE } } });
  }, 30_000);

  it('something that is not a position of the log is refused at once as invalid_command', async () => {
    const res = await fetch(`${gateway.url}/v1/registry/agents?minPosition=yesterday`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ ok: false, error: { code: 'invalid_command', details: { minPosition: 'yesterday' } } });
  });

  it('an event stream given minPosition starts once the gateway has taken it in, else read_model_behind', async () => {
    const { position } = await register(`ryw${randomUUID().slice(0, 8)}`);
    const controller = new AbortController();
    const res = await fetch(`${gateway.url}/v1/events?from=end&minPosition=${encodeURIComponent(position!)}`, { signal: controller.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    controller.abort();
    await res.body?.cancel().catch(() => undefined);

    const behind = await fetch(`${gateway.url}/v1/events?minPosition=${encodeURIComponent(UNREACHABLE)}`);
    expect(behind.status).toBe(503);
    expect(await behind.json()).toMatchObject({ ok: false, error: { code: 'read_model_behind', details: { minPosition: UNREACHABLE, position: expect.any(String) } } });
  }, 30_000);
});
