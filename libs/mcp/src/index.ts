export { createAgoraMcpServer, refusal, toolName, MCP_SERVER_NAME, type AgoraMcpOptions } from './server.js';
export { McpHttpEndpoint, LOCAL_HOSTNAMES, type McpHttpOptions } from './http.js';
