/**
 * The gateway as a process of its own (distributed deployment): HTTP on PORT, commands and queries
 * to the services over NATS, the event stream read from the store EVENT_STORE names, and the relay
 * of committed events to `agora.evt.*` (one relay per deployment is enough; more only repeat
 * messages, which listeners dedupe).
 */
import { DEFAULT_METRICS_PORTS, intSetting, portSetting, runEventRelay, runProcess, startAll } from '@agora/runtime';
import { sharedRecordsWhere } from './a2a/push-store.js';
import { startGateway } from './gateway.js';
import { readAccessFromEnv, READS_ENV_HELP, readsLine } from './read-auth.js';
import { A2A_ENV_HELP, a2aSettingFromEnv, DEFAULT_MAX_BODY_BYTES, DEFAULT_PORT, DEFAULT_SSE_SLOW_CLIENT_MS, MCP_ENV_HELP, mcpSettingFromEnv, METRICS_TOKEN_ENV_HELP, metricsTokenFromEnv } from './options.js';

const env = process.env;
const settings = () => ({
  port: portSetting(env, 'PORT', DEFAULT_PORT),
  maxBodyBytes: intSetting(env, 'AGORA_MAX_BODY_BYTES', DEFAULT_MAX_BODY_BYTES, { min: 1, what: 'a positive number of bytes' }),
  relay: env['AGORA_RELAY'] !== 'off',
  sseSlowClientMs: intSetting(env, 'AGORA_SSE_SLOW_CLIENT_MS', DEFAULT_SSE_SLOW_CLIENT_MS, { min: 1, what: 'a positive number of milliseconds' }),
  reads: readAccessFromEnv(env),
  mcp: mcpSettingFromEnv(env),
  a2a: a2aSettingFromEnv(env),
  metricsToken: metricsTokenFromEnv(env),
});

await runProcess({
  name: 'agora-gateway',
  summary: `Agora's HTTP gateway: the web console at /, POST /v1/commands, GET /v1/<service>/<query>,
GET /v1/events (SSE), /mcp (MCP over Streamable HTTP), /a2a (A2A, its Agent Card at /.well-known/agent-card.json), /health, /metrics (Prometheus) and /docs (OpenAPI 3.1); it also relays committed events to
agora.evt.<category>.<EventType> on NATS.

Example:
  PORT=8080 NATS_URL=nats://127.0.0.1:4222 EVENT_STORE=jetstream node apps/gateway/dist/main.js`,
  env: `PORT                       HTTP port (default ${DEFAULT_PORT}; 0 = any free port)
HOST                       address to listen on (default 0.0.0.0)
AGORA_MAX_BODY_BYTES       largest command body accepted (default ${DEFAULT_MAX_BODY_BYTES})
AGORA_RELAY                off: do not relay events to NATS (another process does)
AGORA_SSE_SLOW_CLIENT_MS   an SSE client that reads nothing this long is dropped with its resume position
                           (a last "dropped" event; default ${DEFAULT_SSE_SLOW_CLIENT_MS})
${READS_ENV_HELP}
${MCP_ENV_HELP}
${A2A_ENV_HELP}
${METRICS_TOKEN_ENV_HELP}`,
  natsByDefault: true,
  metricsPort: DEFAULT_METRICS_PORTS.gateway,
  ports: () => ({ PORT: settings().port }),
  prepare: (config) => {
    settings();
    return config;
  },
  start: (context) => {
    const { port, maxBodyBytes, relay, sseSlowClientMs, reads, mcp, a2a, metricsToken } = settings();
    return startAll([
      async () => {
        const gateway = await startGateway({ client: context.client, store: context.store, port, host: env['HOST'] || '0.0.0.0', requestTimeoutMs: context.config.requestTimeoutMs, maxBodyBytes, ...(context.config.readModelWaitMs === undefined ? {} : { readModelWaitMs: context.config.readModelWaitMs }), sseSlowClientMs, mcp, a2a, ...(metricsToken ? { metricsToken } : {}), registry: context.metrics.registry, reads: { ...reads, directory: context.directory }, shared: sharedRecordsWhere(context.config) });
        return { lines: [`listening on ${gateway.url} (web console at /, POST /v1/commands, GET /v1/events, /docs, /metrics, /health)`, readsLine(reads)], close: () => gateway.close() };
      },
      ...(relay ? [() => runEventRelay(context)] : []),
    ]);
  },
});
