/** A fleet from its file to running participants: keys, registration, clients, then every role loop. */
import type { ProviderLayer } from '@agora/providers';
import { connectFleet, type ConnectFleetOptions, type FleetConnection } from './connect.js';
import type { FleetConfig } from './fleet-file.js';
import { runFleet, type FleetRun, type ModelCallsFactory, type RunFleetOptions } from './runner.js';
import { unrecordedModelCalls } from './unrecorded-calls.js';

/** How the fleet's participants call models (`agora fleet run`, `npm run demo:fleet`): the one place to choose it. */
export const fleetModelCalls: ModelCallsFactory = ({ layer, agent }) => unrecordedModelCalls(layer, { budget: agent.budget });

export type StartedFleet = FleetRun & { connection: FleetConnection; close(): Promise<void> };

export async function startFleet(options: Omit<RunFleetOptions, 'clients' | 'modelCalls'> & { fleet: FleetConfig; connection: ConnectFleetOptions; layer: ProviderLayer; modelCalls?: ModelCallsFactory }): Promise<StartedFleet> {
  const { connection: connect, ...rest } = options;
  const connection = await connectFleet(options.fleet, connect);
  let run: FleetRun;
  try {
    run = runFleet({ ...rest, clients: connection.clients, modelCalls: options.modelCalls ?? fleetModelCalls });
  } catch (error) {
    await connection.close();
    throw error;
  }
  return {
    ...run,
    connection,
    async close() {
      await run.stop();
      await connection.close();
    },
  };
}
