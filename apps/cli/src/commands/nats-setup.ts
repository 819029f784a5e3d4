// What `agora setup nats` does, apart from reading its arguments (setup.ts): a module of its own, loaded when
// the command runs, as messaging and the event store take a second or two to load, which no other command pays.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { setUpJetStreamLog, type StreamSetupAction } from '@agora/eventstore';
import { connectNats, natsAuthorization, type NatsAgent, type NatsIdentity } from '@agora/messaging';

export interface NatsSetupInput {
  /** The registry's agents (disabled ones get no user). */
  agents: readonly NatsAgent[];
  /** The users file to write (deploy/nats/auth.conf beside roles.conf). */
  out: string;
  /** One NATS user per service: the file includes services.conf (beside it) instead of roles.conf. */
  services?: boolean;
  /** The nats-server to tell to reload its configuration when the file changed (SIGHUP). */
  serverPid?: number;
  /** Create or update the log's stream, connected as this operator (an nkey user of the file). */
  stream?: { servers: string; identity: NatsIdentity; streamName?: string; subjectPrefix?: string; replicas?: number };
  /** How long to wait for the server to take the new users (its reload is asynchronous). Default 15 s. */
  reloadWaitMs?: number;
}

export interface NatsSetupResult {
  file: 'written' | 'unchanged';
  reloaded: boolean;
  stream?: StreamSetupAction;
}

function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * `agora setup nats` without the gateway: writes the users file from the agents, reloads the
 * server when it changed, and sets up the log's stream as an operator. Running it twice changes
 * nothing the second time.
 */
export async function setUpNats(input: NatsSetupInput): Promise<NatsSetupResult> {
  const text = natsAuthorization(input.agents, { ...(input.stream?.streamName === undefined ? {} : { streamName: input.stream.streamName }), ...(input.services ? { services: true } : {}) });
  const changed = readIfExists(input.out) !== text;
  if (changed) {
    // Whole or not at all: the server must never read half a file.
    writeFileSync(`${input.out}.tmp`, text, { mode: 0o644 });
    renameSync(`${input.out}.tmp`, input.out);
  }
  const reloaded = changed && input.serverPid !== undefined;
  if (reloaded) process.kill(input.serverPid!, 'SIGHUP');
  if (input.stream === undefined) return { file: changed ? 'written' : 'unchanged', reloaded };
  const { servers, identity, ...log } = input.stream;
  const connection = await connectAsOperator(servers, identity, reloaded ? (input.reloadWaitMs ?? 15_000) : 0);
  try {
    return { file: changed ? 'written' : 'unchanged', reloaded, stream: await setUpJetStreamLog(connection, log) };
  } finally {
    await connection.close();
  }
}

/**
 * Connects as the operator. A server reloads asynchronously: right after the signal it may not
 * know the operator's user yet, and a connection it accepts in the middle of its reload may never
 * be answered, so each attempt is short and a failure is retried until `waitMs`.
 */
async function connectAsOperator(servers: string, identity: NatsIdentity, waitMs: number) {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await connectNats({ servers, name: 'agora-setup', identity, connectTimeoutMs: waitMs > 0 ? 2_000 : 10_000 });
    } catch (error) {
      if (Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
