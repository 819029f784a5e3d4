/** The registry as a process of its own (distributed deployment): serves agora.cmd.registry.* and agora.qry.registry.* over NATS. */
import { DEFAULT_METRICS_PORTS, runProcess } from '@agora/runtime';
import { REGISTRY_ENV_HELP, registryOptionsFromEnv, startRegistryService } from './registry-service.js';

await runProcess({
  name: 'agora-registry',
  summary: 'Agora registry service: agent identities, keys, roles, constitutions, trust and health, over NATS (queue group "registry"). Run as many replicas as you like.',
  env: REGISTRY_ENV_HELP,
  natsByDefault: true,
  metricsPort: DEFAULT_METRICS_PORTS.registry,
  prepare: (config) => {
    registryOptionsFromEnv(process.env);
    return config;
  },
  start: (context) => startRegistryService(context, registryOptionsFromEnv(process.env)),
});
