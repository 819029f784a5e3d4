// npm test: every check and every test, on a fresh machine, in one command. See --help.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureDebianPackages, privateNatsServer, sharedNatsServer, sharedPostgres } from './setup.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const STAGES = ['unit', 'int', 'e2e'];
const CHECKS = ['typecheck', 'lint', 'build'];
export const TIMINGS_FILE = join(ROOT, 'test-results', 'timings.jsonl');
/**
 * Int and e2e suites mostly wait (on servers, processes, the network), so two at a time take about half
 * as long on two cores (CPU about 70-80% busy); each starts its own servers on free ports.
 */
const DEFAULT_WORKERS = Math.min(2, availableParallelism());

const HELP = `npm test [-- options] [-- jest arguments]

Makes the machine ready for the tests, then runs the checks and the tests in stages, stopping at the
first that fails:
  set-up     Node 20 or newer; the nats-server the tests' private servers and clusters run
             (NATS_SERVER_BIN, else the newest Debian server, fetched once into .cache/nats-server/);
             a NATS with JetStream on 127.0.0.1:4222 (NATS_URL), or Debian's /usr/sbin/nats-server
             started for the run; a PostgreSQL (TEST_POSTGRES_URL, default postgres@127.0.0.1:5432),
             or a cluster of the run's own from Debian's postgresql; Debian's prometheus,
             docker-compose, python3-cryptography, golang-go, golang-github-nats-io-go-nats-dev and
             chromium when missing (apt-get: needs root; otherwise it names what to install by hand). What is there already is kept.
  checks     typecheck, lint, build
  unit       *.unit.spec.ts (pure)
  int        *.int.spec.ts (real NATS, real stores)
  e2e        *.e2e.spec.ts (processes started as a user would)
Each stage is a Jest run of its own. Every suite's duration goes to test-results/timings.jsonl; the run
ends with each step's time and the 15 slowest suites.

Options:
  --only <steps>   comma-separated steps to run, of: setup, checks, unit, int, e2e (default: all)
  --no-setup       the same as --only checks,unit,int,e2e
  --workers <n>    Jest workers for the int and e2e stages (default ${DEFAULT_WORKERS}: suites ${DEFAULT_WORKERS === 1 ? 'one at a time' : 'two at a time'};
                   1 runs one suite at a time, as when looking for a suite that disturbs another)
  --help           this text
Anything after a second \`--\` goes to every Jest run (e.g. a path pattern).`;

function parse(argv) {
  const options = { steps: ['setup', 'checks', ...STAGES], workers: DEFAULT_WORKERS, jest: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value (see --help)`);
      return next;
    };
    if (arg === '--help' || arg === '-h') options.help = true;
    else if (arg === '--no-setup') options.steps = options.steps.filter((s) => s !== 'setup');
    else if (arg === '--only') {
      const steps = value().split(',').filter(Boolean);
      const unknown = steps.filter((s) => !['setup', 'checks', ...STAGES].includes(s));
      if (unknown.length > 0 || steps.length === 0) throw new Error(`--only takes setup, checks, unit, int, e2e; not ${unknown.join(', ') || 'nothing'}`);
      options.steps = steps;
    } else if (arg === '--workers') {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 1) throw new Error(`--workers takes a whole number of 1 or more, not ${argv[i]}`);
      options.workers = n;
    } else if (arg === '--') {
      options.jest = argv.slice(i + 1);
      break;
    } else throw new Error(`unknown option ${arg} (see --help)`);
  }
  return options;
}

const say = (line) => process.stdout.write(`\n== ${line}\n`);
const note = (line) => process.stdout.write(`   ${line}\n`);

function run(command, args, env) {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: 'inherit', env });
    const forward = (signal) => child.kill(signal);
    process.on('SIGINT', forward).on('SIGTERM', forward);
    child.once('exit', (code, signal) => {
      process.off('SIGINT', forward).off('SIGTERM', forward);
      resolvePromise(code ?? (signal ? 1 : 0));
    });
  });
}

/** The arguments of one stage's Jest run. */
export function jestArgs(stage, workers, extra) {
  // Workers, not in-band: each worker is a fresh process that Jest replaces once it holds more than the
  // idle memory limit, so a long stage's heap does not grow with every suite it has run.
  return ['--experimental-vm-modules', '--no-warnings=ExperimentalWarning', 'node_modules/jest/bin/jest.js', '--selectProjects', stage, `--maxWorkers=${stage === 'unit' ? 1 : workers}`, ...extra];
}

async function main() {
  const options = parse(process.argv.slice(2));
  if (options.help) return void console.log(HELP);
  const env = { ...process.env, NATS_URL: process.env.NATS_URL ?? 'nats://127.0.0.1:4222', TEST_POSTGRES_URL: process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' };
  const times = [];
  const timed = async (name, step) => {
    const start = Date.now();
    const ok = await step();
    times.push({ name, ms: Date.now() - start, ok });
    return ok;
  };
  let shared = { stop: async () => undefined };
  let postgres = { stop: async () => undefined };
  let failed;
  try {
    if (options.steps.includes('setup')) {
      await timed('setup', async () => {
        say(`set-up (node ${process.version})`);
        const major = Number(process.versions.node.split('.')[0]);
        if (major < 20) throw new Error(`Node 20 or newer is needed, this is ${process.version}`);
        env.NATS_SERVER_BIN = privateNatsServer(ROOT, note);
        shared = await sharedNatsServer(ROOT, env.NATS_URL, note);
        postgres = await sharedPostgres(ROOT, env.TEST_POSTGRES_URL, note);
        ensureDebianPackages(note);
        if (!env.KURRENTDB_URL) note('KURRENTDB_URL is not set: the KurrentDB contract suite is skipped');
        return true;
      });
    }
    for (const check of CHECKS.filter(() => options.steps.includes('checks'))) {
      say(`npm run ${check}`);
      if (!(await timed(check, async () => (await run('npm', ['run', check], env)) === 0))) throw new Error(`${check} failed`);
      // The tests' processes start from this build rather than from source (libs/testing's sourceArgs).
      if (check === 'build') env.AGORA_TEST_BUILT = '1';
    }
    rmSync(TIMINGS_FILE, { force: true });
    mkdirSync(dirname(TIMINGS_FILE), { recursive: true });
    for (const stage of STAGES.filter((s) => options.steps.includes(s))) {
      say(`${stage} tests`);
      if (!(await timed(stage, async () => (await run(process.execPath, jestArgs(stage, options.workers, options.jest), { ...env, AGORA_TEST_TIMINGS: TIMINGS_FILE })) === 0))) throw new Error(`the ${stage} tests failed`);
    }
  } catch (error) {
    failed = error instanceof Error ? error.message : String(error);
  } finally {
    await shared.stop();
    await postgres.stop();
  }
  report(times, failed);
  process.exitCode = failed ? 1 : 0;
}

/** `1 m 05 s`, `9.3 s`, `120 ms`. */
function formatDuration(ms) {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const s = Math.round(ms / 1_000);
  return `${Math.floor(s / 60)} m ${String(s % 60).padStart(2, '0')} s`;
}

function report(times, failed) {
  let records = [];
  try {
    records = readFileSync(TIMINGS_FILE, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
  } catch {
    // no stage ran
  }
  if (records.length > 0) {
    say(`the 15 slowest suites (of ${records.length}; all in test-results/timings.jsonl)`);
    for (const r of [...records].sort((a, b) => b.ms - a.ms).slice(0, 15)) note(`${formatDuration(r.ms).padStart(8)}  ${r.stage.padEnd(4)}  ${r.suite}${r.failed || r.error ? '  (failed)' : ''}`);
  }
  say('steps');
  for (const t of times) note(`${formatDuration(t.ms).padStart(8)}  ${t.name}${t.ok ? '' : '  FAILED'}`);
  note(`${formatDuration(times.reduce((sum, t) => sum + t.ms, 0)).padStart(8)}  in all`);
  process.stdout.write(failed ? `\nnpm test: FAILED: ${failed}\n` : '\nnpm test: passed\n');
}

await main().catch((error) => {
  console.error(`npm test: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 2;
});
