import { randomBytes } from 'node:crypto';
import { AgoraError, defineCommand, defineQuery, EntityId, type CommandDefinition, type QueryDefinition } from '@agora/contracts';
import { createSignedCommand, generateKeyPair, type KeyPair, type SignedCommand } from '@agora/identity';
import { z } from 'zod';
import { StaticAgentDirectory } from '../src/index.js';

/** A service name no other test run on the shared NATS server uses. */
export function uniqueService(prefix = 'svc'): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

/** Commands and a query of a made-up service, so tests do not depend on a real service's rules. */
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
  const BreakWidget = defineCommand({
    type: 'BreakWidget',
    service,
    aggregate: 'widget',
    verb: 'break',
    roles: ['operator'],
    summary: 'Fails the way the handler is told to',
    payload: z.object({ how: z.enum(['domain', 'crash', 'slow']) }).strict(),
  });
  const GetWidget = defineQuery({
    name: 'widgets.get',
    service,
    httpPath: 'widgets/:widgetId',
    summary: 'One widget',
    params: z.object({ widgetId: EntityId }).strict(),
    result: z.object({ widgetId: z.string() }),
  });
  const commands: CommandDefinition[] = [CreateWidget, BreakWidget];
  const queries: QueryDefinition[] = [GetWidget];
  return { CreateWidget, BreakWidget, GetWidget, catalog: { commands, queries } };
}

export interface Agents {
  operator: KeyPair;
  executive: KeyPair;
  observer: KeyPair;
  retired: KeyPair;
  directory: StaticAgentDirectory;
}

export function agents(): Agents {
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

/** Handlers of the widget service; `calls` records every run, with the replica that ran it. */
export function widgetHandlers(catalog: ReturnType<typeof widgetCatalog>, replica = 'r0', calls: { replica: string; commandId: string }[] = []) {
  const commands = new Map([
    [
      catalog.CreateWidget.type,
      async (cmd: import('../src/index.js').VerifiedCommand) => {
        calls.push({ replica, commandId: cmd.envelope.commandId });
        return { created: cmd.payload, by: cmd.actor.agentId, replica };
      },
    ],
    [
      catalog.BreakWidget.type,
      async (cmd: import('../src/index.js').VerifiedCommand) => {
        const { how } = cmd.payload as { how: string };
        if (how === 'domain') throw new AgoraError('illegal_state', 'the widget is already broken', { widgetId: 'w1' });
        if (how === 'slow') return new Promise((resolve) => setTimeout(() => resolve('late'), 500));
        throw new Error('disk on fire at /var/secret/path');
      },
    ],
  ]);
  const queries = new Map([[catalog.GetWidget.subject, async (params: unknown) => ({ widgetId: (params as { widgetId: string }).widgetId })]]);
  return { commands, queries, calls };
}

export const NATS_URL = process.env['NATS_URL'] ?? '127.0.0.1:4222';
