/**
 * Agora in one process (`npm start`): every service, the event relay and the HTTP gateway, over the
 * in-process transport and the embedded store under ./data by default. With NATS_URL set the
 * services speak NATS instead (and can share the work with service processes elsewhere);
 * EVENT_STORE picks the store.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CHAMBER_ENV_HELP, consultOnDeadlockFromEnv, startChamberService } from '@agora/chamber';
import { startDebateService } from '@agora/debate';
import { startDialecticService } from '@agora/dialectic';
import { DIALECTIC_POLICY_SETTING } from '@agora/domain-dialectic';
import { TRIBUNAL_POLICY_SETTING } from '@agora/domain-tribunal';
import { A2A_ENV_HELP, a2aSettingFromEnv, DEFAULT_MAX_BODY_BYTES, MCP_ENV_HELP, mcpSettingFromEnv, METRICS_TOKEN_ENV_HELP, metricsTokenFromEnv, readAccessFromEnv, READS_ENV_HELP, readsLine, sharedRecordsWhere, startGateway } from '@agora/gateway';
import { generateKeyPair } from '@agora/identity';
import { chamberPolicyFromEnv, providersConfigFromEnv } from '@agora/providers';
import { PROJECTIONS_ENV_HELP, readProjectionsSettings, startProjectionsService } from '@agora/projections';
import { startProposalService } from '@agora/proposal';
import { REGISTRY_ENV_HELP, registryOptionsFromEnv, startRegistryService } from '@agora/registry';
import { startTribunalService } from '@agora/tribunal';
import { startVotingService } from '@agora/voting';
import { DEFAULT_METRICS_PORTS, intSetting, policyFromEnv, portSetting, STANDALONE_OPERATOR_KEY_FILE, readOperatorKeyFile, runEventRelay, runProcess, startAll, startTogether, type RuntimeConfig } from '@agora/runtime';

/** The operator key a fresh data directory gets (`agora` reads with it when given no key: apps/cli gateway-client). */
const port = (env: NodeJS.ProcessEnv) => portSetting(env, 'PORT', 8080);
const maxBodyBytes = (env: NodeJS.ProcessEnv) => intSetting(env, 'AGORA_MAX_BODY_BYTES', DEFAULT_MAX_BODY_BYTES, { min: 1, what: 'a positive number of bytes' });

/**
 * Standalone mode on a fresh machine has no operator yet: it creates a key file for one (agent
 * `root`) in the data directory, readable only by the user who started Agora, and says where it
 * is. The key comes from the process owner's disk, never from a request.
 */
function withOperator(config: RuntimeConfig): RuntimeConfig {
  if (config.operators.length > 0) return config;
  const file = join(config.dataDir, STANDALONE_OPERATOR_KEY_FILE);
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true });
    const keys = generateKeyPair();
    writeFileSync(file, `${JSON.stringify({ agentId: 'root', ...keys }, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    console.log(`agora: created the operator key ${displayPath(file)} (agent "root"); keep it secret`);
  }
  return { ...config, operators: [readOperatorKeyFile(file, 'root')] };
}

function displayPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel.startsWith('..') ? file : `./${rel}`;
}

const env = process.env;
await runProcess({
  name: 'agora',
  summary: `Runs Agora in one process: the registry, proposal, tribunal, voting, dialectic, chamber, debate and projections
services, the event relay and the HTTP gateway (commands, queries, Server-Sent Events, /metrics,
/docs). Data stays under AGORA_DATA_DIR across restarts. Without an operator key in the
environment, the first start creates one in <AGORA_DATA_DIR>/${STANDALONE_OPERATOR_KEY_FILE}.`,
  env: `PORT                       HTTP port of the gateway (default 8080)
HOST                       address the gateway binds (default 0.0.0.0)
AGORA_MAX_BODY_BYTES       largest command body the gateway accepts (default ${DEFAULT_MAX_BODY_BYTES})
${READS_ENV_HELP}
${MCP_ENV_HELP}
${A2A_ENV_HELP}
${METRICS_TOKEN_ENV_HELP}
${PROJECTIONS_ENV_HELP}
${REGISTRY_ENV_HELP}
${TRIBUNAL_POLICY_SETTING.help}
${DIALECTIC_POLICY_SETTING.help}
${CHAMBER_ENV_HELP}`,
  natsByDefault: false,
  // The projections serve the whole process's registry on METRICS_PORT (and the gateway on /metrics).
  metricsPort: DEFAULT_METRICS_PORTS.standalone,
  servesMetrics: true,
  ports: () => ({ PORT: port(env) }),
  prepare: (config) => {
    port(env);
    maxBodyBytes(env);
    mcpSettingFromEnv(env);
    a2aSettingFromEnv(env);
    metricsTokenFromEnv(env);
    readProjectionsSettings(env);
    registryOptionsFromEnv(env);
    policyFromEnv(env, TRIBUNAL_POLICY_SETTING);
    policyFromEnv(env, DIALECTIC_POLICY_SETTING);
    chamberPolicyFromEnv(env, providersConfigFromEnv(env));
    consultOnDeadlockFromEnv(env);
    readAccessFromEnv(env);
    return withOperator(config);
  },
  start: (context) => {
    const policy = policyFromEnv(env, TRIBUNAL_POLICY_SETTING);
    const dialecticPolicy = policyFromEnv(env, DIALECTIC_POLICY_SETTING);
    return startAll([
      // The services start together (their read models catch up in one pass over the log); the gateway once they are up.
      () =>
        startTogether([
          () => startRegistryService(context, registryOptionsFromEnv(env)),
          () => startProposalService(context, policy ? { policy } : {}),
          () => startTribunalService(context),
          () => startVotingService(context),
          () => startDialecticService(context, dialecticPolicy ? { policy: dialecticPolicy } : {}),
          () => startChamberService(context, { consultOnDeadlock: consultOnDeadlockFromEnv(env) }),
          () => startDebateService(context),
          () => startProjectionsService(context, readProjectionsSettings(env)),
          () => runEventRelay(context),
        ]),
      async () => {
        const reads = readAccessFromEnv(env);
        const metricsToken = metricsTokenFromEnv(env);
        const gateway = await startGateway({
          client: context.client,
          store: context.store,
          port: port(env),
          host: env['HOST'] ?? '0.0.0.0',
          requestTimeoutMs: context.config.requestTimeoutMs,
          maxBodyBytes: maxBodyBytes(env),
          mcp: mcpSettingFromEnv(env),
          a2a: a2aSettingFromEnv(env),
          ...(metricsToken ? { metricsToken } : {}),
          registry: context.metrics.registry,
          ...(context.config.readModelWaitMs === undefined ? {} : { readModelWaitMs: context.config.readModelWaitMs }),
          reads: { ...reads, directory: context.directory }, shared: sharedRecordsWhere(context.config),
        });
        const operator = context.config.operators[0];
        return {
          lines: [
            `gateway listening on ${gateway.url} (web console at ${gateway.url}/, POST /v1/commands, GET /v1/<service>/..., GET /v1/events, /mcp, /a2a, /health, /metrics, /docs)`,
            readsLine(reads),
            ...(operator ? [`operator "${operator.agentId}" may sign the first commands`] : []),
          ],
          close: () => gateway.close(),
        };
      },
    ]);
  },
});
