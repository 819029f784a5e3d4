import { Logger, type INestMicroservice, type LoggerService, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Transport, type MicroserviceOptions } from '@nestjs/microservices';
import type { NatsConnection } from '@nats-io/nats-core';
import { AgoraReplySerializer, AgoraRequestDeserializer, DEFAULT_MAX_PAYLOAD } from './codec.js';
import { MessageDispatcher, type DispatcherOptions, type DispatchObserver, type ReadModelProgress } from './dispatcher.js';
import type { InProcessBus } from './in-process-bus.js';
import { ServerInProcess } from './in-process-server.js';
import { MessagingModule } from './messaging.module.js';
import { DEFAULT_NATS_URL, NatsWire } from './nats-wire.js';
import type { ReadTokenCheck } from './read-access.js';
import type { MessagingLogger } from './reply.js';
import type { WireConnection } from './wire.js';

/**
 * How a service serves its subjects: over NATS or the in-process bus, and who watches it (the
 * process's metrics). A process hands the same value to each of its services.
 */
export type ServiceTransport = ({ transport: 'nats'; natsUrl?: string | string[]; credentials?: { user: string; pass: string; inboxPrefix?: string } } | { transport: 'in-process'; bus: InProcessBus }) & {
  observer?: DispatchObserver;
  /** The process's read models: queries given `minPosition` wait for them (read your writes). */
  readModels?: ReadModelProgress;
  /** Closed reads on NATS (AGORA_NATS_READS=closed): see DispatcherOptions.reads. */
  reads?: ReadTokenCheck;
};

export type ServiceMicroserviceOptions = Omit<DispatcherOptions, 'logger'> &
  ServiceTransport & {
    /** Largest request body accepted; larger ones get `payload_too_large`. Default 256 KiB. */
    maxPayload?: number;
    /** Nest's logger setting (`false` silences Nest, e.g. in tests). Default: Nest's console logger. */
    logger?: LoggerService | LogLevel[] | false;
  };

export interface ServiceMicroservice {
  readonly app: INestMicroservice;
  readonly dispatcher: MessageDispatcher;
  /** This replica's id in `$SRV` (`nats micro info <service> <id>`). */
  readonly id: string;
  /** Stops answering `$SRV`, then closes the Nest app and its transport. */
  close(): Promise<void>;
}

function messagingLogger(context: string): MessagingLogger {
  const logger = new Logger(context);
  return {
    error: (message, error) => logger.error(message, error instanceof Error ? error.stack : error === undefined ? undefined : String(error)),
    warn: (message) => logger.warn(message),
  };
}

function dispatcherOptionsOf(options: ServiceMicroserviceOptions, logger: MessagingLogger): DispatcherOptions {
  const { service, commands, queries, directory, catalog, maxClockSkewMs, now, replyCacheSize, version, description, observer, readModels, reads, metadata, commandsVisible } = options;
  return { service, commands, queries, directory, catalog, maxClockSkewMs, now, replyCacheSize, version, description, logger, observer, ...(readModels === undefined ? {} : { readModels }), ...(reads === undefined ? {} : { reads }), ...(metadata === undefined ? {} : { metadata }), ...(commandsVisible === undefined ? {} : { commandsVisible }) };
}

function transportOptions(options: ServiceMicroserviceOptions, logger: MessagingLogger): MicroserviceOptions {
  const serializer = new AgoraReplySerializer(logger);
  const deserializer = new AgoraRequestDeserializer(options.maxPayload ?? DEFAULT_MAX_PAYLOAD);
  if (options.transport === 'in-process') {
    return { strategy: new ServerInProcess({ bus: options.bus, queue: options.service, serializer, deserializer }) };
  }
  return {
    transport: Transport.NATS,
    options: {
      servers: options.natsUrl ?? process.env['NATS_URL'] ?? DEFAULT_NATS_URL,
      name: `agora-${options.service}`,
      ...(options.credentials === undefined ? {} : { user: options.credentials.user, pass: options.credentials.pass }),
      ...(options.credentials?.inboxPrefix === undefined ? {} : { inboxPrefix: options.credentials.inboxPrefix }),
      // Replicas of a service form one queue group: each request is handled by one of them.
      queue: options.service,
      serializer,
      deserializer,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
    },
  };
}

/**
 * Starts a service: a Nest microservice over NATS (NestJS' NATS transporter, queue group = the
 * service name) or over the in-process bus, serving every command and query of the service with
 * the given handler functions, and answering the NATS services API (`$SRV.*`).
 */
export async function createServiceMicroservice(options: ServiceMicroserviceOptions): Promise<ServiceMicroservice> {
  const logger = messagingLogger(`agora:${options.service}`);
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(MessagingModule.forService(dispatcherOptionsOf(options, logger)), {
    ...transportOptions(options, logger),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  try {
    await app.listen();
  } catch (error) {
    await app.close().catch(() => undefined);
    throw error;
  }
  const dispatcher = app.get(MessageDispatcher);
  const wire: WireConnection = options.transport === 'nats' ? new NatsWire(app.unwrap<NatsConnection>()) : options.bus;
  if (options.transport === 'nats') options.observer?.natsConnection?.(app.unwrap<NatsConnection>(), options.service);
  dispatcher.serviceApi.start(wire);
  // Subscriptions travel to the server asynchronously: once the flush returns, the server routes
  // requests here, so a request sent right after start does not meet "no responders".
  await wire.flush();
  return {
    app,
    dispatcher,
    id: dispatcher.serviceApi.id,
    async close() {
      dispatcher.serviceApi.stop();
      await app.close();
    },
  };
}
