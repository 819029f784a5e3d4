import { BaseRpcContext, Server, type ConsumerDeserializer, type ConsumerSerializer, type CustomTransportStrategy, type WritePacket } from '@nestjs/microservices';
import type { InProcessBus } from './in-process-bus.js';
import type { WireDelivery, WireHeaders, WireSubscription } from './wire.js';

/** Transport id of the in-process strategy (Nest allows a symbol for custom transports). */
export const IN_PROCESS_TRANSPORT = Symbol.for('agora.in-process');

/** The RPC context of an in-process message: the same two accessors as Nest's NatsContext. */
export class InProcessContext extends BaseRpcContext<[string, WireHeaders]> {
  getSubject(): string {
    return this.args[0];
  }
  getHeaders(): WireHeaders {
    return this.args[1];
  }
}

export interface ServerInProcessOptions {
  bus: InProcessBus;
  /** Queue group of every handler (as the NATS transporter's `queue` option). */
  queue?: string;
  serializer: ConsumerSerializer;
  deserializer: ConsumerDeserializer;
}

/**
 * A Nest transport strategy over the in-process bus, mirroring ServerNats (NestJS 12
 * server/server-nats.js) step by step: one subscription per handler pattern in the queue group,
 * the raw message through the deserializer, a packet without an id is an event, a request's
 * response through the serializer back to the reply subject. Given the same serializer and
 * deserializer, a service behaves the same over both transports, down to the bytes.
 */
export class ServerInProcess extends Server implements CustomTransportStrategy {
  override transportId = IN_PROCESS_TRANSPORT;
  private subscriptions: WireSubscription[] = [];

  constructor(private readonly options: ServerInProcessOptions) {
    super();
    this.serializer = options.serializer;
    this.deserializer = options.deserializer;
  }

  listen(callback: (error?: unknown) => void): void {
    try {
      for (const [channel, handler] of this.messageHandlers) {
        const queue: string | undefined = (handler.extras?.['queue'] as string | undefined) ?? this.options.queue;
        const sub = this.options.bus.subscribe(channel, {
          ...(queue ? { queue } : {}),
          callback: (message) => void this.handleMessage(channel, message).catch((error: unknown) => this.logger.error(error)),
        });
        this.subscriptions.push(sub);
      }
      this._status$.next('connected');
      callback();
    } catch (error) {
      callback(error);
    }
  }

  close(): void {
    for (const sub of this.subscriptions) sub.unsubscribe();
    this.subscriptions = [];
    this._status$.next('disconnected');
  }

  on(): void {
    // The bus has no connection events to report.
  }

  unwrap<T>(): T {
    return this.options.bus as T;
  }

  async handleMessage(channel: string, message: WireDelivery): Promise<void> {
    const context = new InProcessContext([message.subject, message.headers]);
    const packet = await this.deserializer.deserialize(message, { channel, replyTo: message.reply });
    if (!('id' in packet) || packet.id === undefined) {
      await this.handleEvent(channel, packet, context);
      return;
    }
    const id = packet.id;
    const publish = async (response: WritePacket) => {
      if (!message.reply) return;
      const outgoing = (await this.serializer.serialize({ ...response, id })) as { data: Uint8Array };
      message.respond(outgoing.data);
    };
    const handler = this.getHandlerByPattern(channel);
    if (!handler) {
      await publish({ status: 'error', err: `no handler for ${channel}` });
      return;
    }
    await this.handleRequest(context, async () => this.transformToObservable(await handler(packet.data, context)), publish);
  }
}
