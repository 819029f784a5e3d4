import { Agora } from '@agora/sdk';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { EXIT, requiredOption, stringOption, type CommandSpec, type Io, type OptionSpec, type Parsed } from '../command.js';
import { gatewayUrl, readKeyFile } from '../gateway-client.js';

/** The options naming the agent an MCP command signs for and how it reaches Agora. */
export const AGENT_CONNECTION_OPTIONS: Record<string, OptionSpec> = {
  key: { type: 'string', short: 'k', value: '<file>', description: 'the agent\'s key file (from `agora keys new`)' },
  agent: { type: 'string', value: '<agentId>', description: "who signs (default: the key file's agentId)" },
  nats: { type: 'string', value: '<url>', description: 'speak NATS instead of HTTP (NATS_USER / NATS_PASSWORD if the server wants them)' },
};

/** An SDK client signing with `--key` (its commands, and its read tokens over HTTP), over `--nats` or the gateway (`--url`). */
export async function connectAgent(args: Parsed, io: Io, command: string): Promise<Agora> {
  const keyFile = requiredOption(args, 'key', command);
  readKeyFile(keyFile);
  const agentId = stringOption(args, 'agent');
  const natsUrl = stringOption(args, 'nats');
  const user = io.env['NATS_USER'];
  const signer = { keyFile, ...(agentId === undefined ? {} : { agentId }) };
  return natsUrl
    ? Agora.connect({ nats: { servers: natsUrl, ...(user ? { credentials: { user, pass: io.env['NATS_PASSWORD'] ?? '' } } : {}) }, signer })
    : // Over HTTP the key also signs the read tokens of every read (a gateway that closes reads wants them).
      Agora.connect({ url: gatewayUrl(args, io, command), signer, ...(io.env['AGORA_READ_AUDIENCE'] ? { readAudience: io.env['AGORA_READ_AUDIENCE'] } : {}) });
}

/** Serves an MCP server over stdio until the client goes away or the command is aborted. */
export async function serveStdio(server: Pick<Server, 'connect' | 'close' | 'onclose'>, io: Io): Promise<void> {
  const closed = new Promise<void>((resolve) => {
    const previous = server.onclose;
    server.onclose = () => {
      previous?.();
      resolve();
    };
  });
  // The MCP libraries are loaded when an MCP command runs, not by every other command.
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  await server.connect(new StdioServerTransport());
  const stop = () => void server.close();
  io.signal?.addEventListener('abort', stop, { once: true });
  process.stdin.once('end', stop);
  await closed;
}

export const mcp: CommandSpec = {
  name: 'mcp',
  brief: "serve Agora to an MCP client over stdio, signing with an agent's key file",
  summary: "Serve Agora as an MCP server over stdio (for an agent's local MCP configuration), signing every command with the agent's key file.",
  usage: '--key <key file> [--agent <agentId>] [--url <url> | --nats <url>]',
  description: `Tools: one per command the agent's roles may send and one per query they may read (its roles read from
the registry at start; the contracts' authorization and visibility tables decide), generated from the contracts, in snake_case
(submit_proposal, submit_review, cast_validator_vote, submit_thesis, get_dialectic_session, ...), the waiting tools
wait_for_verdict, wait_for_decision and wait_for_resolution, and request_dialectic_review. Resources:
agora://proposals/{id}, agora://voting-sessions/{id}, agora://dialectic-sessions/{id}, agora://debates/{id}, with
update notifications. The key stays in this process: the model sees tools, never the key. Nothing but MCP is
written on stdout; diagnostics go to stderr.`,
  options: AGENT_CONNECTION_OPTIONS,
  positionals: [],
  examples: ['agora mcp --key alice.key.json --url http://127.0.0.1:8080'],
  async run(args, io) {
    const { createAgoraMcpServer } = await import('@agora/mcp');
    const agora = await connectAgent(args, io, 'mcp');
    // The command tools offered are those the agent's roles may send, read from the registry once, at start.
    const self = agora.agentId === undefined ? undefined : await agora.tryQuery('GetAgent', { agentId: agora.agentId });
    const roles = self?.ok ? self.result.roles : undefined;
    const server = createAgoraMcpServer(agora, roles === undefined ? {} : { roles });
    io.stderr(
      roles === undefined
        ? `agora mcp: serving ${agora.agentId} over stdio (${agora.transport.kind}); its roles could not be read (${self?.ok === false ? self.error.code : 'no agent'}): offering every command an agent may send\n`
        : `agora mcp: serving ${agora.agentId} over stdio (${agora.transport.kind}), with the commands of its roles (${roles.join(', ') || 'none'})\n`,
    );
    await serveStdio(server.server, io);
    await agora.close();
    return EXIT.ok;
  },
};
