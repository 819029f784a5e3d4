/**
 * @agora/sdk as a user gets it: `npm run sdk:pack` builds the package (one ESM bundle, its
 * declarations, public npm dependencies only) and `npm pack`s it as `npm run release:pack` does (its
 * SHA-256 recorded in SHA256SUMS beside it); the tarball is installed with npm
 * into a fresh project outside the repository, where no workspace package can be found. There the
 * example program (published/example.ts) is type-checked strictly against the installed .d.ts
 * (skipLibCheck off: a missing declaration or an @agora/* import left in one fails it) and run with
 * Node against a running Agora (the standalone process): key files, a command, a query, a wait.
 * The README's SDK example and docs/sdk.md's are type-checked there too, and run as a reader of the
 * README runs them: after the tribunal demo, against the same Agora, in the reader's own project, the
 * README's example naming the demo's keys where the clone keeps them.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { generateKeyPair } from '@agora/identity';
import { REPO_ROOT, agoraCommandLine, docsExample, runCommand, sourceArgs, startAgoraProcess, type AgoraProcess } from '@agora/testing';
import { Agora } from '../src/index.js';
import { DOCUMENTED_KEYS, DOCUMENTED_URL, FILE_SAVER, PUBLISHED, frameworkDocExample, sdkDocFile } from './doc-examples.js';

const VALIDATORS = ['aegis', 'ledger', 'pilot', 'sage', 'tally'];
const rootPackage = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
const gatewayPackage = JSON.parse(readFileSync(join(REPO_ROOT, 'apps', 'gateway', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
/** The versions the workspace pins (the packed SDK depends on the same). */
const PINNED = { ...rootPackage.devDependencies, ...rootPackage.dependencies };
/**
 * Beside the tarball: the optional peer its declarations import (`ai`), the frameworks docs/sdk.md's examples
 * import (`@openai/agents`, `@langchain/core`, `@langchain/langgraph`; the SDK's declarations name none of
 * them), the A2A SDK docs/a2a.md's client imports (the gateway's version), Node's types, and the json-schema
 * types `ai`'s own declarations need when libraries are checked.
 */
const BESIDE = [
  ...['ai', '@openai/agents', '@openai/agents-core', '@langchain/core', '@langchain/langgraph'].map((name) => `${name}@${PINNED[name]}`),
  `@a2a-js/sdk@${gatewayPackage.dependencies['@a2a-js/sdk']}`,
  `@types/node@${PINNED['@types/node']}`,
  '@types/json-schema@7.0.15',
];

const succeeded = (what: string, run: { code: number | null; stdout: string; stderr: string }) => {
  if (run.code !== 0) throw new Error(`${what} exited with ${run.code}:\n${run.stdout}${run.stderr}`);
  return run.stdout;
};

/** Every file under `dir`, relative to it. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1));


/** The README's SDK example ("Connect your agents"), as written: it imports the published package. */
function readmeSnippet(): string {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const snippet = new RegExp(`\`\`\`ts\n(import [^\n]* from '${PUBLISHED}';\n[\\s\\S]*?)\`\`\``).exec(readme)?.[1];
  if (snippet === undefined) throw new Error(`README.md shows no TypeScript example importing '${PUBLISHED}'`);
  return `${snippet}export {};\n`;
}

/** docs/sdk.md's command-and-query example, after the connection its first example makes for alice. */
function sdkDocSnippet(): string {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'sdk.md'), 'utf8');
  const snippet = /```ts\n(const proposalId = [\s\S]*?)```/.exec(doc)?.[1];
  if (snippet === undefined) throw new Error('docs/sdk.md shows no command-and-query example');
  return `import { Agora } from '${PUBLISHED}';\n\nconst alice = await Agora.connect({ url: '${DOCUMENTED_URL}', signer: { keyFile: 'data/alice.key.json' } });\n${snippet}await alice.close();\nexport {};\n`;
}

/** A compiled example with the documented gateway (and, where it names them, the clone's demo keys) replaced by the test's. */
function pointedAt(file: string, url: string, keys?: string): string {
  let text = readFileSync(file, 'utf8');
  if (!text.includes(DOCUMENTED_URL)) throw new Error(`${file} does not name ${DOCUMENTED_URL}`);
  if (keys !== undefined) {
    if (!text.includes(DOCUMENTED_KEYS)) throw new Error(`${file} does not name ${DOCUMENTED_KEYS}`);
    text = text.replaceAll(DOCUMENTED_KEYS, keys);
  }
  const run = file.replace(/\.js$/, '.run.js');
  writeFileSync(run, text.replaceAll(DOCUMENTED_URL, url));
  return run;
}

describe('@agora/sdk packed and installed from its tarball (e2e)', () => {
  let dir: string;
  let project: string;
  let installed: string;
  let agora: AgoraProcess | undefined;
  let root: Agora | undefined;
  let url: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-sdk-published-'));
    const packed = succeeded('npm run sdk:pack', await runCommand(process.execPath, ['tools/sdk-pack.mjs', '--pack', join(dir, 'tarball')], { timeoutMs: 240_000 }));
    const tarball = packed.trim().split('\n').pop()!;
    // Packed as npm run release:pack packs it: its SHA-256 recorded beside it, as sha256sum -c reads it.
    const digest = createHash('sha256').update(readFileSync(tarball)).digest('hex');
    expect(readFileSync(join(dir, 'tarball', 'SHA256SUMS'), 'utf8')).toBe(`${digest}  ${basename(tarball)}\n`);
    project = join(dir, 'project');
    await mkdir(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'sdk-user', private: true, type: 'module' }));
    const compilerOptions = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, noUncheckedIndexedAccess: true, outDir: 'out', types: ['node'] };
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['example.ts', 'readme.ts', 'sdk-doc.ts'] }));
    // The framework examples import the frameworks whole (`@openai/agents` brings `openai`'s declarations), and
    // docs/a2a.md's client the A2A SDK: checked against the SDK's declarations (which the strict project above
    // checks, reading no framework's) without checking every library again, with the tsconfig.json docs/sdk.md
    // gives for them (its validators.ts beside them).
    const documented = (sdkDocFile('tsconfig.json') as { compilerOptions: Record<string, unknown> }).compilerOptions;
    writeFileSync(join(project, 'tsconfig.frameworks.json'), JSON.stringify({ compilerOptions: { ...documented, outDir: 'out-frameworks' }, files: ['openai-agents-doc.ts', 'langgraph-doc.ts', 'a2a-doc.ts', 'validators-doc.ts'] }));
    writeFileSync(join(project, 'validators-doc.ts'), `${frameworkDocExample('Before the examples')}export {};\n`);
    // The example program is the workspace's (it imports @agora/sdk there); a user imports the published name.
    writeFileSync(join(project, 'example.ts'), readFileSync(join(REPO_ROOT, 'libs', 'sdk', 'test', 'published', 'example.ts'), 'utf8').replaceAll("from '@agora/sdk'", `from '${PUBLISHED}'`));
    writeFileSync(join(project, 'readme.ts'), readmeSnippet());
    writeFileSync(join(project, 'sdk-doc.ts'), sdkDocSnippet());
    // The framework adapters' examples (type-checked here; their e2e suites run them with stand-in models), and the checkpointer the LangGraph one imports.
    writeFileSync(join(project, 'openai-agents-doc.ts'), frameworkDocExample('OpenAI Agents SDK'));
    writeFileSync(join(project, 'langgraph-doc.ts'), frameworkDocExample('LangGraph'));
    writeFileSync(join(project, 'file-saver.ts'), readFileSync(FILE_SAVER, 'utf8'));
    // docs/a2a.md's client: signed with the SDK's signCommand and readToken (apps/standalone/test/a2a.e2e.spec.ts runs it).
    writeFileSync(join(project, 'a2a-doc.ts'), `${docsExample('a2a.md', 'A client')}export {};\n`);
    succeeded('npm install', await runCommand('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball, ...BESIDE], { cwd: project, timeoutMs: 240_000 }));
    installed = join(project, 'node_modules', PUBLISHED);
  }, 600_000);

  afterAll(async () => {
    await root?.close();
    await agora?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("installs as one package: declarations beside the bundle, public npm dependencies only, no workspace import, no NestJS, no agent framework's types", () => {
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { name: string; license: string; exports: Record<string, { types: string }>; dependencies: Record<string, string>; peerDependenciesMeta: Record<string, { optional: boolean }> };
    expect({ name: manifest.name, license: manifest.license }).toEqual({ name: PUBLISHED, license: 'Apache-2.0' });
    expect(readFileSync(join(installed, 'LICENSE'), 'utf8')).toMatch(/Apache License\s+Version 2\.0/);
    expect(readFileSync(join(installed, manifest.exports['.']!.types), 'utf8')).toContain('export { Agora');
    expect(Object.keys(manifest.dependencies).filter((name) => name.startsWith('@agora/') || name.startsWith('@nestjs/'))).toEqual([]);
    expect(manifest.dependencies['zod']).toBe(PINNED['zod']);
    expect(manifest.peerDependenciesMeta['ai']).toEqual({ optional: true });
    const files = filesUnder(installed);
    expect(files.filter((file) => file.endsWith('.d.ts')).length).toBeGreaterThan(10);
    const workspaceImports = files.filter((file) => /\.(js|d\.ts)$/.test(file) && /(from\s*|import\s*\(\s*)['"]@agora\//.test(readFileSync(join(installed, file), 'utf8')));
    expect(workspaceImports).toEqual([]);
    // The framework adapters are typed by the members they use: a strict check of the declarations reads no framework's.
    const frameworkImports = files.filter((file) => file.endsWith('.d.ts') && /(from\s*|import\s*\(\s*)['"]@(openai|langchain)\//.test(readFileSync(join(installed, file), 'utf8')));
    expect(frameworkImports).toEqual([]);
    expect(readFileSync(join(installed, 'index.js'), 'utf8')).not.toMatch(/@nestjs\//);
  });

  it("type-checks a program, the README's example and docs/sdk.md's against the installed declarations with tsc, strictly", async () => {
    const tsc = await runCommand(process.execPath, [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], { cwd: project, timeoutMs: 240_000 });
    expect(`${tsc.stdout}${tsc.stderr}`).toBe('');
    expect(tsc.code).toBe(0);
  }, 300_000);

  it("type-checks docs/sdk.md's OpenAI Agents SDK and LangGraph examples and its validators, and docs/a2a.md's client, against the installed package and frameworks, with the page's tsconfig.json", async () => {
    const tsc = await runCommand(process.execPath, [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(project, 'tsconfig.frameworks.json')], { cwd: project, timeoutMs: 240_000 });
    expect(`${tsc.stdout}${tsc.stderr}`).toBe('');
    expect(tsc.code).toBe(0);
  }, 300_000);

  it('runs that program on Node against a running Agora: validators vote from their role loops, the deployer waits for the decision', async () => {
    // Started as the README says for the tribunal demo, which the README's example runs after.
    agora = await startAgoraProcess('apps/standalone/src/main.ts', 'agora', { AGORA_DATA_DIR: join(dir, 'data'), PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', AGORA_TRIBUNAL_POLICY: JSON.stringify({ minRoundDeadlineMs: 1000 }) });
    url = /gateway listening on (http:\/\/[^\s]+) /.exec(agora.output())![1]!;
    root = await Agora.connect({ url, signer: { keyFile: join(dir, 'data', 'operator.key.json') } });
    const keys = join(dir, 'keys');
    await mkdir(keys);
    const register = async (agentId: string, role: 'executive' | 'validator') => {
      const key = generateKeyPair();
      writeFileSync(join(keys, `${agentId}.key.json`), JSON.stringify({ agentId, ...key }), { mode: 0o600 });
      await root!.send('RegisterAgent', { agentId, publicKey: key.publicKey, displayName: agentId, roles: [role], constitutions: [], specializations: [], trustScore: 800 });
    };
    await register('deployer', 'executive');
    for (const validator of VALIDATORS) await register(validator, 'validator');
    const run = await runCommand(process.execPath, [join(project, 'out', 'example.js')], { cwd: project, env: { AGORA_URL: url, AGORA_KEYS: keys, REQUEST_ID: 'published-sdk' }, timeoutMs: 180_000 });
    const printed = JSON.parse(succeeded('the example', run).trim().split('\n').pop()!) as { sessionId: string; decision: string; votes: number; validators: number };
    expect(printed.decision).toBe('approve');
    expect(printed.votes).toBe(printed.validators);
    const session = await root.query('GetVotingSession', { sessionId: printed.sessionId });
    expect(session.requestId).toBe('published-sdk');
    expect(session.votes.map((v) => v.validator).every((v) => VALIDATORS.includes(v))).toBe(true);
  }, 300_000);

  it("runs the README's example after the tribunal demo, in the user's project naming the clone's demo keys, and docs/sdk.md's for an executive", async () => {
    expect(url).toBeDefined();
    // The README's order: the tribunal demo registers the reviewers and keeps their keys under the clone's data/demo-keys.
    const data = join(dir, 'clone-data');
    const demo = await runCommand(process.execPath, [...sourceArgs('tools/demo/src/main.ts'), 'tribunal', '--url', url, '--key', join(dir, 'data', 'operator.key.json'), '--data', data, '--metrics', `${url}/metrics`], { timeoutMs: 240_000 });
    succeeded('the tribunal demo', demo);
    const readme = await runCommand(process.execPath, [pointedAt(join(project, 'out', 'readme.js'), url, join(data, 'demo-keys'))], { cwd: project, timeoutMs: 120_000 });
    expect(succeeded("the README's example", readme).trim()).toMatch(/^tooltips-\d+: approved$/);

    const alice = generateKeyPair();
    // docs/sdk.md's example reads data/alice.key.json, in the project it runs from.
    await mkdir(join(project, 'data'), { recursive: true });
    writeFileSync(join(project, 'data', 'alice.key.json'), JSON.stringify({ agentId: 'alice', ...alice }), { mode: 0o600 });
    await root!.send('RegisterAgent', { agentId: 'alice', publicKey: alice.publicKey, displayName: 'alice', roles: ['executive'], constitutions: [], specializations: [], trustScore: 500 });
    const doc = await runCommand(process.execPath, [pointedAt(join(project, 'out', 'sdk-doc.js'), url)], { cwd: project, timeoutMs: 60_000 });
    expect(succeeded("docs/sdk.md's example", doc).trim()).toMatch(/^(review|escalated|approved)$/);
  }, 400_000);

  it("runs docs/a2a.md's steps after the tribunal demo, then its client, which ends with the tribunal's verdict by itself", async () => {
    expect(url).toBeDefined();
    // Its agora lines as printed, from the directory that holds Agora's data/ (the clone's root, for a reader).
    const section = /\n## A client\n([\s\S]*?)\n## /.exec(readFileSync(join(REPO_ROOT, 'docs', 'a2a.md'), 'utf8'))![1]!;
    const lines = section.split('\n').filter((line) => line.startsWith('npm run agora -- '));
    expect(lines.map((line) => line.split(' ').slice(4, 6).join(' '))).toEqual(['keys new', 'agents register']);
    for (const line of lines) succeeded(line, await runCommand('/bin/sh', ['-c', agoraCommandLine(line)], { cwd: dir, env: { AGORA_URL: url }, timeoutMs: 60_000 }));
    // The client, compiled from the page (the reader's Node runs the .mts as it is), with envoy's key; the reviewers are silent now.
    const client = await runCommand(process.execPath, [join(project, 'out-frameworks', 'a2a-doc.js')], { cwd: project, env: { AGORA_URL: url, AGORA_KEY_FILE: join(dir, 'data', 'envoy.key.json') }, timeoutMs: 60_000 });
    expect(succeeded("docs/a2a.md's client", client)).toMatch(/^TASK_STATE_COMPLETED The tribunal's verdict: approved$/m);
  }, 120_000);
});
