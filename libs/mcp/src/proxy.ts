/**
 * `agora mcp-proxy`: an MCP server in front of another MCP server (the upstream), whose risky tool
 * calls wait for an Agora decision (docs/decisions/0014-a-governed-tool-call-is-a-decision.md). `tools/list` passes through; a
 * `tools/call` is looked up in the policy (@agora/sdk's tool-policy.ts): unmatched or `allow` passes
 * through, `deny` is refused at once, `vote` puts the call to a voting session of validators (seed
 * 002) and is forwarded only after the session's final decision is approve; `tribunal` submits it as a
 * tribunal proposal and forwards it only once the proposal is approved. A refused, expired or
 * cancelled call answers the agent with a tool error (`tool_call_denied` / `tool_call_expired`) and
 * never reaches the upstream.
 *
 * The decision, its binding to the exact call (the digest), the one-time release and the record of
 * the result are @agora/sdk's governed tool calls (governed.ts), shared with the Vercel AI SDK
 * adapter; this file only speaks MCP. The proxy forwards exactly the arguments that were digested.
 */
import { approvalName, governToolCall, recordToolCallResult, releaseToolCall, DEFAULT_DECISION_TIMEOUT_MS, type Agora, type GovernedCall, type ToolPolicy } from '@agora/sdk';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { refusal, waitOptions } from './server.js';

export interface McpProxyOptions {
  /** The upstream's name in the policy and in the log; default the policy's `server`, else the name the upstream reports. */
  server?: string;
  /** How long a governed call waits for its decision before it is refused as expired (and its session cancelled); default 10 minutes. */
  decisionTimeoutMs?: number;
  /** Diagnostics (stderr in the CLI). */
  log?: (line: string) => void;
}

/** The proxy's MCP server over a connected upstream client; connect it to a transport (stdio in the CLI). */
export function createMcpProxy(agora: Agora, upstream: Client, policy: ToolPolicy, options: McpProxyOptions = {}): Server {
  const upstreamInfo = upstream.getServerVersion();
  const serverName = options.server ?? policy.server ?? upstreamInfo?.name ?? 'upstream';
  const log = options.log ?? (() => undefined);
  const decisionTimeoutMs = options.decisionTimeoutMs ?? DEFAULT_DECISION_TIMEOUT_MS;
  const proxy = new Server(
    { name: `agora-proxy:${serverName}`, version: upstreamInfo?.version ?? '0.0.0' },
    {
      capabilities: { tools: {} },
      instructions: `${upstream.getInstructions() ?? ''}\n\nTool calls go through Agora's governance: a risky call waits for a vote of validators before it runs; a refusal comes back as a tool error "tool_call_denied: ..." or "tool_call_expired: ...".`.trim(),
    },
  );

  proxy.setRequestHandler(ListToolsRequestSchema, (request) => upstream.listTools(request.params));

  proxy.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const call: GovernedCall = { server: serverName, tool: request.params.name, arguments: request.params.arguments ?? {}, caller: agora.agentId ?? 'anonymous' };
    const { signal, onProgress } = waitOptions({ timeoutSeconds: decisionTimeoutMs / 1000, final: true }, extra);
    const decision = await governToolCall(agora, policy, call, { source: 'mcp_tool_call', decisionTimeoutMs, log, ...(signal ? { signal } : {}), ...(onProgress ? { onProgress } : {}) });
    if (decision.verdict === 'pass') return (await upstream.callTool(request.params)) as CallToolResult;
    if (decision.verdict === 'refused') return refusal(decision.error);
    const notReleased = await releaseToolCall(agora, decision, call);
    if (notReleased) return refusal(notReleased);
    log(`${call.server}/${call.tool}: released by ${approvalName(decision)}, forwarding`);
    let result: CallToolResult;
    try {
      result = (await upstream.callTool({ ...request.params, arguments: call.arguments })) as CallToolResult;
    } catch (error) {
      await recordToolCallResult(agora, decision, 'failed', { error: (error as Error).message }, log);
      throw error;
    }
    await recordToolCallResult(agora, decision, result.isError ? 'tool_error' : 'ok', result, log);
    return result;
  });

  return proxy;
}

