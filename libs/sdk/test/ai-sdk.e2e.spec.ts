/**
 * The Vercel AI SDK adapter against a running Agora (the standalone process): a real `generateText`
 * and `streamText` tool loop from `ai`, with the AI SDK's own stand-in model (MockLanguageModelV4
 * from `ai/test`, the only stand-in: the model), calls a tool that writes a file. The policy puts
 * those calls to a vote of three validators answering from their SDK role loops. The file on disk
 * shows what ran: an approved call wrote it, a denied one never did, and the model read the denial;
 * `agora audit` verifies the log after them.
 */
import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';
import { z } from 'zod';
import type { VotingSessionView } from '@agora/contracts';
import { ToolPolicy, governedTools, resultDigest, toolCallDigest, type Agora } from '../src/index.js';
import { useGovernedFixture, type GovernedFixture } from './governed-fixture.js';
const POLICY = ToolPolicy.parse({
  server: 'workspace',
  rules: [
    { tool: 'writeFile', arguments: { path: { $prefix: 'notes/' } }, decision: 'allow' },
    { tool: 'writeFile', decision: 'vote', riskLevel: 'high', reason: 'writes outside notes/' },
    { tool: 'deleteFile', decision: 'deny', reason: 'the workspace is append-only' },
  ],
});

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } };

/** What the model read back for its tool call on the step after it: the tool message's output. */
function toolOutputIn(prompt: LanguageModelV4CallOptions['prompt']): unknown {
  for (const message of prompt) if (message.role === 'tool') for (const part of message.content) if (part.type === 'tool-result') return part.output;
  return undefined;
}

/**
 * A model that calls one tool on its first step and, on the next, says what it read back.
 * The calls it got are kept (`calls`), so a test can see what the model was told.
 */
function modelCalling(toolName: string, input: Record<string, unknown>) {
  const answer = (options: LanguageModelV4CallOptions): LanguageModelV4GenerateResult => {
    const output = toolOutputIn(options.prompt);
    if (output === undefined) return { content: [{ type: 'tool-call', toolCallId: 'call-1', toolName, input: JSON.stringify(input) }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] };
    return { content: [{ type: 'text', text: `the tool said: ${JSON.stringify(output)}` }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
  };
  return new MockLanguageModelV4({
    doGenerate: async (options) => answer(options),
    doStream: async (options) => {
      const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
      const { content, finishReason } = answer(options);
      for (const part of content) {
        if (part.type === 'text') parts.push({ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: part.text }, { type: 'text-end', id: 't' });
        else parts.push(part as LanguageModelV4StreamPart);
      }
      parts.push({ type: 'finish', finishReason, usage });
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
}

describe('governedTools: an AI SDK agent\'s tool calls put to an Agora vote (e2e)', () => {
  const { fixture, last } = useGovernedFixture('ai-sdk');
  let f: GovernedFixture;
  beforeAll(() => {
    f = fixture();
    deployer = f.deployer;
  });
  let deployer: Agora;
  const file = (path: string) => f.file(path);

  const tools = () => ({
    writeFile: tool({
      description: 'Write a file in the workspace',
      inputSchema: z.object({ path: z.string(), content: z.string() }),
      execute: async ({ path, content }) => f.writeFile(path, content),
    }),
    deleteFile: tool({
      description: 'Delete a file in the workspace',
      inputSchema: z.object({ path: z.string() }),
      execute: async ({ path }) => {
        f.executed.push(`deleteFile ${path}`);
        unlinkSync(file(path));
        return { deleted: path };
      },
    }),
  });

  /** The deployer's session whose toolCall is bound to this call. */
  const sessionFor = (toolName: string, args: Record<string, unknown>) => f.sessionFor('workspace', toolName, args);
  /** The session once the read model shows `done` of it (what the adapter sent last may not be read yet). */
  const sessionOnce = (toolName: string, args: Record<string, unknown>, done: (s: VotingSessionView) => boolean) => f.sessionOnce('workspace', toolName, args, done);

  it('generateText: a call the validators approve runs once they have, and the log holds the call, the decision and the digest of its output', async () => {
    const args = { path: 'drafts/plan.md', content: 'step 1: measure' };
    const model = modelCalling('writeFile', args);
    const governed = governedTools(deployer, tools(), POLICY);
    const result = await generateText({ model, tools: governed.tools, toolApproval: governed.toolApproval, stopWhen: stepCountIs(3), prompt: 'write the plan' });

    expect(readFileSync(file('drafts/plan.md'), 'utf8')).toBe('step 1: measure');
    const output = { written: 'drafts/plan.md', bytes: 15 };
    expect(result.steps[0]!.toolResults).toEqual([expect.objectContaining({ toolName: 'writeFile', output })]);
    expect(result.steps[0]!.content).toContainEqual(expect.objectContaining({ type: 'tool-approval-response', approved: true, reason: expect.stringMatching(/^approved by Agora voting session /) }));
    expect(result.text).toBe(`the tool said: ${JSON.stringify({ type: 'json', value: output })}`);

    const session = await sessionOnce('writeFile', args, (s) => s.toolCall?.outcome != null);
    expect(session).toMatchObject({ actionType: 'ai_sdk_tool_call:workspace/writeFile', riskLevel: 'high', finalDecision: 'approve', consensus: 'unanimous_approve', requestingAgent: 'deployer' });
    expect(session!.summary).toContain('AI SDK tool call workspace/writeFile by deployer (writes outside notes/)');
    expect(session!.summary).toContain('arguments: {"content":"step 1: measure","path":"drafts/plan.md"}');
    expect(session!.toolCall).toMatchObject({ server: 'workspace', tool: 'writeFile', outcome: 'ok', resultDigest: resultDigest(output) });
    expect(session!.toolCall!.releasedAt).not.toBeNull();
  }, 90_000);

  it('generateText: a call the validators deny never runs, and the model reads a clear denial instead of a result', async () => {
    const args = { path: 'prod/config.yaml', content: 'replicas: 0' };
    const model = modelCalling('writeFile', args);
    const governed = governedTools(deployer, tools(), POLICY);
    const before = f.executed.length;
    const result = await generateText({ model, tools: governed.tools, toolApproval: governed.toolApproval, stopWhen: stepCountIs(3), prompt: 'scale production down' });

    expect(existsSync(file('prod/config.yaml'))).toBe(false);
    expect(f.executed.length).toBe(before);
    const told = toolOutputIn(model.doGenerateCalls[1]!.prompt) as { type: string; reason: string };
    expect(told).toMatchObject({ type: 'execution-denied', reason: expect.stringMatching(/^tool_call_denied: the validators' vote refused workspace\/writeFile \(voting session \S+: unanimous_deny, deny\)/) });
    expect(result.steps[0]!.toolResults).toEqual([]);

    const session = await sessionFor('writeFile', args);
    expect(session).toMatchObject({ finalDecision: 'deny', toolCall: { releasedAt: null, outcome: null } });
    // Agora itself refuses to release the denied session, whoever asks.
    const digest = toolCallDigest({ server: 'workspace', tool: 'writeFile', arguments: args, caller: 'deployer' });
    expect(await deployer.trySend('ReleaseToolCall', { sessionId: session!.sessionId, callDigest: digest })).toMatchObject({ ok: false, error: { code: 'illegal_state' } });
  }, 90_000);

  it('streamText: the held call is voted on while the stream waits, then runs; the stream carries the approval and the result', async () => {
    const args = { path: 'drafts/notes-2.md', content: 'streamed' };
    const model = modelCalling('writeFile', args);
    const governed = governedTools(deployer, tools(), POLICY);
    const stream = streamText({ model, tools: governed.tools, toolApproval: governed.toolApproval, stopWhen: stepCountIs(3), prompt: 'write the notes' });
    const parts: { type: string }[] = [];
    for await (const part of stream.fullStream) parts.push(part);

    expect(readFileSync(file('drafts/notes-2.md'), 'utf8')).toBe('streamed');
    const types = parts.map((p) => p.type);
    expect(types.indexOf('tool-approval-response')).toBeGreaterThan(-1);
    expect(types.indexOf('tool-result')).toBeGreaterThan(types.indexOf('tool-approval-response'));
    expect(await stream.text).toContain('"written":"drafts/notes-2.md"');
    expect((await sessionOnce('writeFile', args, (s) => s.toolCall?.outcome != null)).toolCall).toMatchObject({ outcome: 'ok', resultDigest: resultDigest({ written: 'drafts/notes-2.md', bytes: 8 }) });
  }, 90_000);

  it('refuses a call nobody decides within decisionTimeoutMs: tool_call_expired, the session cancelled, the tool never run', async () => {
    const args = { path: 'drafts/silent-plan.md', content: 'unvoted' };
    const model = modelCalling('writeFile', args);
    const governed = governedTools(deployer, tools(), POLICY, { decisionTimeoutMs: 1500 });
    await generateText({ model, tools: governed.tools, toolApproval: governed.toolApproval, stopWhen: stepCountIs(3), prompt: 'write quietly' });

    expect(existsSync(file('drafts/silent-plan.md'))).toBe(false);
    expect(toolOutputIn(model.doGenerateCalls[1]!.prompt)).toMatchObject({ type: 'execution-denied', reason: expect.stringMatching(/^tool_call_expired: no decision on workspace\/writeFile in time/) });
    expect(await sessionOnce('writeFile', args, (s) => s.status === 'cancelled')).toMatchObject({ status: 'cancelled', toolCall: { releasedAt: null } });
  }, 90_000);

  it('passes a call no vote is needed for, and denies a call the policy forbids without asking anyone', async () => {
    const allowed = { path: 'notes/today.md', content: 'quiet day' };
    const governed = governedTools(deployer, tools(), POLICY);
    await generateText({ model: modelCalling('writeFile', allowed), tools: governed.tools, toolApproval: governed.toolApproval, stopWhen: stepCountIs(3), prompt: 'note it' });
    expect(readFileSync(file('notes/today.md'), 'utf8')).toBe('quiet day');
    expect(await sessionFor('writeFile', allowed)).toBeUndefined();

    const model = modelCalling('deleteFile', { path: 'notes/today.md' });
    await generateText({ model, tools: governed.tools, toolApproval: governed.toolApproval, stopWhen: stepCountIs(3), prompt: 'clean up' });
    expect(existsSync(file('notes/today.md'))).toBe(true);
    expect(toolOutputIn(model.doGenerateCalls[1]!.prompt)).toEqual({ type: 'execution-denied', reason: 'tool_call_denied: the policy forbids workspace/deleteFile: the workspace is append-only' });
    expect(await sessionFor('deleteFile', { path: 'notes/today.md' })).toBeUndefined();
  }, 90_000);

  it('never runs a governed call that reaches execute without an approval (toolApproval left out): the model gets tool_call_denied', async () => {
    const args = { path: 'drafts/unasked.md', content: 'no vote' };
    const model = modelCalling('writeFile', args);
    const governed = governedTools(deployer, tools(), POLICY);
    const result = await generateText({ model, tools: governed.tools, stopWhen: stepCountIs(3), prompt: 'write without asking' });

    expect(existsSync(file('drafts/unasked.md'))).toBe(false);
    expect(result.steps[0]!.content).toContainEqual(expect.objectContaining({ type: 'tool-error', error: expect.objectContaining({ name: 'ToolCallRefused' }) }));
    expect(JSON.stringify(toolOutputIn(model.doGenerateCalls[1]!.prompt))).toMatch(/tool_call_denied: workspace\/writeFile needs Agora's decision/);
    expect(await sessionFor('writeFile', args)).toBeUndefined();
  }, 90_000);

  last();
});
