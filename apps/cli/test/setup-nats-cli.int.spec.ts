/**
 * `agora setup nats` as an operator runs it: the agents come from the registry behind a gateway
 * that closes reads (read with the token of --key), the bootstrap operator of --key gets a user
 * too, and the users file it writes is one nats-server starts on; an agent then connects as itself.
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errors, type NatsConnection } from '@nats-io/nats-core';
import { RegisterAgent, type Reply } from '@agora/contracts';
import { startGateway, type Gateway } from '@agora/gateway';
import { createSignedCommand, generateKeyPair } from '@agora/identity';
import { connectNats } from '@agora/messaging';
import { startRegistryService } from '@agora/registry';
import { openServiceContext, type ServiceContext } from '@agora/runtime';
import { embeddedAgora, natsPasswordEnv, natsPasswords, startNatsServer, type PrivateNatsServer } from '@agora/testing';
import { runCli } from '../src/cli.js';

/** What every run says of reads on NATS. */
const READS_LINE = 'reads on NATS: services that connect as NATS users answer queries only with a read token (AGORA_NATS_READS=closed, their default); agents send theirs (the SDK, the Python and Go clients)\n';
const ROLES_CONF = resolve(dirname(fileURLToPath(import.meta.url)), '../../../deploy/nats/roles.conf');
const PROCESS_ROLES = ['SERVICE', 'GATEWAY', 'AGENT', 'OBSERVER', 'AUDITOR'] as const;
const passwords = natsPasswords(PROCESS_ROLES);
const open: NatsConnection[] = [];
const track = (nc: NatsConnection) => (open.push(nc), nc);

describe('the agora setup nats command, from the registry behind a gateway', () => {
  let cliDir: string;
  let context: ServiceContext;
  let registry: { close(): Promise<void> };
  let gateway: Gateway;
  let server: PrivateNatsServer | undefined;
  const operator = generateKeyPair();
  const carol = generateKeyPair();

  async function agora(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(argv, { stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), readStdin: async () => '', env: { AGORA_URL: gateway.url } });
    return { code, stdout: out.join(''), stderr: err.join('') };
  }

  beforeAll(async () => {
    cliDir = mkdtempSync(join(tmpdir(), 'agora-setup-nats-cli-'));
    copyFileSync(ROLES_CONF, join(cliDir, 'roles.conf'));
    context = await openServiceContext({ ...embeddedAgora(cliDir, { agentId: 'boss', publicKey: operator.publicKey }), requestTimeoutMs: 5_000 });
    registry = await startRegistryService(context, { logger: false });
    gateway = await startGateway({ client: context.client, store: context.store, port: 0, host: '127.0.0.1', logger: false, console: false, reads: { mode: 'closed', directory: context.directory } });
    const envelope = createSignedCommand({ type: RegisterAgent.type, actor: 'boss', payload: { agentId: 'carol', publicKey: carol.publicKey, displayName: 'Carol', roles: ['reviewer'] }, secretKey: operator.secretKey });
    const reply = (await (await fetch(`${gateway.url}/v1/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(envelope) })).json()) as Reply;
    expect(reply.ok).toBe(true);
    writeFileSync(join(cliDir, 'boss.key.json'), JSON.stringify({ agentId: 'boss', ...operator }), { mode: 0o600 });
  }, 60_000);

  afterAll(async () => {
    for (const nc of open) await nc.close().catch(() => undefined);
    await server?.stop();
    await gateway?.close();
    await registry?.close();
    await context?.close();
    rmSync(cliDir, { recursive: true, force: true });
  }, 30_000);

  it('writes the users, then reloads the server and creates the stream as the bootstrap operator; carol connects as herself', async () => {
    const out = join(cliDir, 'auth.conf');
    const key = join(cliDir, 'boss.key.json');
    const first = await agora(['setup', 'nats', '--key', key, '--out', out]);
    expect(first).toEqual({ code: 0, stdout: `${out}: written (2 agents as nkey users, boss as the bootstrap operator of --key)\n${READS_LINE}`, stderr: '' });
    server = await startNatsServer({ config: out, env: natsPasswordEnv(passwords) });
    const second = await agora(['setup', 'nats', '--key', key, '--out', out, '--pid', String(server.pid), '--stream', '--nats', server.url]);
    expect(second).toEqual({ code: 0, stdout: `${out}: unchanged (2 agents as nkey users, boss as the bootstrap operator of --key)\nlog stream: created\n${READS_LINE}`, stderr: '' });
    const nc = track(await connectNats({ servers: server.url, identity: { agentId: 'carol', secretKey: carol.secretKey } }));
    const sub = nc.subscribe('_INBOX_boss.>');
    expect(await sub.closed).toBeInstanceOf(errors.PermissionViolationError);
  }, 60_000);
});
