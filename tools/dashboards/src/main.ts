#!/usr/bin/env node
/**
 * `npm run dashboards`: writes Agora's Grafana dashboards to deploy/grafana/dashboards; with
 * `--check`, writes nothing and exits 1 naming the files that differ from the generated ones.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dashboardFile, dashboards } from './index.js';

export const DASHBOARDS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../../deploy/grafana/dashboards');

/** The generated files that differ from the checked-in ones (or are missing), and checked-in ones nothing generates. */
export function staleDashboards(dir = DASHBOARDS_DIR): string[] {
  const files = dashboards().map(dashboardFile);
  const read = (name: string) => {
    try {
      return readFileSync(join(dir, name), 'utf8');
    } catch {
      return undefined;
    }
  };
  const differ = files.filter((f) => read(f.name) !== f.text).map((f) => f.name);
  const extra = readdirSync(dir).filter((name) => name.endsWith('.json') && !files.some((f) => f.name === name));
  return [...differ, ...extra];
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--check')) {
    const stale = staleDashboards();
    if (stale.length > 0) {
      console.error(`stale dashboards in deploy/grafana/dashboards: ${stale.join(', ')} (run npm run dashboards)`);
      process.exitCode = 1;
    } else console.log('dashboards up to date');
  } else {
    for (const file of dashboards().map(dashboardFile)) {
      writeFileSync(join(DASHBOARDS_DIR, file.name), file.text);
      console.log(`wrote deploy/grafana/dashboards/${file.name}`);
    }
  }
}
