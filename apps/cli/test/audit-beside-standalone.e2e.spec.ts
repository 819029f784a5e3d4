/**
 * `agora audit --follow` beside a running `npm start`, as an auditor runs it from a second terminal:
 * the standalone holds its embedded log's lock, the audit opens the log read-only on the same data
 * directory, and a commit the standalone makes afterwards (an agent registered) is verified within a
 * second of its being acknowledged, with no finding; a one-off `agora audit` reads it there too.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { openEmbeddedEventStore } from '@agora/eventstore';
import { processEnvironment, REPO_ROOT, runToCompletion, sourceArgs, startStandalone, type Standalone } from '@agora/testing';

/** The value of a series without labels in Prometheus text. */
function gauge(text: string, name: string): number | undefined {
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : undefined;
}

describe('agora audit beside npm start (e2e)', () => {
  let agora: Standalone | undefined;

  afterAll(async () => {
    await agora?.stop();
  });

  it('follows the running standalone: a commit it makes is verified within a second, and a one-off audit passes', async () => {
    agora = await startStandalone({ label: 'audit-beside' });
    const env = { AGORA_DATA_DIR: agora.dataDir, METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' };

    const audit = spawn(process.execPath, [...sourceArgs('apps/cli/src/main.ts'), 'audit', '--follow'], { cwd: REPO_ROOT, env: processEnvironment(env), stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => audit.once('exit', (code) => resolve(code)));
    let stdout = '';
    let stderr = '';
    audit.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    try {
      let timer: NodeJS.Timeout | undefined;
      const metricsUrl = await new Promise<string>((resolve, reject) => {
        createInterface({ input: audit.stderr }).on('line', (line) => {
          stderr += `${line}\n`;
          const url = /metrics: (http:\/\/\S+)/.exec(stderr)?.[1];
          if (url && /following the log/.test(stderr)) resolve(url);
        });
        void exited.then((code) => reject(new Error(`agora audit --follow exited (${code}) before following:\n${stdout}${stderr}`)));
        timer = setTimeout(() => reject(new Error(`agora audit --follow did not follow within 60 s:\n${stdout}${stderr}`)), 60_000);
      }).finally(() => clearTimeout(timer));
      const verified = async () => gauge(await (await fetch(metricsUrl)).text(), 'agora_audit_verified_position_events');

      await agora.register({ carol: { roles: ['executive'], trustScore: 500 } });
      const acknowledged = Date.now();
      // The log's length now, read beside the standalone as the audit reads it.
      const reader = await openEmbeddedEventStore({ directory: join(agora.dataDir, 'events'), readOnly: true });
      const head = Number(await reader.headPosition());
      await reader.close();
      let at: number | undefined;
      while (at === undefined && Date.now() - acknowledged < 10_000) {
        if ((await verified())! >= head) at = Date.now();
        else await new Promise((r) => setTimeout(r, 10));
      }
      expect(at).toBeDefined();
      expect(at! - acknowledged).toBeLessThan(1_000);
      expect(stdout).not.toMatch(/finding:/);

      audit.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(stdout).toMatch(/^no findings$/m);
    } finally {
      audit.kill('SIGKILL');
    }

    // The one-off audit, the standalone still running.
    const once = await runToCompletion('apps/cli/src/main.ts', ['audit', '--json'], { AGORA_DATA_DIR: agora.dataDir }, 120_000);
    const report = JSON.parse(once.stdout) as { events: number; findings: unknown[] };
    expect(report.findings).toEqual([]);
    expect(once.code).toBe(0);
    expect(report.events).toBeGreaterThan(0);
  }, 240_000);
});
