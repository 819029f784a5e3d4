// Exits 0 when a NATS server with JetStream answers at the given URL, printing its version.
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

const servers = process.argv[2] ?? process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
try {
  const nc = await connect({ servers, timeout: 2_000, reconnect: false });
  try {
    const jsm = await jetstreamManager(nc, { timeout: 2_000 });
    const info = await jsm.getAccountInfo();
    console.log(`nats-server ${nc.info?.version} at ${servers}: JetStream ready (${info.streams} streams)`);
  } finally {
    await nc.close();
  }
} catch (error) {
  console.error(`no JetStream at ${servers}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
