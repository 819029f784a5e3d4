export { createAgoraMcpServer, offeredTo, queryOfferedTo, refusal, toolName, MCP_SERVER_NAME, type AgoraMcpOptions } from './server.js';
export { jsonRpcError, McpHttpEndpoint, LOCAL_HOSTNAMES, DEFAULT_MCP_BOUNDS, type CallerRef, type McpCaller, type McpHttpOptions, type McpSessionControls, type McpSessionGuard } from './http.js';
export { createMcpProxy, type McpProxyOptions } from './proxy.js';
// The policy and the governed call are the SDK's (shared with its Vercel AI SDK adapter).
export { readToolPolicy, ruleFor, matchesPattern, toolCallDigest, resultDigest, callSummary, ToolPolicy, PolicyRule, type GovernedCall } from '@agora/sdk';
