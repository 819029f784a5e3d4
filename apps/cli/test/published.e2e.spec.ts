/**
 * The `agora` command as a user gets it: tools/cli-pack.mjs builds the package (agora-governance-cli,
 * bin `agora`: one bundle of the CLI and the workspace libraries it uses, public npm dependencies only),
 * `npm pack`s it, and the tarball is installed with npm into a fresh project outside the repository.
 * There the MCP configurations docs/mcp.md shows start it as written (`npx -y agora-governance-cli mcp
 * ...`, and `mcp-proxy` in front of the MCP memory server), and the MCP SDK's client uses them against a
 * running Agora.
 */
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

/** The `args` of an MCP configuration in docs/mcp.md that starts the published CLI with npx, as written. */
function documentedArgs(command: 'mcp' | 'mcp-proxy'): string[] {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'mcp.md'), 'utf8');
  const config = new RegExp(`"command": "npx", "args": (\\["-y", "${PUBLISHED}", "${command}",[^\\]]*\\])`).exec(doc.replace(/\n\s*/g, ' '))?.[1];
  if (config === undefined) throw new Error(`docs/mcp.md shows no npx configuration of ${PUBLISHED} ${command}`);
  return JSON.parse(config) as string[];
}

describe('agora-governance-cli packed and installed from its tarball (e2e)', () => {
  let dir: string;
  let project: string;
  let agora: AgoraProcess | undefined;
  let url: string;
  const clients: Client[] = [];

  /** Starts a documented configuration in the project, its paths and gateway replaced by the test's, and connects the MCP SDK's client. */
  const connect = async (command: 'mcp' | 'mcp-proxy', replace: Record<string, string>): Promise<Client> => {
    const args = documentedArgs(command).map((arg) => replace[arg] ?? arg);
    const transport = new StdioClientTransport({ command: 'npx', args, cwd: project, env: processEnvironment({ MEMORY_FILE_PATH: join(dir, 'memory.jsonl') }) as Record<string, string>, stderr: 'ignore' });
    const client = new Client({ name: 'alice-model', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-cli-published-'));
    const packed = succeeded('cli:pack', await runCommand(process.execPath, ['tools/cli-pack.mjs', '--pack', join(dir, 'tarball')], { timeoutMs: 240_000 }));
    const tarball = packed.trim().split('\n').pop()!;
    project = join(dir, 'project');
    await mkdir(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'agent-host', private: true }));
    // The memory server beside it, as an agent host would have it (npx then finds it without fetching).
    succeeded('npm install', await runCommand('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball, `@modelcontextprotocol/server-memory@${pinned['@modelcontextprotocol/server-memory']}`], { cwd: project, timeoutMs: 480_000 }));
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

  it("starts as docs/mcp.md's configuration says (npx -y agora-governance-cli mcp ...) and serves alice's tools, signing as alice", async () => {
    const client = await connect('mcp', { '/home/alice/.agora/alice.key.json': join(dir, 'alice.key.json'), 'http://127.0.0.1:8080': url });
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['submit_proposal', 'get_agent', 'wait_for_verdict']));
    const submitted = (await client.callTool({ name: 'submit_proposal', arguments: { proposalId: 'from-npx', title: 'Through npx', body: 'The packed CLI', problem: 'Users install it' } })) as CallToolResult;
    expect(submitted.isError).toBeFalsy();
    const read = (await client.callTool({ name: 'get_proposal', arguments: { proposalId: 'from-npx' } })) as CallToolResult;
    expect(read.structuredContent).toMatchObject({ proposalId: 'from-npx', proposer: 'alice' });
  }, 120_000);

  it("starts mcp-proxy as docs/mcp.md's configuration says, in front of the MCP memory server, and applies the policy", async () => {
    const client = await connect('mcp-proxy', { '/home/alice/.agora/memory.policy.json': join(dir, 'memory.policy.json'), '/home/alice/.agora/alice.key.json': join(dir, 'alice.key.json'), 'http://127.0.0.1:8080': url });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['create_entities', 'delete_entities']));
    const refused = (await client.callTool({ name: 'delete_entities', arguments: { entityNames: ['x'] } })) as CallToolResult;
    expect((refused.content[0] as { text: string }).text).toMatch(/^tool_call_denied: the policy forbids memory\/delete_entities/);
    const ran = (await client.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'note', entityType: 'note', observations: ['passes'] }] } })) as CallToolResult;
    expect(ran.isError).toBeFalsy();
  }, 120_000);
});
