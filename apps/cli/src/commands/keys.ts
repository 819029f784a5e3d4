import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { AgentId } from '@agora/contracts';
import { generateKeyPair } from '@agora/identity';
import { CommandFailed, EXIT, flag, stringOption, UsageError, type CommandSpec } from '../command.js';

export const keysNew: CommandSpec = {
  name: 'keys new',
  brief: 'generate a key pair and write a key file (mode 0600)',
  summary: 'Generate an Ed25519 key pair and write it as a key file {agentId, publicKey, secretKey}.',
  usage: '[--agent <agentId>] [--out <file>] [--force]',
  description: [
    'With --out the file is created readable by you only (mode 0600) and the public key is printed;',
    'without it the key file JSON is printed. Give the public key to an operator to register the agent;',
    'keep the secret key to yourself: whoever has it can sign commands as the agent.',
  ].join('\n'),
  options: {
    agent: { type: 'string', value: '<agentId>', description: 'the agent the key belongs to (written in the file, used as the actor when signing)' },
    out: { type: 'string', short: 'o', value: '<file>', description: 'write the key file here (mode 0600)' },
    force: { type: 'boolean', description: 'overwrite --out if it exists' },
  },
  positionals: [],
  examples: ['agora keys new --agent alice --out alice.key.json'],
  async run(args, io) {
    const agentId = stringOption(args, 'agent');
    if (agentId !== undefined) {
      const parsed = AgentId.safeParse(agentId);
      if (!parsed.success) throw new UsageError(`--agent ${JSON.stringify(agentId)}: ${parsed.error.issues[0]?.message ?? 'not an agent id'}`, 'keys new');
    }
    const keys = generateKeyPair();
    const text = `${JSON.stringify({ ...(agentId === undefined ? {} : { agentId }), ...keys }, null, 2)}\n`;
    const out = stringOption(args, 'out');
    if (out === undefined) {
      io.stdout(text);
      io.stderr(`public key: ${keys.publicKey}\n`);
      return EXIT.ok;
    }
    const force = flag(args, 'force');
    if (!force && existsSync(out)) throw new CommandFailed(undefined, `${out} already exists; use --force to overwrite it`);
    try {
      writeFileSync(out, text, { mode: 0o600, flag: force ? 'w' : 'wx' });
      // `mode` applies only when the file is created: an overwritten file keeps its old mode otherwise.
      chmodSync(out, 0o600);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw new CommandFailed(undefined, `${out} already exists; use --force to overwrite it`);
      throw new CommandFailed(undefined, `cannot write ${out}: ${code ?? (error as Error).message}`);
    }
    io.stdout(`${keys.publicKey}\n`);
    io.stderr(`wrote ${out} (mode 0600)${agentId === undefined ? '' : ` for agent ${agentId}`}\n`);
    return EXIT.ok;
  },
};
