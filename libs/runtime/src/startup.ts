// Start-up that cannot go wrong silently: a process waits for NATS with one line per attempt and a
// growing pause, and the failures an operator can fix (a port in use, a data directory held by
// another process, credentials NATS refuses, NATS still unreachable past the limit) end the
// process with one line and exit code 2, not a stack trace.
import { StoreRefused, StoreUnavailable } from '@agora/eventstore';
import { connectNats } from '@agora/messaging';

export const DEFAULT_NATS_WAIT_MS = 60_000;

export const STARTUP_ENV_HELP = `AGORA_NATS_WAIT_MS         how long a starting process waits for NATS to be reachable, and then for the
                           event store to answer, retrying with a growing pause (default ${DEFAULT_NATS_WAIT_MS};
                           0 = fail at once); then it exits (code 2)`;

/** A start-up failure the operator can fix; `message` is one line naming what to fix. Exit code 2. */
export class StartupFailure extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupFailure';
  }
}

/** A data directory another process holds (the embedded store's lock). */
const LOCKED = /in use by process|could not lock/;

/**
 * One line for a failure an operator can fix, or undefined for a failure that deserves its stack trace (a bug).
 * `ports` names the setting behind each port the process listens on (`{ PORT: 8080, METRICS_PORT: 9464 }`), so
 * that a port in use names the one to change.
 */
export function describeStartupFailure(error: unknown, ports: Readonly<Record<string, number | undefined>> = {}): string | undefined {
  if (error instanceof StartupFailure) return error.message;
  if (!(error instanceof Error)) return undefined;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') {
    const { address, port } = error as Error & { address?: string; port?: number };
    return `port ${port ?? '?'}${address ? ` on ${address}` : ''} is already in use (another process listens there): ${portAdvice(port, ports)}`;
  }
  if (code === 'EACCES' && 'port' in error) return `not allowed to listen on port ${String((error as { port?: number }).port)} (choose a port above 1023)`;
  if (error instanceof StoreUnavailable && LOCKED.test(error.message)) return `${error.message}: another process holds this data directory (stop it, or give this one its own AGORA_DATA_DIR)`;
  // A store that refuses for good (a clustered log on a nats-server that cannot keep it) says what to change.
  if (error instanceof StoreRefused && error.reason === 'unsupported_server') return error.message;
  if (isAuthError(error)) return `NATS refused the credentials: ${oneLine(error.message)}`;
  if (isUnreachable(error)) return `NATS is unreachable: ${oneLine(error.message)}`;
  return undefined;
}

/** Which setting moves a port in use: the one behind it when known, else every port setting of the process. */
function portAdvice(port: number | undefined, ports: Readonly<Record<string, number | undefined>>): string {
  const settings = Object.keys(ports);
  const behind = settings.find((name) => port !== undefined && port !== 0 && ports[name] === port);
  if (behind !== undefined) return `set ${behind} to another port (0: any free port), see --help`;
  const names = settings.length > 0 ? settings : ['PORT', 'METRICS_PORT'];
  return `set ${names.join(' or ')} to another port (0: any free port), see --help`;
}

/** A server list for a log line, without credentials. */
export function withoutCredentials(servers: string): string {
  return servers.replace(/\/\/[^@/,]*@/g, '//***@');
}

function oneLine(text: string): string {
  return text.split('\n')[0]!.trim();
}

function isAuthError(error: Error): boolean {
  return error.name === 'AuthorizationError' || error.name === 'UserAuthenticationExpiredError' || /authorization violation|authentication/i.test(error.message);
}

function isUnreachable(error: Error): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return error.name === 'ConnectionError' || code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'ETIMEDOUT' || /CONNECTION_REFUSED|ECONNREFUSED/.test(error.message);
}

export interface WaitForNatsOptions {
  /** Give up after this long (ms); 0 = one attempt. */
  limitMs: number;
  /** The NATS user the process connects as (NATS_USER / NATS_PASSWORD). */
  credentials?: { user: string; pass: string; inboxPrefix?: string };
  /** Where the one-line progress goes. */
  log(line: string): void;
  /** First pause (ms), doubled after each attempt up to `maxPauseMs`. Default 250 / 5000. */
  firstPauseMs?: number;
  maxPauseMs?: number;
}

/**
 * Resolves once NATS at `servers` accepts a connection. Unreachable: one line per attempt, a pause
 * that doubles, and a StartupFailure once `limitMs` is spent. Credentials refused: a
 * StartupFailure at once (waiting will not fix them).
 */
export async function waitForNats(servers: string, options: WaitForNatsOptions): Promise<void> {
  const shown = withoutCredentials(servers);
  await retrying(
    async () => {
      const nc = await connectNats({ servers, name: 'agora-startup-probe', ...(options.credentials === undefined ? {} : { credentials: options.credentials }) });
      await nc.close();
    },
    options,
    { waiting: `waiting for NATS at ${shown}`, giveUp: `NATS at ${shown} is unreachable`, reached: `NATS at ${shown} is reachable` },
    (err) => {
      if (isAuthError(err)) throw new StartupFailure(`NATS at ${shown} refused the credentials: ${oneLine(err.message)}`, { cause: err });
    },
  );
}

/**
 * Runs `open` (it opens the event store, among others) until it succeeds while the store is
 * unavailable: a NATS node just started again is reachable before its JetStream has caught up with
 * the cluster, and a stream lookup through it times out meanwhile. One line per attempt, a pause
 * that doubles, a StartupFailure once `limitMs` is spent; any other failure is thrown at once, as
 * is a data directory another process holds (waiting will not free it).
 */
export async function waitForStore<T>(open: () => Promise<T>, options: Omit<WaitForNatsOptions, 'credentials'>): Promise<T> {
  return retrying(open, options, { waiting: 'waiting for the event store', giveUp: 'the event store is unavailable', reached: 'the event store is available' }, (err) => {
    if (!(err instanceof StoreUnavailable) || LOCKED.test(err.message)) throw err;
  });
}

/** What `retrying` says while it waits, when it gives up, and once the attempt succeeds after a failure. */
interface WaitWords {
  waiting: string;
  giveUp: string;
  reached: string;
}

/** Runs `attempt` until it succeeds; `mustThrow` throws for a failure not worth waiting out. */
async function retrying<T>(attempt: () => Promise<T>, options: Omit<WaitForNatsOptions, 'credentials'>, words: WaitWords, mustThrow: (error: Error) => void): Promise<T> {
  const started = Date.now();
  let pause = options.firstPauseMs ?? 250;
  const maxPause = options.maxPauseMs ?? 5_000;
  for (let n = 1; ; n++) {
    try {
      const result = await attempt();
      if (n > 1) options.log(words.reached);
      return result;
    } catch (error) {
      const err = error instanceof Error ? error : new Error(String(error));
      mustThrow(err);
      const waited = Date.now() - started;
      if (waited + pause > options.limitMs) {
        throw new StartupFailure(`${words.giveUp} (${oneLine(err.message)}); gave up after ${Math.round(waited / 1000)} s (AGORA_NATS_WAIT_MS=${options.limitMs})`, { cause: err });
      }
      options.log(`${words.waiting} (${oneLine(err.message)}); attempt ${n}, next in ${pause} ms`);
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, maxPause);
    }
  }
}
