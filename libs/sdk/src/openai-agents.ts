/**
 * Governed tool calls for the OpenAI Agents SDK (`@openai/agents`, 0.20): an agent's risky tool calls
 * go to an Agora decision (docs/decisions/0014-a-governed-tool-call-is-a-decision.md), on the same path as `agora mcp-proxy` and the AI SDK
 * adapter (governed.ts: the policy, the session bound to the call's digest, the one-time release, the
 * result's digest).
 *
 *   const governed = governedAgentTools(agora, [writeFile, readFile], policy);
 *   const agent = new Agent({ name: 'deployer', model, tools: governed.tools });
 *   const result = await governed.run(run(agent, prompt), (state) => run(agent, state));
 *
 * - `tools` are the same function tools with a `needsApproval` that asks for an approval whenever the
 *   policy matches the call with `vote`, `person`, `tribunal` or `deny` (a call the policy passes keeps
 *   the tool's own `needsApproval`), so such a run stops with a tool-approval interruption.
 * - `decide(result)` resolves the run's interruptions for governed calls through Agora (governToolCall,
 *   source `openai_agents_tool_call`): approved is `state.approve(item)`; anything else is
 *   `state.reject(item, { message })` with `tool_call_denied: ...` or `tool_call_expired: ...`, the text
 *   the model reads instead of a result: the tool never runs. Interruptions of other tools are left to
 *   the application.
 * - `run(first, resume)` awaits the first result and, while it stops on governed interruptions only,
 *   decides them and resumes with `resume(result.state)`; it returns the first result that is not
 *   interrupted, or whose interruptions are the application's.
 * - Each tool's `invoke`, when the resumed run calls it, first releases the approval for the digest of
 *   the very arguments it is about to run (ReleaseToolCall: once, for this call), then runs the tool and
 *   records its outcome and the digest of its output. A governed call that reaches `invoke` without an
 *   approval of exactly these arguments (approved outside `decide`, or the run resumed in another
 *   process than the one that decided it) is refused with `tool_call_denied: ...` as the tool's output.
 *
 * Nothing of `@openai/agents` (an optional peer dependency) is imported, not even its types: the types
 * below are the members the adapter uses of the SDK's tools, results and states, which the real ones fit,
 * so that the SDK's declarations stand alone.
 */
import type { Agora } from './client.js';
import { approvalName, governToolCall, recordToolCallResult, releaseToolCall, toolCallDenied, toolCallDigest, type GovernedCall, type GovernOptions, type ToolCallApproval } from './governed.js';
import type { AgoraEvent } from './transport.js';
import { ruleFor, type ToolPolicy } from './tool-policy.js';

export interface GovernedAgentToolsOptions extends Pick<GovernOptions, 'decisionTimeoutMs' | 'signal' | 'log'> {
  /** The tools' name in the policy (a rule's `server`) and in the log; default the policy's `server`, else `openai-agents`. */
  server?: string;
  /** Each event of a held call's voting session (votes, the decision), by the call's id. */
  onProgress?: (callId: string, event: AgoraEvent) => void;
}

/** What the adapter uses of an Agents SDK tool (`Tool` of `@openai/agents`): function tools are governed, the others kept as they are. */
export interface AgentTool {
  readonly type: string;
  readonly name?: string;
}

/** What the adapter uses of a function tool (`FunctionTool` of `@openai/agents`, `type: 'function'`). */
export interface AgentFunctionTool extends AgentTool {
  readonly name: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any agent's run context and tool's input
  needsApproval(runContext: any, input: any, callId?: string): Promise<boolean>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any agent's run context
  invoke(runContext: any, input: string, details?: { toolCall?: { callId?: string } }): Promise<unknown>;
}

/** What the adapter uses of a tool-approval interruption (`RunToolApprovalItem` of `@openai/agents`). */
export interface AgentToolApproval {
  readonly name?: string | undefined;
  readonly arguments?: string | undefined;
  readonly rawItem: { readonly id?: string | undefined; readonly callId?: string };
}

/** What `decide` and `run` need of a run's result (a RunResult or a StreamedRunResult once it completed) and its `RunState`. */
export interface InterruptedRun {
  readonly interruptions: readonly AgentToolApproval[];
  readonly state: {
    approve(item: AgentToolApproval): void;
    reject(item: AgentToolApproval, options?: { message?: string }): void;
  };
}

export interface GovernedAgentTools<TOOLS extends readonly AgentTool[]> {
  /** The tools, each governed call stopping the run for an approval and bound to Agora's decision when it runs. */
  tools: TOOLS;
  /** Resolves the result's interruptions for governed calls through Agora, on its state; returns how many it decided. */
  decide(result: InterruptedRun): Promise<number>;
  /** Awaits `first` and, while it stops for governed calls only, decides them and resumes it with `resume(state)`. */
  run<R extends InterruptedRun>(first: R | Promise<R>, resume: (state: R['state']) => R | Promise<R>): Promise<R>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const argumentsOf = (input: unknown): Record<string, unknown> => {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      value = input;
    }
  }
  return isObject(value) ? value : { input: value };
};

/** Wraps an Agents SDK agent's function tools so that the calls the policy names wait for an Agora decision before they run. */
export function governedAgentTools<TOOLS extends readonly AgentTool[]>(agora: Agora, tools: TOOLS, policy: ToolPolicy, options: GovernedAgentToolsOptions = {}): GovernedAgentTools<TOOLS> {
  const server = options.server ?? policy.server ?? 'openai-agents';
  const caller = agora.agentId ?? 'anonymous';
  const log = options.log ?? (() => undefined);
  const callOf = (tool: string, input: unknown): GovernedCall => ({ server, tool, arguments: argumentsOf(input), caller });
  const governs = (call: GovernedCall): boolean => {
    const rule = ruleFor(policy, call);
    return rule !== undefined && rule.decision !== 'allow';
  };
  const isFunction = (tool: AgentTool): tool is AgentFunctionTool => tool.type === 'function';
  const names = new Set(tools.filter(isFunction).map((t) => t.name));
  /** Approvals given by `decide`, by call id, each used once by `invoke`. */
  const approvals = new Map<string, ToolCallApproval>();

  const wrap = (tool: AgentFunctionTool): AgentFunctionTool => ({
    ...tool,
    needsApproval: async (context: unknown, input: unknown, callId?: string) => governs(callOf(tool.name, input)) || (await tool.needsApproval(context, input, callId)),
    invoke: async (context: unknown, input: string, details?: { toolCall?: { callId?: string } }) => {
      const call = callOf(tool.name, input);
      const callId = details?.toolCall?.callId;
      const approval = callId === undefined ? undefined : approvals.get(callId);
      if (callId !== undefined) approvals.delete(callId);
      if (approval === undefined) {
        if (!governs(call)) return tool.invoke(context, input, details);
        const refused = toolCallDenied(`${server}/${tool.name} needs Agora's decision and none was given for this call (resolve the run's interruptions with governedAgentTools' decide or run)`, { server, tool: tool.name });
        log(refused.message);
        return `${refused.code}: ${refused.message}`;
      }
      if (toolCallDigest(call) !== approval.digest) return `tool_call_denied: ${server}/${tool.name}: the arguments are not those ${approvalName(approval)} approved`;
      const notReleased = await releaseToolCall(agora, approval, call);
      if (notReleased) return `${notReleased.code}: ${notReleased.message}`;
      let output: unknown;
      try {
        output = await tool.invoke(context, input, details);
      } catch (error) {
        await recordToolCallResult(agora, approval, 'failed', { error: (error as Error).message }, log);
        throw error;
      }
      await recordToolCallResult(agora, approval, 'ok', output, log);
      return output;
    },
  });
  const governed = tools.map((t) => (isFunction(t) ? wrap(t) : t)) as unknown as TOOLS;

  /** The interruptions this adapter decides: its own tools' calls that the policy governs. */
  const ours = (result: InterruptedRun) => result.interruptions.filter((item) => item.name !== undefined && names.has(item.name) && governs(callOf(item.name, item.arguments)));

  const decide = async (result: InterruptedRun): Promise<number> => {
    const items = ours(result);
    for (const item of items) {
      const callId = item.rawItem.callId ?? item.rawItem.id ?? '';
      const onProgress = options.onProgress;
      const decision = await governToolCall(agora, policy, callOf(item.name!, item.arguments), {
        source: 'openai_agents_tool_call',
        log,
        ...(options.decisionTimeoutMs === undefined ? {} : { decisionTimeoutMs: options.decisionTimeoutMs }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        ...(onProgress === undefined ? {} : { onProgress: (event: AgoraEvent) => onProgress(callId, event) }),
      });
      if (decision.verdict === 'refused') {
        result.state.reject(item, { message: `${decision.error.code}: ${decision.error.message}` });
      } else if (decision.verdict === 'approved') {
        const { verdict: _verdict, ...approval } = decision;
        approvals.set(callId, approval);
        result.state.approve(item);
      }
    }
    return items.length;
  };

  const run = async <R extends InterruptedRun>(first: R | Promise<R>, resume: (state: R['state']) => R | Promise<R>): Promise<R> => {
    let result = await first;
    while (result.interruptions.length > 0 && ours(result).length === result.interruptions.length) {
      await decide(result);
      result = await resume(result.state);
    }
    return result;
  };

  return { tools: governed, decide, run };
}
