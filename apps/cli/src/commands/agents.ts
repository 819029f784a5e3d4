import { DisableAgent, EnableAgent, PAGE_LIMIT_MAX, RegisterAgent, type AgentView, type Role } from '@agora/contracts';
import { EXIT, flag, integerOption, listOption, requiredOption, stringOption, UsageError, type CommandSpec, type Io, type OptionSpec, type Parsed } from '../command.js';
import { actorOf, describeCommandResult, gatewayReader, gatewayUrl, MIN_POSITION_OPTION, printJson, queryAllPages, readKeyFile, resultOf, sendCommand } from '../gateway-client.js';

const SIGNING_OPTIONS: Record<string, OptionSpec> = {
  key: { type: 'string', short: 'k', value: '<file>', description: "the operator's key file: signs the command" },
  actor: { type: 'string', value: '<agentId>', description: "who signs (default: the key file's agentId)" },
  json: { type: 'boolean', description: 'print the whole reply as JSON' },
};

/** Signs and sends a registry command with the operator key, then prints what it did. */
async function sendSigned(args: Parsed, io: Io, command: string, type: string, payload: Record<string, unknown>): Promise<number> {
  const url = gatewayUrl(args, io, command);
  const keyPath = requiredOption(args, 'key', command);
  const key = readKeyFile(keyPath);
  const actor = actorOf(args, key, keyPath, command);
  const reply = await sendCommand(url, { type, actor, payload, key });
  if (flag(args, 'json') && reply.ok) printJson(io, reply);
  else io.stdout(`${describeCommandResult(type, resultOf(reply))}\n`);
  return EXIT.ok;
}

export const agentsRegister: CommandSpec = {
  name: 'agents register',
  brief: 'register an agent (signed by an operator)',
  summary: 'Register an agent: its public key, roles, constitutions, specializations and trust (RegisterAgent, signed by an operator).',
  usage: '--key <operator key file> --id <agentId> (--public-key <ed25519:...> | --agent-key <file>) --roles <r1,r2> [options]',
  options: {
    ...SIGNING_OPTIONS,
    id: { type: 'string', value: '<agentId>', description: "the new agent's id (default: the --agent-key file's agentId)" },
    'public-key': { type: 'string', value: '<ed25519:...>', description: "the agent's public key" },
    'agent-key': { type: 'string', value: '<file>', description: "the agent's key file (only its public key is sent)" },
    roles: { type: 'string', multiple: true, value: '<r1,r2>', description: 'executive, reviewer, validator, operator, observer' },
    name: { type: 'string', value: '<display name>', description: 'display name (default: the id)' },
    constitutions: { type: 'string', multiple: true, value: '<a,b>', description: 'constitutions a reviewer holds, e.g. risk,evidence' },
    specializations: { type: 'string', multiple: true, value: '<a,b>', description: 'specializations, e.g. security' },
    trust: { type: 'string', value: '<0..1000>', description: 'initial trust score (default 500)' },
  },
  positionals: [],
  examples: ['agora agents register --key operator.key.json --agent-key alice.key.json --id alice --roles executive,reviewer --constitutions risk'],
  async run(args, io) {
    const command = 'agents register';
    const publicKeyText = stringOption(args, 'public-key');
    const agentKeyPath = stringOption(args, 'agent-key');
    if ((publicKeyText === undefined) === (agentKeyPath === undefined)) throw new UsageError('give the agent\'s key with exactly one of --public-key or --agent-key', command);
    const agentKey = agentKeyPath === undefined ? undefined : readKeyFile(agentKeyPath);
    const agentId = stringOption(args, 'id') ?? agentKey?.agentId;
    if (!agentId) throw new UsageError('--id is required', command);
    const roles = listOption(args, 'roles');
    if (!roles || roles.length === 0) throw new UsageError('--roles is required (e.g. --roles executive,reviewer)', command);
    const constitutions = listOption(args, 'constitutions');
    const specializations = listOption(args, 'specializations');
    const trustScore = integerOption(args, 'trust', command, { min: 0, max: 1000 });
    const payload: Record<string, unknown> = {
      agentId,
      publicKey: publicKeyText ?? agentKey?.publicKey,
      displayName: stringOption(args, 'name') ?? agentId,
      roles,
      ...(constitutions === undefined ? {} : { constitutions }),
      ...(specializations === undefined ? {} : { specializations }),
      ...(trustScore === undefined ? {} : { trustScore }),
    };
    return sendSigned(args, io, command, RegisterAgent.type, payload);
  },
};

export const agentsDisable: CommandSpec = {
  name: 'agents disable',
  brief: "disable an agent: its commands are refused from then on",
  summary: 'Disable an agent: its commands are refused with actor_disabled from then on (DisableAgent, signed by an operator).',
  usage: '<agentId> --reason <text> --key <operator key file>',
  options: {
    ...SIGNING_OPTIONS,
    reason: { type: 'string', value: '<text>', description: 'why (kept in the event log)' },
  },
  positionals: [{ name: 'agentId', required: true, description: 'the agent to disable' }],
  examples: ['agora agents disable alice --reason "key leaked" --key operator.key.json'],
  async run(args, io) {
    const command = 'agents disable';
    const reason = requiredOption(args, 'reason', command);
    return sendSigned(args, io, command, DisableAgent.type, { agentId: args.positionals[0], reason });
  },
};

export const agentsEnable: CommandSpec = {
  name: 'agents enable',
  brief: 'enable a disabled agent again, under a new key if given',
  summary: 'Enable a disabled agent again: its commands are accepted from then on (EnableAgent, signed by an operator). With a new key, the key it was disabled with never signs again.',
  usage: '<agentId> --reason <text> --key <operator key file> [--public-key <ed25519:...> | --agent-key <file>]',
  options: {
    ...SIGNING_OPTIONS,
    reason: { type: 'string', value: '<text>', description: 'why (kept in the event log)' },
    'public-key': { type: 'string', value: '<ed25519:...>', description: 'the key it comes back under (default: the one it had)' },
    'agent-key': { type: 'string', value: '<file>', description: 'the key file it comes back under (only its public key is sent)' },
  },
  positionals: [{ name: 'agentId', required: true, description: 'the agent to enable' }],
  examples: ['agora agents enable alice --reason "new key issued" --agent-key alice-2.key.json --key operator.key.json'],
  async run(args, io) {
    const command = 'agents enable';
    const reason = requiredOption(args, 'reason', command);
    const publicKeyText = stringOption(args, 'public-key');
    const agentKeyPath = stringOption(args, 'agent-key');
    if (publicKeyText !== undefined && agentKeyPath !== undefined) throw new UsageError('give the new key with at most one of --public-key or --agent-key', command);
    const publicKey = publicKeyText ?? (agentKeyPath === undefined ? undefined : readKeyFile(agentKeyPath).publicKey);
    return sendSigned(args, io, command, EnableAgent.type, { agentId: args.positionals[0], reason, ...(publicKey === undefined ? {} : { publicKey }) });
  },
};

/** A plain text table: a header row, then one row per item, columns padded. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
}

/** What an operator calls the agent: `paused` while its circuit breaker is open (a recovery runs), else its registry status. */
export function agentStatus(agent: Pick<AgentView, 'status'> & { breaker?: Pick<AgentView['breaker'], 'state'> }): string {
  return agent.status === 'active' && agent.breaker?.state === 'open' ? 'paused' : agent.status;
}

export function agentsTable(agents: readonly (Pick<AgentView, 'agentId' | 'displayName' | 'roles' | 'trustScore' | 'status'> & { breaker?: Pick<AgentView['breaker'], 'state'> })[]): string {
  return table(
    ['ID', 'NAME', 'ROLES', 'TRUST', 'STATUS'],
    agents.map((a) => [a.agentId, a.displayName, a.roles.join(','), String(a.trustScore), agentStatus(a)]),
  );
}

export const agentsList: CommandSpec = {
  name: 'agents list',
  brief: 'list registered agents',
  summary: `List registered agents in id order (GET /v1/registry/agents), every page of them: it follows nextCursor, ${PAGE_LIMIT_MAX} agents a request.`,
  usage: '[--role <role>] [--all] [--page-size <n>] [--min-position <position>] [--json]',
  options: {
    ...MIN_POSITION_OPTION,
    role: { type: 'string', value: '<role>', description: 'only agents with this role' },
    all: { type: 'boolean', description: 'include disabled agents' },
    'page-size': { type: 'string', value: '<n>', description: `agents a request, 1 to ${PAGE_LIMIT_MAX} (default ${PAGE_LIMIT_MAX})` },
    json: { type: 'boolean', description: 'print the result as JSON' },
  },
  positionals: [],
  examples: ['agora agents list --role reviewer'],
  async run(args, io) {
    const role = stringOption(args, 'role');
    const params = { ...(role === undefined ? {} : { role: role as Role }), ...(flag(args, 'all') ? { includeDisabled: true } : {}) };
    const agents = await queryAllPages<'ListAgents', AgentView>(gatewayReader(args, io, 'agents list'), 'ListAgents', 'agents', params, integerOption(args, 'page-size', 'agents list', { min: 1, max: PAGE_LIMIT_MAX }), args);
    if (flag(args, 'json')) printJson(io, { agents });
    else if (agents.length === 0) io.stdout('no agents\n');
    else io.stdout(agentsTable(agents));
    return EXIT.ok;
  },
};
