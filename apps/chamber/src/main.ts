/** The chamber service as a process of its own (distributed deployment), over NATS. */
import { chamberPolicyFromEnv, providersConfigFromEnv } from '@agora/providers';
import { DEFAULT_METRICS_PORTS, runProcess } from '@agora/runtime';
import { CHAMBER_ENV_HELP, consultOnDeadlockFromEnv } from './settings.js';
import { startChamberService } from './chamber-service.js';

await runProcess({
  name: 'agora-chamber',
  summary:
    'Agora chamber service: the Deliberation Chamber. Takes proposals of questions for a panel of models of distinct providers, waits for an operator to approve each (nothing is called before), reserves its maximum cost against the daily and monthly caps, runs the blind phase concurrently, one cross-examination round when the answers diverge, and an arbiter that may return "no consensus"; every prompt and response is recorded (queue group "chamber"). Replicas may run: the one holding the chamber reactor\'s lease makes the calls.',
  env: CHAMBER_ENV_HELP,
  natsByDefault: true,
  metricsPort: DEFAULT_METRICS_PORTS.chamber,
  prepare: (config) => {
    chamberPolicyFromEnv(process.env, providersConfigFromEnv(process.env));
    consultOnDeadlockFromEnv(process.env);
    return config;
  },
  start: (context) => startChamberService(context, { consultOnDeadlock: consultOnDeadlockFromEnv(process.env) }),
});
