/**
 * Governed tool calls for LangGraph (`@langchain/langgraph` 1.7): a graph's risky tool calls go to an
 * Agora decision (docs/decisions/0014-a-governed-tool-call-is-a-decision.md), on the same path as `agora mcp-proxy` and the other adapters
 * (governed.ts: the policy, the session bound to the call's digest, the one-time release, the
 * result's digest), and the graph stops while they wait, so that it can resume after a restart.
 *
 *   const graph = new StateGraph(MessagesAnnotation)
 *     .addNode('agent', callModel)
 *     .addNode('tools', governedToolNode(agora, [writeFile], policy))
 *     .addEdge(START, 'agent').addConditionalEdges('agent', toolsCondition).addEdge('tools', 'agent')
 *     .compile({ checkpointer });
 *   const state = await runGovernedGraph(agora, graph, { messages: [prompt] }, { configurable: { thread_id } });
 *
 * - governedToolNode runs the last AI message's tool calls, as LangGraph's ToolNode does. A call the
 *   policy passes runs; `deny` answers a ToolMessage (status `error`) `tool_call_denied: ...` at once;
 *   `vote`, `person` and `tribunal` calls are opened in Agora (openToolCall, source `langgraph_tool_call`)
 *   under an id derived from the thread, the tool call's id and the call's digest (uuidV5), and the node
 *   stops the graph with `interrupt({ type: 'agora_tool_calls', calls })`: the held calls, plain JSON,
 *   kept in the checkpoint. Resumed with `Command({ resume })` whose value maps each tool call's id to
 *   its decision, the node runs again from the top (LangGraph's rule): opening the same call again
 *   opens nothing new (the same id), and each approved call is released for the digest of the very
 *   arguments it runs (ReleaseToolCall: once, so a replayed or forged decision cannot run it), run, and
 *   its outcome and output's digest recorded; a refused one answers its reason as a ToolMessage
 *   (status `error`), which the model reads: the tool never runs.
 * - runGovernedGraph invokes the graph (or, with input `null`, continues the thread as its checkpoint
 *   left it) and, while it stops on the node's interrupts only, awaits each held call's decision
 *   (awaitToolCall: no decision within `decisionTimeoutMs` cancels the session and refuses the call)
 *   and resumes the graph with them. A process that stops while a call waits loses nothing: the
 *   checkpoint holds the interrupt, and runGovernedGraph(agora, graph, null, config) in the next one
 *   awaits the same sessions and resumes.
 *
 * `@langchain/langgraph` and `@langchain/core` are optional peer dependencies: they are loaded (with
 * `import()`) when the node or runGovernedGraph first runs, so the SDK works without them. Their types are
 * not imported either: the types below are the members the adapter uses of LangGraph's config, tools and
 * graphs, which the real ones fit, so that the SDK's declarations stand alone.
 */
import type { ErrorBody } from '@agora/contracts';
import type { Agora } from './client.js';
import { approvalName, awaitToolCall, openToolCall, recordToolCallResult, releaseToolCall, toolCallDenied, toolCallDigest, type GovernedCall, type GovernOptions, type HeldToolCall, type ToolCallDecision } from './governed.js';
import { uuidV5 } from './roles.js';
import type { ToolPolicy } from './tool-policy.js';

/** What the adapter uses of a run's config (`LangGraphRunnableConfig`): the thread's id; the config is passed on to the tools and the graph. */
export interface GraphRunConfig {
  configurable?: Record<string, unknown>;
}

/** What the adapter uses of a LangChain tool (`StructuredToolInterface` of `@langchain/core/tools`, e.g. `tool(...)`). */
export interface GraphTool {
  readonly name: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any tool's arguments and config
  invoke(args: any, config?: any): Promise<unknown>;
}

/**
 * What governedToolNode answers, for the graph's `messages` (MessagesAnnotation's reducer takes them): `ToolMessage`s
 * of `@langchain/core/messages`, typed by the members they are made with.
 */
export type GovernedToolMessage = { readonly type: 'tool'; readonly content: string; readonly tool_call_id: string; readonly name: string; readonly status: 'success' | 'error' };

/** The value of the interrupt governedToolNode stops the graph with: the calls Agora holds, by tool call id. */
export interface AgoraToolCallsInterrupt {
  type: 'agora_tool_calls';
  calls: (HeldToolCall & { toolCallId: string })[];
}

/** The resume value governedToolNode expects: each held call's decision, by tool call id. */
export type AgoraToolCallsResume = Record<string, ToolCallDecision>;

export interface GovernedToolNodeOptions extends Pick<GovernOptions, 'log'> {
  /** The tools' name in the policy (a rule's `server`) and in the log; default the policy's `server`, else `langgraph`. */
  server?: string;
}

/** The name the id of a held call's session is derived from: the same call in the same thread opens the same session. */
const ID_NAMESPACE = 'c1a3f0e2-5d4b-4e8a-9b7c-3f2e1d0c9b8a';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (output: unknown): string => (typeof output === 'string' ? output : JSON.stringify(output));

interface ToolCallLike {
  id?: string;
  name: string;
  args: Record<string, unknown>;
}

/** A node running the last AI message's tool calls, those the policy governs only once Agora approved them (see the module's comment). */
export function governedToolNode(agora: Agora, tools: readonly GraphTool[], policy: ToolPolicy, options: GovernedToolNodeOptions = {}) {
  const server = options.server ?? policy.server ?? 'langgraph';
  const caller = agora.agentId ?? 'anonymous';
  const log = options.log ?? (() => undefined);
  const byName = new Map(tools.map((t) => [t.name, t]));

  return async (state: { messages: readonly unknown[] }, config: GraphRunConfig): Promise<{ messages: GovernedToolMessage[] }> => {
    const [{ interrupt }, { ToolMessage }] = await Promise.all([import('@langchain/langgraph'), import('@langchain/core/messages')]);
    const last = state.messages.at(-1) as { tool_calls?: ToolCallLike[] } | undefined;
    const calls = (last?.tool_calls ?? []).map((c, i) => ({ ...c, id: c.id ?? `call-${i}` }));
    const thread = config.configurable?.['thread_id'] as string | undefined;
    const governed = (c: ToolCallLike): GovernedCall => ({ server, tool: c.name, arguments: isObject(c.args) ? c.args : { input: c.args }, caller });

    const opened = new Map<string, { verdict: 'pass' } | { verdict: 'refused'; error: ErrorBody } | HeldToolCall>();
    for (const c of calls) {
      const call = governed(c);
      const requestId = thread === undefined ? undefined : uuidV5(`${thread}\n${c.id}\n${toolCallDigest(call)}`, ID_NAMESPACE);
      const opening = await openToolCall(agora, policy, call, { source: 'langgraph_tool_call', log, ...(requestId === undefined ? {} : { requestId }) });
      if (opening.verdict === 'held') {
        if (thread === undefined) throw new Error(`governedToolNode: ${server}/${c.name} waits for Agora's decision, which needs a checkpointer and a thread_id in the graph's config`);
        const { verdict: _verdict, ...held } = opening;
        opened.set(c.id, held);
      } else opened.set(c.id, opening);
    }
    const held = calls.flatMap((c) => {
      const o = opened.get(c.id)!;
      return 'digest' in o ? [{ ...o, toolCallId: c.id }] : [];
    });
    const decisions: AgoraToolCallsResume = held.length === 0 ? {} : interrupt<AgoraToolCallsInterrupt, AgoraToolCallsResume>({ type: 'agora_tool_calls', calls: held });

    const answer = (c: ToolCallLike & { id: string }, content: string, status: 'success' | 'error' = 'success') => new ToolMessage({ content, tool_call_id: c.id, name: c.name, status }) as GovernedToolMessage;
    const refusal = (c: ToolCallLike & { id: string }, error: ErrorBody) => answer(c, `${error.code}: ${error.message}`, 'error');
    const messages: GovernedToolMessage[] = [];
    for (const c of calls) {
      const tool = byName.get(c.name);
      if (tool === undefined) {
        messages.push(answer(c, `Error: ${c.name} is not a tool of this node (known: ${[...byName.keys()].join(', ')})`, 'error'));
        continue;
      }
      const o = opened.get(c.id)!;
      if (!('digest' in o)) {
        if (o.verdict === 'refused') messages.push(refusal(c, o.error));
        else messages.push(await runTool(tool, c, config, answer));
        continue;
      }
      const call = governed(c);
      const decision = decisions[c.id];
      const bound = decision?.verdict === 'approved' && decision.digest === o.digest && ('proposalId' in o ? 'proposalId' in decision && decision.proposalId === o.proposalId : 'sessionId' in decision && decision.sessionId === o.sessionId);
      if (decision?.verdict === 'refused') {
        messages.push(refusal(c, decision.error));
        continue;
      }
      if (decision === undefined || decision.verdict !== 'approved' || !bound) {
        messages.push(refusal(c, toolCallDenied(`${server}/${c.name}: the graph was resumed without Agora's decision on this call (resume it with runGovernedGraph)`, { ...o })));
        continue;
      }
      const { verdict: _verdict, ...approval } = decision;
      const notReleased = await releaseToolCall(agora, approval, call);
      if (notReleased) {
        messages.push(refusal(c, notReleased));
        continue;
      }
      log(`${server}/${c.name}: released by ${approvalName(approval)}`);
      messages.push(await runTool(tool, c, config, answer, (outcome, result) => recordToolCallResult(agora, approval, outcome, result, log)));
    }
    return { messages };
  };
}

/** Runs one tool call; a tool that throws answers its error (status `error`), as LangGraph's ToolNode does. */
async function runTool(
  tool: GraphTool,
  c: ToolCallLike & { id: string },
  config: GraphRunConfig,
  answer: (c: ToolCallLike & { id: string }, content: string, status?: 'success' | 'error') => GovernedToolMessage,
  record?: (outcome: 'ok' | 'failed', result: unknown) => Promise<void>,
): Promise<GovernedToolMessage> {
  let output: unknown;
  try {
    output = await tool.invoke(c.args, config);
  } catch (error) {
    await record?.('failed', { error: (error as Error).message });
    return answer(c, `Error: ${(error as Error).message}`, 'error');
  }
  await record?.('ok', output);
  return answer(c, text(output));
}

/** What runGovernedGraph needs of a compiled graph. */
export interface GovernableGraph<STATE> {
  invoke(input: unknown, config: GraphRunConfig): Promise<STATE>;
  getState(config: GraphRunConfig): Promise<{ values: unknown; tasks: readonly { interrupts: readonly { id?: string; value?: unknown }[] }[] }>;
}

export type RunGovernedGraphOptions = Omit<GovernOptions, 'source'>;

const isAgoraInterrupt = (i: { id?: string; value?: unknown }): i is { id: string; value: AgoraToolCallsInterrupt } => typeof i.id === 'string' && isObject(i.value) && i.value['type'] === 'agora_tool_calls';

/**
 * Invokes the graph with `input` (`null`: continues the thread from its checkpoint) and, while it stops on
 * governedToolNode's interrupts only, awaits Agora's decisions on the held calls and resumes it with them.
 * Returns the graph's state once it ends, or stops on an interrupt of the application's.
 */
export async function runGovernedGraph<STATE>(agora: Agora, graph: GovernableGraph<STATE>, input: unknown, config: GraphRunConfig, options: RunGovernedGraphOptions = {}): Promise<STATE> {
  const { Command } = await import('@langchain/langgraph');
  const pending = async () => (await graph.getState(config)).tasks.flatMap((t) => t.interrupts);
  let state = input === null && (await pending()).length > 0 ? ((await graph.getState(config)).values as STATE) : await graph.invoke(input, config);
  for (;;) {
    const interrupts = await pending();
    const ours = interrupts.filter(isAgoraInterrupt);
    if (ours.length === 0 || ours.length !== interrupts.length) return state;
    const resume: Record<string, AgoraToolCallsResume> = {};
    for (const i of ours) {
      const decisions: AgoraToolCallsResume = {};
      for (const { toolCallId, ...held } of i.value.calls) decisions[toolCallId] = await awaitToolCall(agora, held as HeldToolCall, options);
      resume[i.id] = decisions;
    }
    state = await graph.invoke(new Command({ resume }), config);
  }
}
