/**
 * A made-up "widget" service for the tests of the messaging layer and of what is built on it (the
 * gateway), so that they do not depend on a real service's rules: its commands and queries, handlers
 * that answer, refuse, crash or answer late as a test asks, and a team of agents with keys.
 * `@agora/messaging/testing`: tests import it; nothing else does.
 */
import { randomBytes } from 'node:crypto';
import { AgoraError, defineCommand, defineQuery, EntityId, ERROR_CODES, NextCursor, pageParams, type CommandDefinition, type ErrorCode, type QueryDefinition } from '@agora/contracts';
import { createSignedCommand, generateKeyPair, type KeyPair, type SignedCommand } from '@agora/identity';
import { z } from 'zod';
import type { VerifiedCommand } from './command-gate.js';
import { StaticAgentDirectory } from './directory.js';

/** A service name no other test run on a shared NATS server uses. */
export function uniqueService(prefix = 'svc'): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

/** The widget service's commands and queries. */
export function widgetCatalog(service: string) {
  const CreateWidget = defineCommand({
    type: 'CreateWidget',
    service,
    aggregate: 'widget',
    verb: 'create',
    roles: ['operator', 'executive'],
    summary: 'Create a widget',
    payload: z.object({ widgetId: EntityId, size: z.number().int().min(1).max(10).default(1), label: z.string().max(50).optional() }).strict(),
  });
  const FailWidget = defineCommand({
    type: 'FailWidget',
    service,
    aggregate: 'widget',
    verb: 'fail',
    roles: ['operator'],
    summary: 'Fails as it is told: refused with the error code given or as a domain rule would, crashes, or answers late',
    payload: z.object({ how: z.enum(['refuse', 'domain', 'crash', 'slow']), code: z.string().optional() }).strict(),
  });
  const GetWidget = defineQuery({
    name: 'widgets.get',
    service,
    httpPath: 'widgets/:widgetId',
    summary: 'One widget',
    params: z.object({ widgetId: EntityId, verbose: z.enum(['yes', 'no']).optional(), tag: z.array(z.string()).optional(), count: z.number().int().optional(), deep: z.boolean().optional() }).strict(),
    result: z.object({ widgetId: z.string() }),
  });
  const ListWidgets = defineQuery({
    name: 'widgets.list',
    service,
    httpPath: 'widgets',
    summary: 'Every widget, paged',
    params: z.object({ ...pageParams }).strict(),
    result: z.object({ widgets: z.array(z.string()), nextCursor: NextCursor }),
  });
  const commands: CommandDefinition[] = [CreateWidget, FailWidget];
  const queries: QueryDefinition[] = [GetWidget, ListWidgets];
  return { CreateWidget, FailWidget, GetWidget, ListWidgets, catalog: { commands, queries } };
}

export interface WidgetTeam {
  operator: KeyPair;
  executive: KeyPair;
  observer: KeyPair;
  /** An operator whose agent is disabled. */
  retired: KeyPair;
  directory: StaticAgentDirectory;
}

/** Agents with keys and roles, in a directory of their own. */
export function widgetTeam(): WidgetTeam {
  const operator = generateKeyPair();
  const executive = generateKeyPair();
  const observer = generateKeyPair();
  const retired = generateKeyPair();
  const directory = new StaticAgentDirectory({
    operator: { publicKey: operator.publicKey, roles: ['operator'], status: 'active' },
    executive: { publicKey: executive.publicKey, roles: ['executive'], status: 'active' },
    observer: { publicKey: observer.publicKey, roles: ['observer'], status: 'active' },
    retired: { publicKey: retired.publicKey, roles: ['operator'], status: 'disabled' },
  });
  return { operator, executive, observer, retired, directory };
}

export function signed(type: string, actor: string, key: KeyPair, payload: Record<string, unknown>, extra: { issuedAt?: Date | string; commandId?: string } = {}): SignedCommand {
  return createSignedCommand({ type, actor, payload, secretKey: key.secretKey, ...extra });
}

/** How late FailWidget's `slow` answers. */
export const SLOW_WIDGET_MS = 500;

/**
 * Handlers of the widget service, as replica `replica`; `calls` records every CreateWidget run with
 * the replica that ran it. GetWidget answers the params it was given beside the id; ListWidgets pages
 * over two widgets (the cursor is the next one's index).
 */
export function widgetHandlers(widgets: ReturnType<typeof widgetCatalog>, replica = 'r0', calls: { replica: string; commandId: string }[] = []) {
  const commands = new Map([
    [
      widgets.CreateWidget.type,
      async (cmd: VerifiedCommand) => {
        calls.push({ replica, commandId: cmd.envelope.commandId });
        return { created: cmd.payload, by: cmd.actor.agentId, replica };
      },
    ],
    [
      widgets.FailWidget.type,
      async (cmd: VerifiedCommand) => {
        const { how, code } = cmd.payload as { how: string; code?: string };
        if (how === 'refuse') {
          if (!code || !(code in ERROR_CODES)) throw new AgoraError('invalid_command', `no such code ${code}`);
          throw new AgoraError(code as ErrorCode, `refused with ${code}`, { asked: code });
        }
        if (how === 'domain') throw new AgoraError('illegal_state', 'the widget is already broken', { widgetId: 'w1' });
        if (how === 'slow') return new Promise((resolve) => setTimeout(() => resolve('late'), SLOW_WIDGET_MS));
        throw new Error('disk on fire at /var/secret/path');
      },
    ],
  ]);
  const queries = new Map<string, (params: unknown) => Promise<unknown>>([
    [widgets.GetWidget.subject, async (params: unknown) => ({ widgetId: (params as { widgetId: string }).widgetId, params })],
    [
      widgets.ListWidgets.subject,
      async (params: unknown) => {
        const { limit = 100, cursor = 'i0' } = params as { limit?: number; cursor?: string };
        const from = Number(cursor.slice(1));
        const all = ['w1', 'w2'];
        return { widgets: all.slice(from, from + limit), ...(from + limit < all.length ? { nextCursor: `i${from + limit}` } : {}) };
      },
    ],
  ]);
  return { commands, queries, calls };
}
