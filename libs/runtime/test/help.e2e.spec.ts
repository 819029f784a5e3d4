// Every process's --help lists every setting it reads. The settings are found in the source a
// process runs (its app, the apps whose services standalone hosts, the shared libraries), where
// they are read: `env['NAME']`, `process.env['NAME']`, `intSetting(env, 'NAME', ...)` and the other
// *Setting helpers. A setting added without its line in --help fails here.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT, runToCompletion } from '@agora/testing';

// agora-debate is left out: it depends on @agora/providers for types only (the provider layer's
// settings are read by the demo's LLM runner, not by the process), which this source scan cannot tell.
const PROCESSES = ['registry', 'proposal', 'tribunal', 'voting', 'dialectic', 'chamber', 'projections', 'gateway', 'standalone'] as const;
/**
 * Files of shared libraries that hold one service's settings (there so that `agora audit` reads them
 * without importing the service): their settings are read only by the processes that run it.
 */
const ONE_SERVICE_SETTINGS: Record<string, readonly (typeof PROCESSES)[number][]> = {
  'libs/runtime/src/breaker-settings.ts': ['registry', 'standalone'],
  'libs/providers/src/chamber-policy.ts': ['chamber', 'standalone'],
};
const READ = /(?:\benv|process\.env)\[['"]([A-Z][A-Z0-9_]+)['"]\]|Setting(?:<[^>]*>)?\(\s*(?:env|process\.env)\s*,\s*['"]([A-Z][A-Z0-9_]+)['"]/g;

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The workspace libraries a package depends on, transitively (from the package.json files), libs/testing aside. */
function libsOf(packageDir: string, seen = new Set<string>()): Set<string> {
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    const lib = /^@agora\/(.+)$/.exec(name)?.[1];
    if (!lib || lib === 'testing' || seen.has(lib) || !existsSync(join(REPO_ROOT, 'libs', lib, 'package.json'))) continue;
    seen.add(lib);
    libsOf(join(REPO_ROOT, 'libs', lib), seen);
  }
  return seen;
}

/** The source files a process runs: its app, the services standalone hosts (not their own main.ts), the libraries they depend on. */
function sourcesOf(app: (typeof PROCESSES)[number]): string[] {
  const apps = app === 'standalone' ? PROCESSES : [app];
  const libs = new Set<string>();
  for (const a of apps) for (const lib of libsOf(join(REPO_ROOT, 'apps', a))) libs.add(lib);
  return [
    ...apps.flatMap((a) => tsFiles(join(REPO_ROOT, 'apps', a, 'src')).filter((f) => a === app || !f.endsWith('/main.ts'))),
    ...[...libs]
      .flatMap((l) => (existsSync(join(REPO_ROOT, 'libs', l, 'src')) ? tsFiles(join(REPO_ROOT, 'libs', l, 'src')) : []))
      .filter((file) => ONE_SERVICE_SETTINGS[relative(REPO_ROOT, file)]?.includes(app) ?? true),
  ];
}

function settingsRead(files: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const file of files) for (const m of readFileSync(file, 'utf8').matchAll(READ)) names.add((m[1] ?? m[2])!);
  return names;
}

describe('--help of every process', () => {
  it.each(PROCESSES)('agora-%s lists every setting it reads', async (app) => {
    const read = settingsRead(sourcesOf(app));
    expect(read.size).toBeGreaterThan(5);
    const help = await runToCompletion(`apps/${app}/src/main.ts`, ['--help'], {});
    expect(help.code).toBe(0);
    const missing = [...read].filter((name) => !new RegExp(`\\b${name}\\b`).test(help.stdout));
    expect(missing).toEqual([]);
  }, 60_000);
});
