/**
 * The LangGraph adapter against a running Agora (the standalone process): a real LangGraph graph
 * (`StateGraph` over `MessagesAnnotation`, an agent node and governedToolNode, `toolsCondition`
 * between them) with LangChain's own stand-in chat model (`fakeModel` from `@langchain/core/testing`,
 * the only stand-in: the model) calls a tool that writes a file. The policy puts those calls to a vote
 * of three validators answering from their SDK role loops; the graph stops on the node's interrupt and
 * runGovernedGraph resumes it with Agora's decision. The file on disk shows what ran: approved once,
 * denied never, expired never. A graph stopped while its call waits resumes from a file checkpointer
 * in a new graph and saver (as after a restart), and the call runs once; `agora audit` passes.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AIMessage, HumanMessage, type BaseMessage, type ToolMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { tool } from '@langchain/core/tools';
import { END, MemorySaver, MessagesAnnotation, START, StateGraph, type BaseCheckpointSaver } from '@langchain/langgraph';
import { toolsCondition } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { ToolPolicy, governedToolNode, resultDigest, runGovernedGraph } from '../src/index.js';
import { FILE_SAVER } from './doc-examples.js';
import { useGovernedFixture, type GovernedFixture } from './governed-fixture.js';

/** The checkpointer docs/sdk.md's example copies from examples/sdk (outside every package: loaded by its path, as the example loads its copy). */
const { FileSaver } = (await import(FILE_SAVER)) as { FileSaver: new (file: string) => BaseCheckpointSaver };

const POLICY = ToolPolicy.parse({
  server: 'workspace',
  rules: [
    { tool: 'write_file', arguments: { path: { $prefix: 'notes/' } }, decision: 'allow' },
    { tool: 'write_file', decision: 'vote', riskLevel: 'high', reason: 'writes outside notes/' },
    { tool: 'delete_file', decision: 'deny', reason: 'the workspace is append-only' },
  ],
});

/** What the model read back: the last ToolMessage's content. */
const toolOutputIn = (messages: BaseMessage[]): string | undefined => {
  const result = messages.findLast((m) => m.getType() === 'tool') as ToolMessage | undefined;
  return result === undefined ? undefined : String(result.content);
};

/** A model that calls one tool, then says what it read back (the second answer only, for a graph resumed after a restart). */
function modelCalling(name: string, args: Record<string, unknown>, { resumed = false } = {}) {
  const model = fakeModel();
  if (!resumed) model.respondWithTools([{ name, args, id: 'call-1' }]);
  return model.respond((messages) => new AIMessage(`the tool said: ${toolOutputIn(messages)}`));
}

describe('governedToolNode: a LangGraph graph whose tool calls Agora decides (e2e)', () => {
  const { fixture, last } = useGovernedFixture('langgraph');
  let f: GovernedFixture;
  beforeAll(() => {
    f = fixture();
  });
  let threads = 0;

  const graphWith = (model: ReturnType<typeof fakeModel>, checkpointer: BaseCheckpointSaver = new MemorySaver()) => {
    const writeFile = tool(async ({ path, content }) => f.writeFile(path, content), { name: 'write_file', description: 'Write a file in the workspace', schema: z.object({ path: z.string(), content: z.string() }) });
    const deleteFile = tool(async ({ path }) => `deleted ${path}`, { name: 'delete_file', description: 'Delete a file in the workspace', schema: z.object({ path: z.string() }) });
    return new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
      .addNode('tools', governedToolNode(f.deployer, [writeFile, deleteFile], POLICY))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', toolsCondition, ['tools', END])
      .addEdge('tools', 'agent')
      .compile({ checkpointer });
  };
  const thread = () => ({ configurable: { thread_id: `thread-${++threads}` } });

  it('a call the validators approve stops the graph on an interrupt, runs once when Agora approves it, and the log holds its digest', async () => {
    const args = { path: 'drafts/plan.md', content: 'step 1: measure' };
    const graph = graphWith(modelCalling('write_file', args));
    const config = thread();

    const stopped = await graph.invoke({ messages: [new HumanMessage('write the plan')] }, config);
    const interrupts = (await graph.getState(config)).tasks.flatMap((t) => t.interrupts);
    expect(interrupts.map((i) => i.value)).toEqual([{ type: 'agora_tool_calls', calls: [expect.objectContaining({ toolCallId: 'call-1', server: 'workspace', tool: 'write_file', decider: 'validators' })] }]);
    expect(stopped.messages.at(-1)?.getType()).toBe('ai');
    expect(existsSync(f.file('drafts/plan.md'))).toBe(false);

    const state = await runGovernedGraph(f.deployer, graph, null, config);
    expect(readFileSync(f.file('drafts/plan.md'), 'utf8')).toBe('step 1: measure');
    expect(f.executed.filter((e) => e === 'writeFile drafts/plan.md')).toHaveLength(1);
    const output = { written: 'drafts/plan.md', bytes: 15 };
    expect(state.messages.at(-1)?.content).toBe(`the tool said: ${JSON.stringify(output)}`);
    const session = await f.sessionOnce('workspace', 'write_file', args, (s) => s.toolCall?.outcome != null);
    expect(session).toMatchObject({ actionType: 'langgraph_tool_call:workspace/write_file', finalDecision: 'approve', requestingAgent: 'deployer' });
    expect(session.summary).toContain('LangGraph tool call workspace/write_file by deployer (writes outside notes/)');
    expect(session.toolCall).toMatchObject({ outcome: 'ok', resultDigest: resultDigest(output) });
    expect(session.toolCall!.releasedAt).not.toBeNull();
  }, 90_000);

  it('a call the validators deny never runs, and the model reads the denial as the tool message', async () => {
    const args = { path: 'prod/config.yaml', content: 'replicas: 0' };
    const before = f.executed.length;
    const state = await runGovernedGraph(f.deployer, graphWith(modelCalling('write_file', args)), { messages: [new HumanMessage('scale production down')] }, thread());

    expect(existsSync(f.file('prod/config.yaml'))).toBe(false);
    expect(f.executed.length).toBe(before);
    const told = state.messages.findLast((m) => m.getType() === 'tool') as ToolMessage;
    expect(told).toMatchObject({ status: 'error', content: expect.stringMatching(/^tool_call_denied: the validators' vote refused workspace\/write_file \(voting session \S+: unanimous_deny, deny\)/) });
    expect(await f.sessionFor('workspace', 'write_file', args)).toMatchObject({ finalDecision: 'deny', toolCall: { releasedAt: null, outcome: null } });
  }, 90_000);

  it('a call nobody decides within decisionTimeoutMs expires (its session cancelled); one the policy denies is refused without asking', async () => {
    const args = { path: 'drafts/silent-plan.md', content: 'unvoted' };
    const state = await runGovernedGraph(f.deployer, graphWith(modelCalling('write_file', args)), { messages: [new HumanMessage('write quietly')] }, thread(), { decisionTimeoutMs: 1500 });
    expect(existsSync(f.file('drafts/silent-plan.md'))).toBe(false);
    expect(toolOutputIn(state.messages)).toMatch(/^tool_call_expired: no decision on workspace\/write_file in time/);
    expect(await f.sessionOnce('workspace', 'write_file', args, (s) => s.status === 'cancelled')).toMatchObject({ toolCall: { releasedAt: null } });

    const denied = await runGovernedGraph(f.deployer, graphWith(modelCalling('delete_file', { path: 'notes/today.md' })), { messages: [new HumanMessage('clean up')] }, thread());
    expect(toolOutputIn(denied.messages)).toBe('tool_call_denied: the policy forbids workspace/delete_file: the workspace is append-only');
    expect(await f.sessionFor('workspace', 'delete_file', { path: 'notes/today.md' })).toBeUndefined();
  }, 90_000);

  it('a graph stopped while its call waits resumes after a restart from its file checkpoint: the same session, the call run once', async () => {
    const args = { path: 'drafts/after-restart.md', content: 'resumed' };
    const checkpoints = join(f.dir, 'checkpoints.json');
    const config = thread();
    // The first process: the graph stops on the interrupt, and the process ends before any decision is awaited.
    await graphWith(modelCalling('write_file', args), new FileSaver(checkpoints)).invoke({ messages: [new HumanMessage('write it')] }, config);
    const session = await f.sessionOnce('workspace', 'write_file', args, (s) => s.finalDecision === 'approve');
    expect(existsSync(f.file('drafts/after-restart.md'))).toBe(false);

    // The next process: a new saver reads the file, a new graph continues the thread.
    const state = await runGovernedGraph(f.deployer, graphWith(modelCalling('write_file', args, { resumed: true }), new FileSaver(checkpoints)), null, config);
    expect(readFileSync(f.file('drafts/after-restart.md'), 'utf8')).toBe('resumed');
    expect(f.executed.filter((e) => e === 'writeFile drafts/after-restart.md')).toHaveLength(1);
    expect(toolOutputIn(state.messages)).toBe(JSON.stringify({ written: 'drafts/after-restart.md', bytes: 7 }));
    const ran = await f.sessionOnce('workspace', 'write_file', args, (s) => s.toolCall?.outcome != null);
    expect(ran).toMatchObject({ sessionId: session.sessionId, toolCall: { outcome: 'ok' } });
    const { sessions } = await f.root.query('ListVotingSessions', { requestingAgent: 'deployer' });
    expect(sessions.filter((s) => s.sessionId === session.sessionId)).toHaveLength(1);
  }, 90_000);

  it("runs docs/sdk.md's example as written, with the stand-in model: the validators approve, the file is written once", async () => {
    const args = { path: 'plan.md', content: 'step 1: measure' };
    const model = [
      "import { AIMessage as Answer } from '@langchain/core/messages';",
      "import { fakeModel as stand } from '@langchain/core/testing';",
      `const model = stand().respondWithTools([{ name: 'write_file', args: ${JSON.stringify(args)}, id: 'call-1' }]).respond(new Answer('the plan is written'));`,
    ].join('\n');
    const run = await f.runDocExample('LangGraph', model);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout.trim()).toBe('the plan is written');
    expect(readFileSync(join(run.cwd, 'plan.md'), 'utf8')).toBe('step 1: measure');
    expect(existsSync(join(run.cwd, 'checkpoints.json'))).toBe(true);
    expect((await f.sessionOnce('workspace', 'write_file', args, (s) => s.toolCall?.outcome != null)).toolCall).toMatchObject({ outcome: 'ok', resultDigest: resultDigest({ written: 'plan.md', bytes: 15 }) });
  }, 90_000);

  last();
});
