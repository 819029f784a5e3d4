// Prints the nats-server the tests, benchmarks and cluster runs use (libs/testing's one rule:
// NATS_SERVER_BIN, else the one `npm run nats-server` fetched, else PATH) on stdout, and a line
// naming it and its version on stderr. Exits 1 when that binary does not run.
// Runs before the build: node --conditions=agora-source --import ./tools/ts-run/register.mjs tools/ci/nats-server-bin.mjs
import { describeNatsServer, resolveNatsServer } from '@agora/testing/nats-server';

const server = resolveNatsServer();
console.error(describeNatsServer(server));
console.log(server.bin);
if (server.version === undefined) process.exit(1);
