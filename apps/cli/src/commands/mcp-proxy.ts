import { EXIT, integerOption, requiredOption, stringOption, UsageError, type CommandSpec } from '../command.js';
import { AGENT_CONNECTION_OPTIONS, connectAgent, serveStdio } from './mcp.js';

export const mcpProxy: CommandSpec = {
  name: 'mcp-proxy',
  brief: 'an MCP proxy whose risky tool calls wait for an Agora vote',
  summary: "Serve an upstream MCP server's tools over stdio; tool calls its policy file matches are put to a vote of Agora's validators first, signed with the agent's key.",
  usage: '--policy <file> --key <key file> [--url <url> | --nats <url>] [--server <name>] [--decision-timeout <seconds>] (-- <upstream command...> | --upstream-url <url>)',
  description: `tools/list passes through. A tools/call is looked up in the policy (a JSON file, see docs/mcp.md "Governed tool
calls"): unmatched calls and "allow" pass through, "deny" is refused, "vote" opens a voting session of validators at the
rule's risk level with the call's digest (sha256 of the canonical JSON of server, tool, arguments and caller) and its
arguments, and the call is forwarded only if the final decision approves it, after ReleaseToolCall used the approval
(once, for this digest); RecordToolCallResult then logs the outcome and the result's digest. "person" gives the session
to a person in the operator's inbox; "tribunal" submits the call as a tribunal proposal, forwarded only once approved
(ReleaseProposalToolCall, RecordProposalToolCallResult). A refused or undecided
call answers the agent with a tool error "tool_call_denied: ..." or "tool_call_expired: ...", and the upstream never
sees it. A held call reports progress (one notification per event of its session) when the request asks for it.`,
  options: {
    policy: { type: 'string', short: 'p', value: '<file>', description: 'the policy file (JSON, or YAML when named .yaml or .yml)' },
    ...AGENT_CONNECTION_OPTIONS,
    server: { type: 'string', value: '<name>', description: "the upstream's name in the policy and the log (default: the policy's server, else the name the upstream reports)" },
    'decision-timeout': { type: 'string', value: '<seconds>', description: 'refuse a held call as expired after this long and cancel its session (default 600)' },
    'upstream-url': { type: 'string', value: '<url>', description: 'a Streamable HTTP upstream instead of a command' },
  },
  positionals: [{ name: 'upstream command', required: false, rest: true, description: 'after --: the stdio MCP server to put the proxy in front of, and its arguments' }],
  examples: ['agora mcp-proxy --policy memory.policy.json --key alice.key.json --url http://127.0.0.1:8080 -- npx @modelcontextprotocol/server-memory'],
  async run(args, io) {
    // Loaded when the proxy runs, not by every other command.
    const { createMcpProxy, readToolPolicy } = await import('@agora/mcp');
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const policy = readToolPolicy(requiredOption(args, 'policy', 'mcp-proxy'));
    const upstreamUrl = stringOption(args, 'upstream-url');
    const [command, ...commandArgs] = args.positionals;
    if ((command === undefined) === (upstreamUrl === undefined)) throw new UsageError('name the upstream: a command after -- or --upstream-url <url>, not both', 'mcp-proxy');
    const decisionTimeout = integerOption(args, 'decision-timeout', 'mcp-proxy', { min: 1, max: 86_400 });
    const agora = await connectAgent(args, io, 'mcp-proxy');
    const upstream = new Client({ name: 'agora-mcp-proxy', version: '0.1.0' });
    await upstream.connect(
      command !== undefined
        ? new StdioClientTransport({ command, args: commandArgs, env: Object.fromEntries(Object.entries(io.env).filter((e): e is [string, string] => e[1] !== undefined)), stderr: 'inherit' })
        : new StreamableHTTPClientTransport(new URL(upstreamUrl!)),
    );
    const server = stringOption(args, 'server');
    const proxy = createMcpProxy(agora, upstream, policy, {
      ...(server === undefined ? {} : { server }),
      ...(decisionTimeout === undefined ? {} : { decisionTimeoutMs: decisionTimeout * 1000 }),
      log: (line) => io.stderr(`agora mcp-proxy: ${line}\n`),
    });
    io.stderr(`agora mcp-proxy: ${agora.agentId} in front of ${command ?? upstreamUrl} (${policy.rules.length} rules)\n`);
    await serveStdio(proxy, io);
    await upstream.close();
    await agora.close();
    return EXIT.ok;
  },
};
