/**
 * MCP when the gateway closes its reads (AGORA_READS=closed), spoken to by the MCP SDK's own
 * Client against a running Agora (the standalone process): the gateway's /mcp over Streamable
 * HTTP with a read token on every request, and `agora mcp` over stdio, which signs its own tokens
 * with the agent's key. Each reader sees what the visibility table gives it; a refusal is an MCP
 * error carrying `forbidden` that says nothing of whether the thing exists.
 */
import type { Role } from '@agora/contracts';
import { mintReadToken } from '@agora/identity';
import { startStandalone, type Standalone } from '@agora/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { agoraMcpOverStdio } from './stdio-client.js';

const FLEET: Record<string, Role[]> = { alice: ['executive'], bob: ['executive'], eve: ['observer'] };
const TITLE = 'Rotate the signing keys';

describe('MCP with closed reads: read tokens and the visibility table (e2e)', () => {
  let agora: Standalone;
  let url: string;
  const clients: Client[] = [];
  const keyFile = (agentId: string) => agora.keyFile(agentId);

  /** The MCP SDK's client on the gateway's /mcp, every request carrying a fresh read token of `agentId` (a fetch that adds it). */
  const httpFor = async (agentId: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> => {
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      fetch: (input, init) => {
        const headers = new Headers(init?.headers);
        headers.set('authorization', `Bearer ${mintReadToken({ agentId, secretKey: agora.key(agentId).secretKey })}`);
        return fetch(input, { ...init, headers });
      },
    });
    const client = new Client({ name: `${agentId}-model`, version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  };
  /** `agora mcp` for an agent over stdio, as its MCP configuration would start it. */
  const stdioFor = async (agentId: string): Promise<Client> => {
    const client = await agoraMcpOverStdio(agentId, keyFile(agentId), url);
    clients.push(client);
    return client;
  };
  const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = (result: CallToolResult) => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

  beforeAll(async () => {
    agora = await startStandalone({ label: 'mcp-closed', dataDir: 'data', env: { AGORA_READS: 'closed' } });
    url = agora.url;
    await agora.register(Object.fromEntries(Object.entries(FLEET).map(([agentId, roles]) => [agentId, { roles }])));
    await agora.ok('alice', 'SubmitProposal', { proposalId: 'p-keys', title: TITLE, body: 'Rotate every service key this week.', problem: 'Keys are a year old' });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await agora?.stop();
  }, 30_000);

  it('/mcp refuses a request without a read token: 401, unauthenticated', async () => {
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    expect(res.status).toBe(401);
    // RFC 9110: a 401 says how to authenticate; MCP clients read it.
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="agora", scope="read", error_description="expected an Agora read token signed with the reader's key \(agora token --key <key file>\)/);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { message: expect.stringMatching(/^unauthenticated: /), data: { code: 'unauthenticated' } } });
    const forged = await fetch(`${url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer not.a.token' }, body: '{}' });
    expect(forged.status).toBe(401);
    expect(forged.headers.get('www-authenticate')).toMatch(/^Bearer realm="agora", scope="read", error="invalid_token", error_description="invalid_token: /);
  });

  it('/mcp answers the proposer its proposal, as a tool and as a resource; it offers no command tools', async () => {
    const { client } = await httpFor('alice');
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('get_proposal');
    expect(tools).not.toContain('submit_proposal');
    // Only the queries its reader may read anything of: an executive reads no collusion flags (an operator's or an auditor's).
    expect(tools).not.toContain('list_collusion_flags');
    const got = await call(client, 'get_proposal', { proposalId: 'p-keys' });
    expect(got.isError).toBeFalsy();
    expect(got.structuredContent).toMatchObject({ proposalId: 'p-keys', proposer: 'alice', title: TITLE });
    const resource = await client.readResource({ uri: 'agora://proposals/p-keys' });
    expect(JSON.parse((resource.contents[0] as { text: string }).text)).toMatchObject({ proposer: 'alice' });
    expect((await call(client, 'list_proposals', {})).structuredContent).toMatchObject({ proposals: [expect.objectContaining({ proposalId: 'p-keys' })] });
  });

  it("/mcp refuses another agent alice's proposal exactly as one that does not exist, tool and resource alike", async () => {
    const { client } = await httpFor('bob');
    const theirs = await call(client, 'get_proposal', { proposalId: 'p-keys' });
    const none = await call(client, 'get_proposal', { proposalId: 'no-such-proposal' });
    expect(theirs.isError).toBe(true);
    expect(text(theirs)).toMatch(/^forbidden: /);
    expect(text(theirs)).toBe(text(none));
    expect(JSON.stringify(theirs)).not.toContain(TITLE);
    const resourceError = (uri: string) => client.readResource({ uri }).then(() => 'read', (error: Error) => error.message);
    expect(await resourceError('agora://proposals/p-keys')).toMatch(/forbidden: /);
    expect(await resourceError('agora://proposals/p-keys')).toBe(await resourceError('agora://proposals/no-such-proposal'));
    // bob's list holds only his own; asking for alice's is refused.
    expect((await call(client, 'list_proposals', {})).structuredContent).toMatchObject({ proposals: [] });
    expect(text(await call(client, 'list_proposals', { proposer: 'alice' }))).toMatch(/^forbidden: /);
    // A wait on a proposal it is no party to is refused too, at once.
    expect(text(await call(client, 'wait_for_verdict', { proposalId: 'p-keys', timeoutSeconds: 30 }))).toMatch(/^forbidden: /);
  });

  it('/mcp gives an observer the figures and nothing else', async () => {
    const { client } = await httpFor('eve');
    expect((await call(client, 'get_tribunal_stats', {})).isError).toBeFalsy();
    // It is offered the queries it may read (the figures) and no other: a model is not shown tools it would be refused.
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('get_tribunal_stats');
    expect(tools).not.toContain('list_agents');
    expect(tools).not.toContain('get_proposal');
    expect(text(await call(client, 'get_proposal', { proposalId: 'p-keys' }))).toMatch(/Tool get_proposal not found/);
  });

  it("an MCP session belongs to the reader who opened it: another reader's token does not get into it", async () => {
    const { transport } = await httpFor('alice');
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': '2025-06-18', authorization: `Bearer ${mintReadToken({ agentId: 'bob', secretKey: agora.key('bob').secretKey })}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_proposal', arguments: { proposalId: 'p-keys' } } }),
    });
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain(TITLE);
  });

  it('agora mcp (stdio) signs its reads with the agent key: the proposer reads its proposal, another agent is refused', async () => {
    const alice = await stdioFor('alice');
    expect((await call(alice, 'get_proposal', { proposalId: 'p-keys' })).structuredContent).toMatchObject({ proposer: 'alice', title: TITLE });
    const bob = await stdioFor('bob');
    const refused = await call(bob, 'get_proposal', { proposalId: 'p-keys' });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^forbidden: /);
  });
});
