/**
 * Agora in one process: opens the event store chosen by EVENT_STORE (embedded under ./data by
 * default) and serves /health on PORT (8080). Protocol services join this process as they land.
 */
import { createServer } from 'node:http';
import { describeStore, EVENT_STORE_HELP, openEventStore, parseStoreConfig } from '@agora/eventstore';

const HELP = `Usage: npm start

Runs Agora in one process.

Environment:
  PORT            HTTP port (default 8080)
  AGORA_DATA_DIR  data directory of the embedded store (default ./data)
${EVENT_STORE_HELP.replace(/^/gm, '  ')}`;

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(HELP);
  process.exit(0);
}

const port = Number(process.env['PORT'] ?? 8080);
let config;
try {
  config = parseStoreConfig(process.env['EVENT_STORE']);
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
const store = await openEventStore(config);
const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/health') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 'ok', store: store.kind }));
    return;
  }
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ ok: false, error: { code: 'not_found', message: `no route ${req.method} ${req.url}` } }));
});
server.listen(port, () => {
  console.log(`agora: event store ${describeStore(config)}`);
  console.log(`agora: listening on http://127.0.0.1:${port} (GET /health)`);
});

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log(`agora: ${signal}, stopping`);
  server.close();
  await store.close();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
