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
import { authorizeSender, COMMAND_SUBJECT_PREFIX, commands, commandsOf, EVENT_SUBJECT_PREFIX, EVENT_VISIBILITY, queriesOf, QUERY_SUBJECT_PREFIX, readerOf, reservedAgentId, servedBy, SERVICE_NAMES, serviceActorId } from '@agora/contracts';
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

export interface NatsAuthorizationOptions {
  streamName?: string;
  /** One NATS user per service (services.conf) instead of the shared users of roles.conf (`agora setup nats --services`). */
  services?: boolean;
}

/**
 * Refuses agents whose NATS user would overlap a process's: an id reserved for a process (its NATS
 * user name, or a service actor's inbox token), or two users with one inbox prefix. Such an agent
 * could subscribe to that process's (or that agent's) replies. Throws naming each.
 */
export function checkInboxPrefixes(agents: readonly NatsAgent[]): void {
  const problems: string[] = [];
  const owners = new Map<string, string>([...SERVICE_NATS_USERS.map((u): [string, string] => [inboxPrefixOf(u), `the ${u} process`]), ...SERVICE_NAMES.map((s): [string, string] => [inboxPrefixOf(serviceActorId(s)), `the actor ${serviceActorId(s)}`])]);
  for (const agent of agents) {
    const reserved = reservedAgentId(agent.agentId);
    if (reserved !== undefined) {
      problems.push(`${reserved}: disable the agent ${agent.agentId} (agora agents disable) and register it under another id`);
      continue;
    }
    const prefix = inboxPrefixOf(agent.agentId);
    const owner = owners.get(prefix);
    if (owner !== undefined) problems.push(`the agent ${agent.agentId} would share the inbox prefix ${prefix} with ${owner}`);
    else owners.set(prefix, `the agent ${agent.agentId}`);
  }
  if (problems.length > 0) throw new Error(`the registry holds agents no NATS user may be written for: ${problems.join('; ')}`);
}

/** The users file: include roles.conf (or services.conf), then the process users and one nkey user per active agent (sorted by id, so a second run writes the same bytes). */
export function natsAuthorization(agents: readonly NatsAgent[], options: NatsAuthorizationOptions = {}): string {
  const active = agents.filter((a) => a.status === 'active').sort((a, b) => (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0));
  checkInboxPrefixes(active);
  const lines = [
    '# Who may connect to Agora\'s NATS, written by `agora setup nats` from the registry: do not edit by',
    '# hand (run it again after registering, disabling or re-keying an agent; it reloads the server).',
    ...(options.services
      ? [
          '# The users of Agora\'s processes, one per service, are in services.conf (generated from the',
          '# contracts); each agent below connects as itself, its Ed25519 key as an nkey, and reads',
          '# replies only under its own inbox prefix _INBOX_<agentId>.',
        ]
      : ['# The users of Agora\'s processes are in roles.conf; each agent below connects as itself, its', '# Ed25519 key as an nkey, and reads replies only under its own inbox prefix _INBOX_<agentId>.']),
    options.services ? 'include "./services.conf"' : 'include "./roles.conf"',
    '',
    'authorization {',
    '  users = [',
    ...(options.services ? SERVICES_CONF_USERS : PROCESS_USERS).map((u) => `    $${u}`),
  ];
  for (const agent of active) {
    const p = natsAgentPermissions(agent, options);
    lines.push(`    # ${agent.agentId} (${agent.roles.join(', ') || 'no role'})`);
    lines.push(`    { nkey: ${natsUserKey(agent.publicKey)}, permissions: { publish: { allow: ${list(p.publish)} }, subscribe: { allow: ${list(p.subscribe)} } } }`);
  }
  lines.push('  ]', '}', '');
  return lines.join('\n');
}

/*
 * One NATS user per process (`agora setup nats --services`, deploy/nats/services.conf): each of
 * the services and the gateway connects as itself (NATS_USER=<name>, its password from
 * AGORA_NATS_<NAME>_PASSWORD), with replies under its own inbox prefix `_INBOX_<name>`, and may
 * do only what its part needs, derived here from the contracts (so the file cannot drift from
 * the subjects the services serve):
 * - a service: serve its own command and query subjects in its queue group (named after it), and
 *   nothing else of agora.cmd/agora.qry (services never ask each other over NATS: a reaction is
 *   decided and appended by the service that reacts); append to the log and read it (stream info,
 *   message gets, its own pull consumers, the wake-up subscription on the log's subjects), hold
 *   its leases; answer the NATS services API ($SRV) for its own name, and ping its own replicas
 *   at start ($SRV.PING.<name>: do they decide under the same settings?). It never creates, updates or
 *   deletes the log's stream (run with EVENT_STORE=jetstream?setup=verify) and never publishes
 *   event notifications.
 * - the gateway: send every command and query on its subjects, read the log (never append),
 *   relay committed events to agora.evt., keep the A2A push configurations in its key-value bucket.
 * The log's subjects are `agora.es.<category>-<id>`: the category and the id share one subject
 * token, which a NATS permission cannot split, so any service may append to any stream there (as
 * a reaction does when it decides a command of another service); the signed command gate and
 * `agora audit` attribute every commit.
 */

/** The processes that get a NATS user of their own, by name (NATS_USER). */
export const SERVICE_NATS_USERS = [...SERVICE_NAMES, 'gateway'] as const;
export type ServiceNatsUser = (typeof SERVICE_NATS_USERS)[number];

/** The variable of each process's user in services.conf, then the observer's and the auditor's. */
const serviceUserVariable = (name: ServiceNatsUser) => `${name.toUpperCase()}_SERVICE_USER`;
export const SERVICES_CONF_USERS: readonly string[] = [...SERVICE_NATS_USERS.map(serviceUserVariable), 'OBSERVER_USER', 'AUDITOR_USER'];

/** The password variable of a user of services.conf (the server's environment). */
export const natsPasswordVariable = (user: string): string => `AGORA_NATS_${user.toUpperCase()}_PASSWORD`;

const LOG_SUBJECT_PREFIX = 'agora.es';
const LEASE_STREAM = 'AGORA_LEASES';

/** Reading the log: stream info, message gets, pull consumers (created, read, deleted), never the stream's configuration. */
function logReadApi(stream: string): string[] {
  return [
    '$JS.API.INFO',
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.STREAM.MSG.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}.>`,
    `$JS.API.CONSUMER.CREATE.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.INFO.${stream}.*`,
    `$JS.API.CONSUMER.DELETE.${stream}.*`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.*`,
  ];
}

/**
 * The JetStream key-value bucket where the gateways of a system keep the A2A push configurations
 * (apps/gateway/src/a2a/push-store.ts), named after the log they share (`scope`: its stream name on
 * JetStream, as the leases are scoped).
 */
export const a2aPushBucket = (scope: string): string => `A2A_PUSH_${scope.replace(/[^A-Za-z0-9_-]/g, '_')}`;

/** Keeping records in a key-value bucket: make it (or give it its max age), read it as the log is read, put and delete its keys. */
function keyValueApi(bucket: string): string[] {
  const stream = `KV_${bucket}`;
  return [...logReadApi(stream).filter((s) => s !== '$JS.API.INFO'), `$JS.API.STREAM.CREATE.${stream}`, `$JS.API.STREAM.UPDATE.${stream}`, `$KV.${bucket}.>`];
}

export interface NatsProcessPermissions extends NatsPermissions {
  /** May answer the requests it receives (a reply to the requester's inbox). */
  allowResponses: boolean;
}

/** What one service's (or the gateway's) NATS user may do (see above). */
export function natsServicePermissions(name: ServiceNatsUser, options: { streamName?: string } = {}): NatsProcessPermissions {
  const stream = options.streamName ?? 'AGORA_EVENTS';
  const inbox = `${inboxPrefixOf(name)}.>`;
  if (name === 'gateway') {
    const asks = SERVICE_NAMES.flatMap((s) => [...(commandsOf(s).length > 0 ? [`${COMMAND_SUBJECT_PREFIX}.${s}.>`] : []), ...(queriesOf(s).length > 0 ? [`${QUERY_SUBJECT_PREFIX}.${s}.>`] : [])]);
    return { publish: [...logReadApi(stream), ...keyValueApi(a2aPushBucket(stream)), ...asks, `${EVENT_SUBJECT_PREFIX}.>`], subscribe: [`${LOG_SUBJECT_PREFIX}.>`, inbox], allowResponses: false };
  }
  const { commands: served, queries: answered } = servedBy(name);
  const serves = [...served.map((c) => c.subject), ...answered.map((q) => q.subject)].map((subject) => `${subject} ${name}`);
  // The commands it sends another service (the dialectic's quorum to the voting service): those the table lets it send.
  const sends = commands.filter((c) => c.service !== name && authorizeSender(c, { actor: serviceActorId(name), roles: [] }).allowed).map((c) => c.subject);
  return {
    publish: [`${LOG_SUBJECT_PREFIX}.>`, ...logReadApi(stream), 'agora.lease.>', `$JS.API.STREAM.INFO.${LEASE_STREAM}`, `$JS.API.STREAM.CREATE.${LEASE_STREAM}`, `$JS.API.STREAM.MSG.GET.${LEASE_STREAM}`, `$SRV.PING.${name}`, ...sends],
    subscribe: [...serves, `${LOG_SUBJECT_PREFIX}.>`, inbox, '$SRV.*', `$SRV.*.${name}`, `$SRV.*.${name}.*`],
    allowResponses: true,
  };
}

/** The observer (events only) and the auditor (reads the log, writes nothing), as in roles.conf. */
function natsReaderPermissions(user: 'observer' | 'auditor', stream: string): NatsProcessPermissions {
  return user === 'observer'
    ? { publish: [], subscribe: [`${EVENT_SUBJECT_PREFIX}.>`], allowResponses: false }
    : { publish: logReadApi(stream), subscribe: [`${LOG_SUBJECT_PREFIX}.>`, '_INBOX.>'], allowResponses: false };
}

function processUser(variable: string, user: string, p: NatsProcessPermissions): string[] {
  return [
    `${variable} = {`,
    `  user: ${user}`,
    `  password: $${natsPasswordVariable(user)}`,
    '  permissions: {',
    `    publish: ${p.publish.length === 0 ? '{ deny: [">"] }' : `{ allow: ${list(p.publish)} }`}`,
    `    subscribe: { allow: ${list(p.subscribe)} }`,
    ...(p.allowResponses ? ['    allow_responses: true'] : []),
    '  }',
    '}',
    '',
  ];
}

/** deploy/nats/services.conf: the users of Agora's processes, one per service (written by `npm run contracts`). */
export function natsServiceUsersConf(options: { streamName?: string } = {}): string {
  const stream = options.streamName ?? 'AGORA_EVENTS';
  const lines = [
    '# The users of Agora\'s processes, one per service: generated from the contracts by `npm run contracts`',
    '# (libs/messaging natsServicePermissions); do not edit by hand. Included by auth-services.conf and by',
    '# the users file `agora setup nats --services` writes, which list every user below. Each process',
    '# connects as NATS_USER=<its name> with NATS_PASSWORD, and takes its replies under _INBOX_<its name>.',
    `# Passwords from the server's environment: ${[...SERVICE_NATS_USERS, 'observer', 'auditor'].map(natsPasswordVariable).join(', ')}`,
    '# (start.sh refuses unset or empty ones). The log is the stream AGORA_EVENTS on agora.es.>; no user here',
    '# may create, update or delete it (`agora setup nats --stream`, as an operator, does): run the services',
    '# with EVENT_STORE=jetstream?setup=verify.',
    '',
  ];
  for (const name of SERVICE_NATS_USERS) lines.push(...processUser(serviceUserVariable(name), name, natsServicePermissions(name, { streamName: stream })));
  lines.push('# Dashboards and listeners: events only.');
  lines.push(...processUser('OBSERVER_USER', 'observer', natsReaderPermissions('observer', stream)));
  lines.push('# `agora audit` on the jetstream store: reads the whole log, writes nothing.');
  lines.push(...processUser('AUDITOR_USER', 'auditor', natsReaderPermissions('auditor', stream)));
  return `${lines.join('\n').trimEnd()}\n`;
}

/** The table of docs/security.md: each process's NATS user and what it may do (generated with services.conf). */
export function natsServiceUsersMarkdown(): string {
  const code = (subjects: readonly string[]) => subjects.map((s) => `\`${s}\``).join(', ') || 'nothing';
  const rows = SERVICE_NATS_USERS.map((name) => {
    const p = natsServicePermissions(name);
    const serves = name === 'gateway' ? 'none' : `${servedBy(name).commands.length} command and ${servedBy(name).queries.length} query subjects, in queue group \`${name}\``;
    const publish = p.publish.filter((s) => !s.startsWith('$JS.API.') || s.includes('LEASES') || /^\$JS\.API\.STREAM\.(CREATE|UPDATE)\.KV_/.test(s));
    return `| \`${name}\` | ${serves} | ${code(publish)} + the log's read API | ${code(p.subscribe.filter((s) => !s.includes(' ')))} |`;
  });
  return ['| NATS user | serves (subscribes in its queue group) | publishes | subscribes to |', '| --- | --- | --- | --- |', ...rows, ''].join('\n');
}
