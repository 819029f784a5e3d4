// What the benchmarks that run registry replicas share: a replica started as an operator would
// (`node apps/registry/dist/main.js`, settings in the environment), stopped, and the CPU time it
// and the bench client used.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
export const REGISTRY_MAIN = fileURLToPath(new URL('../../../apps/registry/dist/main.js', import.meta.url));

export interface Replica {
  child: ChildProcess;
  id: string;
  /** The last lines it printed, for when something goes wrong. */
  tail(): string;
}

/** Starts one registry process and waits for its `ready` line. */
export function startReplica(env: Record<string, string>): Promise<Replica> {
  // BENCH_REPLICA_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' profiles the replicas.
  const nodeArgs = (process.env['BENCH_REPLICA_NODE_ARGS'] ?? '').split(/\s+/).filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, REGISTRY_MAIN], {
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/tmp', NO_COLOR: '1', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: string) => {
    output = (output + chunk).slice(-20_000);
  };
  child.stderr!.setEncoding('utf8').on('data', keep);
  return new Promise((resolve, reject) => {
    let id: string | undefined;
    const timer = setTimeout(() => fail('printed no "ready" within 60 s'), 60_000);
    function fail(why: string) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`registry replica ${why}:\n${output}`));
    }
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      keep(chunk);
      id ??= /registry service (\S+):/.exec(output)?.[1];
      if (id !== undefined && /^agora-registry: ready$/m.test(output)) {
        clearTimeout(timer);
        resolve({ child, id, tail: () => output.split('\n').slice(-20).join('\n') });
      }
    });
    child.once('error', (error) => fail(`could not start (${error.message})`));
    child.once('exit', (code, signal) => fail(`exited (code ${code}, signal ${signal}) before it was ready`));
  });
}

export async function stopReplica(replica: Replica): Promise<void> {
  const { child } = replica;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on Linux, whatever the kernel's HZ). */
const USER_HZ = 100;

/** CPU time the replicas have used so far, in ms; undefined without a Linux /proc. */
export function replicasCpuMs(replicas: readonly Replica[]): number | undefined {
  let ticks = 0;
  for (const { child } of replicas) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
    } catch {
      return undefined;
    }
    // Fields after the command name (which may hold spaces, inside parentheses): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1000) / USER_HZ;
}

export function clientCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

