// The MCP SDK's client on `agora mcp` over stdio, started as an agent's MCP configuration would start it.
import { REPO_ROOT, processEnvironment, sourceArgs } from '@agora/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

/** `agora mcp --key <keyFile> --url <url>` for the agent `agentId`, and the MCP client connected to it. */
export async function agoraMcpOverStdio(agentId: string, keyFile: string, url: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...sourceArgs('apps/cli/src/main.ts'), 'mcp', '--key', keyFile, '--url', url],
    cwd: REPO_ROOT,
    env: processEnvironment({}) as Record<string, string>,
    stderr: 'ignore',
  });
  const client = new Client({ name: `${agentId}-model`, version: '1.0.0' });
  await client.connect(transport);
  return client;
}
