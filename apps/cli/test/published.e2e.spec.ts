/**
 * The `agora` command as a user gets it: tools/cli-pack.mjs builds the package (agora-governance-cli,
 * bin `agora`: one bundle of the CLI and the workspace libraries it uses, public npm dependencies only),
 * `npm pack`s it as `npm run release:pack` does (its checksum recorded in SHA256SUMS beside it), and the
 * tarball is installed with npm as docs/releases.md says (`npm install --global`, into a prefix of the
 * test's own), and into a fresh project outside the repository, where npx finds it as it will find the
 * published package. The MCP configurations docs/mcp.md shows start it as written (`agora mcp ...` from
 * the tarball, `npx -y agora-governance-cli mcp ...` once published, and `agora mcp-proxy` in front of the
 * MCP memory server), and the MCP SDK's client uses them against a running Agora.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair } from '@agora/identity';
import { Agora } from '@agora/sdk';
import { processEnvironment, REPO_ROOT, runCommand, startAgoraProcess, type AgoraProcess } from '@agora/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

const PUBLISHED = 'agora-governance-cli';
const pinned = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies;

const succeeded = (what: string, run: { code: number | null; stdout: string; stderr: string }) => {
  if (run.code !== 0) throw new Error(`${what} exited with ${run.code}:\n${run.stdout}${run.stderr}`);
  return run.stdout;
};

/** The command and `args` of an MCP configuration in docs/mcp.md, as written: `agora` installed from the tarball, or the published package through npx. */
function documentedConfig(how: 'agora' | 'npx', command: 'mcp' | 'mcp-proxy'): { command: string; args: string[] } {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'mcp.md'), 'utf8');
  const first = how === 'agora' ? `"${command}",` : `"-y", "${PUBLISHED}", "${command}",`;
  const config = new RegExp(`"command": "${how}", "args": (\\[${first.replace(/[[\]]/g, '\\$&')}[^\\]]*\\])`).exec(doc.replace(/\n\s*/g, ' '))?.[1];
  if (config === undefined) throw new Error(`docs/mcp.md shows no ${how} configuration of ${command}`);
  return { command: how, args: JSON.parse(config) as string[] };
}

describe('agora-governance-cli packed and installed from its tarball (e2e)', () => {
  let dir: string;
  let project: string;
  let agora: AgoraProcess | undefined;
  let url: string;
  let tarballDigest: string;
  let checksums: string;
  const clients: Client[] = [];

  /**
   * Starts a documented configuration in the project (where the memory server is installed), its paths and gateway
   * replaced by the test's, and connects the MCP SDK's client: `agora` from the global install on the PATH, or npx.
   */
  const connect = async (how: 'agora' | 'npx', command: 'mcp' | 'mcp-proxy', replace: Record<string, string>): Promise<Client> => {
    const config = documentedConfig(how, command);
    const args = config.args.map((arg) => replace[arg] ?? arg);
    const env = processEnvironment({ MEMORY_FILE_PATH: join(dir, 'memory.jsonl'), PATH: `${join(dir, 'global', 'bin')}:${process.env['PATH'] ?? '/usr/bin:/bin'}` }) as Record<string, string>;
    const transport = new StdioClientTransport({ command: config.command, args, cwd: project, env, stderr: 'ignore' });
    const client = new Client({ name: 'alice-model', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-cli-published-'));
    const packed = succeeded('cli:pack', await runCommand(process.execPath, ['tools/cli-pack.mjs', '--pack', join(dir, 'tarball')], { timeoutMs: 240_000 }));
    const tarball = packed.trim().split('\n').pop()!;
    tarballDigest = createHash('sha256').update(readFileSync(tarball)).digest('hex');
    checksums = readFileSync(join(dir, 'tarball', 'SHA256SUMS'), 'utf8');
    // docs/releases.md: npm install --global <tarball> puts `agora` on the PATH (here, a prefix of the test's own).
    succeeded('npm install --global', await runCommand('npm', ['install', '--global', '--prefix', join(dir, 'global'), '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: dir, timeoutMs: 480_000 }));
    project = join(dir, 'project');
    await mkdir(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'agent-host', private: true }));
    // The memory server beside it, as an agent host would have it (npx then finds it without fetching).
    // Without install scripts: the global install above ran them, and here they would only compile
    // better-sqlite3 from source a second time (a minute of CPU where no prebuilt binary can be
    // fetched); the MCP commands never load it.
    succeeded('npm install', await runCommand('npm', ['install', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', tarball, `@modelcontextprotocol/server-memory@${pinned['@modelcontextprotocol/server-memory']}`], { cwd: project, timeoutMs: 480_000 }));
    agora = await startAgoraProcess('apps/standalone/src/main.ts', 'agora', { AGORA_DATA_DIR: join(dir, 'data'), PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', AGORA_READS: '' });
    url = /gateway listening on (http:\/\/[^\s]+) /.exec(agora.output())![1]!;
    const root = await Agora.connect({ url, signer: { keyFile: join(dir, 'data', 'operator.key.json') } });
    const alice = generateKeyPair();
    writeFileSync(join(dir, 'alice.key.json'), JSON.stringify({ agentId: 'alice', ...alice }), { mode: 0o600 });
    await root.send('RegisterAgent', { agentId: 'alice', publicKey: alice.publicKey, displayName: 'alice', roles: ['executive'], constitutions: [], specializations: [], trustScore: 500 });
    await root.close();
    writeFileSync(join(dir, 'memory.policy.json'), JSON.stringify({ server: 'memory', rules: [{ tool: 'delete_entities', decision: 'deny', reason: 'the memory is append-only' }] }));
  }, 900_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await agora?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it('installs with a licence and the agora command, and no workspace package among its dependencies', () => {
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules', PUBLISHED, 'package.json'), 'utf8')) as { license: string; bin: Record<string, string>; dependencies: Record<string, string> };
    expect({ license: manifest.license, bin: Object.keys(manifest.bin) }).toEqual({ license: 'Apache-2.0', bin: ['agora'] });
    expect(Object.keys(manifest.dependencies).filter((name) => name.startsWith('@agora/'))).toEqual([]);
  });

  it('records the tarball\'s SHA-256 in SHA256SUMS beside it, as sha256sum -c reads it', () => {
    expect(checksums).toContain(`${tarballDigest}  ${PUBLISHED}-`);
    expect(checksums).toMatch(/^[0-9a-f]{64} {2}agora-governance-cli-\d+\.\d+\.\d+\.tgz\n$/);
  });

  it.each([
    ['agora', 'from-tarball'],
    ['npx', 'from-npx'],
  ] as const)("starts as docs/mcp.md's %s configuration says and serves alice's tools, signing as alice", async (how, proposalId) => {
    const client = await connect(how, 'mcp', { '/home/alice/.agora/alice.key.json': join(dir, 'alice.key.json'), 'http://127.0.0.1:8080': url });
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['submit_proposal', 'get_agent', 'wait_for_verdict']));
    const submitted = (await client.callTool({ name: 'submit_proposal', arguments: { proposalId, title: `Through ${how}`, body: 'The packed CLI', problem: 'Users install it' } })) as CallToolResult;
    expect(submitted.isError).toBeFalsy();
    const read = (await client.callTool({ name: 'get_proposal', arguments: { proposalId } })) as CallToolResult;
    expect(read.structuredContent).toMatchObject({ proposalId, proposer: 'alice' });
  }, 120_000);

  it("starts mcp-proxy as docs/mcp.md's configuration says, in front of the MCP memory server, and applies the policy", async () => {
    const client = await connect('agora', 'mcp-proxy', { '/home/alice/.agora/memory.policy.json': join(dir, 'memory.policy.json'), '/home/alice/.agora/alice.key.json': join(dir, 'alice.key.json'), 'http://127.0.0.1:8080': url });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['create_entities', 'delete_entities']));
    const refused = (await client.callTool({ name: 'delete_entities', arguments: { entityNames: ['x'] } })) as CallToolResult;
    expect((refused.content[0] as { text: string }).text).toMatch(/^tool_call_denied: the policy forbids memory\/delete_entities/);
    const ran = (await client.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'note', entityType: 'note', observations: ['passes'] }] } })) as CallToolResult;
    expect(ran.isError).toBeFalsy();
  }, 120_000);
});
