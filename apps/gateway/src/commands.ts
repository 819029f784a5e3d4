import type { CommandDefinition, CommandResult, Reply } from '@agora/contracts';
import { GatewayError } from './http-reply.js';
import type { ResolvedGatewayOptions } from './options.js';

/**
 * A signed envelope on its way to the service that decides it (POST /v1/commands, and a command an
 * A2A caller sends): the gateway finds its definition by type and forwards it as it is; the service
 * verifies the signature, the schema and the actor's roles.
 */
export class CommandSender {
  private readonly byType: ReadonlyMap<string, CommandDefinition>;

  constructor(private readonly options: Pick<ResolvedGatewayOptions, 'catalog' | 'client' | 'requestTimeoutMs'>) {
    this.byType = new Map(options.catalog.commands.map((c) => [c.type, c]));
  }

  /** The definition of an envelope's type; `invalid_command` naming the known types otherwise. */
  definition(envelope: Record<string, unknown>): CommandDefinition {
    const definition = typeof envelope['type'] === 'string' ? this.byType.get(envelope['type']) : undefined;
    if (definition) return definition;
    const knownTypes = [...this.byType.keys()];
    const what = typeof envelope['type'] === 'string' ? `unknown command type ${JSON.stringify(envelope['type'])}` : 'the envelope has no "type"';
    throw new GatewayError('invalid_command', `${what}; known types: ${knownTypes.join(', ')}`, { knownTypes });
  }

  async send(envelope: Record<string, unknown>): Promise<Reply<CommandResult>> {
    const definition = this.definition(envelope);
    return (await this.options.client.request(definition.subject, envelope, { timeoutMs: this.options.requestTimeoutMs })) as Reply<CommandResult>;
  }
}
