/**
 * `agora mcp-proxy` in front of a real MCP server from the npm registry
 * (`@modelcontextprotocol/server-memory`, a knowledge graph kept in a JSONL file), spoken to by the
 * MCP SDK's own Client over stdio, against a running Agora (the standalone process) whose
 * validators vote and reviewers review from their SDK role loops. The upstream's own file shows what ran: an approved
 * call's entity is in it, a denied call's never is. The log ends audited by `agora audit`.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Agora, onReviewRequested, onVoteRequested, resultDigest, toolCallDigest, type RoleLoop } from '@agora/sdk';
import { REPO_ROOT, processEnvironment, runToCompletion, sourceArgs, startStandalone, type Standalone } from '@agora/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

const VALIDATORS = ['vega', 'rigel', 'deneb'];
/** The tribunal's reviewers, one per constitution of the default class. */
const REVIEWERS: Record<string, string> = { harbinger: 'risk', heretic: 'premise', sentinel: 'evidence', zealot: 'execution' };
/** The upstream: the memory server's entry point, run with this Node. */
const MEMORY_SERVER = join(dirname(createRequire(join(REPO_ROOT, 'package.json')).resolve('@modelcontextprotocol/server-memory/package.json')), 'dist', 'index.js');

const POLICY = {
  server: 'memory',
  rules: [
    { tool: 'create_entities', arguments: { entities: { $any: { entityType: 'credential' } } }, decision: 'vote', riskLevel: 'high', reason: 'storing a credential' },
    { tool: 'create_entities', arguments: { entities: { $any: { name: { $prefix: 'silent-' } } } }, decision: 'vote', riskLevel: 'high', votingTimeoutMs: 2000 },
    { tool: 'create_entities', arguments: { entities: { $any: { entityType: 'signing_key' } } }, decision: 'vote', riskLevel: 'critical' },
    { tool: 'create_entities', arguments: { entities: { $any: { entityType: 'runbook' } } }, decision: 'person', riskLevel: 'medium', reason: 'a runbook is read by the on-call' },
    { tool: 'create_entities', arguments: { entities: { $any: { entityType: 'migration' } } }, decision: 'tribunal', reason: 'a migration reshapes the graph' },
    { tool: 'delete_entities', decision: 'deny', reason: 'the graph is append-only' },
  ],
};

const entity = (name: string, entityType: string) => ({ name, entityType, observations: [`${name} was written through the proxy`] });

describe('agora mcp-proxy: governed tool calls in front of a real MCP server (e2e)', () => {
  let dir: string;
  let agora: Standalone;
  let url: string;
  let memoryFile: string;
  let client: Client;
  const proxies: Client[] = [];
  let approvedSession: string;
  const sdkClients: Agora[] = [];
  const loops: RoleLoop[] = [];
  const keyFile = (agentId: string) => agora.keyFile(agentId);
  /** Starts `agora mcp-proxy` for the deployer, as its MCP configuration would, and connects the MCP SDK's client to it. */
  const proxyClient = async (policy: unknown, args: string[]): Promise<Client> => {
    const policyFile = join(dir, `policy-${proxies.length}.json`);
    writeFileSync(policyFile, JSON.stringify(policy));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...sourceArgs('apps/cli/src/main.ts'), 'mcp-proxy', '--policy', policyFile, '--key', keyFile('deployer'), '--url', url, ...args],
      cwd: REPO_ROOT,
      env: processEnvironment({ MEMORY_FILE_PATH: memoryFile }) as Record<string, string>,
      stderr: 'ignore',
    });
    const mcp = new Client({ name: 'deployer-model', version: '1.0.0' });
    await mcp.connect(transport);
    proxies.push(mcp);
    return mcp;
  };
  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = (result: CallToolResult) => (result.content[0] as { text: string }).text;
  /** What the upstream itself recorded: the names of the entities in its file. */
  const upstreamEntities = () => (existsSync(memoryFile) ? readFileSync(memoryFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; name: string }) : []).filter((r) => r.type === 'entity').map((r) => r.name);

  beforeAll(async () => {
    agora = await startStandalone({ label: 'mcp-proxy-e2e', dataDir: 'data' });
    ({ dir, url } = agora);
    memoryFile = join(dir, 'memory.jsonl');
    await agora.register({
      deployer: { roles: ['executive'], trustScore: 500 },
      ...Object.fromEntries(VALIDATORS.map((v) => [v, { roles: ['validator'], trustScore: 800 }])),
      ...Object.fromEntries(Object.entries(REVIEWERS).map(([r, constitution]) => [r, { roles: ['reviewer'], trustScore: 700, constitutions: [constitution] }])),
    });
    // The operator's SDK client (sdkClients[0]): it reads the sessions and decides what waits for a person.
    sdkClients.push(await Agora.connect({ url, signer: { keyFile: agora.operatorKeyFile } }));
    // The reviewers read the call in the proposal's body: the risk reviewer objects to a migration that drops anything.
    for (const r of Object.keys(REVIEWERS)) {
      const sdk = await Agora.connect({ url, signer: { keyFile: keyFile(r) } });
      sdkClients.push(sdk);
      const loop = onReviewRequested(sdk, async ({ proposal, constitution }) =>
        proposal.body.includes('"name":"quiet-')
          ? undefined // nobody reviews: no verdict in time
          : constitution === 'risk' && proposal.body.includes('"name":"drop-')
          ? { verdict: 'object', reasoning: 'dropping data has no way back', constraint: 'no irreversible loss of data', scenario: 'the dropped entities are needed by the next release', rejectReason: 'a drop through an agent tool call cannot be undone' }
          : { verdict: 'approve', reasoning: `${constitution}: the migration is additive` },
      );
      loops.push(loop);
      await loop.ready;
    }
    // The validators read the call in the session's summary: a staging credential is fine, a production one is not.
    for (const v of VALIDATORS) {
      const sdk = await Agora.connect({ url, signer: { keyFile: keyFile(v) } });
      sdkClients.push(sdk);
      const loop = onVoteRequested(sdk, async ({ session }) => {
        const summary = session.summary ?? '';
        if (summary.includes('"name":"silent-')) return undefined; // nobody votes: the session expires
        // A critical call is approved by all but one: not unanimous, so a person decides.
        if (summary.includes('"entityType":"signing_key"')) return { decision: v === 'deneb' ? 'deny' : 'approve', reasoning: `${v} on a signing key`, confidence: 0.9 };
        const production = summary.includes('"name":"prod-');
        return { decision: production ? 'deny' : 'approve', reasoning: production ? 'a production credential must not go into shared memory' : 'a staging credential may be stored', confidence: 0.9 };
      });
      loops.push(loop);
      await loop.ready;
    }
    client = await proxyClient(POLICY, ['--decision-timeout', '60', '--', process.execPath, MEMORY_SERVER]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(loops.map((l) => l.stop()));
    await Promise.all(proxies.map((c) => c.close().catch(() => undefined)));
    await Promise.all(sdkClients.map((c) => c.close()));
    await agora?.stop();
  });

  it("passes the upstream's tool list through", async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['create_entities', 'delete_entities', 'read_graph']));
  });

  it('passes a call no rule matches straight through', async () => {
    const result = await call('create_entities', { entities: [entity('release-notes', 'note')] });
    expect(result.isError).toBeFalsy();
    expect(upstreamEntities()).toEqual(['release-notes']);
  }, 30_000);

  it('forwards a matched call once the validators approve it, with the session bound to the exact call', async () => {
    const args = { entities: [entity('staging-token', 'credential')] };
    const result = await call('create_entities', args);
    expect(result.isError).toBeFalsy();
    expect(upstreamEntities()).toContain('staging-token');
    const root = sdkClients[0]!;
    const { sessions } = await root.query('ListVotingSessions', { requestingAgent: 'deployer' });
    const views = await Promise.all(sessions.map((s) => root.query('GetVotingSession', { sessionId: s.sessionId })));
    const digest = toolCallDigest({ server: 'memory', tool: 'create_entities', arguments: args, caller: 'deployer' });
    const session = views.find((s) => s.toolCall?.callDigest === digest);
    expect(session).toMatchObject({ actionType: 'mcp_tool_call:memory/create_entities', riskLevel: 'high', finalDecision: 'approve', consensus: 'unanimous_approve' });
    expect(session!.summary).toContain(`sha256:${digest}`);
    // In the log: the approval was released for this call, and the digest of what the upstream answered.
    expect(session!.toolCall).toMatchObject({ server: 'memory', tool: 'create_entities', outcome: 'ok', resultDigest: resultDigest(result) });
    expect(session!.toolCall!.releasedAt).not.toBeNull();
    approvedSession = session!.sessionId;
  }, 60_000);

  it('binds an approval to its call and lets it be used once: a replay, another digest or a denied session is refused by Agora', async () => {
    const deployer = await Agora.connect({ url, signer: { keyFile: keyFile('deployer') } });
    sdkClients.push(deployer);
    const view = await deployer.query('GetVotingSession', { sessionId: approvedSession });
    const again = await deployer.trySend('ReleaseToolCall', { sessionId: approvedSession, callDigest: view.toolCall!.callDigest });
    expect(again).toMatchObject({ ok: false, error: { code: 'illegal_state', message: expect.stringMatching(/already used/) } });
    const other = await deployer.trySend('ReleaseToolCall', { sessionId: approvedSession, callDigest: 'f'.repeat(64) });
    expect(other).toMatchObject({ ok: false, error: { code: 'illegal_state', message: expect.stringMatching(/decided another call/) } });
  }, 30_000);

  it('never forwards a call the validators deny: the agent gets tool_call_denied and the upstream has no trace of it', async () => {
    const result = await call('create_entities', { entities: [entity('prod-db-password', 'credential')] });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^tool_call_denied: the validators' vote refused memory\/create_entities .*unanimous_deny/);
    expect(result._meta?.['agora']).toMatchObject({ error: { code: 'tool_call_denied', details: { tool: 'create_entities' } } });
    expect(upstreamEntities()).not.toContain('prod-db-password');
    expect(readFileSync(memoryFile, 'utf8')).not.toContain('prod-db-password');
    // The denied session stays unreleased, and Agora refuses to release it.
    const { sessionId } = (result._meta!['agora'] as { error: { details: { sessionId: string } } }).error.details;
    const root = sdkClients[0]!;
    expect((await root.query('GetVotingSession', { sessionId })).toolCall).toMatchObject({ releasedAt: null, outcome: null });
    const deployer = await Agora.connect({ url, signer: { keyFile: keyFile('deployer') } });
    sdkClients.push(deployer);
    const digest = toolCallDigest({ server: 'memory', tool: 'create_entities', arguments: { entities: [entity('prod-db-password', 'credential')] }, caller: 'deployer' });
    expect(await deployer.trySend('ReleaseToolCall', { sessionId, callDigest: digest })).toMatchObject({ ok: false, error: { code: 'illegal_state', message: expect.stringMatching(/final decision deny/) } });
  }, 60_000);

  it('refuses a call the policy denies without asking, and the upstream keeps its entities', async () => {
    const result = await call('delete_entities', { entityNames: ['release-notes'] });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^tool_call_denied: the policy forbids memory\/delete_entities: the graph is append-only/);
    expect(upstreamEntities()).toEqual(['release-notes', 'staging-token']);
  }, 30_000);

  it('refuses a call whose session expires before the validators vote: tool_call_expired, never forwarded', async () => {
    const result = await call('create_entities', { entities: [entity('silent-key', 'signing_key')] });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^tool_call_expired: voting session \S+ on memory\/create_entities expired before its validators decided/);
    expect(upstreamEntities()).not.toContain('silent-key');
  }, 60_000);

  it('holds a call the vote escalates until a person decides, then forwards it', async () => {
    const root = sdkClients[0]!;
    const pending = call('create_entities', { entities: [entity('release-key', 'signing_key')] });
    // The operator's inbox: the session waiting for a person.
    let sessionId: string | undefined;
    for (let i = 0; i < 100 && sessionId === undefined; i++) {
      const { sessions } = await root.query('ListVotingSessions', { requestingAgent: 'deployer' });
      sessionId = sessions.find((s) => s.awaitingOperator && s.status === 'decided')?.sessionId;
      if (sessionId === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    expect(sessionId).toBeDefined();
    const held = await root.query('GetVotingSession', { sessionId: sessionId! });
    expect(held).toMatchObject({ riskLevel: 'critical', recommendation: { decision: 'escalate' }, toolCall: { releasedAt: null } });
    expect(upstreamEntities()).not.toContain('release-key');
    await root.send('DecideVotingEscalation', { sessionId: sessionId!, decision: 'approve', reason: 'the release key goes to the build host only' });
    const result = await pending;
    expect(result.isError).toBeFalsy();
    expect(upstreamEntities()).toContain('release-key');
    expect((await root.query('GetVotingSession', { sessionId: sessionId! })).toolCall).toMatchObject({ outcome: 'ok', resultDigest: resultDigest(result) });
  }, 60_000);

  /** The operator's inbox (what the console's inbox lists: sessions awaiting an operator) until it holds the session of this call. */
  const inboxSessionOf = async (args: Record<string, unknown>) => {
    const root = sdkClients[0]!;
    const digest = toolCallDigest({ server: 'memory', tool: 'create_entities', arguments: args, caller: 'deployer' });
    for (let i = 0; i < 200; i++) {
      const { sessions } = await root.query('ListPendingVotingSessions', { awaitingOperator: true });
      const views = await Promise.all(sessions.map((s) => root.query('GetVotingSession', { sessionId: s.sessionId })));
      const held = views.find((v) => v.toolCall?.callDigest === digest);
      if (held) return held;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`no session for ${digest} in the operator's inbox`);
  };

  it('holds a call the policy gives to a person in the operator\'s inbox, no validator asked, and forwards it once the person approves', async () => {
    const root = sdkClients[0]!;
    const args = { entities: [entity('restart-runbook', 'runbook')] };
    const pending = call('create_entities', args);
    const held = await inboxSessionOf(args);
    expect(held).toMatchObject({ status: 'decided', validators: [], recommendation: { decision: 'escalate', escalationReason: 'person_decides' }, toolCall: { releasedAt: null } });
    expect(held.summary).toContain('"entityType":"runbook"');
    expect(upstreamEntities()).not.toContain('restart-runbook');
    await root.send('DecideVotingEscalation', { sessionId: held.sessionId, decision: 'approve', reason: 'the runbook is reviewed' });
    const result = await pending;
    expect(result.isError).toBeFalsy();
    expect(upstreamEntities()).toContain('restart-runbook');
    const after = await root.query('GetVotingSession', { sessionId: held.sessionId });
    expect(after).toMatchObject({ finalDecision: 'approve', resolution: { decision: 'approve', reason: 'the runbook is reviewed' }, toolCall: { outcome: 'ok', resultDigest: resultDigest(result) } });
    expect(after.toolCall!.releasedAt).not.toBeNull();
    // Released once: the approval cannot run the call again.
    const deployer = await Agora.connect({ url, signer: { keyFile: keyFile('deployer') } });
    sdkClients.push(deployer);
    expect(await deployer.trySend('ReleaseToolCall', { sessionId: held.sessionId, callDigest: held.toolCall!.callDigest })).toMatchObject({ ok: false, error: { code: 'illegal_state' } });
  }, 60_000);

  it('never forwards a call the person denies: tool_call_denied with the reason, no trace upstream', async () => {
    const root = sdkClients[0]!;
    const args = { entities: [entity('wipe-runbook', 'runbook')] };
    const pending = call('create_entities', args);
    const held = await inboxSessionOf(args);
    await root.send('DecideVotingEscalation', { sessionId: held.sessionId, decision: 'deny', reason: 'no wiping from a runbook' });
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^tool_call_denied: a person refused memory\/create_entities \(voting session \S+: no wiping from a runbook\)/);
    expect(readFileSync(memoryFile, 'utf8')).not.toContain('wipe-runbook');
    expect((await root.query('GetVotingSession', { sessionId: held.sessionId })).toolCall).toMatchObject({ releasedAt: null, outcome: null });
  }, 60_000);

  it('sits in front of a Streamable HTTP upstream too (--upstream-url: the gateway\'s own /mcp)', async () => {
    const httpClient = await proxyClient({ server: 'agora', rules: [{ tool: 'list_voting_sessions', decision: 'deny', reason: 'not for this agent' }] }, ['--upstream-url', `${url}/mcp`]);
    expect((await httpClient.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['get_agent', 'list_voting_sessions']));
    const agent = (await httpClient.callTool({ name: 'get_agent', arguments: { agentId: 'deployer' } })) as CallToolResult;
    expect(agent.isError).toBeFalsy();
    expect(agent.structuredContent).toMatchObject({ agentId: 'deployer', roles: ['executive'] });
    const refused = (await httpClient.callTool({ name: 'list_voting_sessions', arguments: {} })) as CallToolResult;
    expect(text(refused)).toMatch(/^tool_call_denied: the policy forbids agora\/list_voting_sessions: not for this agent/);
  }, 60_000);

  it('stops waiting at --decision-timeout: tool_call_expired, the session cancelled, the call never forwarded', async () => {
    const impatient = await proxyClient(POLICY, ['--decision-timeout', '1', '--', process.execPath, MEMORY_SERVER]);
    const result = (await impatient.callTool({ name: 'create_entities', arguments: { entities: [entity('silent-too', 'credential')] } })) as CallToolResult;
    expect(text(result)).toMatch(/^tool_call_expired: no decision on memory\/create_entities in time/);
    // A wait that ends unanswered says what it waited for: the validators drawn who did not vote.
    expect(text(result)).toMatch(/still waiting for votes from deneb, rigel, vega \(drawn: deneb, rigel, vega; voted: none\)/);
    const { sessionId } = (result._meta!['agora'] as { error: { details: { sessionId: string } } }).error.details;
    expect(await sdkClients[0]!.query('GetVotingSession', { sessionId })).toMatchObject({ status: 'cancelled', cancellation: { cancelledBy: 'deployer', reason: expect.stringMatching(/no decision within 1000 ms/) } });
    expect(upstreamEntities()).not.toContain('silent-too');
  }, 60_000);

  it('cancels the session when the agent cancels its held call, and never forwards it', async () => {
    const root = sdkClients[0]!;
    const before = new Set((await root.query('ListVotingSessions', { requestingAgent: 'deployer' })).sessions.map((s) => s.sessionId));
    const abort = new AbortController();
    const pending = client.callTool({ name: 'create_entities', arguments: { entities: [entity('silent-cancelled', 'credential')] } }, undefined, { signal: abort.signal });
    let sessionId: string | undefined;
    for (let i = 0; i < 100 && sessionId === undefined; i++) {
      sessionId = (await root.query('ListVotingSessions', { requestingAgent: 'deployer' })).sessions.find((s) => !before.has(s.sessionId))?.sessionId;
      if (sessionId === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    abort.abort('the model moved on');
    await expect(pending).rejects.toThrow();
    let status: string | undefined;
    for (let i = 0; i < 100 && status !== 'cancelled'; i++) {
      const view = await root.query('GetVotingSession', { sessionId: sessionId! });
      status = view.status;
      if (status === 'cancelled') expect(view.cancellation).toMatchObject({ cancelledBy: 'deployer', reason: 'the agent cancelled its tool call' });
      else await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe('cancelled');
    expect(upstreamEntities()).not.toContain('silent-cancelled');
  }, 60_000);

  it('forwards a call the policy gives to the tribunal once the proposal is approved, released once against its digest', async () => {
    const root = sdkClients[0]!;
    const args = { entities: [entity('add-owner-index', 'migration')] };
    const result = await call('create_entities', args);
    expect(result.isError).toBeFalsy();
    expect(upstreamEntities().filter((n) => n === 'add-owner-index')).toEqual(['add-owner-index']);
    const digest = toolCallDigest({ server: 'memory', tool: 'create_entities', arguments: args, caller: 'deployer' });
    const { proposals } = await root.query('ListProposals', {});
    const views = await Promise.all(proposals.map((p) => root.query('GetProposal', { proposalId: p.proposalId })));
    const proposal = views.find((p) => p.toolCall?.callDigest === digest);
    expect(proposal).toMatchObject({ proposer: 'deployer', status: 'approved', toolCall: { server: 'memory', tool: 'create_entities', outcome: 'ok', resultDigest: resultDigest(result) } });
    expect(proposal!.body).toContain(`sha256:${digest}`);
    expect(proposal!.rounds[0]!.reviews.map((r) => r.reviewer).sort()).toEqual(Object.keys(REVIEWERS).sort());
    expect(proposal!.toolCall!.releasedAt).not.toBeNull();
    // Released once: the approval cannot run the call again, nor another call.
    const deployer = await Agora.connect({ url, signer: { keyFile: keyFile('deployer') } });
    sdkClients.push(deployer);
    expect(await deployer.trySend('ReleaseProposalToolCall', { proposalId: proposal!.proposalId, callDigest: digest })).toMatchObject({ ok: false, error: { code: 'illegal_state', message: expect.stringMatching(/already used/) } });
    expect(await deployer.trySend('ReleaseProposalToolCall', { proposalId: proposal!.proposalId, callDigest: 'f'.repeat(64) })).toMatchObject({ ok: false, error: { code: 'illegal_state', message: expect.stringMatching(/decided another call/) } });
  }, 120_000);

  it('never forwards a call a reviewer objects to: the blocked proposal is withdrawn, tool_call_denied, no trace upstream', async () => {
    const root = sdkClients[0]!;
    const result = await call('create_entities', { entities: [entity('drop-legacy-owners', 'migration')] });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^tool_call_denied: the tribunal refused memory\/create_entities \(proposal \S+: blocked; risk: no irreversible loss of data\)/);
    expect(readFileSync(memoryFile, 'utf8')).not.toContain('drop-legacy-owners');
    const { proposalId } = (result._meta!['agora'] as { error: { details: { proposalId: string } } }).error.details;
    const proposal = await root.query('GetProposal', { proposalId });
    expect(proposal).toMatchObject({ status: 'withdrawn', toolCall: { releasedAt: null, outcome: null } });
    const deployer = await Agora.connect({ url, signer: { keyFile: keyFile('deployer') } });
    sdkClients.push(deployer);
    expect(await deployer.trySend('ReleaseProposalToolCall', { proposalId, callDigest: proposal.toolCall!.callDigest })).toMatchObject({ ok: false, error: { code: 'illegal_state', message: expect.stringMatching(/has not approved/) } });
  }, 120_000);

  it('withdraws the proposal when no verdict comes before --decision-timeout: tool_call_expired, never forwarded', async () => {
    const impatient = await proxyClient(POLICY, ['--decision-timeout', '1', '--', process.execPath, MEMORY_SERVER]);
    const result = (await impatient.callTool({ name: 'create_entities', arguments: { entities: [entity('quiet-migration', 'migration')] } })) as CallToolResult;
    expect(text(result)).toMatch(/^tool_call_expired: no verdict on memory\/create_entities in time \(proposal \S+\)/);
    const { proposalId } = (result._meta!['agora'] as { error: { details: { proposalId: string } } }).error.details;
    expect(await sdkClients[0]!.query('GetProposal', { proposalId })).toMatchObject({ status: 'withdrawn', toolCall: { releasedAt: null } });
    expect(upstreamEntities()).not.toContain('quiet-migration');
  }, 60_000);

  it('leaves a log that agora audit verifies', async () => {
    await Promise.all(loops.splice(0).map((l) => l.stop()));
    await client.close();
    await agora.process.stop();
    const audit = await runToCompletion('apps/cli/src/main.ts', ['audit', '--workers', '0'], { AGORA_DATA_DIR: join(dir, 'data'), AGORA_OPERATOR_KEY_FILE: join(dir, 'data', 'operator.key.json') }, 120_000);
    expect({ code: audit.code, findings: audit.stdout.split('\n').filter((l) => /@\d+ \(position/.test(l)) }).toEqual({ code: 0, findings: [] });
    expect(audit.stderr).toMatch(/^audit: position \d+, \d+ events/);
  }, 150_000);
});
