import { createServiceMicroservice, EventPublisher, InProcessAgoraClient, InProcessBus } from '../src/index.js';
import { transportSuite } from './transport-suite.js';

// The very suite the NATS transport passes, over the in-process bus of standalone mode.
transportSuite('the in-process bus', async () => {
  const bus = new InProcessBus();
  return {
    start: (options) => createServiceMicroservice({ ...options, transport: 'in-process', bus }),
    client: new InProcessAgoraClient(bus),
    wire: bus,
    events: EventPublisher.inProcess(bus),
    close: async () => bus.close(),
  };
});
