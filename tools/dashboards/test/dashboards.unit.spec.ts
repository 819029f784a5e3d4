// The dashboards as code: the checked-in provisioning JSON is what the code generates, and every
// panel is wired to the provisioned data source with a query. (Whether each query parses and
// returns series is dashboards.e2e.spec.ts, against a real Prometheus.)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dashboardFile, dashboards, queriesOf } from '../src/index.js';
import { DASHBOARDS_DIR, staleDashboards } from '../src/main.js';

describe('Grafana dashboards as code', () => {
  it('checked in under deploy/grafana/dashboards exactly as generated (npm run dashboards)', () => {
    expect(staleDashboards()).toEqual([]);
    for (const file of dashboards().map(dashboardFile)) expect(readFileSync(join(DASHBOARDS_DIR, file.name), 'utf8')).toBe(file.text);
  });

  it('an overview, one per protocol (tribunal, voting, dialectic, chamber, debate) and the platform, with unique uids and panel ids', () => {
    const all = dashboards();
    expect(all.map((d) => d.uid)).toEqual(['agora-overview', 'agora-tribunal', 'agora-voting', 'agora-dialectic', 'agora-chamber', 'agora-debate', 'agora-platform']);
    for (const d of all) {
      const ids = (d.panels ?? []).map((p) => p.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(d.tags).toEqual(['agora']);
    }
  });

  it('every panel but the rows reads the provisioned Prometheus with at least one query, each with its own refId', () => {
    for (const d of dashboards()) {
      for (const panel of d.panels ?? []) {
        if (panel.type === 'row') continue;
        const p = panel as { title: string; datasource?: unknown; targets?: { expr?: string; refId?: string; datasource?: unknown }[] };
        expect({ panel: p.title, datasource: p.datasource }).toEqual({ panel: p.title, datasource: { type: 'prometheus', uid: 'prometheus' } });
        expect(p.targets?.length ?? 0).toBeGreaterThan(0);
        const refIds = p.targets!.map((t) => t.refId);
        expect(new Set(refIds).size).toBe(refIds.length);
        for (const t of p.targets!) expect(t.expr?.trim()).toBeTruthy();
      }
      expect(queriesOf(d).length).toBeGreaterThan(0);
    }
  });

  it('names a missing, changed or stray file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agora-dashboards-'));
    try {
      const files = dashboards().map(dashboardFile);
      expect(staleDashboards(dir)).toEqual(files.map((f) => f.name));
      for (const f of files) writeFileSync(join(dir, f.name), f.text);
      expect(staleDashboards(dir)).toEqual([]);
      writeFileSync(join(dir, files[1]!.name), files[1]!.text.replace('"refresh": "30s"', '"refresh": "5s"'));
      writeFileSync(join(dir, 'hand-made.json'), '{}');
      expect(staleDashboards(dir)).toEqual([files[1]!.name, 'hand-made.json']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
