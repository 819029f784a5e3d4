/** The proposal service as a process of its own (distributed deployment), over NATS. */
import { DEFAULT_METRICS_PORTS, runProcess } from '@agora/runtime';
import { startProposalService, TRIBUNAL_POLICY_ENV_HELP, tribunalPolicyFromEnv } from './proposal-service.js';

await runProcess({
  name: 'agora-proposal',
  summary: 'Agora proposal service: executives submit, revise, withdraw and record the execution of proposals for the tribunal (queue group "proposal").',
  env: TRIBUNAL_POLICY_ENV_HELP,
  natsByDefault: true,
  metricsPort: DEFAULT_METRICS_PORTS.proposal,
  prepare: (config) => {
    tribunalPolicyFromEnv(process.env);
    return config;
  },
  start: (context) => {
    const policy = tribunalPolicyFromEnv(process.env);
    return startProposalService(context, policy ? { policy } : {});
  },
});
