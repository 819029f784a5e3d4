/**
 * Governed tool calls for the Vercel AI SDK (`ai`, version 7): an AI SDK agent's risky tool calls go
 * to an Agora vote (docs/decisions/0014-a-governed-tool-call-is-a-decision.md), on the same path as `agora mcp-proxy` (governed.ts: the
 * policy, the voting session bound to the call's digest, the one-time release, the result's digest).
 *
 *   const governed = governedTools(agora, { writeFile, readFile }, policy);
 *   await generateText({ model, tools: governed.tools, toolApproval: governed.toolApproval, prompt });
 *
 * - `toolApproval` is the AI SDK's own approval hook (a GenericToolApprovalFunction, which
 *   `generateText`, `streamText` and `ToolLoopAgent` await for each tool call). For a call the policy
 *   matches with `vote` it opens a voting session and waits for its final decision: approve answers
 *   `approved`, anything else `denied` with the reason `tool_call_denied: ...` or
 *   `tool_call_expired: ...`, which the model reads as the tool's result (`execution-denied`) and
 *   the tool never runs. `deny` in the policy is denied at once; unmatched and `allow` calls are
 *   `not-applicable` (they run as usual).
 * - `tools` are the same tools whose `execute` first uses the approval: ReleaseToolCall with the
 *   digest of the arguments it is about to run (Agora releases an approval once, for its own call),
 *   then runs the tool and records its outcome and the digest of its output. A governed call that
 *   comes to `execute` without an approval for exactly these arguments (a `toolApproval` left out,
 *   arguments changed since the vote) throws ToolCallRefused instead of running.
 *
 * Only types are imported from `ai` (an optional peer dependency): nothing of it is loaded at run time.
 * A tool whose `execute` streams (returns an AsyncIterable) is run to its last output when governed.
 */
import type { ErrorBody } from '@agora/contracts';
import type { GenericToolApprovalFunction, ToolExecutionOptions, ToolSet } from 'ai';
import type { Agora } from './client.js';
import { approvalName, governToolCall, recordToolCallResult, releaseToolCall, toolCallDenied, toolCallDigest, type GovernedCall, type GovernOptions, type ToolCallApproval } from './governed.js';
import type { AgoraEvent } from './transport.js';
import { ruleFor, type ToolPolicy } from './tool-policy.js';

export interface GovernedToolsOptions extends Pick<GovernOptions, 'decisionTimeoutMs' | 'signal' | 'log'> {
  /** The tool set's name in the policy (a rule's `server`) and in the log; default the policy's `server`, else `ai-sdk`. */
  server?: string;
  /** Each event of a held call's voting session (votes, the decision), e.g. to show the agent's user that it waits. */
  onProgress?: (toolCallId: string, event: AgoraEvent) => void;
}

export interface GovernedTools<TOOLS extends ToolSet> {
  /** The tools, each `execute` bound to Agora's approval of the exact call. */
  tools: TOOLS;
  /** Pass as `toolApproval` to `generateText`, `streamText` or a `ToolLoopAgent`. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the approval function serves any tools' context and any runtime context
  toolApproval: GenericToolApprovalFunction<TOOLS, any, any>;
}

/** A governed call refused where it would have run: the message, which the model reads, starts with Agora's code. */
export class ToolCallRefused extends Error {
  constructor(readonly error: ErrorBody) {
    super(`${error.code}: ${error.message}`);
    this.name = 'ToolCallRefused';
  }
}

type Execute = (input: unknown, options: ToolExecutionOptions<unknown>) => unknown;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isAsyncIterable = (v: unknown): v is AsyncIterable<unknown> => v != null && typeof (v as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';

/** Wraps an AI SDK tool set so that the calls the policy names wait for an Agora decision before they run. */
export function governedTools<TOOLS extends ToolSet>(agora: Agora, tools: TOOLS, policy: ToolPolicy, options: GovernedToolsOptions = {}): GovernedTools<TOOLS> {
  const server = options.server ?? policy.server ?? 'ai-sdk';
  const caller = agora.agentId ?? 'anonymous';
  const log = options.log ?? (() => undefined);
  const callOf = (tool: string, input: unknown): GovernedCall => ({ server, tool, arguments: isObject(input) ? input : { input }, caller });
  /** Approvals given by `toolApproval`, by tool call id, each used once by `execute`. */
  const approvals = new Map<string, ToolCallApproval>();

  const toolApproval: GovernedTools<TOOLS>['toolApproval'] = async ({ toolCall }) => {
    const { toolCallId, toolName, input } = toolCall as { toolCallId: string; toolName: string; input: unknown };
    const onProgress = options.onProgress;
    const decision = await governToolCall(agora, policy, callOf(toolName, input), {
      source: 'ai_sdk_tool_call',
      log,
      ...(options.decisionTimeoutMs === undefined ? {} : { decisionTimeoutMs: options.decisionTimeoutMs }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(onProgress === undefined ? {} : { onProgress: (event: AgoraEvent) => onProgress(toolCallId, event) }),
    });
    if (decision.verdict === 'pass') return 'not-applicable';
    if (decision.verdict === 'refused') return { type: 'denied', reason: `${decision.error.code}: ${decision.error.message}` };
    const { verdict: _verdict, ...approval } = decision;
    approvals.set(toolCallId, approval);
    return { type: 'approved', reason: `approved by Agora ${approvalName(approval)}` };
  };

  const governed = Object.fromEntries(
    Object.entries(tools).map(([name, tool]) => {
      const execute = tool.execute as Execute | undefined;
      if (execute === undefined) return [name, tool];
      const governedExecute = async (input: unknown, execution: ToolExecutionOptions<unknown>): Promise<unknown> => {
        const call = callOf(name, input);
        const approval = approvals.get(execution.toolCallId);
        approvals.delete(execution.toolCallId);
        if (approval === undefined) {
          const rule = ruleFor(policy, call);
          if (rule !== undefined && rule.decision !== 'allow') {
            throw new ToolCallRefused(toolCallDenied(`${server}/${name} needs Agora's decision and none was given for this call (pass governedTools' toolApproval with its tools)`, { server, tool: name }));
          }
          return execute(input, execution);
        }
        if (toolCallDigest(call) !== approval.digest) {
          throw new ToolCallRefused(toolCallDenied(`${server}/${name}: the arguments are not those ${approvalName(approval)} approved`, { server, tool: name, ...approval }));
        }
        const notReleased = await releaseToolCall(agora, approval, call);
        if (notReleased) throw new ToolCallRefused(notReleased);
        let output: unknown;
        try {
          const result = await execute(input, execution);
          if (isAsyncIterable(result)) for await (const part of result) output = part;
          else output = result;
        } catch (error) {
          await recordToolCallResult(agora, approval, 'failed', { error: (error as Error).message }, log);
          throw error;
        }
        await recordToolCallResult(agora, approval, 'ok', output, log);
        return output;
      };
      return [name, { ...tool, execute: governedExecute }];
    }),
  ) as TOOLS;

  return { tools: governed, toolApproval };
}
