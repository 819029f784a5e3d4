/**
 * NATS by identity, on a real nats-server started on the users file `agora setup nats` writes
 * (deploy/nats/roles.conf beside it): each agent connects as itself (its Ed25519 key as an nkey)
 * and reads replies only under its own inbox prefix; the setup reloads the server and creates the
 * log's stream, a second run changes nothing; a service may not update the stream; services that
 * only verify the stream refuse to start without it; and with closed reads on NATS a query needs
 * its reader's read token and shows only what the visibility table gives that reader, decided by
 * the service alone: the gateway names its reader, and a hidden proposal stays hidden on both paths.
 * The gateway's user (roles.conf) opens the key-value bucket of its A2A push configurations.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { errors, headers, type NatsConnection } from '@nats-io/nats-core';
import { AgoraError, GetProposal, ListProposals, RegisterAgent, SubmitProposal, type Reply } from '@agora/contracts';
import { startGateway } from '@agora/gateway';
import { openEmbeddedEventStore, openEventStore, StoreRefused } from '@agora/eventstore';
import { generateKeyPair, mintReadToken, type KeyPair } from '@agora/identity';
import { connectNats, createServiceMicroservice, GATEWAY_INBOX_PREFIX, natsAgentPermissions, NatsAgoraClient, natsUserKey, onQuery, READER_HEADER, StaticAgentDirectory, type NatsAgent, type ServiceMicroservice } from '@agora/messaging';
import { Agora } from '@agora/sdk';
import { ended, natsPasswords, refused, startNatsWithUsers, waitFor, type NatsUsersServer } from '@agora/testing';
import { setUpNats } from '../src/commands/nats-setup.js';

const ROLES_CONF = resolve(dirname(fileURLToPath(import.meta.url)), '../../../deploy/nats/roles.conf');
const PROCESS_ROLES = ['service', 'gateway', 'agent', 'observer', 'auditor'] as const;
const passwords = natsPasswords(PROCESS_ROLES);

type AgentName = 'root' | 'alice' | 'bob' | 'audrey';
const keys: Record<AgentName, KeyPair> = { root: generateKeyPair(), alice: generateKeyPair(), bob: generateKeyPair(), audrey: generateKeyPair() };
const agent = (agentId: AgentName, roles: string[]): NatsAgent => ({ agentId, publicKey: keys[agentId].publicKey, roles, status: 'active' });
const root = agent('root', ['operator']);
const alice = agent('alice', ['executive']);
const bob = agent('bob', ['executive']);
const audrey = agent('audrey', ['auditor']);
const identity = (agentId: AgentName) => ({ agentId, secretKey: keys[agentId].secretKey });

let dir: string;
let authFile: string;
let nats: NatsUsersServer<(typeof PROCESS_ROLES)[number]>;
const track = <C extends NatsConnection>(nc: C): C => nats.track(nc);
const asService = () => nats.connectAs('service');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agora-setup-nats-'));
  copyFileSync(ROLES_CONF, join(dir, 'roles.conf'));
  authFile = join(dir, 'auth.conf');
  // The server starts knowing only the operator; alice and bob come with a later run and a reload.
  expect(await setUpNats({ agents: [root], out: authFile })).toEqual({ file: 'written', reloaded: false });
  nats = await startNatsWithUsers(authFile, passwords);
}, 60_000);

afterAll(async () => {
  await nats?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

describe('agora setup nats', () => {
  it('an agent key is an nkey: the U... form of the same Ed25519 key, which the server authenticates', async () => {
    expect(natsUserKey(root.publicKey)).toMatch(/^U[A-Z2-7]{55}$/);
    expect(readFileSync(authFile, 'utf8')).toContain(`nkey: ${natsUserKey(root.publicKey)}`);
    // Not yet in the file: the server refuses alice.
    await expect(connectNats({ servers: nats.url, identity: identity('alice') })).rejects.toBeInstanceOf(errors.AuthorizationError);
  }, 30_000);

  it('services that only verify the stream refuse to start before the setup creates it', async () => {
    const opening = openEventStore({ kind: 'jetstream', servers: nats.url, credentials: { user: 'service', pass: passwords.service }, streamSetup: 'verify' });
    await expect(opening).rejects.toBeInstanceOf(StoreRefused);
    await expect(opening).rejects.toMatchObject({ reason: 'stream_not_ready', message: expect.stringContaining('agora setup nats --stream') });
  }, 30_000);

  it('writes every registered agent, reloads the server and creates the log stream; a second run is a no-op', async () => {
    const stream = { servers: nats.url, identity: identity('root') };
    const agents = [root, alice, bob, audrey, { ...agent('bob', []), agentId: 'mallory', status: 'disabled' as const }];
    expect(await setUpNats({ agents, out: authFile, serverPid: nats.pid, stream })).toEqual({ file: 'written', reloaded: true, stream: 'created' });
    const text = readFileSync(authFile, 'utf8');
    expect(text).toContain(`nkey: ${natsUserKey(alice.publicKey)}`);
    expect(text).not.toContain('mallory');
    expect(text).not.toContain('$AGENT_USER');
    expect(await setUpNats({ agents, out: authFile, serverPid: nats.pid, stream })).toEqual({ file: 'unchanged', reloaded: false, stream: 'unchanged' });
    // The services now open the log and only check it.
    const store = await openEventStore({ kind: 'jetstream', servers: nats.url, credentials: { user: 'service', pass: passwords.service }, streamSetup: 'verify' });
    await store.close();
  }, 60_000);

  it('a service user cannot update the log stream configuration', async () => {
    const jsm = await jetstreamManager(await asService());
    const before = (await jsm.streams.info('AGORA_EVENTS')).config;
    await expect(jsm.streams.update('AGORA_EVENTS', { max_age: 1_000_000_000 })).rejects.toThrow(/Permissions Violation|permission/i);
    expect((await jsm.streams.info('AGORA_EVENTS')).config.max_age).toBe(before.max_age);
  }, 30_000);
});

describe('each agent on NATS is itself', () => {
  let service: NatsConnection;

  beforeAll(async () => {
    // A responder in a service's queue group, as the service user: it answers whoever asks.
    service = await asService();
    service.subscribe('agora.cmd.proposal.>', { queue: 'proposal', callback: (_e, msg) => void msg.respond(JSON.stringify({ ok: true, result: { for: new TextDecoder().decode(msg.data) } })) });
    await service.flush();
  }, 30_000);

  it("alice's own request and reply work, under her own inbox prefix", async () => {
    const nc = track(await connectNats({ servers: nats.url, identity: identity('alice') }));
    const reply = await nc.request(SubmitProposal.subject, 'from alice', { timeout: 10_000 });
    expect(reply.subject.startsWith('_INBOX_alice.')).toBe(true);
    expect(reply.json()).toEqual({ ok: true, result: { for: 'from alice' } });
  }, 30_000);

  it('an agent publishes only the commands its roles may send', async () => {
    const nc = track(await connectNats({ servers: nats.url, identity: identity('alice') }));
    expect(await refused(nc.request(RegisterAgent.subject, '{}', { timeout: 5_000 }))).toBeInstanceOf(errors.PermissionViolationError);
    expect(natsAgentPermissions(alice).publish).toContain(SubmitProposal.subject);
    expect(natsAgentPermissions(alice).publish).not.toContain(RegisterAgent.subject);
    expect(natsAgentPermissions(root).publish).toContain(RegisterAgent.subject);
  }, 30_000);

  it("no agent (an operator, an auditor, an executive) and no process user but the services may publish on the log's subjects: a Nats-Expected-Last-Msg-Id (which wedged a 2.15.1 stream leader) never reaches the stream from outside them", async () => {
    const wedge = () => {
      const h = headers();
      h.set('Nats-Msg-Id', randomBytes(8).toString('hex'));
      h.set('Nats-Expected-Last-Msg-Id', 'not-the-last');
      return h;
    };
    const subject = 'agora.es.agent-mallory';
    for (const who of ['root', 'audrey', 'alice'] as const) {
      const nc = track(await connectNats({ servers: nats.url, identity: identity(who) }));
      expect([who, await refused(nc.request(subject, '{"r":0,"e":[]}', { headers: wedge(), timeout: 5_000 }))]).toEqual([who, expect.any(errors.PermissionViolationError)]);
      // Not through the JetStream API either: an operator may create and update the stream, not write to it.
      expect([who, await refused(nc.request('$JS.API.STREAM.MSG.DELETE.AGORA_EVENTS', '{"seq":1}', { timeout: 5_000 }))]).toEqual([who, expect.any(errors.PermissionViolationError)]);
    }
    // The process users (the shared agent user is gone once agents are written one by one).
    for (const role of ['auditor', 'observer', 'gateway'] as const) {
      const nc = await nats.connectAs(role);
      expect([role, await refused(nc.request(subject, '{"r":0,"e":[]}', { headers: wedge(), timeout: 5_000 }))]).toEqual([role, expect.any(errors.PermissionViolationError)]);
    }
    // The service user may: the refusal comes from JetStream (10070, wrong last msg id), not from the permissions.
    const service = await asService();
    const answer = (await service.request(subject, '{"r":0,"e":[]}', { headers: wedge(), timeout: 5_000 })).json<{ error?: { err_code: number } }>();
    expect(answer.error?.err_code).toBe(10070);
    const jsm = await jetstreamManager(service);
    expect((await jsm.streams.info('AGORA_EVENTS', { subjects_filter: subject })).state.subjects?.[subject]).toBeUndefined();
  }, 60_000);

  it("alice cannot subscribe to bob's inbox, nor to every inbox", async () => {
    const nc = track(await connectNats({ servers: nats.url, identity: identity('alice') }));
    const bobs = await ended(nc.subscribe('_INBOX_bob.>'));
    expect(bobs).toBeInstanceOf(errors.PermissionViolationError);
    expect(bobs).toMatchObject({ operation: 'subscription', subject: '_INBOX_bob.>' });
    expect(await ended(nc.subscribe('_INBOX.>'))).toBeInstanceOf(errors.PermissionViolationError);
    expect(await ended(nc.subscribe('>'))).toBeInstanceOf(errors.PermissionViolationError);
  }, 30_000);

  it("bob's command reply reaches bob and nobody else", async () => {
    const spy = track(await connectNats({ servers: nats.url, identity: identity('alice') }));
    const seen: string[] = [];
    const sub = spy.subscribe('_INBOX_bob.>', { callback: (_e, msg) => void seen.push(msg.subject) });
    const bobNc = track(await connectNats({ servers: nats.url, identity: identity('bob') }));
    const reply = await bobNc.request(SubmitProposal.subject, 'secret of bob', { timeout: 10_000 });
    expect(reply.json()).toEqual({ ok: true, result: { for: 'secret of bob' } });
    expect(reply.subject.startsWith('_INBOX_bob.')).toBe(true);
    expect(await ended(sub)).toBeInstanceOf(errors.PermissionViolationError);
    expect(seen).toEqual([]);
  }, 30_000);

  it("the SDK says so when an agent's user may not hear a category's events, and hears the ones it may", async () => {
    const agora = await Agora.connect({ nats: { servers: nats.url }, signer: { agentId: 'alice', secretKey: keys.alice.secretKey } });
    try {
      const proposals = agora.events({ categories: ['proposal'] })[Symbol.asyncIterator]();
      await expect(proposals.next()).rejects.toMatchObject({ code: 'forbidden', message: expect.stringContaining('agora.evt.proposal.*') });
      let opened = false;
      const stop = new AbortController();
      const agents = agora.events({ categories: ['agent'], signal: stop.signal, onOpen: () => (opened = true) })[Symbol.asyncIterator]();
      const next = agents.next();
      await waitFor(() => opened, 'the agent events open');
      stop.abort();
      expect(await next).toEqual({ done: true, value: undefined });
    } finally {
      await agora.close();
    }
  }, 30_000);

  it('an agent listens only to the event categories it may read in full; an operator to all', () => {
    expect(natsAgentPermissions(alice).subscribe).toEqual(['_INBOX_alice.>', 'agora.evt.agent.>', 'agora.evt.settings.>']);
    expect(natsAgentPermissions(root).subscribe).toEqual(['_INBOX_root.>', 'agora.evt.>']);
    expect(natsAgentPermissions(agent('bob', ['observer'])).subscribe).toEqual(['_INBOX_bob.>']);
    expect(natsAgentPermissions(root).publish).toContain('$JS.API.STREAM.UPDATE.AGORA_EVENTS');
    expect(natsAgentPermissions(alice).publish).not.toContain('$JS.API.STREAM.UPDATE.AGORA_EVENTS');
  });
});

describe('closed reads on NATS', () => {
  let service: ServiceMicroservice;
  const proposals = [
    { proposalId: 'p-alice', proposer: 'alice' },
    { proposalId: 'p-bob', proposer: 'bob' },
  ];

  beforeAll(async () => {
    directory = new StaticAgentDirectory(Object.fromEntries([root, alice, bob].map((a) => [a.agentId, { publicKey: a.publicKey, roles: a.roles, status: a.status }])));
    service = await createServiceMicroservice({
      service: 'proposal',
      transport: 'nats',
      natsUrl: nats.url,
      credentials: { user: 'service', pass: passwords.service },
      directory,
      reads: { directory },
      catalog: { commands: [], queries: [ListProposals, GetProposal] },
      commands: new Map(),
      queries: new Map([
        onQuery(ListProposals, async ({ proposer }) => ({ proposals: proposals.filter((p) => proposer === undefined || p.proposer === proposer), nextCursor: null })),
        onQuery(GetProposal, async ({ proposalId }) => {
          const found = proposals.find((p) => p.proposalId === proposalId);
          if (!found) throw new AgoraError('not_found', `no proposal "${proposalId}"`, { proposalId });
          return found;
        }),
      ]),
      logger: false,
    });
  }, 30_000);

  let directory: StaticAgentDirectory;

  afterAll(async () => {
    await service?.close();
  }, 30_000);

  /**
   * A gateway on its own NATS user (`_INBOX_gateway`), closed reads, in front of the service; its A2A
   * push configurations in the key-value bucket of the default log, which roles.conf lets it use.
   */
  async function withGateway(run: (url: string) => Promise<void>): Promise<void> {
    const store = await openEmbeddedEventStore({ directory: join(dir, `gateway-events-${randomBytes(4).toString('hex')}`) });
    const client = new NatsAgoraClient(track(await connectNats({ servers: nats.url, credentials: { user: 'gateway', pass: passwords.gateway, inboxPrefix: GATEWAY_INBOX_PREFIX } })));
    const gateway = await startGateway({ client, store, port: 0, host: '127.0.0.1', logger: false, console: false, reads: { mode: 'closed', directory }, shared: { scope: 'AGORA_EVENTS' } });
    try {
      await run(gateway.url);
    } finally {
      await gateway.close();
      await store.close();
    }
  }

  it("the gateway's HTTP queries keep working: it names its reader to the service, which applies the table", async () => {
    await withGateway(async (url) => {
      const token = mintReadToken({ agentId: 'alice', secretKey: keys.alice.secretKey });
      const res = await fetch(`${url}/v1/proposal/proposals`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { result: { proposals: { proposalId: string }[] } }).result.proposals.map((p) => p.proposalId)).toEqual(['p-alice']);
    });
  }, 30_000);

  it("a hidden proposal stays hidden on HTTP and on NATS: bob's is refused to alice exactly as one that does not exist", async () => {
    const token = () => mintReadToken({ agentId: 'alice', secretKey: keys.alice.secretKey });
    const overHttp: Record<string, unknown> = {};
    await withGateway(async (url) => {
      for (const proposalId of ['p-alice', 'p-bob', 'p-none']) {
        const res = await fetch(`${url}/v1/proposal/proposals/${proposalId}`, { headers: { authorization: `Bearer ${token()}` } });
        overHttp[proposalId] = { status: res.status, body: await res.json() };
      }
    });
    expect(overHttp['p-alice']).toEqual({ status: 200, body: { ok: true, result: { proposalId: 'p-alice', proposer: 'alice' } } });
    expect(overHttp['p-bob']).toMatchObject({ status: 403, body: { ok: false, error: { code: 'forbidden' } } });
    expect(overHttp['p-none']).toEqual(overHttp['p-bob']);

    const agora = await Agora.connect({ nats: { servers: nats.url }, signer: { agentId: 'alice', secretKey: keys.alice.secretKey } });
    try {
      const theirs = await agora.tryQuery('GetProposal', { proposalId: 'p-bob' }, { timeoutMs: 10_000 });
      const none = await agora.tryQuery('GetProposal', { proposalId: 'p-none' }, { timeoutMs: 10_000 });
      expect(theirs).toMatchObject({ ok: false, error: { code: 'forbidden' } });
      expect(none).toEqual(theirs);
      // The same refusal, word for word, on both paths.
      expect(theirs).toEqual((overHttp['p-bob'] as { body: unknown }).body);
      expect(await agora.tryQuery('GetProposal', { proposalId: 'p-alice' }, { timeoutMs: 10_000 })).toEqual({ ok: true, result: { proposalId: 'p-alice', proposer: 'alice' } });
    } finally {
      await agora.close();
    }
  }, 30_000);

  it('the reader a query names is believed from the gateway only: an agent naming another is refused, or read as its token says', async () => {
    // The gateway's own user, naming alice and carrying no token: the service answers as alice may read.
    const asGateway = new NatsAgoraClient(track(await connectNats({ servers: nats.url, credentials: { user: 'gateway', pass: passwords.gateway, inboxPrefix: GATEWAY_INBOX_PREFIX } })));
    const named = await asGateway.request<{ proposals: { proposalId: string }[] }>(ListProposals.subject, {}, { timeoutMs: 10_000, headers: { [READER_HEADER]: 'alice' } });
    expect(named.ok && named.result.proposals.map((p) => p.proposalId)).toEqual(['p-alice']);
    expect(await asGateway.request(GetProposal.subject, { proposalId: 'p-bob' }, { timeoutMs: 10_000, headers: { [READER_HEADER]: 'alice' } })).toMatchObject({ ok: false, error: { code: 'forbidden' } });

    // Alice on her own user, naming the operator: without a token she is refused; with hers, she reads as herself.
    const client = new NatsAgoraClient(track(await connectNats({ servers: nats.url, identity: identity('alice') })));
    expect(await client.request(ListProposals.subject, {}, { timeoutMs: 10_000, headers: { [READER_HEADER]: 'root' } })).toMatchObject({ ok: false, error: { code: 'forbidden', message: expect.stringContaining('read token') } });
    const token = mintReadToken({ agentId: 'alice', secretKey: keys.alice.secretKey });
    const asHerself = await client.request<{ proposals: { proposalId: string }[] }>(ListProposals.subject, {}, { timeoutMs: 10_000, headers: { [READER_HEADER]: 'root', 'Agora-Read-Token': token } });
    expect(asHerself.ok && asHerself.result.proposals.map((p) => p.proposalId)).toEqual(['p-alice']);
    expect(await client.request(GetProposal.subject, { proposalId: 'p-bob' }, { timeoutMs: 10_000, headers: { [READER_HEADER]: 'root', 'Agora-Read-Token': token } })).toMatchObject({ ok: false, error: { code: 'forbidden' } });
  }, 30_000);

  it('a query without a read token is refused forbidden', async () => {
    const client = new NatsAgoraClient(track(await connectNats({ servers: nats.url, identity: identity('alice') })));
    const reply = await client.request(ListProposals.subject, {}, { timeoutMs: 10_000 });
    expect(reply).toMatchObject({ ok: false, error: { code: 'forbidden', message: expect.stringContaining('read token') } });
  }, 30_000);

  it("with alice's token (the SDK sends it) alice sees only her own proposals, and may not ask for bob's", async () => {
    const agora = await Agora.connect({ nats: { servers: nats.url }, signer: { agentId: 'alice', secretKey: keys.alice.secretKey } });
    try {
      const mine = (await agora.tryQuery('ListProposals', {}, { timeoutMs: 10_000 })) as Reply<{ proposals: { proposalId: string }[] }>;
      expect(mine.ok && mine.result.proposals.map((p) => p.proposalId)).toEqual(['p-alice']);
      expect(await agora.tryQuery('ListProposals', { proposer: 'bob' }, { timeoutMs: 10_000 })).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    } finally {
      await agora.close();
    }
  }, 30_000);

  it('an operator reads everything; a token signed by another key is refused', async () => {
    const operator = await Agora.connect({ nats: { servers: nats.url }, signer: { agentId: 'root', secretKey: keys.root.secretKey } });
    try {
      const all = (await operator.tryQuery('ListProposals', {}, { timeoutMs: 10_000 })) as Reply<{ proposals: { proposalId: string }[] }>;
      expect(all.ok && all.result.proposals.map((p) => p.proposalId)).toEqual(['p-alice', 'p-bob']);
    } finally {
      await operator.close();
    }
    // Alice's connection, claiming to be bob in the token: the signature does not verify under bob's key.
    const client = new NatsAgoraClient(track(await connectNats({ servers: nats.url, identity: identity('alice') })));
    const forged = mintReadToken({ agentId: 'bob', secretKey: keys.alice.secretKey });
    expect(await client.request(ListProposals.subject, {}, { timeoutMs: 10_000, headers: { 'Agora-Read-Token': forged } })).toMatchObject({ ok: false, error: { code: 'bad_signature' } });
  }, 30_000);
});

