// Two replicas of one service (two registry services, each with its own store connection, in
// one NATS queue group over one JetStream log on a private nats-server): copies of one signed
// envelope, however they are spread in time and whichever replica answers them, get exactly one
// reply saying the write was their own (`duplicate: false`); every other says `duplicate: true`
// with the same revision and position, and the log holds the command once.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RegisterAgent, UpdateAgent, type CommandResult, type Reply } from '@agora/contracts';
import { createSignedCommand, generateKeyPair, type KeyPair, type SignedCommand } from '@agora/identity';
import { openServiceContext, type ServiceContext } from '@agora/runtime';
import { sharedLogReplica, startNatsServer, uniqueJetStreamLog, type PrivateNatsServer } from '@agora/testing';
import { startRegistryService } from '../src/registry-service.js';

let nats: PrivateNatsServer;
let dir: string;
let root: KeyPair;
const replicas: Array<{ context: ServiceContext; close: () => Promise<void> }> = [];

beforeAll(async () => {
  nats = await startNatsServer();
  dir = await mkdtemp(join(tmpdir(), 'agora-replicas-'));
  root = generateKeyPair();
  const log = uniqueJetStreamLog('replicas', nats.url);
  for (const name of ['a', 'b']) {
    const context = await openServiceContext(sharedLogReplica(nats.url, log, { agentId: 'root', publicKey: root.publicKey }, join(dir, name)));
    const running = await startRegistryService(context, { logger: false });
    replicas.push({ context, close: () => running.close() });
  }
}, 60_000);
afterAll(async () => {
  for (const r of replicas) await r.close();
  for (const r of replicas) await r.context.close();
  nats?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const send = async (envelope: SignedCommand): Promise<CommandResult> => {
  const subject = envelope.type === 'RegisterAgent' ? RegisterAgent.subject : UpdateAgent.subject;
  const reply: Reply<CommandResult> = await replicas[0]!.context.client.request<CommandResult>(subject, envelope, { timeoutMs: 10_000 });
  if (!reply.ok) throw new Error(`${envelope.type} refused: ${reply.error.code} ${reply.error.message}`);
  return reply.result;
};

/** Commits of a command in the log (its events share its commandId). */
const eventsOf = async (commandId: string): Promise<number> => {
  let n = 0;
  for await (const e of replicas[0]!.context.store.readAll()) if (e.metadata['commandId'] === commandId && !e.streamId.startsWith('commandid-')) n++;
  return n;
};

function expectOneOwnWrite(results: CommandResult[]): void {
  expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
  const own = results.find((r) => !r.duplicate)!;
  expect(own.events.length).toBeGreaterThan(0);
  for (const r of results) expect(r).toEqual({ ...own, duplicate: r.duplicate });
}

describe('copies of one envelope across two replicas', () => {
  const agentId = `r${randomUUID().slice(0, 8)}`;
  const key = generateKeyPair();
  const update = (round: number): SignedCommand =>
    createSignedCommand({ type: 'UpdateAgent', actor: 'root', commandId: randomUUID(), payload: { agentId, displayName: `Round ${round}` }, secretKey: root.secretKey });

  beforeAll(async () => {
    await send(createSignedCommand({ type: 'RegisterAgent', actor: 'root', commandId: randomUUID(), payload: { agentId, publicKey: key.publicKey, displayName: 'Start', roles: ['observer'] }, secretKey: root.secretKey }));
  });

  it('ten copies at once: one write, exactly one reply says it was its own', async () => {
    for (let round = 0; round < 10; round++) {
      const envelope = update(round);
      const results = await Promise.all(Array.from({ length: 10 }, () => send(envelope)));
      expectOneOwnWrite(results);
      expect(await eventsOf(envelope.commandId)).toBe(results[0]!.events.length);
    }
  }, 120_000);

  it('a plain repeat after the first was answered, by either replica: duplicate every time', async () => {
    // Both replicas keep the agent's folded state between commands, so a repeat reaching the
    // replica that did not write is decided on a state right before the write, and its append is
    // absorbed by the store: that one must still say duplicate.
    for (let round = 100; round < 130; round++) {
      const envelope = update(round);
      const results: CommandResult[] = [];
      for (let copy = 0; copy < 4; copy++) results.push(await send(envelope));
      expect(results[0]!.duplicate).toBe(false);
      expectOneOwnWrite(results);
      expect(await eventsOf(envelope.commandId)).toBe(1);
    }
  }, 120_000);
});
