/**
 * What the framework adapters' suites (ai-sdk, openai-agents, langgraph) share: a standalone Agora
 * process, an executive `deployer` whose tool calls are governed, three validators voting from their
 * SDK role loops on what the session's summary shows (a draft may be written, production may not, a
 * `drafts/silent-` file is left undecided), a workspace directory the tools write in, and the lookups of
 * a call's session by its digest. `audit()`, last, stops Agora and runs `agora audit` on its data.
 */
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { VotingSessionView } from '@agora/contracts';
import { generateKeyPair } from '@agora/identity';
import { REPO_ROOT, runCommand, runToCompletion, startAgoraProcess, waitFor, workspaceExample, type AgoraProcess } from '@agora/testing';
import { Agora, onVoteRequested, toolCallDigest, type RoleLoop } from '../src/index.js';
import { DOCUMENTED_KEYS, DOCUMENTED_URL, FILE_SAVER, frameworkDocExample, sdkDocFile } from './doc-examples.js';

export const VALIDATORS = ['vega', 'rigel', 'deneb'];

export interface GovernedFixture {
  dir: string;
  url: string;
  agora: AgoraProcess;
  /** The operator. */
  root: Agora;
  /** The executive whose tools are governed. */
  deployer: Agora;
  /** Every time a tool's own body ran, e.g. `writeFile drafts/plan.md`. */
  executed: string[];
  /** A path in the workspace. */
  file(path: string): string;
  /** The tools' body: writes the file (and says so in `executed`). */
  writeFile(path: string, content: string): { written: string; bytes: number };
  /** The deployer's session bound to this call, if any. */
  sessionFor(server: string, tool: string, args: Record<string, unknown>): Promise<VotingSessionView | undefined>;
  /** The session once the read model shows `done` of it. */
  sessionOnce(server: string, tool: string, args: Record<string, unknown>, done: (s: VotingSessionView) => boolean): Promise<VotingSessionView>;
  /**
   * Runs docs/sdk.md's example of `section` as written, as the deployer, from its own directory (which is returned),
   * set up as the page's "Before the examples" says: the SDK from the workspace, this Agora's gateway and the
   * deployer's key file in place of the clone's, the page's `workspace.policy.json`, the checkpointer copied from
   * examples/sdk, and `model` (TypeScript that defines the stand-in model) in place of the example's
   * `declare const model` line; `env` is added to its environment.
   */
  runDocExample(section: string, model: string, env?: Record<string, string>): Promise<{ cwd: string; code: number | null; stdout: string; stderr: string }>;
  /** Stops Agora and runs `agora audit` over its data directory: its exit code, the events it found fault with, its report. */
  audit(): Promise<{ code: number | null; findings: string[]; stdout: string }>;
  stop(): Promise<void>;
}

/**
 * In a describe block: the fixture started before its tests and stopped after them; `last` (called after the
 * tests) adds the test that stops Agora and checks that `agora audit` finds nothing wrong with the log they left.
 */
export function useGovernedFixture(name: string): { fixture: () => GovernedFixture; last: () => void } {
  let f: GovernedFixture | undefined;
  beforeAll(async () => {
    f = await startGovernedFixture(name);
  }, 120_000);
  afterAll(async () => {
    await f?.stop();
  });
  const fixture = () => f!;
  const last = () =>
    it('leaves a log that agora audit verifies (Agora stopped)', async () => {
      const audit = await fixture().audit();
      expect({ code: audit.code, findings: audit.findings }).toEqual({ code: 0, findings: [] });
      expect(audit.stdout).toMatch(/^ {2}voting +\d+ +\d+ +0$/m);
    }, 150_000);
  return { fixture, last };
}

export async function startGovernedFixture(name: string): Promise<GovernedFixture> {
  const dir = await mkdtemp(join(tmpdir(), `agora-${name}-e2e-`));
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const data = join(dir, 'data');
  const agora = await startAgoraProcess('apps/standalone/src/main.ts', 'agora', { AGORA_DATA_DIR: data, PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0' });
  const clients: Agora[] = [];
  const loops: RoleLoop[] = [];
  let stopped: Promise<void> | undefined;
  const stopAgora = () =>
    (stopped ??= (async () => {
      await Promise.all(loops.map((l) => l.stop()));
      await Promise.all(clients.map((c) => c.close()));
      await agora.stop();
    })());
  const stop = async () => {
    await stopAgora();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const url = /gateway listening on (http:\/\/[^\s]+) /.exec(agora.output())![1]!;
    const root = await Agora.connect({ url, signer: { keyFile: join(data, 'operator.key.json') } });
    clients.push(root);
    const keyFile = (agentId: string) => join(dir, `${agentId}.key.json`);
    const register = async (agentId: string, roles: ('executive' | 'validator')[], trustScore: number) => {
      const key = generateKeyPair();
      writeFileSync(keyFile(agentId), JSON.stringify({ agentId, ...key }), { mode: 0o600 });
      await root.send('RegisterAgent', { agentId, publicKey: key.publicKey, displayName: agentId, roles, constitutions: [], specializations: [], trustScore });
    };
    await register('deployer', ['executive'], 500);
    for (const v of VALIDATORS) await register(v, ['validator'], 800);
    // The validators read the call in the session's summary: a file under drafts/ may be written, one under prod/ may not.
    for (const v of VALIDATORS) {
      const sdk = await Agora.connect({ url, signer: { keyFile: keyFile(v) } });
      clients.push(sdk);
      const loop = onVoteRequested(sdk, async ({ session }) => {
        if ((session.summary ?? '').includes('"path":"drafts/silent-')) return undefined; // nobody votes
        const production = (session.summary ?? '').includes('"path":"prod/');
        return { decision: production ? 'deny' : 'approve', reasoning: production ? 'an agent does not write production config' : 'a draft is harmless', confidence: 0.9 };
      });
      loops.push(loop);
      await loop.ready;
    }
    const deployer = await Agora.connect({ url, signer: { keyFile: keyFile('deployer') } });
    clients.push(deployer);
    const executed: string[] = [];
    const file = (path: string) => join(workspace, path);
    const sessionFor = async (server: string, tool: string, args: Record<string, unknown>) => {
      const digest = toolCallDigest({ server, tool, arguments: args, caller: 'deployer' });
      const { sessions } = await root.query('ListVotingSessions', { requestingAgent: 'deployer' });
      const views = await Promise.all(sessions.map((s) => root.query('GetVotingSession', { sessionId: s.sessionId })));
      return views.find((s) => s.toolCall?.callDigest === digest);
    };
    return {
      dir,
      url,
      agora,
      root,
      deployer,
      executed,
      file,
      writeFile(path, content) {
        executed.push(`writeFile ${path}`);
        mkdirSync(dirname(file(path)), { recursive: true });
        writeFileSync(file(path), content);
        return { written: path, bytes: content.length };
      },
      sessionFor,
      async runDocExample(section, model, env = {}) {
        const cwd = join(dir, `example-${section.replace(/\W+/g, '-').toLowerCase()}`);
        mkdirSync(cwd);
        symlinkSync(join(REPO_ROOT, 'node_modules'), join(cwd, 'node_modules'));
        copyFileSync(FILE_SAVER, join(cwd, 'file-saver.ts'));
        writeFileSync(join(cwd, 'workspace.policy.json'), JSON.stringify(sdkDocFile('workspace.policy.json')));
        const example = frameworkDocExample(section);
        if (!/^declare const model\b.*$/m.test(example)) throw new Error(`docs/sdk.md's ${section} example declares no model`);
        if (!example.includes(`${DOCUMENTED_KEYS}/deployer.key.json`)) throw new Error(`docs/sdk.md's ${section} example does not sign with the demo's deployer key`);
        const pointed = example.replaceAll(`${DOCUMENTED_KEYS}/deployer.key.json`, keyFile('deployer')).replaceAll(DOCUMENTED_URL, url);
        writeFileSync(join(cwd, 'example.ts'), workspaceExample(pointed).replace(/^declare const model\b.*$/m, model));
        const run = await runCommand(process.execPath, ['--conditions=agora-source', '--import', join(REPO_ROOT, 'tools', 'ts-run', 'register.mjs'), 'example.ts'], { cwd, env, timeoutMs: 60_000 });
        return { cwd, ...run };
      },
      async sessionOnce(server, tool, args, done) {
        await waitFor(async () => {
          const session = await sessionFor(server, tool, args);
          return session !== undefined && done(session);
        }, `the session of ${tool} ${JSON.stringify(args)}`, 30_000);
        return (await sessionFor(server, tool, args))!;
      },
      async audit() {
        await stopAgora(); // the audit reads the log files, which the running process holds
        const run = await runToCompletion('apps/cli/src/main.ts', ['audit', '--workers', '0'], { AGORA_DATA_DIR: data, AGORA_OPERATOR_KEY_FILE: join(data, 'operator.key.json') }, 120_000);
        return { code: run.code, findings: run.stdout.split('\n').filter((l) => /@\d+ \(position/.test(l)), stdout: run.stdout };
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
