/** The proposal service as a process of its own (distributed deployment), over NATS. */
import { TRIBUNAL_POLICY_SETTING } from '@agora/domain-tribunal';
import { DEFAULT_METRICS_PORTS, policyFromEnv, runProcess } from '@agora/runtime';
import { startProposalService } from './proposal-service.js';

await runProcess({
  name: 'agora-proposal',
  summary: 'Agora proposal service: executives submit, revise, withdraw and record the execution of proposals for the tribunal (queue group "proposal").',
  env: TRIBUNAL_POLICY_SETTING.help,
  natsByDefault: true,
  metricsPort: DEFAULT_METRICS_PORTS.proposal,
  prepare: (config) => {
    policyFromEnv(process.env, TRIBUNAL_POLICY_SETTING);
    return config;
  },
  start: (context) => {
    const policy = policyFromEnv(process.env, TRIBUNAL_POLICY_SETTING);
    return startProposalService(context, policy ? { policy } : {});
  },
});
