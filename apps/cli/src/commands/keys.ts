import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentId, SERVICE_NAMES, serviceActorId, type ServiceName } from '@agora/contracts';
import { generateKeyPair, parseKeyFile } from '@agora/identity';
import { CommandFailed, EXIT, flag, stringOption, UsageError, type CommandSpec } from '../command.js';

export const keysNew: CommandSpec = {
  name: 'keys new',
  brief: 'generate a key pair and write a key file (mode 0600)',
  summary: 'Generate an Ed25519 key pair and write it as a key file {agentId, publicKey, secretKey}.',
  usage: '[--agent <agentId> | --service <name>] [--out <file>] [--force]',
  description: [
    'With --out the file is created readable by you only (mode 0600) and the public key is printed;',
    'without it the key file JSON is printed. Give the public key to an operator to register the agent;',
    'keep the secret key to yourself: whoever has it can sign commands as the agent.',
    'With --service the key is a service\'s own (agentId service:<name>): mount it as <AGORA_SERVICE_KEYS_DIR>/<name>.key.json',
    'for that service, and give its public key to every verifier in AGORA_SERVICE_PUBLIC_KEYS.',
  ].join('\n'),
  options: {
    agent: { type: 'string', value: '<agentId>', description: 'the agent the key belongs to (written in the file, used as the actor when signing)' },
    service: { type: 'string', value: '<name>', description: `a service's key instead: ${SERVICE_NAMES.join(', ')}` },
    out: { type: 'string', short: 'o', value: '<file>', description: 'write the key file here (mode 0600)' },
    force: { type: 'boolean', description: 'overwrite --out if it exists' },
  },
  positionals: [],
  examples: ['agora keys new --agent alice --out alice.key.json', 'agora keys new --service tribunal --out service-keys/tribunal.key.json'],
  async run(args, io) {
    const service = stringOption(args, 'service');
    if (service !== undefined && stringOption(args, 'agent') !== undefined) throw new UsageError('--agent and --service exclude each other', 'keys new');
    if (service !== undefined && !(SERVICE_NAMES as readonly string[]).includes(service)) throw new UsageError(`--service ${JSON.stringify(service)}: one of ${SERVICE_NAMES.join(', ')}`, 'keys new');
    const agentId = service !== undefined ? serviceActorId(service as ServiceName) : stringOption(args, 'agent');
    if (agentId !== undefined && service === undefined) {
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
    io.stderr(`wrote ${out} (mode 0600)${agentId === undefined ? '' : ` for ${service === undefined ? 'agent' : 'service'} ${agentId}`}\n`);
    return EXIT.ok;
  },
};

export const keysServices: CommandSpec = {
  name: 'keys services',
  brief: "create every service's key file (mode 0600) and the public keys file verifiers read",
  summary: "Create the key file of each Agora service that has none in a directory, and write the services' public keys there.",
  usage: '--dir <dir>',
  description: [
    'Writes <dir>/<service>.key.json (mode 0600) for each service lacking one, keeps those that exist, and',
    'writes <dir>/public-keys.json: {"<service>": "ed25519:..."}, the value of AGORA_SERVICE_PUBLIC_KEYS',
    '(give it as @<dir>/public-keys.json to every process and to auditors). Mount each service its own',
    'key file only, as <AGORA_SERVICE_KEYS_DIR>/<service>.key.json.',
  ].join('\n'),
  options: {
    dir: { type: 'string', value: '<dir>', description: 'where the key files are kept (created if missing)' },
  },
  positionals: [],
  examples: ['agora keys services --dir deploy/service-keys'],
  async run(args, io) {
    const dir = stringOption(args, 'dir');
    if (dir === undefined) throw new UsageError('--dir is required', 'keys services');
    const publicKeys: Record<string, string> = {};
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      for (const service of SERVICE_NAMES) {
        const file = join(dir, `${service}.key.json`);
        if (existsSync(file)) {
          publicKeys[service] = parseKeyFile(readFileSync(file, 'utf8')).publicKey;
          continue;
        }
        const keys = generateKeyPair();
        writeFileSync(file, `${JSON.stringify({ agentId: serviceActorId(service), ...keys }, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
        chmodSync(file, 0o600);
        publicKeys[service] = keys.publicKey;
        io.stderr(`wrote ${file} (mode 0600) for service ${serviceActorId(service)}\n`);
      }
      writeFileSync(join(dir, 'public-keys.json'), `${JSON.stringify(publicKeys, null, 2)}\n`);
    } catch (error) {
      throw new CommandFailed(undefined, `cannot write the service keys in ${dir}: ${(error as Error).message}`);
    }
    io.stdout(`${JSON.stringify(publicKeys, null, 2)}\n`);
    io.stderr(`wrote ${join(dir, 'public-keys.json')}: set AGORA_SERVICE_PUBLIC_KEYS=@${join(dir, 'public-keys.json')}\n`);
    return EXIT.ok;
  },
};
