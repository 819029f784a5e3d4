/**
 * The `agora` command: finds the (sub)command the arguments name, parses its options with
 * node:util parseArgs, runs it, and turns what went wrong into a message and an exit code
 * (2 for bad usage, 1 for a failed command).
 */
import { columns, commandHelp, CommandFailed, EXIT, parseCommandArgs, UsageError, wantsHelp, type CommandSpec, type Io, type Parsed } from './command.js';
import { keyFileHint } from './gateway-client.js';
import { chamberCommands } from './commands/chamber.js';
import { debateCommands } from './commands/debate.js';
import { audit } from './commands/audit.js';
import { agentsDisable, agentsEnable, agentsList, agentsRegister } from './commands/agents.js';
import { eventsTail } from './commands/events.js';
import { fleetRun } from './commands/fleet.js';
import { keysNew, keysServices } from './commands/keys.js';
import { mcp } from './commands/mcp.js';
import { mcpProxy } from './commands/mcp-proxy.js';
import { outcomeCommands } from './commands/outcome.js';
import { send } from './commands/send.js';
import { setupNats } from './commands/setup.js';
import { token } from './commands/token.js';
import { verifyReadModels } from './commands/verify.js';
import { projectionsRebuild } from './commands/projections.js';

export const VERSION = '0.1.0';

interface Group {
  name: string;
  summary: string;
  commands: CommandSpec[];
}

const GROUPS: Group[] = [
  { name: 'keys', summary: 'Ed25519 key files for agents, operators and services', commands: [keysNew, keysServices] },
  { name: 'agents', summary: 'Register, list, disable and enable agents', commands: [agentsRegister, agentsList, agentsDisable, agentsEnable] },
  { name: 'events', summary: 'Follow the event log', commands: [eventsTail] },
  { name: 'chamber', summary: 'The Deliberation Chamber: ask the panel, approve, watch and read a session', commands: chamberCommands },
  { name: 'debate', summary: 'Crux debates: open one, list them, read and follow one', commands: debateCommands },
  { name: 'outcome', summary: "Outcomes of executed proposals, and the calibration figures: reviewers' verdicts and validators' votes against what happened", commands: outcomeCommands },
  { name: 'fleet', summary: 'Model-backed participants for every role, from a fleet file', commands: [fleetRun] },
  { name: 'setup', summary: 'Set up a deployment: NATS users from the registry, the log stream', commands: [setupNats] },
  { name: 'projections', summary: "The read models in tables: build them again from the log beside the live ones", commands: [projectionsRebuild] },
];
const TOP_LEVEL: CommandSpec[] = [send, token, mcp, mcpProxy, verifyReadModels, audit];

/** Every command, for help and tests. */
export const COMMANDS: readonly CommandSpec[] = [...GROUPS.flatMap((g) => g.commands), ...TOP_LEVEL];

function mainHelp(): string {
  const rows: [string, string][] = [
    ...GROUPS.flatMap((g) => g.commands.map((c): [string, string] => [c.name, c.brief])),
    ...TOP_LEVEL.map((c): [string, string] => [c.name, c.brief]),
  ];
  return `Usage: agora <command> [options]

Speaks to Agora through its HTTP gateway: signs commands with your key file, reads agents and
follows the event log.

Commands:
${columns(rows)}

Options:
${columns([
  ['--url <url>', 'the gateway (default: $AGORA_URL, else http://127.0.0.1:8080)'],
  ['-h, --help', 'help; `agora <command> --help` for a command'],
  ['--version', 'print the version'],
])}

Example:
  agora keys new --agent alice --out alice.key.json
`;
}

function groupHelp(group: Group): string {
  return `Usage: agora ${group.name} <command> [options]

${group.summary}.

Commands:
${columns(group.commands.map((c) => [c.name, c.brief]))}

Run \`agora ${group.name} <command> --help\` for a command's options.

Example:
  ${group.commands[0]!.examples[0]}
`;
}

function suggestion(candidates: readonly string[]): string {
  return candidates.length > 0 ? ` (known: ${candidates.join(', ')})` : '';
}

/** Which command the arguments name, and the arguments left for it; a help text when that is what they ask for. */
function route(argv: readonly string[]): { spec: CommandSpec; rest: string[] } | { help: string } {
  const [first, second, ...others] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    // `agora help agents register` is `agora agents register --help`.
    if (first === 'help' && second !== undefined) return route([second, ...others, '--help']);
    return { help: mainHelp() };
  }
  const top = TOP_LEVEL.find((c) => c.name === first);
  if (top) return { spec: top, rest: argv.slice(1) };
  const group = GROUPS.find((g) => g.name === first);
  if (!group) {
    if (first.startsWith('-')) throw new UsageError(`unknown option ${first} (options go after the command)`);
    throw new UsageError(`unknown command ${JSON.stringify(first)}${suggestion([...GROUPS.map((g) => g.name), ...TOP_LEVEL.map((c) => c.name)])}`);
  }
  if (second === undefined || second === '--help' || second === '-h') {
    if (second === undefined) throw new UsageError(`agora ${group.name} needs a command: ${group.commands.map((c) => c.name.split(' ')[1]).join(', ')}`, group.name);
    return { help: groupHelp(group) };
  }
  const spec = group.commands.find((c) => c.name === `${group.name} ${second}`);
  if (!spec) {
    throw new UsageError(`unknown command "${group.name} ${second}"${suggestion(group.commands.map((c) => c.name.split(' ')[1] as string))}`, group.name);
  }
  return { spec, rest: argv.slice(2) };
}

function printFailure(io: Io, error: CommandFailed, hint: string | undefined): void {
  io.stderr(`error${error.code === undefined ? '' : ` ${error.code}`}: ${error.message}${hint === undefined ? '' : ` (${hint})`}\n`);
  if (error.details !== undefined) io.stderr(`${JSON.stringify(error.details, null, 2)}\n`);
}

/** Runs the CLI on `argv` (without `node` and the script); resolves with the exit code. */
export async function runCli(argv: readonly string[], io: Io): Promise<number> {
  let parsed: Parsed | undefined;
  try {
    if (argv.length === 1 && argv[0] === '--version') {
      io.stdout(`agora ${VERSION}\n`);
      return EXIT.ok;
    }
    const routed = route(argv);
    if ('help' in routed) {
      io.stdout(routed.help);
      return EXIT.ok;
    }
    const { spec, rest } = routed;
    if (wantsHelp(rest)) {
      io.stdout(commandHelp(spec));
      return EXIT.ok;
    }
    parsed = parseCommandArgs(spec, rest);
    return await spec.run(parsed, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`agora: ${error.message}\nRun 'agora ${error.command ? `${error.command} ` : ''}--help' for usage.\n`);
      return EXIT.usage;
    }
    if (error instanceof CommandFailed) {
      printFailure(io, error, parsed === undefined ? undefined : keyFileHint(error.code, parsed, io));
      return EXIT.failed;
    }
    io.stderr(`agora: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return EXIT.failed;
  }
}
