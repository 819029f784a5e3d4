import type { Reply } from '@agora/contracts';
import { Controller, Inject, Module, type DynamicModule, type Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import type { IncomingRequest } from './codec.js';
import { MessageDispatcher, type DispatcherOptions } from './dispatcher.js';

/**
 * One controller whose single method is registered on every subject of the service (Nest's
 * MessagePattern takes a list). It is built per service because the subjects come from the
 * catalog at run time, and decorators need them when the class is defined. Nest only
 * dispatches: everything else is in MessageDispatcher.
 */
function messagesController(subjects: readonly string[]): Type<unknown> {
  @Controller()
  class AgoraMessagesController {
    constructor(@Inject(MessageDispatcher) private readonly dispatcher: MessageDispatcher) {}

    @MessagePattern([...subjects])
    handle(@Payload() request: IncomingRequest): Promise<Reply> {
      return this.dispatcher.dispatch(request);
    }
  }
  return AgoraMessagesController;
}

@Module({})
export class MessagingModule {
  /**
   * Serves a service's commands and queries: one handler per subject of the service in the
   * catalog, commands through the CommandGate, query parameters through their schema. Use it
   * with a transport whose serializer and deserializer are AgoraReplySerializer and
   * AgoraRequestDeserializer (createServiceMicroservice does all of it). Exports the
   * MessageDispatcher, which holds the `$SRV` ServiceApi.
   */
  static forService(options: DispatcherOptions): DynamicModule {
    const dispatcher = new MessageDispatcher(options);
    return {
      module: MessagingModule,
      controllers: [messagesController(dispatcher.subjects())],
      providers: [{ provide: MessageDispatcher, useValue: dispatcher }],
      exports: [MessageDispatcher],
    };
  }
}
