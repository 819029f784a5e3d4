/**
 * The NATS users of a deployment, written from the registry (`agora setup nats`): the users of
 * Agora's processes (deploy/nats/roles.conf: services, gateway, observer, auditor) and one nkey
 * user per active agent, whose key is the agent's own Ed25519 key. Works on nats-server 2.9: a
 * plain `authorization` block the server reloads (SIGHUP, `nats-server --signal reload`).
 *
 * What an agent may do: publish requests on the subjects of the commands its roles may send (the
 * authorization table; the services still check the signature and the role of each command) and on
 * query subjects, receive replies only under its own inbox prefix
 * `_INBOX_<agentId>` (no agent can read another's replies), and listen to the events of the
 * categories the visibility table lets it read in full (libs/contracts EVENT_VISIBILITY; a
 * notification subject names no aggregate, so categories read "as a party" are read through the
 * gateway's event stream, which filters them). Operators and auditors listen to every event, and
 * operators may create and update the log's stream (`agora setup nats --stream`).
 */
import { authorizeSender, commands, EVENT_SUBJECT_PREFIX, EVENT_VISIBILITY, QUERY_SUBJECT_PREFIX, readerOf } from '@agora/contracts';
import { inboxPrefixOf, natsUserKey } from './nats-identity.js';

/** An agent as the registry knows it (the fields of its AgentView this needs). */
export interface NatsAgent {
  agentId: string;
  publicKey: string;
  roles: readonly string[];
  status: 'active' | 'disabled';
}

export interface NatsPermissions {
  publish: string[];
  subscribe: string[];
}

/** The users of roles.conf every generated file lists (its variables). The shared `agent` user is not among them. */
export const PROCESS_USERS = ['SERVICE_USER', 'GATEWAY_USER', 'OBSERVER_USER', 'AUDITOR_USER'] as const;

/** The JetStream API an operator uses to create and update the log's stream. */
function streamAdminApi(streamName: string): string[] {
  return ['$JS.API.INFO', `$JS.API.STREAM.INFO.${streamName}`, `$JS.API.STREAM.CREATE.${streamName}`, `$JS.API.STREAM.UPDATE.${streamName}`];
}

/** What one agent may do on NATS (see the file's comment). */
export function natsAgentPermissions(agent: NatsAgent, options: { streamName?: string } = {}): NatsPermissions {
  const inbox = `${inboxPrefixOf(agent.agentId)}.>`;
  const reader = readerOf(agent.agentId, agent.roles);
  const events = reader.readsAll
    ? [`${EVENT_SUBJECT_PREFIX}.>`]
    : reader.asAgent
      ? Object.entries(EVENT_VISIBILITY)
          .filter(([, access]) => access.read === 'all')
          .map(([category]) => `${EVENT_SUBJECT_PREFIX}.${category}.>`)
      : [];
  const admin = agent.roles.includes('operator') ? streamAdminApi(options.streamName ?? 'AGORA_EVENTS') : [];
  // Its own command subjects: those of the commands its roles may send now (a role granted later needs a new `agora setup nats`).
  const own = commands.filter((c) => authorizeSender(c, { actor: agent.agentId, roles: agent.roles }).allowed).map((c) => c.subject);
  return { publish: [...own, `${QUERY_SUBJECT_PREFIX}.>`, ...admin], subscribe: [inbox, ...events] };
}

const list = (subjects: readonly string[]) => `[${subjects.map((s) => JSON.stringify(s)).join(', ')}]`;

/** The users file: include roles.conf, then the process users and one nkey user per active agent (sorted by id, so a second run writes the same bytes). */
export function natsAuthorization(agents: readonly NatsAgent[], options: { streamName?: string } = {}): string {
  const active = agents.filter((a) => a.status === 'active').sort((a, b) => (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0));
  const lines = [
    '# Who may connect to Agora\'s NATS, written by `agora setup nats` from the registry: do not edit by',
    '# hand (run it again after registering, disabling or re-keying an agent; it reloads the server).',
    '# The users of Agora\'s processes are in roles.conf; each agent below connects as itself, its',
    '# Ed25519 key as an nkey, and reads replies only under its own inbox prefix _INBOX_<agentId>.',
    'include "./roles.conf"',
    '',
    'authorization {',
    '  users = [',
    ...PROCESS_USERS.map((u) => `    $${u}`),
  ];
  for (const agent of active) {
    const p = natsAgentPermissions(agent, options);
    lines.push(`    # ${agent.agentId} (${agent.roles.join(', ') || 'no role'})`);
    lines.push(`    { nkey: ${natsUserKey(agent.publicKey)}, permissions: { publish: { allow: ${list(p.publish)} }, subscribe: { allow: ${list(p.subscribe)} } } }`);
  }
  lines.push('  ]', '}', '');
  return lines.join('\n');
}
