import { OWN_INBOX_NATS_USERS } from '@agora/contracts';

/** The NATS user a process connects as (deploy/nats/auth.conf defines the users and what each may do). */
export interface NatsCredentials {
  user: string;
  pass: string;
  /** Replies to this connection's requests arrive under this prefix instead of `_INBOX` (a service's own user: `_INBOX_<service>`). */
  inboxPrefix?: string;
}

export const NATS_CREDENTIALS_HELP = `NATS_USER                  NATS user this process connects as (deploy/nats/auth.conf: service,
                           gateway, agent, observer or auditor; with services.conf, the service's own
                           name, e.g. proposal, whose replies arrive under _INBOX_<name>); unset
                           means no credentials
NATS_PASSWORD              that user's password (required with NATS_USER)`;

/**
 * NATS_USER and NATS_PASSWORD, or undefined when neither is set. Throws naming the missing one
 * when only one is set.
 */
export function natsCredentials(env: NodeJS.ProcessEnv = process.env): NatsCredentials | undefined {
  const user = env['NATS_USER']?.trim() || undefined;
  const pass = env['NATS_PASSWORD'] || undefined;
  if (user === undefined && pass === undefined) return undefined;
  if (user === undefined) throw new Error('NATS_PASSWORD is set without NATS_USER');
  if (pass === undefined) throw new Error(`NATS_USER=${JSON.stringify(user)} needs NATS_PASSWORD`);
  return { user, pass, ...(OWN_INBOX_NATS_USERS.includes(user) ? { inboxPrefix: `_INBOX_${user}` } : {}) };
}
