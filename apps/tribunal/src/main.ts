/** The tribunal service as a process of its own (distributed deployment), over NATS. */
import { DEFAULT_METRICS_PORTS, runProcess } from '@agora/runtime';
import { startTribunalService } from './tribunal-service.js';

await runProcess({
  name: 'agora-tribunal',
  summary:
    'Agora tribunal service: opens review rounds with reviewers drawn from the registry by constitution, takes reviews and objections, closes rounds at their deadline (silence = approval), and takes operators\' decisions on escalated proposals (queue group "tribunal").',
  natsByDefault: true,
  metricsPort: DEFAULT_METRICS_PORTS.tribunal,
  start: (context) => startTribunalService(context),
});
