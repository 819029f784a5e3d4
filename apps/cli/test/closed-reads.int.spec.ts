// `agora` reading from a gateway that closes reads (AGORA_READS=closed), with the real registry
// service behind it (in-process transport, embedded store): the reads carry a token made from the
// key file (--key, --read-key, AGORA_KEY_FILE, else the operator key `npm start` made in the data
// directory), and without one they are refused.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RegisterAgent, type Reply } from '@agora/contracts';
import { startGateway, type Gateway } from '@agora/gateway';
import { createSignedCommand, generateKeyPair, type KeyPair } from '@agora/identity';
import { startRegistryService } from '@agora/registry';
import { openServiceContext, type ServiceContext } from '@agora/runtime';
import { runCli } from '../src/cli.js';
import type { Io } from '../src/command.js';

describe('agora against a gateway that closes reads', () => {
  let dir: string;
  let context: ServiceContext;
  let registry: { close(): Promise<void> };
  let gateway: Gateway;
  const root: KeyPair = generateKeyPair();
  const alice: KeyPair = generateKeyPair();
  let aliceKeyFile: string;

  async function agora(argv: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    const out: string[] = [];
    const err: string[] = [];
    // AGORA_DATA_DIR: a directory without an operator key, unless a test says otherwise (not ./data of the checkout).
    const io: Io = { stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), readStdin: async () => '', env: { AGORA_URL: gateway.url, AGORA_DATA_DIR: join(dir, 'no-operator-here'), ...env } };
    const code = await runCli(argv, io);
    return { code, stdout: out.join(''), stderr: err.join('') };
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agora-cli-reads-'));
    context = await openServiceContext({
      store: { kind: 'embedded', directory: join(dir, 'events') },
      natsUrl: undefined,
      dataDir: dir,
      operators: [{ agentId: 'root', publicKey: root.publicKey }],
      maxClockSkewMs: 300_000,
      requestTimeoutMs: 5_000,
    });
    registry = await startRegistryService(context, { logger: false });
    gateway = await startGateway({ client: context.client, store: context.store, port: 0, host: '127.0.0.1', logger: false, console: false, reads: { mode: 'closed', directory: context.directory } });
    const envelope = createSignedCommand({ type: RegisterAgent.type, actor: 'root', payload: { agentId: 'alice', publicKey: alice.publicKey, displayName: 'Alice', roles: ['executive'] }, secretKey: root.secretKey });
    const reply = (await (await fetch(`${gateway.url}/v1/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(envelope) })).json()) as Reply;
    expect(reply.ok).toBe(true);
    aliceKeyFile = join(dir, 'alice.key.json');
    writeFileSync(aliceKeyFile, JSON.stringify({ agentId: 'alice', ...alice }), { mode: 0o600 });
  }, 60_000);

  afterAll(async () => {
    await gateway?.close();
    await registry?.close();
    await context?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a read without a key file is refused with unauthenticated', async () => {
    const { code, stderr } = await agora(['agents', 'list']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error unauthenticated: /);
  });

  it('agents list reads with the token of --read-key, or of AGORA_KEY_FILE', async () => {
    for (const [argv, env] of [
      [['agents', 'list', '--read-key', aliceKeyFile], {}],
      [['agents', 'list'], { AGORA_KEY_FILE: aliceKeyFile }],
    ] as [string[], Record<string, string>][]) {
      const { code, stdout, stderr } = await agora(argv, env);
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(stdout).toMatch(/^alice\s+Alice\s+executive/m);
    }
  });

  it("without a key file, reads sign with the operator key npm start made in the data directory; agora token does not", async () => {
    const dataDir = join(dir, 'standalone-data');
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, 'operator.key.json'), JSON.stringify({ agentId: 'root', ...root }), { mode: 0o600 });
    const { code, stdout, stderr } = await agora(['agents', 'list'], { AGORA_DATA_DIR: dataDir });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^alice\s+Alice\s+executive/m);
    const tail = await agora(['events', 'tail', '--first', '1', '--category', 'agent'], { AGORA_DATA_DIR: dataDir });
    expect(tail.stdout).toMatch(/agent-alice@0 AgentRegistered/);
    const token = await agora(['token'], { AGORA_DATA_DIR: dataDir });
    expect(token.code).toBe(2);
    expect(token.stderr).toMatch(/say whose token/);
  });

  it("names the key file a refused read was signed with: the standalone's operator key, picked by default, against another system", async () => {
    // ./data/operator.key.json of an earlier `npm start`, while the gateway is another system's (npm run cluster): another root key.
    const dataDir = join(dir, 'other-standalone');
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, 'operator.key.json'), JSON.stringify({ agentId: 'root', ...generateKeyPair() }), { mode: 0o600 });
    const byDefault = await agora(['agents', 'list'], { AGORA_DATA_DIR: dataDir });
    expect(byDefault.code).toBe(1);
    expect(byDefault.stderr).toContain(`(signed with the key file ${join(dataDir, 'operator.key.json')}, the standalone's operator key, used because no --read-key, --key or AGORA_KEY_FILE was given: name the reader's key with --read-key <file>`);
    const given = await agora(['agents', 'list', '--read-key', join(dataDir, 'operator.key.json')]);
    expect(given.stderr).toMatch(new RegExp(`^error bad_signature: .*\\(signed with the key file ${join(dataDir, 'operator.key.json')}\\)\n`));
  });

  it('a token for another audience is refused with wrong_audience', async () => {
    const { code, stderr } = await agora(['agents', 'list'], { AGORA_KEY_FILE: aliceKeyFile, AGORA_READ_AUDIENCE: 'elsewhere' });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error wrong_audience: /);
  });

  it('agora token prints a token curl can read with, and events tail streams with one', async () => {
    const token = (await agora(['token', '--key', aliceKeyFile])).stdout.trim();
    const res = await fetch(`${gateway.url}/v1/registry/agents/alice`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const { code, stdout } = await agora(['events', 'tail', '--first', '1', '--category', 'agent'], { AGORA_KEY_FILE: aliceKeyFile });
    expect(code).toBe(0);
    expect(stdout).toMatch(/agent-alice@0 AgentRegistered/);
  });
});
