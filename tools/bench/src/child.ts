// What the benchmarks that start Agora's processes share: stopping one, and reading its memory.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Sends `signal`, then SIGKILL if it has not exited after `timeoutMs`; resolves once it is gone. */
export function stopChild(child: ChildProcess, signal: NodeJS.Signals, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    child.kill(signal);
  });
}

export interface Memory {
  /** Resident set now (VmRSS), MB. */
  rssMb: number;
  /** The largest resident set so far (VmHWM), MB. */
  peakMb: number;
}

/** The resident memory of process `pid`, now and peak (/proc/<pid>/status). */
export function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}
