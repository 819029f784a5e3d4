/** The projections as a process of their own (distributed deployment): the tribunal stats and coverage queries over NATS, and /metrics for Prometheus. */
import { DEFAULT_METRICS_PORTS, runProcess } from '@agora/runtime';
import { startProjectionsService } from './projections-service.js';
import { PROJECTIONS_ENV_HELP, readProjectionsSettings, type ProjectionsSettings } from './settings.js';

let settings: ProjectionsSettings | undefined;

await runProcess({
  name: 'agora-projections',
  summary: `Agora projections: folds the proposals read model from the event log (in memory, rebuilt from the
whole log at start), answers agora.qry.tribunal.stats and agora.qry.tribunal.coverage over NATS (queue
group "projections"), and serves /metrics (Prometheus) and /health over HTTP. Metrics are computed from
the read model at scrape time. Run as many replicas as you like.`,
  env: PROJECTIONS_ENV_HELP,
  natsByDefault: true,
  // The service serves the process's registry on METRICS_PORT itself, with /health and /verify.
  metricsPort: DEFAULT_METRICS_PORTS.projections,
  servesMetrics: true,
  // Read before the store opens, so that a bad setting stops the process with exit code 2.
  prepare: (config) => {
    settings = readProjectionsSettings(process.env);
    return config;
  },
  start: (context) => startProjectionsService(context, settings ?? readProjectionsSettings(process.env)),
});
