export { createAgoraMcpServer, refusal, toolName, MCP_SERVER_NAME, type AgoraMcpOptions } from './server.js';
export { jsonRpcError, McpHttpEndpoint, LOCAL_HOSTNAMES, type CallerRef, type McpCaller, type McpHttpOptions } from './http.js';
export { createMcpProxy, toolCallDigest, resultDigest, callSummary, type GovernedCall, type McpProxyOptions } from './proxy.js';
export { readToolPolicy, ruleFor, matchesPattern, ToolPolicy, PolicyRule } from './policy.js';
