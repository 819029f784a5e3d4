/**
 * `agora debate open | list | show | watch`: the CLI run as a person runs it, against a gateway
 * with the registry and the debate service behind it; the seed's debate played by its two
 * debaters meanwhile.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exampleScript } from '@agora/domain-debate';
import { runToCompletion } from '@agora/testing';
import { playScript } from '../src/scripted.js';
import { startHarness, type Harness } from './support/harness.js';

describe('agora debate (the CLI against a gateway and the debate service)', () => {
  let h: Harness;
  let dir: string;
  let rootKey: string;
  const agora = (args: readonly string[]) => runToCompletion('apps/cli/src/main.ts', args, { AGORA_URL: h.gateway.url }, 60_000);

  beforeAll(async () => {
    h = await startHarness();
    dir = await mkdtemp(join(tmpdir(), 'agora-debate-cli-'));
    rootKey = join(dir, 'root.key.json');
    await writeFile(rootKey, JSON.stringify({ agentId: 'root', ...h.keys['root']! }), { mode: 0o600 });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('opens a debate, follows it live to its crux, then shows and lists it', async () => {
    const opened = await agora(['debate', 'open', 'Will Bitcoin replace gold as a store of value?', '--participant', 'saylor=Michael Saylor', '--participant', 'hayes=Arthur Hayes', '--key', rootKey, '--debate', 'cli-debate']);
    expect(opened.stderr).toBe('');
    expect(opened.code).toBe(0);
    expect(opened.stdout).toContain('debate cli-debate is open');

    const watching = agora(['debate', 'watch', 'cli-debate', '--interval', '100']);
    await playScript(h.client, 'cli-debate', exampleScript());
    const watched = await watching;
    expect(watched.code).toBe(0);
    expect(watched.stdout).toMatch(/^ {2}thread main: DISCOVERY\n#1 \[main DISCOVERY\] \S+ /m);
    expect(watched.stdout).toMatch(/^ {2}thread main: CRUX_LOCK\n#\d+ \[main CRUX_LOCK\]/m);
    expect(watched.stdout).toMatch(/^ {2}thread main: EVIDENCE\n#\d+ \[main EVIDENCE\]/m);
    expect(watched.stdout).toContain('thread main: CONVERGED');
    expect(watched.stdout).toMatch(/debate complete: converged\n$/);

    const shown = await agora(['debate', 'show', 'cli-debate']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('debate cli-debate: Will Bitcoin replace gold as a store of value?');
    expect(shown.stdout).toContain('complete, outcome converged, primary thread main');
    expect(shown.stdout).toMatch(/^ {2}crux: .+ \(validated\)$/m);
    expect(shown.stdout).toMatch(/^ {4}saylor: (YES|NO) /m);

    const listed = await agora(['debate', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^cli-debate {2}complete \(converged\) {2}main:\S+ {2}Will Bitcoin/m);
  }, 120_000);

  it('refuses a debate with fewer than two participants, or a participant without a persona, sending nothing', async () => {
    const one = await agora(['debate', 'open', 'A topic', '--participant', 'saylor=Michael Saylor', '--key', rootKey]);
    expect(one.code).toBe(2);
    expect(one.stderr).toContain('a debate needs 2 to 5 participants (--participant), got 1');
    const bare = await agora(['debate', 'open', 'A topic', '--participant', 'saylor', '--participant', 'hayes=Arthur Hayes', '--key', rootKey]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('must be <agentId>=<persona>');
    expect((await agora(['debate', 'show', 'no-such-debate'])).code).toBe(1);
  }, 60_000);
});
