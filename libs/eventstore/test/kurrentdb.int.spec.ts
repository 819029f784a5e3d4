import { spawn } from 'node:child_process';
import { openKurrentDbEventStore } from '../src/kurrentdb/index.js';
import { describeEventStoreContract } from './contract.js';
import { startSilentPorts, type SilentPorts } from './support/ports.js';

const url = process.env['KURRENTDB_URL'];

if (url) {
  describeEventStoreContract('kurrentdb', () => openKurrentDbEventStore({ connectionString: url }), {
    // Inside the first record of the log, and far past its end.
    neverProduced: ['5/5', '999999999999/999999999999'],
    processConfig: () => ({ kind: 'kurrentdb', connectionString: url }),
    openWriter: () => openKurrentDbEventStore({ connectionString: url }),
  });
} else {
  console.warn(
    "KurrentDB contract suite skipped: set KURRENTDB_URL to run it (docker compose up -d --wait kurrentdb && KURRENTDB_URL='kurrentdb://127.0.0.1:2113?tls=false' npm run test:jest -- libs/eventstore)",
  );
  describe.skip('event store contract: kurrentdb (KURRENTDB_URL not set)', () => {
    it('runs only against a KurrentDB server', () => undefined);
  });
}

// No server needed: a refused or silent port is real, and so is the process that must exit.
describe('kurrentdb adapter without a server', () => {
  let ports: SilentPorts;
  let silentPort: number;
  let closedPort: number;

  beforeAll(async () => {
    ports = await startSilentPorts();
    ({ silentPort, closedPort } = ports);
  });
  afterAll(() => ports.close());

  /** Runs the open in a child process; resolves with what it printed and how it ended, or 'still running' after `boundMs`. */
  async function openInChild(connectionString: string, boundMs: number): Promise<{ output: string; exit: number | string | null }> {
    const child = spawn(process.execPath, ['--conditions=agora-source', '--import', './tools/ts-run/register.mjs', 'libs/eventstore/test/fixtures/kurrentdb-open-fails.ts', connectionString, '1000'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | string | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
    let timer: NodeJS.Timeout | undefined;
    const exit = await Promise.race([exited, new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still running'), boundMs)))]);
    clearTimeout(timer);
    if (exit === 'still running') child.kill('SIGKILL');
    return { output, exit };
  }

  it('a process whose open failed exits by itself (nothing is left holding it)', async () => {
    expect(await openInChild(`kurrentdb://127.0.0.1:${closedPort}?tls=false`, 20_000)).toEqual({ output: 'refused: StoreUnavailable\n', exit: 0 });
    // A read already waiting on a silent server ends at the native reader's own timeout (a few seconds): close() cannot cut it short.
    expect(await openInChild(`kurrentdb://127.0.0.1:${silentPort}?tls=false`, 40_000)).toEqual({ output: 'refused: StoreUnavailable\n', exit: 0 });
  }, 70_000);
});
