/**
 * The README's tribunal demo as a newcomer runs it, then audited by someone who does not know how
 * Agora was started: `npm start` with the defaults, stopped; `npm start` again on the same data with
 * the demo's tribunal policy, and `npm run demo:tribunal`; then `agora audit` with no policy in its
 * environment. The log records each policy the proposal service ran under, so the audit decides
 * every proposal under the policy of its time: exit 0, no findings.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runToCompletion, startAgoraProcess } from '@agora/testing';

/** What README.md says to start Agora with for the tribunal demo: a round may expire in seconds. */
const TRIBUNAL_POLICY = JSON.stringify({ minRoundDeadlineMs: 1000 });
const NO_PROVIDER_KEYS = { OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', GOOGLE_GENERATIVE_AI_API_KEY: '' };

describe("the README's tribunal demo, audited with a bare environment (e2e)", () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-audit-settings-e2e-'));
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('npm start, stop, npm start with the demo policy, the demo, then agora audit with no policy: exit 0, no findings', async () => {
    const data = join(dir, 'data');
    const agora = (env: Record<string, string> = {}) => startAgoraProcess('apps/standalone/src/main.ts', 'agora', { AGORA_DATA_DIR: data, PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', AGORA_READS: '', ...NO_PROVIDER_KEYS, ...env }, 120_000);

    const first = await agora();
    expect(first.output()).toMatch(/tribunal settings [0-9a-f]{16}: recorded in settings-tribunal\n/);
    await first.stop();

    const second = await agora({ AGORA_TRIBUNAL_POLICY: TRIBUNAL_POLICY });
    try {
      expect(second.output()).toMatch(/tribunal settings [0-9a-f]{16}: recorded in settings-tribunal, replacing [0-9a-f]{16}/);
      const url = /gateway listening on (http:\/\/[^\s]+) /.exec(second.output())![1]!;
      const demo = await runToCompletion('tools/demo/src/main.ts', ['tribunal', '--url', url, '--data', data, '--metrics', `${url}/metrics`], { AGORA_READS: '', ...NO_PROVIDER_KEYS }, 240_000);
      if (demo.code !== 0) throw new Error(`the tribunal demo failed (${demo.code}):\n${demo.stdout}${demo.stderr}`);
    } finally {
      await second.stop();
    }

    // The auditor's environment names the data directory and nothing else: no policy, no key (the
    // operator's and the services' key files are found there, as `npm start` made them).
    const audit = await runToCompletion('apps/cli/src/main.ts', ['audit', '--json', '--workers', '1'], { AGORA_DATA_DIR: data }, 120_000);
    const report = JSON.parse(audit.stdout) as { findings: unknown[]; protocols: Record<string, { events: number }> };
    expect(report.findings).toEqual([]);
    expect(audit.code).toBe(0);
    expect(report.protocols['tribunal']!.events).toBeGreaterThan(20);
    // Every service that reads a setting recorded it: the first start, then the tribunal policy the demo ran under.
    expect(report.protocols['settings']!.events).toBe(5);
  }, 600_000);
});
