export { startGateway, GatewayModule } from './gateway.js';
export { A2A_ENV_HELP, a2aSettingFromEnv, DEFAULT_MAX_BODY_BYTES, DEFAULT_PORT, DEFAULT_REQUEST_TIMEOUT_MS, MCP_ENV_HELP, mcpSettingFromEnv, METRICS_TOKEN_ENV_HELP, metricsTokenFromEnv, type Gateway, type GatewayCatalog, type GatewayOptions } from './options.js';
export { DEFAULT_HEARTBEAT_MS } from './event-stream.js';
export { readAccessFromEnv, ReadAccess, READS_ENV_HELP, readsLine, type ReadAccessOptions } from './read-auth.js';
/** Where the gateways keep their A2A push configurations (a JetStream key-value bucket on NATS, a file standalone): for the tests of a deployment's NATS users. */
export { openSharedRecords, sharedRecordsWhere, type SharedRecords } from './a2a/push-store.js';
