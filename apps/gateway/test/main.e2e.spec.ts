// The gateway as an operator starts it: its own process, settings in the environment, NATS for
// the services, run from source through tools/ts-run so the test needs no build.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const NODE_ARGS = ['--conditions=agora-source', '--import', './tools/ts-run/register.mjs', 'apps/gateway/src/main.ts'];
const NATS_URL = process.env['NATS_URL'] ?? '127.0.0.1:4222';

function start(args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [...NODE_ARGS, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return { child, output: () => output, exited };
}

async function until<T>(what: string, probe: () => T | undefined, timeoutMs: number, output: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen in ${timeoutMs} ms; output:\n${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the gateway process', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'agora-gateway-main-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('explains its settings with --help, and refuses an argument or a bad setting with exit 2', async () => {
    const help = start(['--help'], {});
    expect(await help.exited).toBe(0);
    expect(help.output()).toMatch(/^Usage: /);
    for (const name of ['PORT', 'METRICS_PORT', 'NATS_URL', 'EVENT_STORE', 'AGORA_REQUEST_TIMEOUT_MS']) expect(help.output()).toContain(name);

    const extra = start(['--port', '1'], {});
    expect(await extra.exited).toBe(2);
    expect(extra.output()).toMatch(/unknown argument --port/);
    const badPort = start([], { PORT: 'eighty', EVENT_STORE: 'jetstream' });
    expect(await badPort.exited).toBe(2);
    expect(badPort.output()).toMatch(/PORT="eighty"/);
  }, 60_000);

  it('listens where it says, closes reads by default, serves /health and /docs, and stops cleanly on SIGTERM', async () => {
    const gateway = start([], { PORT: '0', METRICS_PORT: '0', HOST: '127.0.0.1', NATS_URL, EVENT_STORE: `embedded:${join(dir, 'events')}` });
    try {
      const url = await until('listening', () => /listening on (http:\/\/\S+)/.exec(gateway.output())?.[1], 30_000, gateway.output);
      expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: 'ok', store: 'embedded', reads: { mode: 'closed', audience: 'agora' } });
      expect(gateway.output()).toMatch(/reads are closed/);
      const unsigned = await fetch(`${url}/v1/registry/agents`);
      expect(unsigned.status).toBe(401);
      expect(((await unsigned.json()) as { error: { code: string } }).error.code).toBe('unauthenticated');
      expect(unsigned.headers.get('www-authenticate')).toMatch(/^Bearer realm="agora", scope="read", error_description="expected an Agora read token/);
      const docs = (await (await fetch(`${url}/docs`)).json()) as { openapi: string; paths: Record<string, unknown> };
      expect(docs.openapi).toBe('3.1.0');
      expect(Object.keys(docs.paths)).toContain('/v1/registry/agents/{agentId}');
      gateway.child.kill('SIGTERM');
      expect(await gateway.exited).toBe(0);
      expect(gateway.output()).toMatch(/SIGTERM, stopping/);
    } finally {
      gateway.child.kill('SIGKILL');
    }
  }, 60_000);

  it('says loudly that reads are open when AGORA_READS=open, and answers a read without a token', async () => {
    const gateway = start([], { PORT: '0', METRICS_PORT: '0', HOST: '127.0.0.1', NATS_URL, EVENT_STORE: `embedded:${join(dir, 'events-open')}`, AGORA_READS: 'open' });
    try {
      const url = await until('listening', () => /listening on (http:\/\/\S+)/.exec(gateway.output())?.[1], 30_000, gateway.output);
      expect(gateway.output()).toMatch(/reads are OPEN \(AGORA_READS=open\).*trusted network only/);
      expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: 'ok', store: 'embedded', reads: { mode: 'open', audience: 'agora' } });
      gateway.child.kill('SIGTERM');
      expect(await gateway.exited).toBe(0);
    } finally {
      gateway.child.kill('SIGKILL');
    }
  }, 60_000);
});
