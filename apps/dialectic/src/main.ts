/** The dialectic service as a process of its own (distributed deployment), over NATS. */
import { DEFAULT_METRICS_PORTS, runProcess } from '@agora/runtime';
import { DIALECTIC_POLICY_ENV_HELP, dialecticPolicyFromEnv, startDialecticService } from './dialectic-service.js';

await runProcess({
  name: 'agora-dialectic',
  summary:
    'Agora dialectic service: opens the recovery of every agent its circuit breaker paused, with a reviewer drawn by authority; takes theses, antitheses, syntheses and signed resolutions; enforces the hard limits; climbs the escalation ladder (tie-breaker, validator quorum through the voting service, operator) and expires phases at their deadline (queue group "dialectic").',
  env: DIALECTIC_POLICY_ENV_HELP,
  natsByDefault: true,
  metricsPort: DEFAULT_METRICS_PORTS.dialectic,
  prepare: (config) => {
    dialecticPolicyFromEnv(process.env);
    return config;
  },
  start: (context) => {
    const policy = dialecticPolicyFromEnv(process.env);
    return startDialecticService(context, policy ? { policy } : {});
  },
});
