/**
 * docs/sdk.md's examples of the framework adapters, as written: published.e2e.spec.ts type-checks them against
 * the installed tarball, and each framework's e2e suite runs its own (runDocExample in governed-fixture.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PUBLISHED_SDK, REPO_ROOT } from '@agora/testing';

/** The SDK's name on the registry, as tools/sdk-pack.mjs publishes it and the examples import it. */
export const PUBLISHED = PUBLISHED_SDK;
/** Where the examples of the docs look for Agora: replaced by the test's own gateway when they run. */
export const DOCUMENTED_URL = 'http://127.0.0.1:8080';
/** Where the examples of the docs name the clone's demo keys (`npm run demo:*` keeps them in data/demo-keys): replaced by the test's. */
export const DOCUMENTED_KEYS = '/path/to/agora/data/demo-keys';
/** The checkpointer docs/sdk.md's LangGraph example imports from `./file-saver.js`, copied from the clone as the page says. */
export const FILE_SAVER = join(REPO_ROOT, 'examples', 'sdk', 'file-saver.ts');

/** The JSON block of docs/sdk.md that follows a line naming `file` (`workspace.policy.json`, `tsconfig.json`), parsed. */
export function sdkDocFile(file: string): unknown {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'sdk.md'), 'utf8');
  const block = new RegExp(`\`${file.replace(/\./g, '\\.')}\`[^\n]*\n+\`\`\`json\n([\\s\\S]*?)\`\`\``).exec(doc)?.[1];
  if (block === undefined) throw new Error(`docs/sdk.md shows no ${file}`);
  return JSON.parse(block) as unknown;
}

/** The first TypeScript block of docs/sdk.md's section `### <section>`. */
export function frameworkDocExample(section: string): string {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'sdk.md'), 'utf8');
  const snippet = new RegExp(`\n### ${section}\n(?:(?!\n#)[\\s\\S])*?\`\`\`ts\n([\\s\\S]*?)\`\`\``).exec(doc)?.[1];
  if (snippet === undefined) throw new Error(`docs/sdk.md's section ${section} shows no TypeScript example`);
  return `${snippet}export {};\n`;
}
