import type { CommandSpec } from '../command.js';

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
    const { runFleet } = await import('./fleet-runner.js');
    return runFleet(args, io);
  },
};
