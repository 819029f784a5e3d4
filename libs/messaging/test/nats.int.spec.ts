import type { NatsConnection } from '@nats-io/nats-core';
import { connectNats, createServiceMicroservice, DEFAULT_NATS_URL, EventPublisher, NatsAgoraClient, NatsWire } from '../src/index.js';
import { transportSuite } from './transport-suite.js';

const NATS_URL = process.env['NATS_URL'] ?? DEFAULT_NATS_URL;

transportSuite('NATS', async () => {
  const nc: NatsConnection = await connectNats({ servers: NATS_URL, name: 'agora-messaging-test' });
  return {
    start: (options) => createServiceMicroservice({ ...options, transport: 'nats', natsUrl: NATS_URL }),
    client: new NatsAgoraClient(nc),
    wire: new NatsWire(nc),
    events: EventPublisher.overNats(nc),
    close: () => nc.close(),
  };
});
