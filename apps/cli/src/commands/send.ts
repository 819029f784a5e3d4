import { readFileSync } from 'node:fs';
import { CommandFailed, EXIT, requiredOption, UsageError, type CommandSpec, type Io } from '../command.js';
import { actorOf, gatewayUrl, printJson, readKeyFile, resultOf, sendCommand } from '../gateway-client.js';

const COMMAND_TYPE = /^[A-Z][A-Za-z0-9]{1,63}$/;

/** The payload argument: inline JSON, `@file.json`, or `-` for stdin; it must be a JSON object. */
export async function readPayload(argument: string, io: Io): Promise<Record<string, unknown>> {
  let text: string;
  let source: string;
  if (argument === '-') {
    text = await io.readStdin();
    source = 'stdin';
  } else if (argument.startsWith('@')) {
    const path = argument.slice(1);
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new CommandFailed(undefined, `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    source = path;
  } else {
    text = argument;
    source = 'the payload';
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${source} is not valid JSON: ${(error as Error).message}`, 'send');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new UsageError(`${source} must be a JSON object (the command's payload)`, 'send');
  return value as Record<string, unknown>;
}

export const send: CommandSpec = {
  name: 'send',
  brief: 'sign any command with a key file and send it',
  summary: 'Sign any command with a key file and send it (POST /v1/commands); prints the reply.',
  usage: '<CommandType> <payload JSON | @file.json | -> --key <key file> [--actor <agentId>]',
  description: 'The gateway lists the command types it knows when given one it does not; GET /docs describes each payload.',
  options: {
    key: { type: 'string', short: 'k', value: '<file>', description: 'key file that signs the command' },
    actor: { type: 'string', value: '<agentId>', description: "who signs (default: the key file's agentId)" },
  },
  positionals: [
    { name: 'CommandType', required: true, description: 'e.g. RegisterAgent' },
    { name: 'payload', required: true, description: 'the payload as JSON, @file to read it from a file, - to read stdin' },
  ],
  examples: [`agora send UpdateAgent '{"agentId":"alice","trustScore":700}' --key operator.key.json`, 'agora send RegisterAgent @bob.json --key operator.key.json'],
  async run(args, io) {
    const [type, payloadArgument] = args.positionals as [string, string];
    if (!COMMAND_TYPE.test(type)) throw new UsageError(`${JSON.stringify(type)} is not a command type (e.g. RegisterAgent)`, 'send');
    const url = gatewayUrl(args, io, 'send');
    const keyPath = requiredOption(args, 'key', 'send');
    const key = readKeyFile(keyPath);
    const actor = actorOf(args, key, keyPath, 'send');
    const payload = await readPayload(payloadArgument, io);
    const reply = await sendCommand(url, { type, actor, payload, key });
    resultOf(reply);
    printJson(io, reply);
    return EXIT.ok;
  },
};
