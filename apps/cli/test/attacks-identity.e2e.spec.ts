/**
 * Attacks on who may read that must stay fixed, tried as a registered low-privilege identity against
 * real processes: a private nats-server on the users file `agora setup nats` writes (deploy/nats/
 * roles.conf beside it, one nkey user per agent), and `npm start` on it as the `service` NATS user,
 * its gateway on HTTP with reads closed.
 *
 * - no identity collision: an agent id named after a process's NATS user is refused at registration,
 *   `agora setup nats` refuses a registry that holds one, and no agent may read the gateway's inbox;
 * - NATS reads closed where NATS has users: an agent's query on NATS without its read token, or for
 *   what the visibility table does not give it, is refused; its own, with its token, is answered;
 * - command refusals reveal no more than reads: another's proposal, a taken id and a missing id all
 *   get one `forbidden` that names nobody; `command_id_reused` says nothing of another's command;
 * - the auditor sends no command: its ReserveModelCall is refused and writes nothing.
 */
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errors, type NatsConnection } from '@nats-io/nats-core';
import { GetModelLedger, GetProposal, type Reply } from '@agora/contracts';
import { createSignedCommand, generateKeyPair, mintReadToken, type KeyPair } from '@agora/identity';
import { connectNats, NatsAgoraClient } from '@agora/messaging';
import { Agora } from '@agora/sdk';
import { REPO_ROOT, runToCompletion, startAgoraProcess, startNatsServer, type AgoraProcess, type PrivateNatsServer } from '@agora/testing';
import { setUpNats } from '../src/commands/nats-setup.js';

const CLI = 'apps/cli/src/main.ts';
const PROCESS_ROLES = ['SERVICE', 'GATEWAY', 'AGENT', 'OBSERVER', 'AUDITOR'] as const;
const passwords = Object.fromEntries(PROCESS_ROLES.map((role) => [role, `pw${randomUUID().replaceAll('-', '')}`])) as Record<(typeof PROCESS_ROLES)[number], string>;
const keys: Record<'root' | 'alice' | 'bob' | 'aud', KeyPair> = { root: generateKeyPair(), alice: generateKeyPair(), bob: generateKeyPair(), aud: generateKeyPair() };
type Who = keyof typeof keys;

let dir: string;
let authFile: string;
let nats: PrivateNatsServer;
let agora: AgoraProcess;
let url: string;
let setupOutput: string;
const open: NatsConnection[] = [];
const keyFile = (who: Who) => join(dir, `${who}.key.json`);

/** A signed command over HTTP, as any agent sends it. */
async function send(who: Who, type: string, payload: Record<string, unknown>, commandId?: string): Promise<{ status: number; reply: Reply }> {
  const envelope = createSignedCommand({ type, actor: who, payload, secretKey: keys[who].secretKey, ...(commandId ? { commandId } : {}) });
  const res = await fetch(`${url}/v1/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(envelope) });
  return { status: res.status, reply: (await res.json()) as Reply };
}
const ok = async (who: Who, type: string, payload: Record<string, unknown>, commandId?: string) => {
  const { reply } = await send(who, type, payload, commandId);
  if (!reply.ok) throw new Error(`${who} ${type}: ${reply.error.code} ${reply.error.message}`);
  return reply.result as { streamId: string; position: string };
};
const read = async <T>(who: Who, path: string): Promise<Reply<T>> => (await (await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${mintReadToken({ agentId: who, secretKey: keys[who].secretKey })}` } })).json()) as Reply<T>;
const asAgent = async (who: Who) => {
  const nc = await connectNats({ servers: nats.url, identity: { agentId: who, secretKey: keys[who].secretKey } });
  open.push(nc);
  return nc;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agora-attacks-identity-'));
  for (const who of Object.keys(keys) as Who[]) writeFileSync(keyFile(who), JSON.stringify({ agentId: who, ...keys[who] }), { mode: 0o600 });
  copyFileSync(join(REPO_ROOT, 'deploy/nats/roles.conf'), join(dir, 'roles.conf'));
  authFile = join(dir, 'auth.conf');
  // The first users file knows the operator only; the agents come with `agora setup nats` below.
  await setUpNats({ agents: [{ agentId: 'root', publicKey: keys.root.publicKey, roles: ['operator'], status: 'active' }], out: authFile });
  nats = await startNatsServer({ config: authFile, env: Object.fromEntries(PROCESS_ROLES.map((r) => [`AGORA_NATS_${r}_PASSWORD`, passwords[r]])) });
  // `npm start` on that NATS as the services' user; AGORA_NATS_READS unset: the processes' own default.
  agora = await startAgoraProcess('apps/standalone/src/main.ts', 'agora', {
    AGORA_DATA_DIR: join(dir, 'data'),
    AGORA_OPERATOR_KEY_FILE: keyFile('root'),
    PORT: '0',
    HOST: '127.0.0.1',
    NATS_URL: nats.url,
    NATS_USER: 'service',
    NATS_PASSWORD: passwords.SERVICE,
    AGORA_READS: 'closed',
  }, 120_000);
  url = /gateway listening on (http:\/\/[^\s]+) /.exec(agora.output())![1]!;
  for (const who of ['alice', 'bob'] as const) await ok('root', 'RegisterAgent', { agentId: who, publicKey: keys[who].publicKey, displayName: who, roles: ['executive'] });
  await ok('root', 'RegisterAgent', { agentId: 'aud', publicKey: keys.aud.publicKey, displayName: 'Auditor', roles: ['auditor'] });
  // The operator writes every agent's NATS user from the registry and reloads the server.
  const setup = await runToCompletion(CLI, ['setup', 'nats', '--key', keyFile('root'), '--out', authFile, '--pid', String(nats.pid)], { AGORA_URL: url }, 60_000);
  if (setup.code !== 0) throw new Error(`agora setup nats failed (${setup.code}): ${setup.stderr}`);
  setupOutput = setup.stdout;
  // The server reloads asynchronously: wait until alice's nkey user is known.
  for (let i = 0; ; i++) {
    try {
      await (await connectNats({ servers: nats.url, identity: { agentId: 'alice', secretKey: keys.alice.secretKey } })).close();
      break;
    } catch (error) {
      if (i > 100) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}, 240_000);

afterAll(async () => {
  for (const nc of open) await nc.close().catch(() => undefined);
  await agora?.stop();
  await nats?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('no agent id collides with a process identity (e2e)', () => {
  it.each(['gateway', 'registry', 'proposal', 'auditor', 'service_voting'])('registering an agent %s is refused with a clear reason, and writes nothing', async (agentId) => {
    const { status, reply } = await send('root', 'RegisterAgent', { agentId, publicKey: generateKeyPair().publicKey, displayName: 'Impostor', roles: ['executive'] });
    expect(status).toBe(400);
    expect(reply).toMatchObject({ ok: false, error: { code: 'invalid_command', message: expect.stringMatching(new RegExp(`agent id "${agentId}" is reserved: .*choose another id`)) } });
    expect(await read('root', `/v1/registry/agents/${agentId}`)).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });

  it('agora setup nats refuses a registry holding such an agent (an old log), and leaves the users file as it was', async () => {
    // On a copy of the users file, so that the running server is not touched whatever happens.
    const copy = join(dir, 'auth-copy.conf');
    copyFileSync(authFile, copy);
    const before = readFileSync(copy, 'utf8');
    const impostor = { agentId: 'gateway', publicKey: generateKeyPair().publicKey, roles: ['executive'], status: 'active' as const };
    await expect(setUpNats({ agents: [{ agentId: 'root', publicKey: keys.root.publicKey, roles: ['operator'], status: 'active' }, impostor], out: copy })).rejects.toThrow(
      /agent id "gateway" is reserved: it is the NATS user of Agora's gateway process, whose replies arrive under _INBOX_gateway/,
    );
    expect(readFileSync(copy, 'utf8')).toBe(before);
  });

  it("no agent may subscribe to the gateway's inbox, nor to a service's", async () => {
    for (const inbox of ['_INBOX_gateway.>', '_INBOX_registry.>', '_INBOX.>']) {
      const nc = await asAgent('alice');
      const sub = nc.subscribe(inbox);
      const ended = await sub.closed.then((e) => e ?? 'closed without error');
      expect({ inbox, refused: ended instanceof errors.PermissionViolationError }).toEqual({ inbox, refused: true });
    }
  }, 30_000);
});

describe('NATS reads are closed where NATS has users (e2e)', () => {
  let proposalId: string;

  beforeAll(async () => {
    proposalId = `p-${randomUUID()}`;
    await ok('bob', 'SubmitProposal', { proposalId, title: 'Bob', body: "Bob's secret plan", problem: 'A problem' });
    await ok('root', 'SetModelBudget', { agentId: 'bob', amount: 1, currency: 'USD' });
  }, 60_000);

  it('npm start says at startup that its NATS queries are closed (it runs as a NATS user), and agora setup nats says how reads stand', () => {
    expect(setupOutput).toMatch(/reads on NATS: services that connect as NATS users answer queries only with a read token/);
    expect(agora.output()).toMatch(/reads on NATS: closed \(queries need a read token/);
    expect(agora.output()).not.toMatch(/reads on NATS are OPEN/);
  });

  it("alice's NATS user asking for bob's proposal and ledger without a token is refused, and with her own token too", async () => {
    const client = new NatsAgoraClient(await asAgent('alice'));
    for (const [subject, params] of [
      [GetProposal.subject, { proposalId }],
      [GetModelLedger.subject, { agentId: 'bob' }],
    ] as const) {
      const bare = await client.request(subject, params, { timeoutMs: 15_000 });
      expect(bare).toMatchObject({ ok: false, error: { code: 'forbidden', message: expect.stringContaining('read token') } });
      const token = mintReadToken({ agentId: 'alice', secretKey: keys.alice.secretKey });
      const asAlice = await client.request(subject, params, { timeoutMs: 15_000, headers: { 'Agora-Read-Token': token } });
      expect(asAlice).toMatchObject({ ok: false, error: { code: 'forbidden' } });
      expect(JSON.stringify(asAlice)).not.toContain('secret plan');
    }
    await client.close();
  }, 60_000);

  it('bob reads his own over NATS through the SDK, which sends his token', async () => {
    const sdk = await Agora.connect({ nats: { servers: nats.url }, signer: { agentId: 'bob', secretKey: keys.bob.secretKey } });
    try {
      expect(await sdk.tryQuery('GetProposal', { proposalId }, { timeoutMs: 15_000 })).toMatchObject({ ok: true, result: { proposalId, proposer: 'bob' } });
    } finally {
      await sdk.close();
    }
  }, 60_000);
});

describe('command refusals reveal no more than reads (e2e)', () => {
  let proposalId: string;
  let bobsCommandId: string;
  const notYours = (type: string, id: string) => `alice may not ${type} on proposal-${id}: it does not exist, or it is not one alice may act on`;

  beforeAll(async () => {
    proposalId = `p-${randomUUID()}`;
    bobsCommandId = randomUUID();
    await ok('bob', 'SubmitProposal', { proposalId, title: 'Bob', body: 'Plan', problem: 'A problem' }, bobsCommandId);
  }, 60_000);

  it("withdrawing bob's proposal and a missing one get the same forbidden, naming nobody", async () => {
    const missing = `p-${randomUUID()}`;
    const theirs = await send('alice', 'WithdrawProposal', { proposalId, reason: 'mine now' });
    const none = await send('alice', 'WithdrawProposal', { proposalId: missing, reason: 'mine now' });
    expect(theirs).toEqual({ status: 403, reply: { ok: false, error: { code: 'forbidden', message: notYours('WithdrawProposal', proposalId), details: { commandType: 'WithdrawProposal' } } } });
    expect(none).toEqual({ status: 403, reply: { ok: false, error: { code: 'forbidden', message: notYours('WithdrawProposal', missing), details: { commandType: 'WithdrawProposal' } } } });
  });

  it("submitting under bob's proposal id says nothing of bob or when", async () => {
    const taken = await send('alice', 'SubmitProposal', { proposalId, title: 'Alice', body: 'Mine', problem: 'Hers' });
    expect(taken).toEqual({ status: 403, reply: { ok: false, error: { code: 'forbidden', message: notYours('SubmitProposal', proposalId), details: { commandType: 'SubmitProposal' } } } });
  });

  it("reusing bob's command id is command_id_reused, naming neither his stream, his type nor him", async () => {
    const { status, reply } = await send('alice', 'SubmitProposal', { proposalId: `p-${randomUUID()}`, title: 'Alice', body: 'Mine', problem: 'Hers' }, bobsCommandId);
    expect(status).toBe(409);
    expect(reply).toEqual({ ok: false, error: { code: 'command_id_reused', message: expect.any(String), details: { commandId: bobsCommandId } } });
    expect(JSON.stringify(reply)).not.toMatch(/bob|proposal-|SubmitProposal/);
  });

  it("bob, a party, still gets the decider's own reasons", async () => {
    await ok('bob', 'WithdrawProposal', { proposalId, reason: 'not now' });
    const { reply } = await send('bob', 'ReviseProposal', { proposalId, body: 'again' });
    expect(reply.ok).toBe(false);
    expect(!reply.ok && reply.error.message).not.toMatch(/it does not exist, or it is not one/);
  });
});

describe('the auditor sends no command (e2e)', () => {
  it("after an operator's SetModelBudget, the auditor's ReserveModelCall is refused and its ledger stays empty", async () => {
    await ok('root', 'SetModelBudget', { agentId: 'aud', amount: 1, currency: 'USD' });
    const { status, reply } = await send('aud', 'ReserveModelCall', { agentId: 'aud', callId: 'c-1', purpose: 'probe', model: 'openai:gpt-4.1', maxCost: 0.1, currency: 'USD' });
    expect(status).toBe(403);
    expect(reply).toMatchObject({ ok: false, error: { code: 'forbidden', details: { commandType: 'ReserveModelCall', actorRoles: ['auditor'] } } });
    const ledger = await read<{ calls: unknown[] }>('root', '/v1/registry/agents/aud/model-calls');
    expect(ledger).toMatchObject({ ok: true, result: { calls: [] } });
  });
});
