import { readFileSync } from 'node:fs';
import { DEFAULT_NATS_URL, type AgentView } from '@agora/contracts';
import type { NatsAgent } from '@agora/messaging';
import { CommandFailed, EXIT, flag, integerOption, stringOption, UsageError, type CommandSpec } from '../command.js';
import { gatewayReader, queryAllPages, readKeyFile } from '../gateway-client.js';

export const setupNats: CommandSpec = {
  name: 'setup nats',
  brief: "write NATS's users from the registry (one nkey user per agent) and set up the log's stream",
  summary:
    "Write the NATS users file (auth.conf, beside deploy/nats/roles.conf) from the registry: one nkey user per active agent, its Ed25519 key, allowed its own inbox prefix _INBOX_<agentId> only; then make nats-server reload it, and with --stream create or update the log's JetStream stream as the operator of --key.",
  usage: '--key <operator key file> --out <auth.conf> [--services] [--pid <n> | --pid-file <file>] [--stream] [--nats <url>] [--replicas <n>]',
  description: [
    'Agents are read from the gateway (--url) with a read token of --key; the operator of --key gets a user even when it is a',
    'bootstrap operator the registry does not list. Run it again after registering,',
    'disabling or re-keying an agent: a run that changes nothing writes nothing and does not reload.',
    'Services that only check the stream run with EVENT_STORE=jetstream?setup=verify (docs/deployment.md).',
    'With --services the file includes services.conf (deploy/nats, generated from the contracts) instead of roles.conf: one NATS',
    'user per service and the gateway, each allowed only its own subjects and its own inbox _INBOX_<name>.',
    'It refuses a registry holding an active agent whose id is reserved for a process (a service\'s name, gateway, service, agent,',
    'observer, auditor, service_<name>): its NATS user could read that process\'s replies. Disable it and register it under another id.',
    'Services run as NATS users answer NATS queries only with the reader\'s read token (AGORA_NATS_READS=closed, their default).',
  ].join('\n'),
  options: {
    key: { type: 'string', value: '<file>', description: "an operator's key file (default: $AGORA_KEY_FILE): reads the registry, and connects to NATS for --stream" },
    out: { type: 'string', value: '<file>', description: 'the users file to write (the auth.conf single.conf and cluster-node.conf include)' },
    pid: { type: 'string', value: '<n>', description: 'the nats-server process to reload (SIGHUP) when the file changed' },
    'pid-file': { type: 'string', value: '<file>', description: "the server's pid file (its pid_file setting), instead of --pid" },
    stream: { type: 'boolean', description: "create or update the log's stream (AGORA_EVENTS), as the operator" },
    services: { type: 'boolean', description: 'one NATS user per service: include services.conf (deploy/nats/services.conf, beside --out) instead of roles.conf' },
    nats: { type: 'string', value: '<url>', description: `NATS for --stream (default: $NATS_URL, else ${DEFAULT_NATS_URL})` },
    replicas: { type: 'string', value: '<n>', description: "replicas of the log's stream (default 1; 3 on a cluster)" },
  },
  positionals: [],
  examples: ['agora setup nats --key root.key.json --out /etc/nats/auth.conf --pid-file /var/run/nats.pid --stream'],
  async run(args, io) {
    const keyPath = stringOption(args, 'key') ?? (io.env['AGORA_KEY_FILE'] || undefined);
    if (keyPath === undefined) throw new UsageError("say which operator: --key <file> (or $AGORA_KEY_FILE)", 'setup nats');
    const out = stringOption(args, 'out');
    if (!out) throw new UsageError('--out is required: the users file nats-server includes (auth.conf)', 'setup nats');
    const key = readKeyFile(keyPath);
    if (!key.agentId) throw new UsageError(`the key file ${keyPath} names no agentId`, 'setup nats');
    const pidFile = stringOption(args, 'pid-file');
    const pid = integerOption(args, 'pid', 'setup nats', { min: 1, max: 2 ** 22 }) ?? (pidFile === undefined ? undefined : Number(readFileSync(pidFile, 'utf8').trim()));
    const agents: NatsAgent[] = await queryAllPages<'ListAgents', AgentView>(gatewayReader(args, io, 'setup nats'), 'ListAgents', 'agents', { includeDisabled: true });
    // A bootstrap operator (AGORA_OPERATOR_PUBLIC_KEY) is not in the registry: the one running the setup gets its user too.
    const bootstrap = !agents.some((a) => a.agentId === key.agentId);
    if (bootstrap) agents.push({ agentId: key.agentId, publicKey: key.publicKey, roles: ['operator'], status: 'active' });
    const replicas = integerOption(args, 'replicas', 'setup nats', { min: 1, max: 5 });
    const { setUpNats } = await import('./nats-setup.js');
    let result: Awaited<ReturnType<typeof setUpNats>>;
    try {
      result = await setUpNats({
        agents,
        out,
        ...(flag(args, 'services') ? { services: true } : {}),
        ...(pid === undefined ? {} : { serverPid: pid }),
        ...(flag(args, 'stream')
          ? { stream: { servers: stringOption(args, 'nats') ?? (io.env['NATS_URL'] || DEFAULT_NATS_URL), identity: { agentId: key.agentId, secretKey: key.secretKey }, ...(replicas === undefined ? {} : { replicas }) } }
          : {}),
      });
    } catch (error) {
      throw new CommandFailed(undefined, `setup nats: ${error instanceof Error ? error.message : String(error)}`);
    }
    const active = agents.filter((a) => a.status === 'active').length;
    io.stdout(`${out}: ${result.file} (${active} agent${active === 1 ? '' : 's'} as nkey users${bootstrap ? `, ${key.agentId} as the bootstrap operator of --key` : ''})${result.reloaded ? `; nats-server ${pid} reloaded` : ''}\n`);
    if (result.stream) io.stdout(`log stream: ${result.stream}\n`);
    io.stdout('reads on NATS: services that connect as NATS users answer queries only with a read token (AGORA_NATS_READS=closed, their default); agents send theirs (the SDK, the Python and Go clients)\n');
    return EXIT.ok;
  },
};
