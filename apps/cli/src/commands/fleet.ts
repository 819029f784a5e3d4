import { CommandFailed, EXIT, stringOption, type CommandSpec } from '../command.js';
import { gatewayUrl } from '../gateway-client.js';

export const fleetRun: CommandSpec = {
  name: 'fleet run',
  brief: 'run model-backed participants for every role, as a fleet file describes them',
  summary:
    "Run a fleet: for each agent of the fleet file, its roles' participants (reviewers, executive, validators, recovery parties, debaters) played by its model through the provider layer, each on its own role loop, until Ctrl-C.",
  usage: '<fleet file> [--operator-key <file>] [--url <url> | --nats <url>]',
  description: `The fleet file (JSON, or YAML when named .yaml or .yml; see docs/fleet.md) names the agents, their key files (created when missing), roles,
constitutions, specializations, models (<provider>:<model>) and budgets. With --operator-key, agents not registered yet
are registered and the budgets the fleet file gives are set. Every model call is reserved against its agent's
budget in the log before it is made, and its outcome recorded after (a call already recorded is never made
again). Each loop keeps a checkpoint in the fleet's state directory: a restarted fleet resumes where it stopped.
Each action is printed: who, what, the model, the calls and their cost. Providers: the environment, as for the
chamber (OPENAI_API_KEY, ANTHROPIC_API_KEY, GOOGLE_GENERATIVE_AI_API_KEY, *_BASE_URL, AGORA_PROVIDERS,
AGORA_MODEL_PRICES; see docs/configuration.md).`,
  options: {
    'operator-key': { type: 'string', value: '<file>', description: 'an operator key file: registers the agents not registered yet, and sets their budgets' },
    nats: { type: 'string', value: '<url>', description: 'speak NATS instead of HTTP (NATS_USER / NATS_PASSWORD if the server wants them)' },
  },
  positionals: [{ name: 'fleet file', required: true, description: 'the fleet file (JSON)' }],
  examples: ['agora fleet run examples/fleet/fleet.json --operator-key data/operator.key.json'],
  async run(args, io) {
    // Loaded when the command runs: the participants and the provider layer take a second to load, which no other command pays.
    const { describeAction, FleetFileError, readFleetFile, startFleet } = await import('@agora/participants');
    const { ProviderLayer, providersConfigFromEnv } = await import('@agora/providers');
    let fleet;
    try {
      fleet = readFleetFile(args.positionals[0]!);
    } catch (error) {
      if (error instanceof FleetFileError) throw new CommandFailed('invalid_fleet_file', error.message);
      throw error;
    }
    const layer = new ProviderLayer(providersConfigFromEnv(io.env as NodeJS.ProcessEnv), io.env as NodeJS.ProcessEnv);
    for (const model of new Set(fleet.agents.map((a) => a.model))) {
      try {
        layer.check(model);
      } catch (error) {
        throw new CommandFailed('invalid_fleet_file', `${fleet.source}: ${(error as Error).message}`);
      }
    }
    const natsUrl = stringOption(args, 'nats');
    const user = io.env['NATS_USER'];
    const operatorKeyFile = stringOption(args, 'operator-key');
    const connection = natsUrl
      ? { nats: { servers: natsUrl, ...(user ? { credentials: { user, pass: io.env['NATS_PASSWORD'] ?? '' } } : {}) } }
      : { url: gatewayUrl(args, io, 'fleet run') };
    const started = await startFleet({
      fleet,
      layer,
      connection: { ...connection, ...(operatorKeyFile ? { operatorKeyFile } : {}) },
      onAction: (action) => io.stdout(`${new Date().toISOString()} ${describeAction(action, layer.currency)}\n`),
      onRefused: (agent, role, error, event) => io.stderr(`${agent} (${role}): refused on ${event.type}: ${error.code ?? ''} ${error.message}\n`),
    }).catch((error: unknown) => {
      throw new CommandFailed(undefined, (error as Error).message);
    });
    if (started.connection.created.length > 0) io.stderr(`key files created: ${started.connection.created.join(', ')}\n`);
    if (started.connection.registered.length > 0) io.stderr(`registered: ${started.connection.registered.join(', ')}\n`);
    if (started.connection.budgets.length > 0) io.stderr(`budgets set: ${started.connection.budgets.join(', ')}\n`);
    await started.ready;
    io.stderr(`fleet: ${started.loops.length} participants running (${fleet.agents.map((a) => `${a.id}: ${a.roles.join('+')} on ${a.model}`).join('; ')}); Ctrl-C stops\n`);
    const aborted = new Promise<void>((resolve) => (io.signal?.aborted ? resolve() : io.signal?.addEventListener('abort', () => resolve(), { once: true })));
    const failed = await Promise.race([aborted.then(() => undefined), started.done.then(() => undefined, (error: unknown) => error as Error)]);
    await started.close();
    if (failed) throw new CommandFailed(undefined, `a participant stopped: ${failed.message}`);
    io.stderr('fleet: stopped\n');
    return EXIT.ok;
  },
};
