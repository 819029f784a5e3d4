// What `agora fleet run` does (fleet.ts reads its arguments): a module of its own, loaded when the command
// runs, as the participants and the provider layer take a second to load, which no other command pays.
import { describeAction, FleetFileError, readFleetFile, startFleet } from '@agora/participants';
import { ProviderLayer, providersConfigFromEnv } from '@agora/providers';
import { CommandFailed, EXIT, stringOption, type Io, type Parsed } from '../command.js';
import { gatewayUrl } from '../gateway-client.js';

export async function runFleet(args: Parsed, io: Io): Promise<number> {
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
}
