import { VerifyReadModels } from '@agora/contracts';
import { CommandFailed, EXIT, flag, requiredOption, type CommandSpec } from '../command.js';
import { actorOf, gatewayUrl, printJson, readKeyFile, resultOf, sendCommand } from '../gateway-client.js';

interface VerifyResult {
  ok: boolean;
  readModels: { name: string; equal: boolean; events: number; position?: string | null }[];
}

export const verifyReadModels: CommandSpec = {
  name: 'verify-read-models',
  brief: "rebuild the projections' read models from the log and compare them with the live ones (operator)",
  summary: 'Ask the projections service to rebuild every read model from the whole log and compare it with the live one (VerifyReadModels, signed by an operator).',
  usage: '--key <operator key file> [--actor <agentId>] [--json]',
  description: [
    'It replays the whole log, so only an operator may ask, one verification at a time (a second one is',
    'answered unavailable while the first runs). Exit code 0 when every read model equals its rebuild, 1 otherwise.',
  ].join('\n'),
  options: {
    key: { type: 'string', short: 'k', value: '<file>', description: "an operator's key file" },
    actor: { type: 'string', value: '<agentId>', description: "who signs (default: the key file's agentId)" },
    json: { type: 'boolean', description: 'print the whole answer as JSON' },
  },
  positionals: [],
  examples: ['agora verify-read-models --key operator.key.json'],
  async run(args, io) {
    const url = gatewayUrl(args, io, 'verify-read-models');
    const keyPath = requiredOption(args, 'key', 'verify-read-models');
    const key = readKeyFile(keyPath);
    const actor = actorOf(args, key, keyPath, 'verify-read-models');
    const result = resultOf(await sendCommand(url, { type: VerifyReadModels.type, actor, payload: {}, key })) as VerifyResult;
    if (flag(args, 'json')) printJson(io, result);
    else for (const r of result.readModels) io.stdout(`${r.equal ? 'equal    ' : 'DIFFERENT'} ${r.name} (${r.events} events)\n`);
    if (!result.ok) throw new CommandFailed(undefined, 'a live read model differs from its rebuild from the log');
    return EXIT.ok;
  },
};
