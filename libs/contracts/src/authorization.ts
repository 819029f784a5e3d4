import { commandByType, commands } from './catalog.js';
import { isServiceOnly, serviceOfActor, type CommandDefinition } from './define.js';

/**
 * Who may send each command (the authorization table of docs/security.md is this data): the agent roles of
 * its definition (`roles`), the services that issue it on their own behalf (`issuers`), and the
 * relation to the aggregate its decider enforces (`relation`). This module is the part that
 * depends on nothing but the actor and its roles: the command gate applies it to every command,
 * and an offline auditor applies it to every commit of the log, with the roles the actor had then.
 */

/** The actor of a command, as the log records it: an agent id with the roles it had at that time, or `service:<name>`. */
export interface CommandSender {
  actor: string;
  /** The agent's roles at the time (from the registry's events up to the command); ignored for a service. */
  roles: readonly string[];
  /** The rules the command was decided under (an audit of an older commit); absent: today's. */
  rules?: number;
}

export type Authorization =
  | { allowed: true; as: 'service'; service: string; relation?: string }
  | { allowed: true; as: 'role'; roles: string[]; relation?: string }
  | { allowed: false; code: 'invalid_command' | 'service_only' | 'forbidden'; reason: string };

/**
 * Was this sender allowed to send this command type? Pure: the auditor's question "was this
 * actor, with these roles at that time, allowed to send it" and the gate's answer are this one
 * function. When it answers allowed with a `relation`, the decider checks that relation against
 * the aggregate (an auditor re-deciding the command from the state before it checks it too).
 */
export function authorizeCommand(commandType: string, sender: CommandSender): Authorization {
  const definition = commandByType(commandType);
  if (!definition) return { allowed: false, code: 'invalid_command', reason: `no command ${commandType} exists` };
  return authorizeSender(definition, sender);
}

/** authorizeCommand with the definition in hand. */
export function authorizeSender(definition: CommandDefinition, sender: CommandSender): Authorization {
  const relation = definition.relation === undefined ? {} : { relation: definition.relation };
  const issuers = definition.issuers ?? [];
  if (sender.actor.startsWith('service:')) {
    const service = serviceOfActor(sender.actor);
    if (service !== undefined && issuers.includes(service)) return { allowed: true, as: 'service', service, ...relation };
    return {
      allowed: false,
      code: 'forbidden',
      reason: `${sender.actor} does not issue ${definition.type}${issuers.length > 0 ? `: only ${issuers.map((s) => `service:${s}`).join(', ')} does` : ': no service does'}`,
    };
  }
  if (isServiceOnly(definition)) {
    return {
      allowed: false,
      code: 'service_only',
      reason: `${definition.type} is issued only by ${issuers.map((s) => `the ${s} service`).join(', ')} on its own behalf, signed with its service key; no agent may send it, operators included`,
    };
  }
  const before = definition.rolesBefore;
  const roles = before !== undefined && sender.rules !== undefined && sender.rules < before.rules ? before.roles : definition.roles;
  const held = roles.filter((role) => sender.roles.includes(role));
  if (held.length === 0) {
    return {
      allowed: false,
      code: 'forbidden',
      reason: `${definition.type} needs one of the roles ${roles.join(', ')}; ${sender.actor} has ${sender.roles.join(', ') || 'none'}`,
    };
  }
  return { allowed: true, as: 'role', roles: held, ...relation };
}

/** One row of the authorization table. */
export interface AuthorizationRow {
  type: string;
  service: string;
  roles: readonly string[];
  issuers: readonly string[];
  relation: string | null;
}

/** Every command with who may send it, in catalog order. */
export function authorizationTable(): AuthorizationRow[] {
  return commands.map((c) => ({ type: c.type, service: c.service, roles: [...c.roles], issuers: [...(c.issuers ?? [])], relation: c.relation ?? null }));
}

/** The authorization table as Markdown (docs/security.md's copy is generated from this). */
export function authorizationTableMarkdown(): string {
  const lines = ['| command | service | agent roles | relation to the aggregate (decider) | services on their own behalf |', '| --- | --- | --- | --- | --- |'];
  for (const row of authorizationTable()) {
    const roles = row.roles.length === 0 ? '**none: service-only**' : row.roles.join(', ');
    const issuers = row.issuers.length === 0 ? '' : row.issuers.map((s) => `service:${s}`).join(', ');
    lines.push(`| \`${row.type}\` | ${row.service} | ${roles} | ${row.relation ?? (row.roles.length === 0 ? '' : 'any holder of the role')} | ${issuers} |`);
  }
  return `${lines.join('\n')}\n`;
}
