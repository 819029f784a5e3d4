import { randomBytes } from 'node:crypto';
import { errors, type ConnectionOptions, type NatsConnection, type Subscription } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { natsPasswordVariable } from '@agora/messaging';
import { startNatsServer, type PrivateNatsServer, type StartNatsOptions } from './nats-server.js';

/**
 * A fresh password for each NATS user of a deploy configuration (deploy/nats/), in the form the
 * server takes from its environment: a letter, then letters and digits.
 */
export function natsPasswords<User extends string>(users: readonly User[]): Record<User, string> {
  return Object.fromEntries(users.map((user) => [user, `pw${randomBytes(12).toString('hex')}`])) as Record<User, string>;
}

/** The environment that gives a nats-server each user's password (`AGORA_NATS_<USER>_PASSWORD`, as deploy/nats/ reads them). */
export function natsPasswordEnv(passwords: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(passwords).map(([user, pass]) => [natsPasswordVariable(user), pass]));
}

/** A private nats-server running a configuration with users and passwords, and the test's connections to it. */
export interface NatsUsersServer<User extends string> extends PrivateNatsServer {
  /**
   * A connection as `user` with its password (undefined: without credentials), which does not
   * reconnect; `options` add to those (e.g. `inboxPrefix`). `stop()` closes it.
   */
  connectAs(user: User | undefined, options?: Partial<ConnectionOptions>): Promise<NatsConnection>;
  /** `nc`, a connection the test opened otherwise (an agent's nkey...), to be closed by `stop()`. */
  track<C extends NatsConnection>(nc: C): C;
  /** Closes the connections of `connectAs` and `track`, then stops the server. */
  stop(): Promise<void>;
}

/**
 * `startNatsServer()` on a configuration file with users (deploy/nats/single.conf, or the users
 * file `agora setup nats` writes), each user's password given to the server as its
 * `AGORA_NATS_<USER>_PASSWORD` variable.
 */
export async function startNatsWithUsers<User extends string>(config: string, passwords: Readonly<Record<User, string>>, options: Omit<StartNatsOptions, 'config'> = {}): Promise<NatsUsersServer<User>> {
  const env = { ...natsPasswordEnv(passwords), ...options.env };
  const server = await startNatsServer({ ...options, config, env });
  const open: NatsConnection[] = [];
  const track = <C extends NatsConnection>(nc: C): C => (open.push(nc), nc);
  return {
    url: server.url,
    pid: server.pid,
    track,
    connectAs: async (user, extra = {}) => track(await connect({ servers: server.url, reconnect: false, ...(user === undefined ? {} : { user, pass: passwords[user] }), ...extra })),
    async stop() {
      for (const nc of open.splice(0)) await nc.close().catch(() => undefined);
      await server.stop();
    },
  };
}

/**
 * What refused a request: the permission error nats.js gives as the cause of a RequestError (a
 * publish the server refuses), else the request's own error; an Error when it went through.
 */
export async function refused(request: Promise<unknown>): Promise<unknown> {
  const error = await request.then(
    () => new Error('the request went through'),
    (e: unknown) => e,
  );
  return error instanceof errors.RequestError && error.cause ? error.cause : error;
}

/**
 * What ended a subscription within `withinMs` (a permission error ends it at once), or
 * 'still open' (a subscription the server allows).
 */
export async function ended(sub: Subscription, withinMs = 5_000): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([sub.closed.then((e) => e ?? 'closed without error'), new Promise((r) => (timer = setTimeout(() => r('still open'), withinMs)))]);
  } finally {
    clearTimeout(timer);
  }
}
