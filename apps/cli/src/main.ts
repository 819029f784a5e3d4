#!/usr/bin/env node
/** The `agora` command line: see `agora --help`. */
import { runCli } from './cli.js';
import type { Io } from './command.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

// Ctrl-C asks a long-running command (events tail) to stop; a second Ctrl-C ends the process at once.
const interrupt = new AbortController();
process.once('SIGINT', () => {
  interrupt.abort();
  process.once('SIGINT', () => process.exit(130));
});
process.once('SIGTERM', () => interrupt.abort());

const io: Io = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  readStdin,
  env: process.env,
  signal: interrupt.signal,
};

process.exitCode = await runCli(process.argv.slice(2), io);
