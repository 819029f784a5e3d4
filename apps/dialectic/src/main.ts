/** The dialectic service as a process of its own (distributed deployment), over NATS. */
import { DIALECTIC_POLICY_SETTING } from '@agora/domain-dialectic';
import { DEFAULT_METRICS_PORTS, policyFromEnv, runProcess } from '@agora/runtime';
import { startDialecticService } from './dialectic-service.js';

await runProcess({
  name: 'agora-dialectic',
  summary:
    'Agora dialectic service: opens the recovery of every agent its circuit breaker paused, with a reviewer drawn by authority; takes theses, antitheses, syntheses and signed resolutions; enforces the hard limits; climbs the escalation ladder (tie-breaker, validator quorum through the voting service, operator) and expires phases at their deadline (queue group "dialectic").',
  env: DIALECTIC_POLICY_SETTING.help,
  natsByDefault: true,
  metricsPort: DEFAULT_METRICS_PORTS.dialectic,
  prepare: (config) => {
    policyFromEnv(process.env, DIALECTIC_POLICY_SETTING);
    return config;
  },
  start: (context) => {
    const policy = policyFromEnv(process.env, DIALECTIC_POLICY_SETTING);
    return startDialecticService(context, policy ? { policy } : {});
  },
});
