/** A fleet from its file to running participants: keys, registration, clients, then every role loop. */
import type { ProviderLayer } from '@agora/providers';
import { recordedModelCalls } from '../model-calls.js';
import { connectFleet, type ConnectFleetOptions, type FleetConnection } from './connect.js';
import type { FleetConfig } from './fleet-file.js';
import { runFleet, type FleetRun, type ModelCallsFactory, type RunFleetOptions } from './runner.js';

/** How the fleet's participants call models: each in its agent's ledger (reserved against its budget before, recorded after, never called twice). */
export const fleetModelCalls: ModelCallsFactory = ({ agora, layer }) => recordedModelCalls(agora, layer, { processName: 'agora fleet run' });

export type StartedFleet = FleetRun & { connection: FleetConnection; close(): Promise<void> };

export async function startFleet(options: Omit<RunFleetOptions, 'clients' | 'modelCalls'> & { fleet: FleetConfig; connection: ConnectFleetOptions; layer: ProviderLayer; modelCalls?: ModelCallsFactory }): Promise<StartedFleet> {
  const { connection: connect, ...rest } = options;
  const connection = await connectFleet(options.fleet, { currency: options.layer.currency, ...connect });
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
