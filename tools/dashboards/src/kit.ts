/**
 * The few shapes Agora's dashboards are made of, over the Grafana foundation SDK's builders: every
 * panel reads the provisioned Prometheus data source (uid `prometheus`), every query is PromQL over
 * the metrics Agora's processes serve and the recording rules of deploy/prometheus/agora-rules.yml.
 */
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import { DashboardBuilder, DashboardLinkBuilder, DashboardLinkType, RowBuilder, ThresholdsConfigBuilder, ThresholdsMode, type Dashboard, type Panel } from '@grafana/grafana-foundation-sdk/dashboard';
import { DataqueryBuilder } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder as StatPanelBuilder } from '@grafana/grafana-foundation-sdk/stat';
import { PanelBuilder as TimeseriesPanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries';

/** The data source docker-compose provisions (deploy/grafana/provisioning/datasources). */
export const DATASOURCE = { type: 'prometheus', uid: 'prometheus' } as const;

export interface Query {
  expr: string;
  /** Legend of each series, e.g. `{{service}}`. */
  legend?: string;
}

/** `[color, from]` steps of a stat's thresholds; the first step starts at -Infinity (`null`). */
export type Steps = [string, number | null][];

const REF_IDS = 'ABCDEFGHIJ';

function targets(queries: readonly Query[]): cog.Builder<cog.Dataquery>[] {
  return queries.map((q, i) => {
    const target = new DataqueryBuilder().expr(q.expr).refId(REF_IDS[i]!).datasource(DATASOURCE);
    return q.legend ? target.legendFormat(q.legend) : target;
  });
}

/** A graph over time of one or more queries. */
export function timeseries(title: string, description: string, unit: string, ...queries: Query[]): cog.Builder<Panel> {
  const panel = new TimeseriesPanelBuilder().title(title).description(description).unit(unit).datasource(DATASOURCE).gridPos({ x: 0, y: 0, w: 12, h: 8 });
  for (const target of targets(queries)) panel.withTarget(target);
  return panel;
}

/** One figure, its last value, coloured by `steps`. */
export function stat(title: string, description: string, unit: string, query: Query, steps: Steps = [['green', null]]): cog.Builder<Panel> {
  const panel = new StatPanelBuilder()
    .title(title)
    .description(description)
    .unit(unit)
    .datasource(DATASOURCE)
    .gridPos({ x: 0, y: 0, w: 6, h: 4 })
    .thresholds(new ThresholdsConfigBuilder().mode(ThresholdsMode.Absolute).steps(steps.map(([color, value]) => ({ color, value }))));
  for (const target of targets([query])) panel.withTarget(target);
  return panel;
}

export interface DashboardSpec {
  /** Stable: Grafana links and bookmarks use it. Also the file name (`<uid>.json`). */
  uid: string;
  title: string;
  description: string;
  rows: [title: string, panels: cog.Builder<Panel>[]][];
}

/** A dashboard of rows of panels, tagged `agora`, linked to the other Agora dashboards. */
export function dashboard(spec: DashboardSpec): Dashboard {
  const builder = new DashboardBuilder(spec.title)
    .uid(spec.uid)
    .description(spec.description)
    .tags(['agora'])
    .refresh('30s')
    .time({ from: 'now-6h', to: 'now' })
    .readonly()
    .link(new DashboardLinkBuilder('Agora').type(DashboardLinkType.Dashboards).tags(['agora']).asDropdown(true));
  for (const [title, panels] of spec.rows) {
    builder.withRow(new RowBuilder(title));
    for (const panel of panels) builder.withPanel(panel);
  }
  const built = builder.build();
  // Panel ids: unique within the dashboard, in order.
  built.panels?.forEach((panel, index) => (panel.id = index + 1));
  return built;
}

/** Every query of a dashboard, with the panel it belongs to (the rows have none). */
export function queriesOf(built: Dashboard): { panel: string; expr: string }[] {
  return (built.panels ?? []).flatMap((panel) => ('targets' in panel && Array.isArray(panel.targets) ? panel.targets.map((t) => ({ panel: panel.title ?? '', expr: String((t as { expr?: unknown }).expr) })) : []));
}
