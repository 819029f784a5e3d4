/**
 * The OpenAI Agents SDK adapter against a running Agora (the standalone process): a real Agents SDK
 * `run()` (from `@openai/agents`) with the SDK's own stand-in model (ScriptedModel from
 * `@openai/agents-core/testing`, the only stand-in: the model) calls a function tool that writes a file.
 * The policy puts those calls to a vote of three validators answering from their SDK role loops; the
 * run stops on a tool-approval interruption, governedAgentTools resolves it through Agora and resumes
 * it. The file on disk shows what ran: approved once, denied never, expired never; `agora audit` passes.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, run, tool } from '@openai/agents';
import { ScriptedModel, assistantMessage, functionCall, modelResponder, type RecordedModelCall } from '@openai/agents-core/testing';
import { z } from 'zod';
import { ToolPolicy, governedAgentTools, resultDigest } from '../src/index.js';
import { useGovernedFixture, type GovernedFixture } from './governed-fixture.js';

const POLICY = ToolPolicy.parse({
  server: 'workspace',
  rules: [
    { tool: 'write_file', arguments: { path: { $prefix: 'notes/' } }, decision: 'allow' },
    { tool: 'write_file', decision: 'vote', riskLevel: 'high', reason: 'writes outside notes/' },
  ],
});

/** What the model read back for its call: the function_call_result's output text. */
function toolOutputIn(call: RecordedModelCall): string | undefined {
  const input = call.request.input;
  if (typeof input === 'string') return undefined;
  const result = input.find((item) => item.type === 'function_call_result') as { output: string | { type: 'text'; text: string } } | undefined;
  if (result === undefined) return undefined;
  return typeof result.output === 'string' ? result.output : result.output.text;
}

/** A model that calls write_file once, then says what it read back. */
function modelCalling(args: Record<string, unknown>) {
  return new ScriptedModel([modelResponder(() => [functionCall('write_file', args, { callId: 'call-1' })]), modelResponder((call) => [assistantMessage(`the tool said: ${toolOutputIn(call)}`)])]);
}

describe('governedAgentTools: an OpenAI Agents SDK run whose tool calls Agora decides (e2e)', () => {
  const { fixture, last } = useGovernedFixture('openai-agents');
  let f: GovernedFixture;
  beforeAll(() => {
    f = fixture();
  });

  const agentWith = (model: ScriptedModel, decisionTimeoutMs?: number) => {
    const writeFile = tool({
      name: 'write_file',
      description: 'Write a file in the workspace',
      parameters: z.object({ path: z.string(), content: z.string() }),
      execute: async ({ path, content }) => f.writeFile(path, content),
    });
    const governed = governedAgentTools(f.deployer, [writeFile], POLICY, decisionTimeoutMs === undefined ? {} : { decisionTimeoutMs });
    const agent = new Agent({ name: 'deployer', instructions: 'You write files.', model, tools: governed.tools });
    return { governed, agent };
  };

  it('a call the validators approve stops the run, runs once when Agora approves it, and the log holds its digest', async () => {
    const args = { path: 'drafts/plan.md', content: 'step 1: measure' };
    const model = modelCalling(args);
    const { governed, agent } = agentWith(model);

    const first = await run(agent, 'write the plan');
    expect(first.interruptions.map((i) => i.name)).toEqual(['write_file']);
    expect(f.executed).not.toContain('writeFile drafts/plan.md');
    const result = await governed.run(first, (state) => run(agent, state));

    expect(readFileSync(f.file('drafts/plan.md'), 'utf8')).toBe('step 1: measure');
    expect(f.executed.filter((e) => e === 'writeFile drafts/plan.md')).toHaveLength(1);
    expect(result.interruptions).toEqual([]);
    expect(result.finalOutput).toBe(`the tool said: ${JSON.stringify({ written: 'drafts/plan.md', bytes: 15 })}`);
    const session = await f.sessionOnce('workspace', 'write_file', args, (s) => s.toolCall?.outcome != null);
    expect(session).toMatchObject({ actionType: 'openai_agents_tool_call:workspace/write_file', finalDecision: 'approve', requestingAgent: 'deployer' });
    expect(session.summary).toContain('OpenAI Agents SDK tool call workspace/write_file by deployer (writes outside notes/)');
    expect(session.toolCall).toMatchObject({ outcome: 'ok', resultDigest: resultDigest({ written: 'drafts/plan.md', bytes: 15 }) });
    expect(session.toolCall!.releasedAt).not.toBeNull();
  }, 90_000);

  it('a call the validators deny is rejected on the run state: it never runs and the model reads why', async () => {
    const args = { path: 'prod/config.yaml', content: 'replicas: 0' };
    const model = modelCalling(args);
    const { governed, agent } = agentWith(model);
    const before = f.executed.length;
    const result = await governed.run(run(agent, 'scale production down'), (state) => run(agent, state));

    expect(existsSync(f.file('prod/config.yaml'))).toBe(false);
    expect(f.executed.length).toBe(before);
    expect(toolOutputIn(model.calls[1]!)).toMatch(/tool_call_denied: the validators' vote refused workspace\/write_file \(voting session \S+: unanimous_deny, deny\)/);
    expect(result.finalOutput).toMatch(/^the tool said: .*tool_call_denied/);
    expect(await f.sessionFor('workspace', 'write_file', args)).toMatchObject({ finalDecision: 'deny', toolCall: { releasedAt: null, outcome: null } });
  }, 90_000);

  it('a call nobody decides within decisionTimeoutMs expires: its session is cancelled, the tool never runs', async () => {
    const args = { path: 'drafts/silent-plan.md', content: 'unvoted' };
    const model = modelCalling(args);
    const { governed, agent } = agentWith(model, 1500);
    await governed.run(run(agent, 'write quietly'), (state) => run(agent, state));

    expect(existsSync(f.file('drafts/silent-plan.md'))).toBe(false);
    expect(toolOutputIn(model.calls[1]!)).toMatch(/tool_call_expired: no decision on workspace\/write_file in time/);
    expect(await f.sessionOnce('workspace', 'write_file', args, (s) => s.status === 'cancelled')).toMatchObject({ toolCall: { releasedAt: null } });
  }, 90_000);

  it('a call the policy allows runs without a session; a governed call approved outside Agora is refused where it would run', async () => {
    const allowed = { path: 'notes/today.md', content: 'quiet day' };
    const { governed, agent } = agentWith(modelCalling(allowed));
    const result = await governed.run(run(agent, 'note it'), (state) => run(agent, state));
    expect(result.interruptions).toEqual([]);
    expect(readFileSync(f.file('notes/today.md'), 'utf8')).toBe('quiet day');
    expect(await f.sessionFor('workspace', 'write_file', allowed)).toBeUndefined();

    const args = { path: 'drafts/unasked.md', content: 'no vote' };
    const model = modelCalling(args);
    const bypass = agentWith(model);
    const stopped = await run(bypass.agent, 'write without asking');
    for (const item of stopped.interruptions) stopped.state.approve(item); // the application approves it itself
    await run(bypass.agent, stopped.state);
    expect(existsSync(f.file('drafts/unasked.md'))).toBe(false);
    expect(toolOutputIn(model.calls[1]!)).toMatch(/tool_call_denied: workspace\/write_file needs Agora's decision/);
  }, 90_000);

  it("runs docs/sdk.md's example as written, with the stand-in model: the validators approve, the file is written once", async () => {
    const args = { path: 'plan.md', content: 'step 1: measure' };
    const model = [
      "import { ScriptedModel, assistantMessage, functionCall, modelResponder } from '@openai/agents-core/testing';",
      `const model = new ScriptedModel([modelResponder(() => [functionCall('write_file', ${JSON.stringify(args)}, { callId: 'call-1' })]), modelResponder(() => [assistantMessage('the plan is written')])]);`,
    ].join('\n');
    // The Agents SDK exports its traces to OpenAI unless told not to: nothing leaves the machine.
    const run = await f.runDocExample('OpenAI Agents SDK', model, { OPENAI_AGENTS_DISABLE_TRACING: '1' });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout.trim()).toBe('the plan is written');
    expect(readFileSync(join(run.cwd, 'plan.md'), 'utf8')).toBe('step 1: measure');
    expect((await f.sessionOnce('workspace', 'write_file', args, (s) => s.toolCall?.outcome != null)).toolCall).toMatchObject({ outcome: 'ok', resultDigest: resultDigest({ written: 'plan.md', bytes: 15 }) });
  }, 90_000);

  last();
});
