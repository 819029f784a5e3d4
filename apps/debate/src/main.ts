/** The debate service as a process of its own (distributed deployment): serves agora.cmd.debate.* and the debate queries over NATS, and runs the moderator. */
import { DEFAULT_METRICS_PORTS, runProcess } from '@agora/runtime';
import { startDebateService } from './debate-service.js';

await runProcess({
  name: 'agora-debate',
  summary: `Agora debate service: crux discovery (seed 004). Debaters (agents with the role debater) send
signed moves; each thread goes DISCOVERY -> CRUX_LOCK -> EVIDENCE -> CONVERGED (or UNRESOLVED when its
crux never locks) through stage gates, the steelman protocol, structured falsifiers and the crux-lock
gate; the moderator (this service, checkpointed) intervenes after failed locks, on orbiting and on
horizon mismatches. Over NATS, queue group "debate"; run as many replicas as you like. Budgets and
thresholds are per debate (OpenDebate settings), not process settings.`,
  natsByDefault: true,
  metricsPort: DEFAULT_METRICS_PORTS.debate,
  start: (context) => startDebateService(context),
});
