/**
 * Agora's Grafana dashboards, as code: `npm run dashboards` writes them to deploy/grafana/dashboards
 * (`<uid>.json`), which docker-compose provisions; a test fails when the checked-in files differ
 * from what this code generates, and another runs every panel's query against a real Prometheus.
 */
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { chamber, debate } from './deliberation.js';
import { overview } from './overview.js';
import { platform } from './platform.js';
import { dialectic, tribunal, voting } from './protocols.js';

export { queriesOf } from './kit.js';

/** One dashboard per protocol, each with its headline figures on the overview. */
export const PROTOCOL_DASHBOARDS: (() => Dashboard)[] = [tribunal, voting, dialectic, chamber, debate];

/** Every dashboard: the overview, the protocols, the platform. */
export function dashboards(): Dashboard[] {
  return [overview(), ...PROTOCOL_DASHBOARDS.map((build) => build()), platform()];
}

/** The file a dashboard is provisioned from: pretty JSON, one trailing newline. */
export function dashboardFile(built: Dashboard): { name: string; text: string } {
  return { name: `${built.uid}.json`, text: `${JSON.stringify(built, null, 2)}\n` };
}
