/**
 * One NATS user per service (deploy/nats/services.conf, generated from the contracts), on a real
 * nats-server running the users file `agora setup nats --services` writes: every service and the
 * gateway start as their own user (NATS_USER=<name>, replies under _INBOX_<name>) and do their
 * work, the registry deciding a signed command and answering a query, the gateway keeping its A2A
 * push configurations in its key-value bucket; the log's stream is set up by
 * the operator alone. What a service user may not do is refused by the server: another service's
 * inbox or every inbox, another service's queue group, event notifications, the stream's
 * configuration (create, update, delete).
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errors, type NatsConnection } from '@nats-io/nats-core';
import { jetstreamManager } from '@nats-io/jetstream';
import { startChamberService } from '@agora/chamber';
import { CastValidatorVote, commandsOf, CreateVotingSession, GetAgent, queriesOf, RegisterAgent, type AgentView, type CommandResult } from '@agora/contracts';
import { startDebateService } from '@agora/debate';
import { startDialecticService } from '@agora/dialectic';
import { setUpJetStreamLog } from '@agora/eventstore';
import { createSignedCommand, generateKeyPair } from '@agora/identity';
import { openSharedRecords } from '@agora/gateway';
import { connectNats, NatsAgoraClient, natsAuthorization, SERVICE_NATS_USERS, type ServiceNatsUser } from '@agora/messaging';
import { startProjectionsService } from '@agora/projections';
import { startProposalService } from '@agora/proposal';
import { startRegistryService } from '@agora/registry';
import { leaseScope, openServiceContext, readRuntimeConfig, runEventRelay, type Running, type ServiceContext } from '@agora/runtime';
import { ended, natsPasswords, refused, REPO_ROOT, startNatsWithUsers, waitFor, type NatsUsersServer } from '@agora/testing';
import { startTribunalService } from '@agora/tribunal';
import { startVotingService } from '@agora/voting';

const USERS = [...SERVICE_NATS_USERS, 'observer', 'auditor'] as const;
const passwords = natsPasswords(USERS);
const root = generateKeyPair();

const STARTERS: Record<Exclude<ServiceNatsUser, 'gateway'>, (context: ServiceContext) => Promise<Running>> = {
  registry: (c) => startRegistryService(c, { logger: false }),
  proposal: (c) => startProposalService(c, { logger: false }),
  tribunal: (c) => startTribunalService(c, { logger: false }),
  voting: (c) => startVotingService(c, { logger: false }),
  dialectic: (c) => startDialecticService(c, { logger: false }),
  projections: (c) => startProjectionsService(c, { logger: false }),
  chamber: (c) => startChamberService(c, { logger: false }),
  debate: (c) => startDebateService(c, { logger: false }),
};

let dir: string;
let nats: NatsUsersServer<(typeof USERS)[number]>;
let operator: NatsConnection;
const contexts = new Map<ServiceNatsUser, ServiceContext>();
const running: Running[] = [];

/** A process's environment, as docker-compose.yml gives it: its own user, the log only verified. */
const envOf = (user: ServiceNatsUser): NodeJS.ProcessEnv => ({
  NATS_URL: nats.url,
  NATS_USER: user,
  NATS_PASSWORD: passwords[user],
  EVENT_STORE: 'jetstream?setup=verify',
  AGORA_DATA_DIR: join(dir, user),
  AGORA_OPERATOR_ID: 'root',
  AGORA_OPERATOR_PUBLIC_KEY: root.publicKey,
  AGORA_REQUEST_TIMEOUT_MS: '30000',
  AGORA_LOG_LEVEL: 'error',
});

/** A raw connection as a process user, with the inbox its processes use. */
const connectAs = (user: ServiceNatsUser) => nats.connectAs(user, { inboxPrefix: `_INBOX_${user}` });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agora-service-users-'));
  // What `agora setup nats --services` writes beside services.conf: the process users and the operator's nkey user.
  copyFileSync(join(REPO_ROOT, 'deploy/nats/services.conf'), join(dir, 'services.conf'));
  const authFile = join(dir, 'auth.conf');
  writeFileSync(authFile, natsAuthorization([{ agentId: 'root', publicKey: root.publicKey, roles: ['operator'], status: 'active' }], { services: true }));
  nats = await startNatsWithUsers(authFile, passwords);
  // The log's stream, set up by the operator (`agora setup nats --stream`): no service may.
  operator = nats.track(await connectNats({ servers: nats.url, identity: { agentId: 'root', secretKey: root.secretKey } }));
  await setUpJetStreamLog(operator);
  for (const user of SERVICE_NATS_USERS) {
    const context = await openServiceContext(readRuntimeConfig(envOf(user), { natsByDefault: true }));
    contexts.set(user, context);
    running.push(user === 'gateway' ? await runEventRelay(context) : await STARTERS[user](context));
  }
}, 240_000);

afterAll(async () => {
  for (const r of running.reverse()) await r.close().catch(() => undefined);
  for (const context of contexts.values()) await context.close().catch(() => undefined);
  await nats?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 120_000);

describe('one NATS user per service (services.conf)', () => {
  it('each process connects as itself with its own inbox prefix', () => {
    for (const user of SERVICE_NATS_USERS) expect({ user, credentials: contexts.get(user)!.config.natsCredentials }).toEqual({ user, credentials: { user, pass: passwords[user], inboxPrefix: `_INBOX_${user}` } });
    // As NATS users, the services answer NATS queries only with a read token, or to the gateway's own inbox (the gateway's queries below carry none).
    for (const user of SERVICE_NATS_USERS) expect({ user, mode: contexts.get(user)!.config.natsReads?.mode }).toEqual({ user, mode: 'closed' });
  });

  it('the registry, under its own user, decides a signed command and answers a query; the gateway relays the event to an observer', async () => {
    const observer = await nats.connectAs('observer');
    const seen: string[] = [];
    observer.subscribe('agora.evt.agent.>', { callback: (_error, msg) => void seen.push(msg.subject) });
    await observer.flush();
    const agent = new NatsAgoraClient(await connectNats({ servers: nats.url, identity: { agentId: 'root', secretKey: root.secretKey } }), true);
    try {
      const alice = generateKeyPair();
      const command = createSignedCommand({ type: 'RegisterAgent', actor: 'root', secretKey: root.secretKey, payload: { agentId: 'alice', publicKey: alice.publicKey, displayName: 'Alice', roles: ['executive'] } });
      expect(await agent.request<CommandResult>(RegisterAgent.subject, command, { timeoutMs: 30_000 })).toEqual({ ok: true, result: expect.objectContaining({ streamId: 'agent-alice', events: ['AgentRegistered'] }) });
      // Asked by the gateway, as for an HTTP client (read your writes: the registry's read model may lag the append).
      await waitFor(async () => (await contexts.get('gateway')!.client.request<AgentView>(GetAgent.subject, { agentId: 'alice' }, { timeoutMs: 30_000 })).ok, 'alice in the registry', 60_000);
      expect(await contexts.get('gateway')!.client.request<AgentView>(GetAgent.subject, { agentId: 'alice' }, { timeoutMs: 30_000 })).toMatchObject({ ok: true, result: { agentId: 'alice', roles: ['executive'] } });
      await waitFor(() => seen.includes('agora.evt.agent.AgentRegistered'), 'the relayed AgentRegistered', 60_000);
    } finally {
      await agent.close();
    }
  }, 120_000);

  it('the gateway, under its own user, keeps the A2A push configurations in its key-value bucket: made, written, listed, claimed, deleted', async () => {
    const context = contexts.get('gateway')!;
    const records = await openSharedRecords({ connection: (context.client as NatsAgoraClient).connection, scope: leaseScope(context.config.store) }, 60_000);
    expect(records.where).toBe('JetStream key-value bucket A2A_PUSH_AGORA_EVENTS');
    await records.put('cfg.a.b.c', '{"expiresAt":1}');
    expect(await records.list('cfg.a.')).toEqual(new Map([['cfg.a.b.c', '{"expiresAt":1}']]));
    expect([await records.create('sent.a.b.c', '{}'), await records.create('sent.a.b.c', '{}')]).toEqual([true, false]);
    await records.delete('cfg.a.b.c');
    expect(await records.get('cfg.a.b.c')).toBeUndefined();
  }, 60_000);

  it('every service answers each of its command and query subjects in its queue group under its own user', async () => {
    const gateway = contexts.get('gateway')!.client;
    for (const service of SERVICE_NATS_USERS.filter((s): s is Exclude<ServiceNatsUser, 'gateway'> => s !== 'gateway')) {
      // Every subject of its contracts, with a body none accepts: the answer (invalid, forbidden, ...) proves the service heard it and replied.
      for (const { subject } of [...commandsOf(service), ...queriesOf(service)]) {
        const reply = await gateway.request(subject, { nonsense: true }, { timeoutMs: 30_000 });
        expect({ service, subject, code: reply.ok ? 'ok' : reply.error.code }).toEqual({ service, subject, code: expect.not.stringMatching(/^(unavailable|timeout)$/) });
      }
    }
  }, 120_000);

  it("a service user cannot read another's inbox or every inbox, nor join another service's queue group", async () => {
    const nc = await connectAs('registry');
    for (const subject of ['_INBOX.>', '_INBOX_proposal.>', '_INBOX_gateway.>', '>']) expect(await ended(nc.subscribe(subject))).toMatchObject({ name: 'PermissionViolationError', subject });
    const foreign = commandsOf('proposal')[0]!.subject;
    expect(await ended(nc.subscribe(foreign, { queue: 'proposal' }))).toMatchObject({ name: 'PermissionViolationError', subject: foreign, queue: 'proposal' });
    expect(await ended(nc.subscribe(foreign, { queue: 'registry' }))).toMatchObject({ name: 'PermissionViolationError', subject: foreign });
    expect(await ended(nc.subscribe('agora.cmd.registry.>', { queue: 'registry' }))).toMatchObject({ name: 'PermissionViolationError' });
    // Its own inbox and its own subjects stay open.
    expect(await ended(nc.subscribe('_INBOX_registry.x'), 500)).toBe('still open');
    const gw = await connectAs('gateway');
    for (const subject of ['_INBOX.>', '_INBOX_registry.>']) expect(await ended(gw.subscribe(subject))).toMatchObject({ name: 'PermissionViolationError', subject });
  }, 60_000);

  it('a service user cannot publish event notifications nor ask another service but what the table lets it send; the gateway cannot append to the log', async () => {
    const nc = await connectAs('tribunal');
    expect(await refused(nc.request('agora.evt.agent.AgentRegistered', '{}', { timeout: 3_000 }))).toBeInstanceOf(errors.PermissionViolationError);
    expect(await refused(nc.request('agora.evt.tribunal_review.ReviewSubmitted', '{}', { timeout: 3_000 }))).toBeInstanceOf(errors.PermissionViolationError);
    expect(await refused(nc.request(RegisterAgent.subject, '{}', { timeout: 3_000 }))).toBeInstanceOf(errors.PermissionViolationError);
    // The dialectic sends the voting service its quorum sessions (CreateVotingSession names it among its issuers), and nothing else.
    const dialectic = await connectAs('dialectic');
    const answered = await dialectic.request(CreateVotingSession.subject, '{}', { timeout: 3_000 });
    expect(JSON.parse(answered.string())).toMatchObject({ ok: false, error: { code: 'invalid_command' } });
    expect(await refused(dialectic.request(CastValidatorVote.subject, '{}', { timeout: 3_000 }))).toBeInstanceOf(errors.PermissionViolationError);
    const gw = await connectAs('gateway');
    expect(await refused(gw.request('agora.es.agent-mallory', '{"e":[]}', { timeout: 3_000 }))).toBeInstanceOf(errors.PermissionViolationError);
  }, 60_000);

  it("no service user may create, update or delete the log's stream", async () => {
    const before = (await (await jetstreamManager(operator)).streams.info('AGORA_EVENTS')).config;
    for (const user of SERVICE_NATS_USERS) {
      const nc = await connectAs(user);
      for (const verb of ['CREATE', 'UPDATE', 'DELETE']) {
        expect({ user, verb, error: await refused(nc.request(`$JS.API.STREAM.${verb}.AGORA_EVENTS`, JSON.stringify({ ...before, max_age: 1_000_000_000 }), { timeout: 3_000 })) }).toEqual({ user, verb, error: expect.any(errors.PermissionViolationError) });
      }
    }
    const after = (await (await jetstreamManager(operator)).streams.info('AGORA_EVENTS')).config;
    expect(after.max_age).toBe(before.max_age);
  }, 60_000);
});
