/** The voting engine as a process of its own (distributed deployment): serves agora.cmd.voting.* and the session queries over NATS, and fires the durable voting timeouts. */
import { DEFAULT_METRICS_PORTS, runProcess } from '@agora/runtime';
import { startVotingService } from './voting-service.js';

await runProcess({
  name: 'agora-voting',
  summary: `Agora voting service: the Bot Tribunal voting engine (seed 002). Puts high-risk action requests to
3 to 5 validators from the registry, collects their weighted votes, computes the consensus and the
recommendation (approve, deny, or escalate to a human operator), and expires sessions at their timeout
(durable: rebuilt from the log at start). Over NATS, queue group "voting"; run as many replicas as you
like. The voting configuration is changed with UpdateVotingConfig (operator), not with settings.`,
  natsByDefault: true,
  metricsPort: DEFAULT_METRICS_PORTS.voting,
  start: (context) => startVotingService(context),
});
