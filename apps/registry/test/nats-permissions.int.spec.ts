/**
 * The NATS users and permissions of deploy/nats/ (auth.conf, included by single.conf), on a real
 * nats-server started with that file: no anonymous access; an agent cannot write into the log,
 * call the JetStream API, join a service's queue group or listen to everything; the services
 * still work under the `service` user (a signed command through the registry on JetStream).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errors } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { GetAgent, RegisterAgent, type AgentView, type CommandResult } from '@agora/contracts';
import { openEventStore, type NatsCredentials, type StoreConfig } from '@agora/eventstore';
import { createSignedCommand, generateKeyPair } from '@agora/identity';
import { NatsAgoraClient } from '@agora/messaging';
import { JetStreamLeaseRegister, leaseScope, openServiceContext, runEventRelay, type RuntimeConfig, type ServiceContext } from '@agora/runtime';
import { ended, natsPasswords, refused, startNatsWithUsers, waitFor, type NatsUsersServer } from '@agora/testing';
import { startRegistryService } from '../src/registry-service.js';

const CONFIG = resolve(dirname(fileURLToPath(import.meta.url)), '../../../deploy/nats/single.conf');
const ROLES = ['service', 'gateway', 'agent', 'observer', 'auditor'] as const;
type Role = (typeof ROLES)[number];
const passwords = natsPasswords(ROLES);
const as = (role: Role): NatsCredentials => ({ user: role, pass: passwords[role] });

let nats: NatsUsersServer<Role>;
const connectAs = (role: Role | undefined) => nats.connectAs(role);

beforeAll(async () => {
  nats = await startNatsWithUsers(CONFIG, passwords);
}, 30_000);
afterAll(async () => {
  await nats?.stop();
}, 30_000);

describe('deploy/nats users and permissions', () => {
  it('refuses a connection without credentials, or with a wrong password', async () => {
    await expect(connectAs(undefined)).rejects.toBeInstanceOf(errors.AuthorizationError);
    await expect(connect({ servers: nats.url, reconnect: false, user: 'service', pass: 'guess' })).rejects.toBeInstanceOf(errors.AuthorizationError);
  }, 30_000);

  it('an agent cannot publish into the log nor call the JetStream API for it', async () => {
    const nc = await connectAs('agent');
    // What a JetStream publish is: a request on the log subject. The server refuses it and the client is told.
    expect(await refused(nc.request('agora.es.agent-mallory', '{"e":[]}', { timeout: 3_000 }))).toBeInstanceOf(errors.PermissionViolationError);
    expect(await refused(nc.request('$JS.API.STREAM.INFO.AGORA_EVENTS', '', { timeout: 3_000 }))).toBeInstanceOf(errors.PermissionViolationError);
    expect(await refused(nc.request('$JS.API.CONSUMER.CREATE.AGORA_EVENTS', '{}', { timeout: 3_000 }))).toBeInstanceOf(errors.PermissionViolationError);
  }, 30_000);

  it("an agent cannot join a service's queue group on command subjects, nor subscribe to everything or to the log", async () => {
    const nc = await connectAs('agent');
    const queue = await ended(nc.subscribe('agora.cmd.registry.>', { queue: 'registry' }));
    expect(queue).toBeInstanceOf(errors.PermissionViolationError);
    expect(queue).toMatchObject({ operation: 'subscription', subject: 'agora.cmd.registry.>', queue: 'registry' });
    const all = await ended(nc.subscribe('>'));
    expect(all).toMatchObject({ name: 'PermissionViolationError', operation: 'subscription', subject: '>' });
    const log = await ended(nc.subscribe('agora.es.>'));
    expect(log).toMatchObject({ name: 'PermissionViolationError', subject: 'agora.es.>' });
    // What it may do: its inbox and the events.
    expect(await ended(nc.subscribe('agora.evt.>'), 500)).toBe('still open');
  }, 30_000);

  it('a service answers command subjects in its queue group only: no listening to every command, no foreign queue', async () => {
    const nc = await connectAs('service');
    const member = nc.subscribe('agora.cmd.registry.>', { queue: 'registry' });
    expect(await ended(member, 500)).toBe('still open');
    // Leave the registry's queue group: this connection would otherwise take a share of its requests.
    member.unsubscribe();
    expect(await ended(nc.subscribe('agora.cmd.>'))).toMatchObject({ name: 'PermissionViolationError', subject: 'agora.cmd.>' });
    expect(await ended(nc.subscribe('agora.qry.registry.>', { queue: 'mallory' }))).toMatchObject({ name: 'PermissionViolationError', queue: 'mallory' });
  }, 30_000);

  it('an observer sees events only: no requests, no inboxes', async () => {
    const nc = await connectAs('observer');
    expect(await refused(nc.request('agora.qry.registry.agents.list', '{}', { timeout: 3_000 }))).toBeInstanceOf(errors.PermissionViolationError);
    expect(await ended(nc.subscribe('agora.evt.>'), 500)).toBe('still open');
  }, 30_000);

  describe('the services under the service user', () => {
    let dir: string;
    let context: ServiceContext;
    let stopRegistry: () => Promise<void>;
    const root = generateKeyPair();
    const jetstream = (role: Role): StoreConfig => ({ kind: 'jetstream', servers: nats.url, credentials: as(role) });

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'agora-nats-permissions-'));
      const config: RuntimeConfig = {
        store: jetstream('service'),
        natsUrl: nats.url,
        natsCredentials: as('service'),
        dataDir: dir,
        operators: [{ agentId: 'root', publicKey: root.publicKey }],
        maxClockSkewMs: 300_000,
        requestTimeoutMs: 20_000,
      };
      context = await openServiceContext(config);
      const running = await startRegistryService(context, { logger: false });
      stopRegistry = () => running.close();
    }, 30_000);
    afterAll(async () => {
      await stopRegistry?.();
      await context?.close();
      await rm(dir, { recursive: true, force: true });
    }, 30_000);

    it('an agent connection sends a signed command; the registry (service user) decides and appends it to the JetStream log', async () => {
      const agent = await NatsAgoraClient.connect({ servers: nats.url, credentials: as('agent') });
      try {
        const alice = generateKeyPair();
        const command = createSignedCommand({ type: 'RegisterAgent', actor: 'root', secretKey: root.secretKey, payload: { agentId: 'alice', publicKey: alice.publicKey, displayName: 'Alice', roles: ['executive'] } });
        const reply = await agent.request<CommandResult>(RegisterAgent.subject, command, { timeoutMs: 20_000 });
        expect(reply).toEqual({ ok: true, result: expect.objectContaining({ streamId: 'agent-alice', events: ['AgentRegistered'] }) });
        const got = await agent.request<AgentView>(GetAgent.subject, { agentId: 'alice' }, { timeoutMs: 20_000 });
        expect(got).toEqual({ ok: true, result: expect.objectContaining({ agentId: 'alice', roles: ['executive'] }) });
      } finally {
        await agent.close();
      }
      const [event] = await context.store.readStream('agent-alice');
      expect(event).toMatchObject({ type: 'AgentRegistered', metadata: expect.objectContaining({ actor: 'root', signature: expect.any(String) }) });
    }, 30_000);

    it('the registry (service user) holds the leases of its reactors in AGORA_LEASES; an agent can neither read nor write a lease', async () => {
      const service = await connect({ servers: nats.url, ...as('service') });
      const agent = await connect({ servers: nats.url, ...as('agent') });
      try {
        const register = await JetStreamLeaseRegister.open(service);
        // Kept under the log's scope: the default stream AGORA_EVENTS here.
        expect(leaseScope(jetstream('service'))).toBe('AGORA_EVENTS');
        for (const name of ['reactor.registry-trust', 'reactor.registry-breaker']) expect((await register.read(`AGORA_EVENTS.${name}`))?.holder).toBe(context.leases!.holder);
        await expect(JetStreamLeaseRegister.open(agent, { timeoutMs: 2_000 })).rejects.toThrow();
      } finally {
        await service.close();
        await agent.close();
      }
    }, 30_000);

    it('the gateway and auditor users read the log and cannot append to it', async () => {
      for (const role of ['gateway', 'auditor'] as const) {
        const store = await openEventStore(jetstream(role));
        try {
          const events = [];
          for await (const event of store.readAll()) events.push(event.type);
          expect(events).toContain('AgentRegistered');
          await expect(store.append('agent-mallory', [{ type: 'AgentRegistered', data: { agentId: 'mallory', roles: ['operator'] } }], 'no_stream')).rejects.toThrow(/permission/i);
        } finally {
          await store.close();
        }
      }
    }, 30_000);

    it('the gateway user opens the log, asks the services, and relays committed events, which an observer sees', async () => {
      const observer = await connectAs('observer');
      const seen: string[] = [];
      observer.subscribe('agora.evt.agent.>', { callback: (_error, msg) => void seen.push(msg.subject) });
      await observer.flush();
      const gateway = await openServiceContext({
        store: jetstream('gateway'),
        natsUrl: nats.url,
        natsCredentials: as('gateway'),
        dataDir: join(dir, 'gateway'),
        operators: [{ agentId: 'root', publicKey: root.publicKey }],
        maxClockSkewMs: 300_000,
        requestTimeoutMs: 20_000,
      });
      try {
        const relay = await runEventRelay(gateway);
        try {
          await waitFor(() => seen.includes('agora.evt.agent.AgentRegistered'), 'the relayed AgentRegistered', 25_000);
          expect(await gateway.client.request(GetAgent.subject, { agentId: 'alice' }, { timeoutMs: 20_000 })).toMatchObject({ ok: true, result: { agentId: 'alice' } });
        } finally {
          await relay.close();
        }
      } finally {
        await gateway.close();
      }
    }, 30_000);

    it('the forgery "AgentRegistered(operator) published straight into the log" is refused to every user but the services', async () => {
      const forged = JSON.stringify({ r: 0, e: [{ id: 'forged', type: 'AgentRegistered', data: { agentId: 'mallory', roles: ['operator'] }, metadata: {} }] });
      await expect(connectAs(undefined)).rejects.toBeInstanceOf(errors.AuthorizationError);
      for (const role of ['agent', 'observer', 'gateway', 'auditor'] as const) {
        const nc = await connectAs(role);
        expect(await refused(nc.request('agora.es.agent-mallory', forged, { timeout: 3_000 }))).toBeInstanceOf(errors.PermissionViolationError);
      }
      await expect(context.store.readStream('agent-mallory')).rejects.toThrow();
    }, 30_000);
  });
});
