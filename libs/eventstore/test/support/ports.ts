// Real ports without a store behind them, for the KurrentDB adapter's failure paths: one nothing
// listens on (connections refused) and one that accepts connections and never answers.
import { createServer, type Socket } from 'node:net';

export interface SilentPorts {
  /** Accepts connections and never answers. */
  silentPort: number;
  /** Nothing listens here: connections are refused. */
  closedPort: number;
  close(): Promise<void>;
}

export async function startSilentPorts(): Promise<SilentPorts> {
  const probe = createServer();
  const closedPort = await new Promise<number>((resolve) => probe.listen(0, '127.0.0.1', () => resolve((probe.address() as { port: number }).port)));
  await new Promise((resolve) => probe.close(resolve));
  const sockets = new Set<Socket>();
  const silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const silentPort = await new Promise<number>((resolve) => silent.listen(0, '127.0.0.1', () => resolve((silent.address() as { port: number }).port)));
  return {
    silentPort,
    closedPort,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    },
  };
}
