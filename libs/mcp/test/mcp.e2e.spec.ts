/**
 * The MCP server as an agent's MCP client starts it: `agora mcp --key <file> --url <gateway>` over
 * stdio, spoken to by the MCP SDK's own Client, against a running Agora (the standalone process).
 * An executive and a reviewer play a tribunal round through tools (a refusal comes back as a tool
 * error with Agora's code, the verdict is awaited with progress, the proposal's resource notifies
 * updates); a requester and the validators drawn play a vote through tools; a paused agent plays
 * its recovery through the seed's tools while the reviewer drawn answers from its SDK role loop.
 */
import type { Role } from '@agora/contracts';
import { Agora, onDialecticTurn, onReviewRequested, type RoleLoop } from '@agora/sdk';
import { startStandalone, type Standalone } from '@agora/testing';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { agoraMcpOverStdio } from './stdio-client.js';

const CAST: Record<string, { roles: Role[]; constitutions?: string[]; specializations?: string[]; trustScore?: number }> = {
  seldon: { roles: ['executive'] },
  harbinger: { roles: ['reviewer'], constitutions: ['risk'], trustScore: 700 },
  heretic: { roles: ['reviewer'], constitutions: ['premise'], trustScore: 680 },
  sentinel: { roles: ['reviewer'], constitutions: ['evidence'], trustScore: 650 },
  zealot: { roles: ['reviewer'], constitutions: ['execution'], trustScore: 620 },
  nova: { roles: ['executive'] },
  aegis: { roles: ['validator'], specializations: ['security'], trustScore: 900 },
  ledger: { roles: ['validator'], specializations: ['compliance'], trustScore: 820 },
  pilot: { roles: ['validator'], specializations: ['operations'], trustScore: 760 },
  orion: { roles: ['executive'] },
  ops: { roles: ['operator'] },
};
const VALIDATORS = ['aegis', 'ledger', 'pilot'];
const threshold = (value: number) => ({ operation: 'set_risk_threshold', parameters: { threshold: value } });
const cascade = { operation: 'enable_cascade_detection', parameters: {} };

describe('agora mcp: an MCP client against a running Agora (e2e)', () => {
  let agora: Standalone;
  let url: string;
  const mcpClients: Client[] = [];
  const sdkClients: Agora[] = [];
  const loops: RoleLoop[] = [];
  const keyFile = (agentId: string) => agora.keyFile(agentId);

  /** Starts `agora mcp` for an agent, as its MCP configuration would, and connects the MCP SDK's client to it. */
  const mcpFor = async (agentId: string): Promise<Client> => {
    const client = await agoraMcpOverStdio(agentId, keyFile(agentId), url);
    mcpClients.push(client);
    return client;
  };
  const sdkFor = async (agentId: string) => {
    const client = await Agora.connect({ url, signer: { keyFile: keyFile(agentId) } });
    sdkClients.push(client);
    return client;
  };
  const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
  const ok = async (client: Client, name: string, args: Record<string, unknown>) => {
    const result = await call(client, name, args);
    if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
    return result.structuredContent as Record<string, unknown> & { status?: string };
  };

  beforeAll(async () => {
    agora = await startStandalone({ label: 'mcp-e2e', dataDir: 'data' });
    url = agora.url;
    await agora.register(CAST);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(loops.map((l) => l.stop()));
    await Promise.all(mcpClients.map((c) => c.close().catch(() => undefined)));
    await Promise.all(sdkClients.map((c) => c.close()));
    await agora?.stop();
  });

  it("lists a tool per command the agent's roles may send and per query they may read, from the contracts, with the seed's names", async () => {
    const seldon = await mcpFor('seldon');
    const tools = (await seldon.listTools()).tools;
    const names = tools.map((t) => t.name);
    for (const name of ['submit_proposal', 'create_voting_session', 'request_dialectic_review', 'submit_thesis', 'submit_antithesis', 'submit_synthesis', 'get_dialectic_session', 'sign_resolution', 'wait_for_verdict', 'get_proposal']) {
      expect(names).toContain(name);
    }
    // An executive is offered no reviewer's, validator's or operator's command (the command gate would refuse them), and no service-only one.
    for (const name of ['submit_review', 'cast_validator_vote', 'disable_agent', 'decide_escalation', 'set_model_budget', 'verify_read_models', 'open_recovery']) {
      expect(names).not.toContain(name);
    }
    // Each role its own: a reviewer reviews, a validator votes, an operator decides escalations.
    const offered = async (agentId: string) => (await (await mcpFor(agentId)).listTools()).tools.map((t) => t.name);
    expect(await offered('harbinger')).toEqual(expect.arrayContaining(['submit_review', 'withdraw_objection', 'get_proposal']));
    expect(await offered('harbinger')).not.toContain('submit_proposal');
    expect(await offered('aegis')).toEqual(expect.arrayContaining(['cast_validator_vote']));
    expect(await offered('ops')).toEqual(expect.arrayContaining(['decide_escalation', 'disable_agent', 'set_model_budget', 'verify_read_models', 'list_collusion_flags']));
    // Queries likewise: none the visibility table gives an executive nothing of.
    expect(names).not.toContain('list_collusion_flags');
    expect(names).not.toContain('list_chamber_sessions');
    const submit = tools.find((t) => t.name === 'submit_proposal')!;
    expect(submit.inputSchema.required).toEqual(expect.arrayContaining(['proposalId', 'title', 'body', 'problem']));
    expect(submit.outputSchema?.properties).toHaveProperty('position');
  }, 60_000);

  it('takes no signature, key or token as a tool argument: the server signs, a model never handles signing material', async () => {
    const ops = await mcpFor('ops');
    const tools = (await ops.listTools()).tools;
    const signing = tools.flatMap((t) => Object.keys(t.inputSchema.properties ?? {}).filter((p) => /signature|key|token|secret/i.test(p)).map((p) => `${t.name}.${p}`));
    expect(signing).toEqual([]);
    const names = tools.map((t) => t.name);
    // Decisions that resolve a recovery are signed by the server, as sign_resolution is; identities (keys) are managed where the keys are.
    expect(names).toEqual(expect.arrayContaining(['record_tie_break', 'decide_recovery', 'sign_resolution']));
    expect(names).not.toContain('register_agent');
    expect(names).not.toContain('enable_agent');
    expect(names).not.toContain('rotate_agent_key');
  }, 60_000);

  it('plays a tribunal round: the executive submits and waits with progress, a reviewer reviews through tools, refusals carry the code', async () => {
    const seldon = await mcpFor('seldon');
    const harbinger = await mcpFor('harbinger');
    for (const reviewer of ['heretic', 'sentinel', 'zealot']) {
      loops.push(onReviewRequested(await sdkFor(reviewer), async ({ constitution }) => ({ verdict: 'approve', reasoning: `${constitution}: fine` })));
    }
    await Promise.all(loops.map((l) => l.ready));

    const updated: string[] = [];
    seldon.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    await ok(seldon, 'submit_proposal', { proposalId: 'mcp-round', title: 'Join through MCP', body: 'Agents call tools', problem: 'Agents live in MCP clients' });
    await seldon.subscribeResource({ uri: 'agora://proposals/mcp-round' });
    const progress: string[] = [];
    const verdict = seldon.callTool({ name: 'wait_for_verdict', arguments: { proposalId: 'mcp-round', timeoutSeconds: 60 } }, undefined, { onprogress: (p) => void progress.push(p.message ?? ''), timeout: 90_000 });

    // The reviewer finds its assignment, is refused a vague objection (with Agora's code), then approves.
    const assignment = await untilValue(async () => {
      const list = await ok(harbinger, 'list_assignments', { reviewer: 'harbinger' });
      return (list['assignments'] as { proposalId: string; round: number; constitution: string }[] | undefined)?.find((a) => a.proposalId === 'mcp-round');
    });
    const vague = await call(harbinger, 'submit_review', { proposalId: 'mcp-round', round: assignment.round, constitution: 'risk', verdict: 'object', reasoning: "this doesn't feel right" });
    expect(vague.isError).toBe(true);
    expect((vague.content[0] as { text: string }).text).toMatch(/^invalid_command: /);
    await ok(harbinger, 'submit_review', { proposalId: 'mcp-round', round: assignment.round, constitution: 'risk', verdict: 'approve', reasoning: 'A tool call is a signed command' });

    const result = (await verdict) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { status: string }).status).toBe('approved');
    expect(progress.some((p) => p.startsWith('ReviewSubmitted'))).toBe(true);
    expect(updated).toContain('agora://proposals/mcp-round');
    const read = await seldon.readResource({ uri: 'agora://proposals/mcp-round' });
    expect(JSON.parse((read.contents[0] as { text: string }).text).status).toBe('approved');

    // A reviewer has no submit_proposal tool: a call of it never reaches Agora.
    const selfServe = await call(harbinger, 'submit_proposal', { proposalId: 'not-mine', title: 'x', body: 'x', problem: 'x' }).then(
      (result) => `${String(result.isError)} ${(result.content[0] as { text: string }).text}`,
      (error: unknown) => `thrown ${String(error)}`,
    );
    expect(selfServe).toMatch(/submit_proposal not found/);
    expect(await seldon.callTool({ name: 'get_proposal', arguments: { proposalId: 'not-mine' } })).toMatchObject({ isError: true });
    await Promise.all(loops.splice(0).map((l) => l.stop()));
  }, 120_000);

  it('plays a vote: the requester opens a session and waits for the decision, the validators drawn find it and vote through tools', async () => {
    const seldon = await mcpFor('seldon');
    const created = await ok(seldon, 'create_voting_session', { requestId: 'mcp-deploy', actionType: 'deploy_production', riskLevel: 'high', summary: 'Roll out 4.2 behind a flag' });
    expect(created['position']).toEqual(expect.any(String));
    const { sessionId, validators } = (await ok(seldon, 'get_voting_session_by_request', { requestId: 'mcp-deploy' })) as { sessionId: string; validators: { agentId: string }[] };
    expect(validators.length).toBeGreaterThan(0);
    const decision = seldon.callTool({ name: 'wait_for_decision', arguments: { sessionId, timeoutSeconds: 60 } }, undefined, { timeout: 90_000 });

    // Every validator drawn votes through its own `agora mcp`; a validator not drawn is refused with Agora's code.
    for (const { agentId } of validators) {
      const client = await mcpFor(agentId);
      await ok(client, 'cast_validator_vote', { sessionId, decision: 'approve', reasoning: `${agentId}: the flag makes it reversible`, confidence: 0.8 });
    }
    const outsider = VALIDATORS.find((v) => !validators.some((d) => d.agentId === v));
    if (outsider) {
      const refused = await call(await mcpFor(outsider), 'cast_validator_vote', { sessionId, decision: 'deny', reasoning: 'I was not asked', confidence: 0.5 });
      expect(refused.isError).toBe(true);
      expect((refused.content[0] as { text: string }).text).toMatch(/^[a-z_]+: /);
    }
    const decided = (await decision) as CallToolResult;
    expect(decided.isError).toBeFalsy();
    const view = decided.structuredContent as { status: string; recommendation: { decision: string }; votes: { validator: string; decision: string }[] };
    expect(view.status).toBe('decided');
    expect(view.recommendation.decision).toBe('approve');
    expect(view.votes.map((v) => v.validator).sort()).toEqual(validators.map((v) => v.agentId).sort());
  }, 120_000);

  it("plays a recovery: the paused agent uses the seed's tools, signs through the server, and waits for the resolution", async () => {
    for (const agentId of Object.keys(CAST).filter((a) => a !== 'nova')) {
      loops.push(
        onDialecticTurn(await sdkFor(agentId), async (turn) =>
          turn.kind === 'antithesis'
            ? { observedMetrics: { risk_score: 0.65 }, concerns: ['Watch for cascades'], reasoning: 'Keep it tight', counterProposal: { rootCause: 'External spike', proposedConditions: [threshold(0.48), cascade] as never } }
            : { rootCause: 'External spike', proposedConditions: [cascade, threshold(0.48)] as never, reasoning: 'Agreed', agrees: true },
        ),
      );
    }
    await Promise.all(loops.map((l) => l.ready));
    const nova = await mcpFor('nova');
    await ok(nova, 'report_health', { agentId: 'nova', health: 0.35, risk: 0.65, tags: ['cascade'] });
    const review = await ok(nova, 'request_dialectic_review', { timeoutSeconds: 30 });
    const sessionId = review['sessionId'] as string;
    expect(review['reviewer']).toEqual(expect.any(String));

    const session = `agora://dialectic-sessions/${sessionId}`;
    const changed = notifications(nova, session);
    await nova.subscribeResource({ uri: session });
    await ok(nova, 'submit_thesis', { sessionId, rootCause: 'An outside complexity spike', proposedConditions: [threshold(0.5), cascade], reasoning: 'External' });
    await changed.until(async () => (await ok(nova, 'get_dialectic_session', { sessionId })).status === 'synthesis');
    await ok(nova, 'submit_synthesis', { sessionId, round: 1, rootCause: 'External spike', proposedConditions: [threshold(0.48), cascade], reasoning: "I accept the reviewer's threshold", agrees: true });
    await changed.until(async () => (await ok(nova, 'get_dialectic_session', { sessionId })).status === 'awaiting_signatures');
    await ok(nova, 'sign_resolution', { sessionId });
    const resolved = await ok(nova, 'wait_for_resolution', { sessionId, final: true, timeoutSeconds: 60 });
    expect(resolved.status).toBe('resolved');
    // The registry resumes the agent in answer to the resolution, a moment later.
    await untilValue(async () => ((await ok(nova, 'get_agent', { agentId: 'nova' }))['breaker'] as { state: string }).state === 'closed' || undefined);
  }, 120_000);

  it('lets an operator resume a paused agent through decide_recovery, the resolution signed by the server with the operator\'s key', async () => {
    const orion = await mcpFor('orion');
    const ops = await mcpFor('ops');
    await ok(orion, 'report_health', { agentId: 'orion', health: 0.3, risk: 0.7, tags: ['cascade'] });
    const { sessionId } = (await ok(orion, 'request_dialectic_review', { timeoutSeconds: 30 })) as { sessionId: string };
    await ok(ops, 'escalate_recovery', { sessionId, reason: 'the on-call operator takes it', toOperator: true });
    await untilValue(async () => (await ok(ops, 'get_dialectic_session', { sessionId })).status === 'awaiting_operator' || undefined);
    await ok(ops, 'decide_recovery', { sessionId, decision: 'resume', reasoning: 'The spike came from outside', rootCause: 'An outside complexity spike', conditions: [threshold(0.45)] });
    const resolved = await ok(ops, 'wait_for_resolution', { sessionId, final: true, timeoutSeconds: 60 });
    expect(resolved).toMatchObject({ status: 'resolved', resolved: { resolution: { decidedBy: 'operator', decider: 'ops' }, signatures: [{ signer: 'ops', role: 'operator' }] } });
  }, 120_000);
});

/** Resource-updated notifications of one URI, and a way to wait for a condition re-checked on each of them. */
function notifications(client: Client, uri: string) {
  let wake: (() => void) | undefined;
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    if (n.params.uri === uri) wake?.();
  });
  return {
    async until(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting on ${uri}`);
        // Woken by the next notification (or after 2 s, in case one came between the check and now).
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 2_000);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    },
  };
}

async function untilValue<T>(read: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
