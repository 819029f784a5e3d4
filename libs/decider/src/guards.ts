// Helpers every decider's guards use: the time a delay after the command ends, and who may send a command.
import { type CommandContext, DomainError } from './decider.js';

/** `a, b, c`, or `none`: lists in refusal messages. */
export const listOf = (items: readonly string[]): string => (items.length === 0 ? 'none' : items.join(', '));

/** The time `ms` after the command's `now` (a deadline); `invalid_command` when `now` is no ISO-8601 time. */
export function timeAfter(now: string, ms: number): string {
  const start = Date.parse(now);
  if (Number.isNaN(start)) throw new DomainError('invalid_command', `command time ${JSON.stringify(now)} is not an ISO-8601 time`, { now });
  return new Date(start + ms).toISOString();
}

/**
 * Refuses (`forbidden`) an actor that holds none of `roles`. The details name the roles as the command
 * gate's refusal does (`requiredRoles`), so a client reads one shape whichever layer refused.
 */
export function requireRole(context: CommandContext, roles: string | readonly string[], toDo: string): void {
  const wanted: readonly string[] = typeof roles === 'string' ? [roles] : roles;
  if (wanted.some((r) => context.actorRoles.includes(r))) return;
  throw new DomainError('forbidden', `${context.actor} may not ${toDo}: that needs the role ${wanted.join(' or ')}, and ${context.actor} has ${listOf(context.actorRoles)}`, {
    actor: context.actor,
    requiredRoles: [...wanted],
    actorRoles: [...context.actorRoles],
  });
}

/** Rounded to 6 decimals: a fraction a decider records in an event (a weight, a score) reads and replays the same everywhere. */
export const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;
